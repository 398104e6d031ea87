"""Closed-form references from a system file's ``[reference]`` table.

Each entry names a signal (a coordinate ``x``, a velocity ``"der(x)"`` or an output) and gives its
exact value as a function of time, in the system files' expression language::

    [reference]
    x = "g*sin(alpha)/(2*w^2)*sin(w*t)^2"

Allowed names: ``t``, ``pi``, the parameters and the inputs (held at their start values). The
expressions go through nhbridge's whitelisting parser; nothing is evaluated as Python.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from ..derivation.efforts import switched
from ..errors import ProblemCollector
from ..model import symbols as S
from ..model.expressions import ExpressionError, caret, parse_expression
from ..model.system import System


@dataclass(frozen=True)
class ClosedForm:
    """One signal's closed-form solution ``y(t)``."""

    signal: str
    text: str
    expr: sp.Expr
    function: Callable[[np.ndarray], np.ndarray]

    def __call__(self, time: np.ndarray) -> np.ndarray:
        """Return ``y(time)``, one value per time.

        Parameters
        ----------
        time : numpy.ndarray
            The times.

        Returns
        -------
        numpy.ndarray
            The closed form's values, with the shape of ``time``.
        """
        return np.broadcast_to(np.asarray(self.function(time), dtype=float), np.shape(time)).copy()


def signal_names(system: System) -> list[str]:
    """Return the compared signals.

    Coordinates, their velocities, the outputs, the effort variables and the unknowns of the switched elements (friction
    forces, diode voltages).
    """
    names = [c.name for c in system.coordinates]
    return names + [f"der({n})" for n in names] + list(system.outputs) + unknowns(system)


def unknowns(system) -> list[str]:
    """Return the names of the unknowns that are variables of their own.

    Result columns, Modelica and FMU variables: efforts, friction forces switched by events, diode voltages.
    """
    return [*(e.name for e in system.efforts), *(el.name for el in switched(system))]


def parse_reference(table: Any, system: System, problems: ProblemCollector) -> dict[str, ClosedForm]:
    """Return the checked ``[reference]`` table; every problem is added to ``problems``."""
    if table is None:
        return {}
    if not isinstance(table, Mapping):
        problems.add("reference", "expected a table of closed-form solutions",
                     'write [reference] with entries like x = "a*sin(w*t)"')
        return {}
    values = {p.symbol: p.value for p in system.parameters} | {u.symbol: u.start for u in system.inputs}
    known = {s.name: s for s in values}
    targets = signal_names(system)
    out: dict[str, ClosedForm] = {}

    def resolve(name: str, pos: int) -> sp.Expr:
        if name == "t":
            return S.t
        if name in known:
            return known[name]
        close = difflib.get_close_matches(name, [*list(known), "t"], n=1)
        hint = f"did you mean {close[0]!r}?" if close else "a closed form may use t, pi, parameters and inputs"
        raise ExpressionError(f"unknown name {name!r}", pos, hint)

    def der(expr: sp.Expr, pos: int) -> sp.Expr:
        raise ExpressionError("der() is not available in a closed form", pos, "write the derivative out")

    for signal, text in table.items():
        entry = f"reference.{signal}"
        if signal not in targets:
            close = difflib.get_close_matches(signal, targets, n=1)
            problems.add(entry, f"{signal!r} is not a signal of {system.name}",
                         f"did you mean {close[0]!r}?" if close else
                         "name a coordinate, a velocity \"der(x)\" or an output")
            continue
        if not isinstance(text, str):
            problems.add(entry, f"expected an expression string, got {type(text).__name__}",
                         'write the closed form in quotes, e.g. "a*sin(w*t)"')
            continue
        try:
            expr = parse_expression(text, resolve, der)
        except ExpressionError as exc:
            problems.add(entry, f"{exc.message}{caret(text, exc.position)}", exc.hint)
            continue
        except RecursionError:
            problems.add(entry, "expression is nested too deep", "simplify it")
            continue
        numeric = expr.xreplace(values)
        out[signal] = ClosedForm(signal, text, expr, sp.lambdify(S.t, numeric, modules="numpy"))
    return out
