"""The sweep's table: one row per case (swept values, recorded values, status, reason, seconds, worker),
written as Parquet (pyarrow) and CSV, each atomically; recorded time series in ``<stem>.series.parquet``
(long format: case, time, one column per signal); a plot of a recorded value against one or two swept names.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..atomic import atomic_file
from .spec import SweepError

FORMATS = (".parquet", ".csv")


def output_paths(path: str | Path) -> tuple[Path, Path, Path]:
    """(Parquet, CSV, series) paths of ``-o``: the given file and its sibling in the other format."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise SweepError(f"-o {path}: the sweep table is written as .parquet or .csv; give a name ending in one")
    stem = path.with_suffix("")
    return stem.with_suffix(".parquet"), stem.with_suffix(".csv"), Path(f"{stem}.series.parquet")


def check_writable(paths: Sequence[Path]) -> None:
    """SweepError now, before any case runs, when a file cannot be created where it is to be written."""
    problems = []
    for path in paths:
        if path.is_dir():
            problems.append(f"{path}: is a folder; give a file name")
            continue
        folder = path.parent if str(path.parent) else Path(".")
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, probe = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".probe", dir=folder)
            os.close(fd)
            os.unlink(probe)
        except OSError as exc:
            problems.append(f"{path}: cannot write here ({exc.strerror or exc})")
    if problems:
        raise SweepError("; ".join(problems) + "; choose a writable output path with -o")


def columns(names: Sequence[str], records: Sequence[str], rows: Sequence[dict], cases: Sequence[dict]) -> dict:
    """The table as columns, rows sorted by case index: case, swept names, records, status, reason, seconds,
    worker. A failed case has NaN for its recorded values."""
    rows = sorted(rows, key=lambda r: r["index"])
    table: dict[str, list] = {"case": [r["index"] for r in rows]}
    for name in names:
        table[name] = [float(cases[r["index"]][name]) for r in rows]
    for rec in records:
        table[rec] = [float(r["values"].get(rec, math.nan)) for r in rows]
    table["status"] = [r["status"] for r in rows]
    table["reason"] = [r["reason"] for r in rows]
    table["seconds"] = [float(r["seconds"]) for r in rows]
    table["worker"] = [r["worker"] for r in rows]
    return table


def write_tables(table: dict, parquet: Path, csv: Path) -> None:
    """Parquet and CSV, each replaced atomically (a reader never sees half a file)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    arrow = pa.table(table)
    with atomic_file(parquet) as tmp:
        pq.write_table(arrow, tmp)
    with atomic_file(csv) as tmp:
        pacsv.write_csv(arrow, tmp)


def write_series(rows: Sequence[dict], path: Path) -> int:
    """The recorded time series of the successful cases in one long table; the number of rows written."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts = [(r["index"], r["series"]) for r in sorted(rows, key=lambda r: r["index"]) if r.get("series")]
    if not parts:
        return 0
    signals = list(dict.fromkeys(n for _, s in parts for n in s))
    table = {"case": np.concatenate([np.full(len(s["time"]), i, dtype=np.int64) for i, s in parts])}
    for name in signals:
        table[name] = np.concatenate([np.asarray(s.get(name, np.full(len(s["time"]), np.nan)), dtype=float)
                                      for _, s in parts])
    with atomic_file(path) as tmp:
        pq.write_table(pa.table(table), tmp)
    return len(table["case"])


def plot(table: dict, value: str, against: Sequence[str], path: str | Path) -> Path:
    """``value`` against one swept name (a line per value of a second one, if given as a grid), or a coloured
    scatter over two swept names; written atomically."""
    from ..simulation.plot import check_plot_path, pyplot

    path = check_plot_path(path)
    plt = pyplot()
    ok = np.array([s == "ok" for s in table["status"]])
    y = np.asarray(table[value], dtype=float)[ok]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    x = np.asarray(table[against[0]], dtype=float)[ok]
    if len(against) == 1:
        order = np.argsort(x, kind="stable")
        ax.plot(x[order], y[order], "o-", ms=3)
        ax.set_ylabel(value)
    else:
        z = np.asarray(table[against[1]], dtype=float)[ok]
        points = ax.scatter(x, z, c=y, s=25, cmap="viridis")
        fig.colorbar(points, ax=ax, label=value)
        ax.set_ylabel(against[1])
    ax.set_xlabel(against[0])
    ax.set_title(f"{value} ({int(ok.sum())} of {ok.size} cases ok)")
    fig.tight_layout()
    with atomic_file(path) as tmp:
        fig.savefig(tmp, format=path.suffix.lstrip(".").lower())
    plt.close(fig)
    return path
