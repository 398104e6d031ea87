"""Time-varying inputs for the native simulation, from a CSV file in the format fmpy reads.

The first column is ``time`` (non-decreasing; a repeated time is a jump), then one column per input
of the system, named like the input. Between rows the values are interpolated linearly; before the
first and after the last row they are held (as fmpy does).
"""

from __future__ import annotations

import csv
import difflib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import Problem, SystemFileError
from ..model.system import System

__all__ = ["InputTable", "read_inputs"]


@dataclass(frozen=True)
class InputTable:
    """u(t) by linear interpolation in (time, values); ``names`` in the system's input order."""

    names: tuple[str, ...]
    time: np.ndarray      # (N,)
    values: np.ndarray    # (N, len(names))

    def __call__(self, t: float) -> np.ndarray:
        """Return the inputs at time ``t``, interpolated linearly (held constant outside the table).

        Parameters
        ----------
        t : float
            Time.

        Returns
        -------
        numpy.ndarray
            One value per input, in the order of :attr:`names`.
        """
        return np.array([np.interp(t, self.time, self.values[:, k]) for k in range(len(self.names))])

    def __repr__(self) -> str:
        return (f"InputTable({', '.join(self.names)}: {len(self.time)} rows, "
                f"t = {self.time[0]:g} .. {self.time[-1]:g} s)")


def read_inputs(path: str | Path, system: System) -> InputTable:
    r"""Return the input table in ``path`` for ``system``.

    A CSV file with a header ``time,<input>,...`` (one column per input of the system, in any order) and rows of
    finite numbers with non-decreasing time; :func:`bridge.simulate` interpolates it linearly (``inputs=``).

    Parameters
    ----------
    path : str or pathlib.Path
        The CSV file.
    system : System
        The system whose inputs the table drives.

    Returns
    -------
    InputTable
        ``table(t)`` gives the inputs at time ``t``, in the system's input order.

    Raises
    ------
    SystemFileError
        Every problem at once: missing or unknown columns, a time that decreases, a cell that is not a finite number.

    Examples
    --------
    A cart pushed by a force ramp ``F = 2 t``: ``m x'' = F`` gives ``x(1) = 1/6`` for ``m = 2``.

    >>> import tempfile
    >>> from pathlib import Path
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Cart"
    ... [coordinates]
    ... x = { start = 0.0, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... [inputs]
    ... F = { unit = "N" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... [forces]
    ... x = "F"
    ... ''')
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "push.csv"
    ...     _ = path.write_text("time,F\n0,0\n1,2\n")
    ...     table = bridge.read_inputs(path, system)
    >>> table
    InputTable(F: 2 rows, t = 0 .. 1 s)
    >>> table(0.25).tolist()
    [0.5]
    >>> result = bridge.simulate(bridge.derive(system), 1.0, inputs=table)
    >>> round(float(result["x"][-1]), 6)
    0.166667
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise SystemFileError(Problem("", f"cannot read the input file ({getattr(exc, 'strerror', None) or exc})",
                                      "give a CSV file with a time column and one column per input",
                                      str(path))) from exc
    rows = [(k, r) for k, r in enumerate(csv.reader(text.splitlines()), start=1) if any(c.strip() for c in r)]
    problems: list[Problem] = []

    def add(entry: str, message: str, hint: str = "") -> None:
        problems.append(Problem(entry, message, hint, str(path)))

    wanted = [u.name for u in system.inputs]
    if not rows:
        add("", "the input file is empty", "write a header row: time," + ",".join(wanted or ["<input>"]))
        raise SystemFileError(problems)
    header = [h.strip().strip('"') for h in rows[0][1]]
    _check_header(header, wanted, system.name, add, f"row {rows[0][0]}")
    data = _numbers(rows[1:], len(header), add)
    if not problems and not data:
        add("", "the input file has a header but no rows", "add at least one row of values")
    if problems:
        raise SystemFileError(problems)
    table = np.array(data, dtype=float)
    time = table[:, 0]
    back = np.nonzero(np.diff(time) < 0)[0]
    if back.size:
        i = int(back[0]) + 1  # the data row whose time is smaller than the one before it
        add(f"row {rows[i + 1][0]}", f"time decreases from {time[i - 1]:g} to {time[i]:g}",
            "sort the rows by time (equal times are allowed: they make a jump)")
        raise SystemFileError(problems)
    columns = [header.index(n) for n in wanted]
    return InputTable(tuple(wanted), time, table[:, columns].reshape(len(time), len(wanted)))


def _check_header(header: Sequence[str], wanted: Sequence[str], model: str, add, where: str) -> None:
    """Check the header: time first, one column per input, no column unknown or repeated."""
    if not header or header[0] != "time":
        add(where, f"the first column must be 'time', not {header[0] if header else ''!r}",
            "write the header as time," + ",".join(wanted or ["<input>"]))
    seen: set[str] = set()
    for name in header[1:]:
        if name in seen:
            add(where, f"the column {name!r} appears more than once", "give each input one column")
        elif name not in wanted:
            close = difflib.get_close_matches(name, wanted, n=1)
            add(where, f"the column {name!r} is not an input of {model}",
                f"did you mean {close[0]!r}?" if close else
                ("inputs: " + ", ".join(wanted)) if wanted else f"{model} has no [inputs]; leave out --input")
        seen.add(name)
    for name in wanted:
        if name not in header:
            add(where, f"the input {name!r} has no column", f"add a column named {name}")


def _numbers(rows: Sequence[tuple[int, Sequence[str]]], width: int, add) -> list[list[float]]:
    """Return the data rows as floats.

    A short row or a cell that is not a finite number is a problem (at most 5 shown).
    """
    out, shown = [], 0
    for k, row in rows:
        values = []
        if len(row) != width:
            add(f"row {k}", f"{len(row)} values for {width} columns", "give one value per column")
            shown += 1
        for cell in row[:width]:
            try:
                v = float(cell)
            except ValueError:
                v = math.nan
            if not math.isfinite(v):
                if shown < 5:
                    add(f"row {k}", f"{cell.strip()!r} is not a finite number", "write numbers like 0.5 or 1e-3")
                shown += 1
            values.append(v)
        out.append(values)
        if shown >= 5:
            break
    return out
