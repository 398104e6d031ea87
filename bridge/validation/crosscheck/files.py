"""Cross-check CSV and ``_ref.opt`` files: writing and reading them by the rules.

* ``_ref.opt`` (§9.1.4) is CSV: one ``Name,value`` per line with the required elements ``StartTime``,
  ``StopTime``, ``StepSize`` (0 means a variable-step solver) and ``RelTol``, optional ``AbsTol``,
  ``SolverType`` and ``OutputIntervalLength``. nhbridge writes numeric elements only and no comments,
  because ``fmpy.util.read_ref_opt_file`` converts every value with ``float``;
* CSV files (Appendix B): comma separators between elements only; numbers unquoted, as C floating-point
  literals; first column the time, monotonically increasing; first line the variable names in double
  quotes, exactly as in ``modelDescription.xml``; data from line 2 on, no units or comments; at most 1 MB.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ...errors import ExportError, Problem

MAX_CSV_BYTES = 1_000_000  # Appendix B: a CSV file must not be larger than 1 MB
NUMERIC_OPTIONS = ("StartTime", "StopTime", "StepSize", "RelTol", "AbsTol", "OutputIntervalLength")
REQUIRED_OPTIONS = ("StartTime", "StopTime", "StepSize", "RelTol")
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
MAX_LINE_PROBLEMS = 5


def _number(x: float) -> str:
    """Return a C floating-point literal (Appendix B); 15 significant digits."""
    text = format(float(x), ".15g")
    return "0" if text == "-0" else text


def csv_text(time: np.ndarray, signals: dict[str, np.ndarray]) -> str:
    """Return a CSV by the rules: quoted names in line 1, ``time`` first, numbers from line 2, no trailing separator."""
    names = ["time", *signals]
    for name in names:
        if '"' in name or "," in name or "\n" in name:
            raise ExportError(f"variable name {name!r} cannot be written in a cross-check CSV header")
    lines = [",".join(f'"{n}"' for n in names)]
    columns = [np.asarray(time, dtype=float), *[np.asarray(v, dtype=float) for v in signals.values()]]
    for row in zip(*columns):
        lines.append(",".join(_number(v) for v in row))
    return "\n".join(lines) + "\n"


def opt_text(start: float, stop: float, step: float, rtol: float, atol: float | None = None,
             output_interval: float | None = None) -> str:
    """Return ``_ref.opt``: required StartTime, StopTime, StepSize, RelTol; optional AbsTol, OutputIntervalLength."""
    lines = [f"StartTime,{_number(start)}", f"StopTime,{_number(stop)}", f"StepSize,{_number(step)}",
             f"RelTol,{_number(rtol)}"]
    if atol is not None:
        lines.append(f"AbsTol,{_number(atol)}")
    if output_interval is not None:
        lines.append(f"OutputIntervalLength,{_number(output_interval)}")
    return "\n".join(lines) + "\n"


@dataclass
class CsvData:
    """A cross-check CSV file read and checked: the names after ``time``, the time and the columns."""

    path: Path
    names: list[str]
    time: np.ndarray
    columns: dict[str, np.ndarray]
    notes: list[str] = field(default_factory=list)

    def structured(self, names: Sequence[str] | None = None) -> np.ndarray:
        """Return the columns as a numpy structured array, ``time`` first (as fmpy takes and gives results).

        Parameters
        ----------
        names : sequence of str, optional
            The columns to include (default: all).

        Returns
        -------
        numpy.ndarray
            A structured array with fields ``time`` and ``names``.
        """
        names = list(self.names if names is None else names)
        out = np.zeros(len(self.time), dtype=[("time", float)] + [(n, float) for n in names])
        out["time"] = self.time
        for n in names:
            out[n] = self.columns[n]
        return out


def add_problem(problems: list[Problem], source: Path, entry: str, message: str, hint: str = "") -> None:
    """Append a :class:`Problem` at ``entry`` (a line, an element) of the file ``source``."""
    problems.append(Problem(entry, message, hint, str(source)))


def _read_text(path: Path, problems: list[Problem], what: str, hint: str) -> str | None:
    try:
        return path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        add_problem(problems, path, "", f"{what} is missing", hint)
    except IsADirectoryError:
        add_problem(problems, path, "", f"{what} is a folder, not a file", hint)
    except UnicodeDecodeError as exc:
        add_problem(problems, path, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})", "write plain ASCII CSV")
    except OSError as exc:
        add_problem(problems, path, "", f"cannot read the file ({exc.strerror or exc})", "check the permissions")
    return None


def read_csv_file(path: str | Path, problems: list[Problem], what: str = "the CSV file") -> CsvData | None:
    """Read a cross-check CSV (Appendix B); every problem found is added to ``problems`` (None if any)."""
    path = Path(path)
    text = _read_text(path, problems, what, "see the FMI Cross-Check rules, appendix B")
    if text is None:
        return None
    before = len(problems)
    lines = text.splitlines()
    while lines and not lines[-1].strip():
        lines.pop()
    if not lines:
        add_problem(problems, path, "", f"{what} is empty", 'write "time" and the variable names in line 1, data below')
        return None
    header = lines[0]
    names = [n.strip() for n in next(csv.reader([header], skipinitialspace=True))]
    notes = []
    if header.count('"') < 2 * len(names):
        notes.append(f"{path.name}: the names in line 1 are not all in double quotes, as the rules ask")
    if not names or names[0] != "time":
        add_problem(problems, path, "line 1", f'the first column must be "time", found {names[0] if names else ""!r}',
                    'write the header as "time","x",...')
    if any(not n for n in names):
        add_problem(problems, path, "line 1", "a column has no name", "remove trailing commas; name every column")
    duplicates = sorted({n for n in names if names.count(n) > 1 and n})
    if duplicates:
        add_problem(problems, path, "line 1", f"duplicate column(s) {', '.join(duplicates)}", "name every column once")
    rows: list[list[float]] = []
    bad = 0
    for lineno, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        message = ""
        if len(fields) != len(names):
            message = f"{len(fields)} value(s), the header has {len(names)} column(s)"
        else:
            wrong = [f.strip() for f in fields if not _NUMBER.fullmatch(f.strip())]
            if wrong:
                message = f"{wrong[0]!r} is not a number"
        if message:
            bad += 1
            if bad <= MAX_LINE_PROBLEMS:
                add_problem(problems, path, f"line {lineno}", message,
                            "write only comma-separated numbers as C literals (e.g. 0.5, -1e-3), no units or comments")
            continue
        rows.append([float(f) for f in fields])
    if bad > MAX_LINE_PROBLEMS:
        add_problem(problems, path, "", f"{bad - MAX_LINE_PROBLEMS} more line(s) with problems", "")
    if not bad and len(rows) < 2:
        add_problem(problems, path, "", f"{what} has {len(rows)} data row(s), at least 2 are needed",
                    "give the values at StartTime and StopTime at least")
    if len(problems) > before:
        return None
    data = np.array(rows, dtype=float)
    time = data[:, 0]
    down = np.nonzero(np.diff(time) < 0)[0]
    if down.size:
        add_problem(problems, path, f"line {down[0] + 3}",
                    f"time decreases from {time[down[0]]:g} to {time[down[0] + 1]:g}",
                    "the time in the first column must increase monotonically")
        return None
    if path.stat().st_size > MAX_CSV_BYTES:
        notes.append(f"{path.name} is larger than the 1 MB the rules allow")
    return CsvData(path, names[1:], time, {n: data[:, k + 1] for k, n in enumerate(names[1:])}, notes)


def read_ref_opt(path: str | Path, problems: list[Problem]) -> dict[str, float | str] | None:
    """Read ``_ref.opt`` (rules §9.1.4: ``Name, value`` lines; ``//`` comments as in the rules' example)."""
    path = Path(path)
    text = _read_text(path, problems, "the options file _ref.opt", "write StartTime, StopTime, StepSize and RelTol, "
                      "one 'Name,value' per line")
    if text is None:
        return None
    before = len(problems)
    opts: dict[str, float | str] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        body = line.split("//", 1)[0].strip()
        if not body:
            continue
        parts = [p.strip() for p in body.split(",")]
        if len(parts) != 2 or not parts[0]:
            add_problem(problems, path, f"line {lineno}", f"expected 'Name,value', found {body!r}", "e.g. StopTime,10")
            continue
        key, value = parts
        if key in NUMERIC_OPTIONS:
            if not _NUMBER.fullmatch(value):
                add_problem(problems, path, f"line {lineno}", f"{key}: {value!r} is not a number", f"e.g. {key},0.01")
                continue
            opts[key] = float(value)
        else:
            opts[key] = value
    missing = [k for k in REQUIRED_OPTIONS if k not in opts]
    if missing:
        add_problem(problems, path, "", f"missing required element(s) {', '.join(missing)}",
                    "the rules require StartTime, StopTime, StepSize and RelTol")
    if len(problems) > before:
        return None
    start, stop, step, rtol = (float(opts[k]) for k in REQUIRED_OPTIONS)
    if not start < stop:
        add_problem(problems, path, "StopTime", f"StopTime {stop:g} is not after StartTime {start:g}", "")
    elif not 0 <= step <= stop - start:
        add_problem(problems, path, "StepSize", f"StepSize {step:g} is not within [0, StopTime - StartTime]",
                    "use 0 for a variable-step solver")
    if rtol < 0:
        add_problem(problems, path, "RelTol", f"RelTol {rtol:g} is negative", "")
    if float(opts.get("OutputIntervalLength", 1.0)) <= 0:
        add_problem(problems, path, "OutputIntervalLength", "must be positive", "")
    return None if len(problems) > before else opts
