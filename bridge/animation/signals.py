r"""The motion to animate, from a simulation result or from a CSV file written by any tool.

A CSV needs a ``time`` column and one column per coordinate of the system (``nhbridge simulate``, an FMU run by
fmpy or ``nhbridge validate``, a co-simulation whose columns carry a component prefix ``mechanics.x``: give the
prefix). Columns are checked before anything is drawn.

Examples
--------
>>> import tempfile, pathlib
>>> from bridge.animation.signals import read_csv_signals
>>> with tempfile.TemporaryDirectory() as tmp:
...     path = pathlib.Path(tmp) / "run.csv"
...     _ = path.write_text("time,x\n0,0.5\n0.1,0.6\n")
...     time, columns = read_csv_signals(path)
>>> time.tolist(), columns["x"].tolist()
([0.0, 0.1], [0.5, 0.6])
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from ..errors import Problem, SystemFileError

#: the largest CSV read for an animation (bytes)
MAX_CSV_BYTES = 1 << 30


def _error(path: Path, entry: str, message: str, hint: str = "") -> SystemFileError:
    return SystemFileError(Problem(entry, message, hint, str(path)))


def read_csv_signals(path: str | Path, prefix: str = "") -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``(time, columns)`` of a CSV file; with ``prefix``, only the columns that start with it, prefix removed.

    Raises
    ------
    SystemFileError
        The file is missing or unreadable, has no ``time`` column, a value that is not a finite number, or times
        that go backwards.
    """
    path = Path(path)
    try:
        if path.stat().st_size > MAX_CSV_BYTES:
            raise _error(path, "", f"the CSV file is larger than {MAX_CSV_BYTES >> 20} MB", "animate a shorter run")
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.reader(fh))
    except FileNotFoundError as exc:
        raise _error(path, "", "the CSV file does not exist", "give a CSV written by nhbridge simulate, an FMU run "
                     "or a co-simulation") from exc
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise _error(path, "", f"cannot read the CSV file ({exc})", "give a UTF-8 CSV file") from exc
    if not rows or not rows[0]:
        raise _error(path, "line 1", "the CSV file is empty", 'write a header line "time,x,..." and data below')
    header = [h.strip() for h in rows[0]]
    if header[0] != "time":
        raise _error(path, "line 1", f'the first column must be "time", found {header[0]!r}', 'write "time,x,..."')
    data = np.full((len(rows) - 1, len(header)), np.nan)
    for k, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise _error(path, f"line {k}", f"{len(row)} values, the header has {len(header)} columns",
                         "give every row a value per column")
        for j, cell in enumerate(row):
            try:
                value = float(cell)
            except ValueError as exc:
                raise _error(path, f"line {k}", f"{cell.strip()!r} in column {header[j]!r} is not a number",
                             "write numbers only below the header") from exc
            if not math.isfinite(value):
                raise _error(path, f"line {k}", f"column {header[j]!r} is {cell.strip()}", "animate a finite run")
            data[k - 2, j] = value
    if data.shape[0] == 0:
        raise _error(path, "line 2", "the CSV file has no data rows", "animate a run with at least one sample")
    time = data[:, 0]
    if np.any(np.diff(time) < 0):
        raise _error(path, "time", "the times go backwards", "sort the rows by time")
    columns = {}
    for j, name in enumerate(header[1:], start=1):
        if prefix:
            if not name.startswith(prefix):
                continue
            name = name[len(prefix):]
        columns[name] = data[:, j]
    return time, columns


def check_columns(system, columns: Mapping[str, np.ndarray], path: str | Path | None = None) -> None:
    """Refuse a motion that lacks a coordinate of ``system``, naming the columns it has instead."""
    import difflib

    missing = [c.name for c in system.coordinates if c.name not in columns]
    if missing:
        have = sorted(columns)
        near = {m: difflib.get_close_matches(m, have, n=1) for m in missing}
        hints = [f"{m!r}: did you mean {near[m][0]!r}?" for m in missing if near[m]]
        raise _error(Path(path or system.source), "columns", f"no column for the coordinate(s) {', '.join(missing)} "
                     f"of {system.name}", "; ".join(hints) or ("the CSV is not a run of this system, or its columns "
                     "carry a component prefix: give it (--component NAME for NAME.x)"))
