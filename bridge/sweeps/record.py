"""What a sweep records per case: reductions of signal expressions, read by the whitelisting parser.

A record is ``REDUCTION(EXPR)`` with REDUCTION one of ``final`` (value at the stop time), ``initial``,
``min``, ``max``, ``mean`` (time average of the samples); EXPR is an expression of the system-file grammar
over the FMU's signals: coordinates ``q``, velocities ``der(q)``, outputs, the time ``t`` and the constraint
residuals ``residual[k]`` (``residual`` alone stands for all of them: ``max(abs(residual))`` is the largest
absolute constraint residual over the run). ``final`` alone adds ``final(s)`` for every coordinate, velocity and
output; ``series`` (or ``series(s)``) keeps the whole time series. With a reference (a CSV with ``time`` and
signal columns), ``max_abs(s)``, ``max_rel(s)``, ``rms(s)`` and ``tube_violations(s)`` are the validation
metrics of signal ``s`` against it (:func:`bridge.validation.metrics.compare`, the campaign's default tube).
The column of a record is its text.
Nothing is passed to eval: the parsed sympy expression is lambdified.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import ProblemCollector
from ..model.expressions import ExpressionError, parse_expression
from .spec import shown_columns

REDUCTIONS = ("final", "initial", "min", "max", "mean")
METRICS = ("max_abs", "max_rel", "rms", "tube_violations")  # of a signal against --reference (validation.metrics)
_CALL = re.compile(r"\s*([A-Za-z_]+)\s*\((.*)\)\s*\Z", re.S)
_RESIDUAL = re.compile(r"residual\s*\[\s*(\d+)\s*\]")
_ALL_RESIDUALS = "residual"


@dataclass(frozen=True)
class Record:
    """One recorded column: ``reduction`` of ``expr`` (a sympy expression over :attr:`signals`)."""

    column: str
    reduction: str
    expr: sp.Expr
    signals: tuple[str, ...]  # the FMU variables the expression reads (residual: all residuals)


@dataclass(frozen=True)
class RecordPlan:
    """What a sweep records: the record expressions and the signals whose time series are kept."""

    records: tuple[Record, ...]
    series: tuple[str, ...]  # signals whose time series are kept

    @property
    def outputs(self) -> list[str]:
        """The FMU variables a case must return."""
        names = [s for r in self.records for s in r.signals] + list(self.series)
        return [n for n in dict.fromkeys(names) if n != "t"]


def _placeholder(k: int) -> str:
    return f"residual_{k}_"


def parse_records(texts: Sequence[str], signals: Sequence[str], residuals: int,
                  problems: ProblemCollector, reference: Sequence[str] | None = None) -> RecordPlan:
    """Return the plan for ``texts``; ``signals`` are the recordable names besides ``t`` and the residuals."""
    known = list(signals)
    res_names = [f"residual[{k}]" for k in range(1, residuals + 1)]
    records: dict[str, Record] = {}
    series: list[str] = []
    for text in texts or ["final"]:
        entry = f"--record {text}"
        stripped = text.strip()
        if stripped == "final":
            for s in known:
                records.setdefault(f"final({s})", Record(f"final({s})", "final", sp.Symbol(s), (s,)))
            continue
        if stripped == "series":
            series.extend(known + res_names)
            continue
        match = _CALL.match(stripped)
        if not match or match.group(1) not in (*REDUCTIONS, *METRICS, "series"):
            problems.add(entry, "a record is final, series, REDUCTION(EXPR) with REDUCTION one of "
                         + ", ".join(REDUCTIONS) + ", or METRIC(signal) with METRIC one of " + ", ".join(METRICS)
                         + " (with --reference)", 'e.g. --record "max(abs(theta))" or --record final')
            continue
        reduction, inner = match.groups()
        resolve, der = _resolvers(known, residuals)
        bad = [int(k) for k in _RESIDUAL.findall(inner) if not 1 <= int(k) <= residuals]
        if bad:
            problems.add(entry, f"residual[{bad[0]}] does not exist (the model has {residuals} constraint "
                         f"residual{'s' if residuals != 1 else ''})")
            continue
        try:
            expr = parse_expression(_RESIDUAL.sub(lambda m: _placeholder(int(m.group(1))), inner), resolve, der)
        except ExpressionError as exc:
            problems.add(entry, f"cannot read {inner!r}: {exc.message}",
                         "use coordinates, der(q), outputs, t and residual[k] of the model")
            continue
        if reduction in METRICS:
            if not isinstance(expr, sp.Symbol) or str(expr) in ("t", _ALL_RESIDUALS):
                problems.add(entry, f"{reduction}(...) takes one signal name", f"e.g. {reduction}(theta)")
            elif reference is None:
                problems.add(entry, f"{reduction}(...) compares with a reference",
                             "add --reference FILE.csv (or reference = in the sweep file)")
            elif str(expr) not in reference:
                problems.add(entry, f"the reference has no column {str(expr)!r}",
                             "its columns: " + shown_columns(list(reference)))
            else:
                records[stripped] = Record(stripped, reduction, expr, (str(expr),))
            continue
        if reduction == "series":
            if not isinstance(expr, sp.Symbol) or str(expr) == "t":
                problems.add(entry, "series(...) takes one signal name", "e.g. series(theta)")
            else:
                series.append(str(expr))
            continue
        if sp.Symbol(_ALL_RESIDUALS) in expr.free_symbols and reduction in ("final", "initial"):
            problems.add(entry, "residual without an index needs min, max or mean", 'e.g. "max(abs(residual))"')
            continue
        used = sorted(str(x) for x in expr.free_symbols if str(x) != "t")
        used = [n for x in used for n in (res_names if x == _ALL_RESIDUALS else [x])]
        records[stripped] = Record(stripped, reduction, expr, tuple(dict.fromkeys(used)))
    return RecordPlan(tuple(records.values()), tuple(dict.fromkeys(series)))


def _resolvers(known: list[str], residuals: int):
    """Return the parser's name and der() callbacks: signals become symbols named like the FMU's variables."""

    def resolve(name: str, pos: int) -> sp.Expr:
        for k in range(1, residuals + 1):
            if name == _placeholder(k):
                return sp.Symbol(f"residual[{k}]")
        if name == _ALL_RESIDUALS and residuals:
            return sp.Symbol(_ALL_RESIDUALS)
        if name == "t" or name in known:
            return sp.Symbol(name)
        close = difflib.get_close_matches(name, known + ["t"] + (["residual"] if residuals else []), n=1)
        raise ExpressionError(f"unknown signal {name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""), pos)

    def der(arg: sp.Expr, pos: int) -> sp.Expr:
        name = f"der({arg})"
        if isinstance(arg, sp.Symbol) and name in known:
            return sp.Symbol(name)
        raise ExpressionError(f"{name} is not a recorded velocity", pos)

    return resolve, der


_COMPILED: dict = {}


def compiled(rec: Record, names: list | None = None):
    """Return ``rec.expr`` as a numpy function of its sorted free symbols.

    Cached per process (a worker compiles each record once; the children it forks for the cases inherit the cache).
    """
    key = (rec.column, rec.expr)
    if key not in _COMPILED:
        names = names or sorted(rec.expr.free_symbols, key=str)
        _COMPILED[key] = sp.lambdify(names, rec.expr, modules="numpy", dummify=True)
    return _COMPILED[key]


def evaluate(plan: RecordPlan, data: Mapping[str, np.ndarray], residuals: int,
             reference: Mapping[str, np.ndarray] | None = None) -> dict[str, float]:
    """Return the recorded values of one run.

    ``data`` has ``time`` and the FMU variables of :attr:`RecordPlan.outputs`, ``reference`` the reference's ``time``
    and signal columns.
    """
    out: dict[str, float] = {}
    time = np.asarray(data["time"], dtype=float)
    for rec in plan.records:
        if rec.reduction in METRICS:
            from ..validation.metrics import compare
            from ..validation.settings import DEFAULT_TIME_TOLERANCE, DEFAULT_TUBE

            name = rec.signals[0]
            ref_time = reference["time"]
            m = compare(name, ref_time, reference[name], time, np.asarray(data[name], dtype=float), DEFAULT_TUBE,
                        DEFAULT_TIME_TOLERANCE * float(ref_time[-1] - ref_time[0]))
            out[rec.column] = float(getattr(m, rec.reduction))
            continue
        names = sorted(rec.expr.free_symbols, key=str)
        args = []
        for sym in names:
            if str(sym) == "t":
                args.append(time)
            elif str(sym) == _ALL_RESIDUALS:
                args.append(np.array([data[f"residual[{k}]"] for k in range(1, residuals + 1)], dtype=float))
            else:
                args.append(np.asarray(data[str(sym)], dtype=float))
        fn = compiled(rec, names)
        with np.errstate(all="ignore"):
            values = np.broadcast_to(np.asarray(fn(*args), dtype=float), (time.size,) if not any(
                str(s) == _ALL_RESIDUALS for s in names) else (residuals, time.size))
        if rec.reduction == "final":
            out[rec.column] = float(values[..., -1])
        elif rec.reduction == "initial":
            out[rec.column] = float(values[..., 0])
        elif rec.reduction == "min":
            out[rec.column] = float(np.min(values))
        elif rec.reduction == "max":
            out[rec.column] = float(np.max(values))
        else:
            out[rec.column] = float(np.mean(values))
    return out
