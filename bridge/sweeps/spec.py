"""What a sweep runs: the swept names, their values, and the cases (one dict of values per case).

Axes: ``--grid NAME=start:stop:num`` (``numpy.linspace(start, stop, num)``), ``--values NAME=a,b,c`` and
``--random NAME=low:high`` with ``--samples N --seed S`` (a Latin hypercube of ``N`` points over the random
names, :class:`scipy.stats.qmc.LatinHypercube`, scaled to ``[low, high)``). The cases are the Cartesian product
of the grid axes, then the value axes (each in the order given; the first varies slowest), with the hypercube
samples. A sweep file (TOML) holds the same vocabulary in a ``[sweep]`` table. Values are numbers or constant
expressions (``pi/4``) read by the whitelisting parser; names are those ``--set`` accepts
(:func:`bridge.model.overrides.override_names`).
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import BridgeError, ProblemCollector
from ..model.expressions import ExpressionError, parse_expression
from ..model.overrides import split_assignment

MAX_CASES = 100_000
MAX_SAMPLES = 1_000_000  # output samples of one case
MAX_RANDOM_SAMPLES = 1_000_000  # --samples: drawn at once (Latin hypercube), 8 bytes per sample and random axis


class SweepError(BridgeError):
    """Bad sweep input: a name, a range, a file, a scheduler, an output path."""


@dataclass(frozen=True)
class Axis:
    """One swept name: ``kind`` grid, values or random; ``values`` (grid, values) or ``(low, high)`` (random)."""

    name: str
    kind: str
    values: tuple[float, ...]
    entry: str


@dataclass
class SweepSpec:
    """A sweep definition, from the command line and/or a sweep file."""

    system: str = ""
    axes: list[Axis] = field(default_factory=list)
    samples: int | None = None
    seed: int | None = None
    record: list[str] = field(default_factory=list)
    stop_time: float | None = None
    interval: float | None = None
    rtol: float = 1e-8
    reference: str | None = None  # a reference run (CSV) for the metric records, as --reference

    @property
    def names(self) -> list[str]:
        """The swept names, in the order of the axes."""
        return [a.name for a in self.axes]

    def size(self) -> int:
        """Return the number of cases, without building them (exact integers, so a huge grid is caught early)."""
        n = math.prod(len(a.values) for a in self.axes if a.kind != "random")
        return n * (self.samples or 1) if any(a.kind == "random" for a in self.axes) else n

    def cases(self) -> list[dict[str, float]]:
        """Return one dict ``{name: value}`` per case, in a fixed order (see :meth:`iter_cases` for large sweeps)."""
        return list(self.iter_cases())

    def iter_cases(self) -> Iterator[dict[str, float]]:
        """Yield the cases of :meth:`cases` one at a time.

        Memory independent of the number of cases, except the random samples (``samples`` x random axes numbers, at most
        :data:`MAX_RANDOM_SAMPLES` samples).
        """
        fixed = [a for a in self.axes if a.kind != "random"]
        rand = [a for a in self.axes if a.kind == "random"]
        samples: list[tuple[float, ...]] | np.ndarray = [()]
        if rand:
            from scipy.stats import qmc

            unit = qmc.LatinHypercube(d=len(rand), seed=self.seed).random(self.samples or 1)
            lo = np.array([a.values[0] for a in rand])
            hi = np.array([a.values[1] for a in rand])
            samples = qmc.scale(unit, lo, hi) if np.all(hi > lo) else lo + unit * (hi - lo)
        fixed_names = [a.name for a in fixed]
        rand_names = [a.name for a in rand]
        for combo in itertools.product(*(a.values for a in fixed)):
            for sample in samples:
                case = dict(zip(fixed_names, combo))
                case.update(zip(rand_names, map(float, sample)))
                yield case


def _reject(name: str, pos: int):
    raise ExpressionError(f"it contains the name {name!r}", pos)


def _short(value, limit: int = 60) -> str:
    """Return ``repr(value)`` cut to ``limit`` characters (a TOML value can be megabytes long)."""
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 4000 else "a huge integer"
    return text if len(text) <= limit else text[:limit - 3] + "..."


def number(text: str | float | int) -> float:
    """Return a finite float from a number or a constant expression (``pi/4``); ValueError with the reason."""
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise ValueError(f"expected a number, got {_short(text)}")
    if isinstance(text, int):
        try:
            value = float(text)
        except OverflowError:
            raise ValueError(f"{_short(text)} is not a finite number") from None
    elif isinstance(text, float):
        value = float(text)
    else:
        try:
            value = float(text)
        except ValueError:
            try:
                expr = parse_expression(str(text), _reject, _reject)
            except ExpressionError as exc:
                raise ValueError(f"{text!r} is not a number ({exc.message})") from None
            value = float(expr) if expr.is_number and expr.is_finite else math.nan
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value


def _parts(value, count: int | None, sep: str) -> list:
    if isinstance(value, str):
        parts = [p.strip() for p in value.split(sep)]
    elif isinstance(value, (list, tuple)):
        parts = list(value)
    else:
        parts = [value]
    if count is not None and len(parts) != count:
        raise ValueError(f"expected {count} parts separated by {sep!r}, got {value!r}")
    return parts


def parse_axis(kind: str, name: str, value, entry: str, problems: ProblemCollector) -> Axis | None:
    """Parse one axis: ``start:stop:num`` (grid), ``a,b,c`` (values) or ``low:high`` (random); None on a problem."""
    hints = {"grid": "write NAME=start:stop:num, e.g. m=1:2:11", "values": "write NAME=a,b,c, e.g. m=1,1.5,2",
             "random": "write NAME=low:high, e.g. m=1:2"}
    try:
        if kind == "grid":
            start, stop, num = _parts(value, 3, ":")
            count = number(num)
            if count != int(count) or count < 1:
                raise ValueError(f"the number of points must be a positive whole number, got {num!r}")
            values = tuple(float(v) for v in np.linspace(number(start), number(stop), int(count)))
        elif kind == "values":
            values = tuple(number(v) for v in _parts(value, None, ",") if str(v).strip() != "")
            if not values:
                raise ValueError("the list of values is empty")
        else:
            low, high = (number(v) for v in _parts(value, 2, ":"))
            if not high > low:
                raise ValueError(f"the range {low:g}:{high:g} is empty (low must be below high)")
            values = (low, high)
    except ValueError as exc:
        problems.add(entry, str(exc), hints[kind])
        return None
    return Axis(name, kind, values, entry)


def parse_assignments(kind: str, texts: Sequence[str], problems: ProblemCollector) -> list[Axis]:
    """Return the axes of ``NAME=VALUES`` assignments of a command-line option; problems are recorded.

    Parameters
    ----------
    kind : str
        The option without dashes (``grid``, ``values``, ``random``), for messages and the axis kind.
    texts : sequence of str
        The assignments as given.
    problems : ProblemCollector
        Receives one problem per malformed assignment.

    Returns
    -------
    list of Axis
        The well-formed axes.
    """
    axes = []
    for text in texts:
        try:
            name, value = split_assignment(text)
        except ValueError as exc:
            problems.add(f"--{kind} {text}", str(exc))
            continue
        axis = parse_axis(kind, name, value, f"--{kind} {name}", problems)
        if axis is not None:
            axes.append(axis)
    return axes


#: a column name shown in messages: a signal name (``theta``, ``der(theta)``, ``residual[2]``); other header text
#: of a file is never echoed
_SHOWN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(\((?:[A-Za-z_][A-Za-z0-9_]{0,63})\)|\[\d{1,6}\])?")


def shown_name(name: str) -> str:
    """Return a column name for a message: quoted when it is a signal name, else only said to be none (never echoed)."""
    return repr(name) if _SHOWN_NAME.fullmatch(name) else "whose name is not a signal name"


def shown_columns(names: Sequence[str]) -> str:
    """Return a file's column names for a message: those that are signal names, the others only counted.

    Parameters
    ----------
    names : sequence of str
        The column names (a CSV header: text of a file, never echoed unless it is a signal name).

    Returns
    -------
    str
        ``"time, theta and 2 columns whose names are not signal names"``.
    """
    shown = [n for n in names if _SHOWN_NAME.fullmatch(n)]
    hidden = len(names) - len(shown)
    text = ", ".join(shown) or "none that is a signal name"
    if hidden and shown:
        text += (f" and {hidden} columns whose names are not signal names" if hidden > 1 else
                 " and 1 column whose name is not a signal name")
    return text


def read_sweep_file(path: str | Path, problems: ProblemCollector) -> SweepSpec:
    """Read a sweep file.

    ``[sweep]`` with ``system`` (relative to the file), ``grid``/``values``/``random`` tables, ``samples``, ``seed``,
    ``record`` (list of record expressions), ``stop_time``, ``interval``, ``rtol``, ``reference`` (a CSV run for the
    metric records, relative to the file and inside its folder: a path that leaves the folder is refused;
    ``--reference`` replaces it).
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SweepError(f"{path}: cannot read the sweep file ({exc})") from exc
    except ValueError as exc:  # e.g. an integer of more than 4300 digits (Python's int conversion limit)
        raise SweepError(f"{path}: cannot read the sweep file ({exc})") from exc
    table = data.get("sweep")
    if not isinstance(table, dict):
        raise SweepError(f"{path}: not a sweep file (no [sweep] table)")
    spec = SweepSpec()
    known = {"system", "grid", "values", "random", "samples", "seed", "record", "stop_time", "interval", "rtol",
             "reference"}
    _check_keys(table, known, problems)
    system = table.get("system")
    if not isinstance(system, str) or not system:
        problems.add("[sweep] system", "missing: the system file to sweep", 'add system = "model.toml"')
    else:
        spec.system = str((path.parent / system) if not Path(system).is_absolute() else Path(system))
    _read_reference(table, path, spec, problems)
    _read_axes(table, spec, problems)
    _read_whole_numbers(table, spec, problems)
    record = table.get("record", [])
    if isinstance(record, str):
        record = [record]
    if not (isinstance(record, list) and all(isinstance(r, str) for r in record)):
        problems.add("[sweep] record", "expected a list of record expressions", 'e.g. record = ["final"]')
    else:
        spec.record = list(record)
    _read_positive_numbers(table, spec, problems)
    return spec


def _check_keys(table: dict, known: set[str], problems: ProblemCollector) -> None:
    """Report each key of ``[sweep]`` that is not known, with the closest known one."""
    for key in table:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            problems.add(f"[sweep] {key}", "unknown key", f"did you mean {close[0]!r}?" if close else
                         "known keys: " + ", ".join(sorted(known)))


def _read_reference(table: dict, path: Path, spec: SweepSpec, problems: ProblemCollector) -> None:
    """Set ``spec.reference`` from ``reference``: a CSV file in the sweep file's folder or below it."""
    if "reference" in table:
        ref = table["reference"]
        if not isinstance(ref, str) or not ref:
            problems.add("[sweep] reference", f"expected the path of a CSV file, got {ref!r}",
                         'e.g. reference = "reference.csv" (time and signal columns, as nhbridge simulate writes)')
        else:
            folder = path.parent.resolve()
            resolved = (folder / ref).resolve()  # an absolute ref replaces the folder; ".." and links resolved
            if not resolved.is_relative_to(folder):
                problems.add("[sweep] reference", f"{ref!r} lies outside the sweep file's folder {folder}",
                             "a sweep file's reference must be a CSV file in the sweep file's folder or below it: "
                             "move it there, or give it on the command line with --reference PATH")
            else:
                spec.reference = str(resolved)


def _read_axes(table: dict, spec: SweepSpec, problems: ProblemCollector) -> None:
    """Append the axes of the ``grid``, ``values`` and ``random`` tables to ``spec.axes``."""
    for kind in ("grid", "values", "random"):
        axes = table.get(kind, {})
        if not isinstance(axes, dict):
            problems.add(f"[sweep] {kind}", "must be a table of NAME = ...", f'e.g. {kind} = {{ m = "1:2:3" }}')
            continue
        for name, value in axes.items():
            axis = parse_axis(kind, name, value, f"[sweep.{kind}] {name}", problems)
            if axis is not None:
                spec.axes.append(axis)


def _read_whole_numbers(table: dict, spec: SweepSpec, problems: ProblemCollector) -> None:
    """Set ``spec.samples`` (at least 1) and ``spec.seed`` (at least 0) where given."""
    for key in ("samples", "seed"):
        if key in table:
            if isinstance(table[key], int) and not isinstance(table[key], bool) and table[key] >= (key == "samples"):
                setattr(spec, key, table[key])
            else:
                problems.add(f"[sweep] {key}", f"expected a whole number, got {_short(table[key])}")


def _read_positive_numbers(table: dict, spec: SweepSpec, problems: ProblemCollector) -> None:
    """Set ``spec.stop_time``, ``spec.interval`` and ``spec.rtol`` where given; each must be positive."""
    for key in ("stop_time", "interval", "rtol"):
        if key in table:
            try:
                value = number(table[key])
                if not value > 0:
                    raise ValueError(f"expected a positive number, got {table[key]!r}")
                setattr(spec, key, value)
            except ValueError as exc:
                problems.add(f"[sweep] {key}", str(exc))


def check_names(spec: SweepSpec, known: Sequence[str], system_name: str, problems: ProblemCollector) -> None:
    """Check that every swept name is settable (did-you-mean otherwise) and swept once; random axes need samples."""
    seen: set[str] = set()
    for axis in spec.axes:
        if axis.name not in known:
            close = difflib.get_close_matches(axis.name, list(known), n=1)
            problems.add(axis.entry, f"{axis.name!r} is not a parameter, coordinate, der(coordinate) or input of "
                         f"{system_name}", f"did you mean {close[0]!r}?" if close else
                         "sweepable names: " + ", ".join(known))
        elif axis.name in seen:
            problems.add(axis.entry, f"{axis.name!r} is swept twice", "sweep each name once")
        seen.add(axis.name)
    randoms = [a for a in spec.axes if a.kind == "random"]
    if randoms and not spec.samples:
        problems.add("--samples", "--random needs the number of samples", "add --samples N")
    if spec.samples and spec.samples > MAX_RANDOM_SAMPLES:
        count = f"{spec.samples:,}" if spec.samples < 10**15 else "more than 10^15"
        problems.add("--samples", f"{count} samples, more than {MAX_RANDOM_SAMPLES:,} (a Latin hypercube is "
                     "drawn at once)", "sample fewer points, or split the sweep into several with other --seed")
    if spec.samples and not randoms:
        problems.add("--samples", "--samples is given but nothing is swept with --random", "add --random NAME=low:high")
    if not spec.axes and not problems:
        problems.add("sweep", "nothing is swept", "add --grid NAME=start:stop:num, --values NAME=a,b,c or --random")


def check_size(spec: SweepSpec, max_cases: int, yes: bool) -> int:
    """Return the number of cases; SweepError when it exceeds ``max_cases`` and ``yes`` is not given."""
    n = spec.size()
    if n > max_cases and not yes:
        axes = " x ".join(f"{len(a.values)} ({a.name})" for a in spec.axes if a.kind != "random")
        raise SweepError(f"the sweep has {n:,} cases ({axes or ''}{' x ' if axes and spec.samples else ''}"
                         f"{f'{spec.samples} samples' if spec.samples else ''}), more than --max-cases "
                         f"{max_cases:,}; use fewer points, raise --max-cases, or add --yes to run them all")
    return n
