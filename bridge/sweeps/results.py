"""The sweep's table: one row per case, written while the cases run.

Each row holds the swept values, recorded values, status, reason, seconds and worker, written as Parquet (pyarrow) and
CSV while the cases run (:class:`StreamingTables`), each file replaced atomically at the end; recorded time series in
``<stem>.series.parquet`` (long format: case, time, one column per signal); a plot of a recorded value against one or
two swept names.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from ..atomic import atomic_file
from .spec import SweepError

FORMATS = (".parquet", ".csv")
CHUNK_ROWS = 4096        # rows per Parquet row group and CSV chunk of a streamed table
REORDER_ROWS = 65536     # finished rows held back at most, waiting for an earlier case, before they are written
SERIES_SAMPLES = 1 << 18  # recorded series samples gathered at most before they are written


def output_paths(path: str | Path) -> tuple[Path, Path, Path]:
    """Return the (Parquet, CSV, series) paths of ``-o``: the given file and its sibling in the other format."""
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise SweepError(f"-o {path}: the sweep table is written as .parquet or .csv; give a name ending in one")
    stem = path.with_suffix("")
    return stem.with_suffix(".parquet"), stem.with_suffix(".csv"), Path(f"{stem}.series.parquet")


def check_writable(paths: Sequence[Path]) -> None:
    """Raise SweepError now, before any case runs, when a file cannot be created where it is to be written."""
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


class StreamingTables:
    """The sweep's table written while the cases run.

    Rows in case order, in Parquet row groups and CSV chunks of :data:`CHUNK_ROWS`, recorded series likewise; each file
    replaces its path atomically at :meth:`close`.

    Memory is bounded whatever the number of cases: at most :data:`REORDER_ROWS` finished rows wait for an
    earlier case that still runs (past that the earliest waiting rows are written, and the late case's row
    comes where it finishes: the ``case`` column gives the order), plus one chunk being written.
    """

    def __init__(self, names: Sequence[str], records: Sequence[str], parquet: Path, csv: Path,
                 series: Path | None = None):
        import contextlib

        import pyarrow as pa

        self.names, self.records = list(names), list(records)
        self.schema = pa.schema([("case", pa.int64()), *((n, pa.float64()) for n in self.names),
                                 *((r, pa.float64()) for r in self.records), ("status", pa.string()),
                                 ("reason", pa.string()), ("seconds", pa.float64()), ("worker", pa.string())])
        self._stack = contextlib.ExitStack()
        self._tmp = [self._stack.enter_context(atomic_file(p)) for p in (parquet, csv)]
        self._series_path = series
        self._series_tmp: Path | None = None
        self._writers: list = []
        self._series_writer = None
        self._series_schema = None
        self._waiting: dict[int, tuple[dict, dict]] = {}
        self._next = 0
        self._chunk: list[tuple[dict, dict]] = []
        self._series_chunk: list[tuple[int, dict]] = []
        self.rows = self.failed = self.series_rows = 0
        self.first_failure: tuple[int, str] | None = None

    def __enter__(self) -> StreamingTables:
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.close()
        else:
            self._stack.__exit__(kind, value, tb)  # the temporary files are removed, the old files stay

    def add(self, row: dict, case: Mapping[str, float]) -> None:
        """Add one finished row (``index``, ``status``, ``reason``, ``values``, ``series``, ...) with its case."""
        self._waiting[int(row["index"])] = (row, dict(case))
        while self._next in self._waiting:
            self._take(self._waiting.pop(self._next))
            self._next += 1
        if len(self._waiting) > REORDER_ROWS:  # an early case still runs: write the earliest waiting rows
            for index in sorted(self._waiting)[:CHUNK_ROWS]:
                self._take(self._waiting.pop(index))

    def _take(self, item: tuple[dict, dict]) -> None:
        row = item[0]
        self.rows += 1
        if row["status"] != "ok":
            self.failed += 1
            if self.first_failure is None or row["index"] < self.first_failure[0]:
                self.first_failure = (int(row["index"]), str(row["reason"]))
        self._chunk.append(item)
        if row.get("series"):
            self._series_chunk.append((int(row["index"]), row["series"]))
        if len(self._chunk) >= CHUNK_ROWS:
            self._flush()
        elif self._series_path is not None and sum(len(s["time"]) for _, s in self._series_chunk) > SERIES_SAMPLES:
            self._write_series()

    def _flush(self) -> None:
        import pyarrow as pa
        import pyarrow.csv as pacsv
        import pyarrow.parquet as pq

        if not self._writers:
            self._writers = [pq.ParquetWriter(str(self._tmp[0]), self.schema),
                             pacsv.CSVWriter(str(self._tmp[1]), self.schema)]
        batch = pa.table(_chunk_columns(self.names, self.records, self._chunk), schema=self.schema)
        for writer in self._writers:
            writer.write_table(batch)
        self._chunk = []
        if self._series_chunk and self._series_path is not None:
            self._write_series()

    def _write_series(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        parts = self._series_chunk
        self._series_chunk = []
        if self._series_writer is None:
            signals = list(dict.fromkeys(n for _, s in parts for n in s))
            self._series_schema = pa.schema([("case", pa.int64()), *((n, pa.float64()) for n in signals)])
            self._series_tmp = self._stack.enter_context(atomic_file(self._series_path))
            self._series_writer = pq.ParquetWriter(str(self._series_tmp), self._series_schema)
        table = {"case": np.concatenate([np.full(len(s["time"]), i, dtype=np.int64) for i, s in parts])}
        for name in self._series_schema.names[1:]:
            table[name] = np.concatenate([np.asarray(s.get(name, np.full(len(s["time"]), np.nan)), dtype=float)
                                          for _, s in parts])
        self.series_rows += len(table["case"])
        self._series_writer.write_table(pa.table(table, schema=self._series_schema))

    def close(self) -> None:
        """Write what waits (in case order) and replace the output files."""
        for index in sorted(self._waiting):
            self._take(self._waiting.pop(index))
        if self._chunk or not self._writers:
            self._flush()
        for writer in self._writers:
            writer.close()
        if self._series_writer is not None:
            self._series_writer.close()
        self._stack.close()


def _chunk_columns(names: Sequence[str], records: Sequence[str], chunk: Sequence[tuple[dict, dict]]) -> dict:
    table: dict[str, list] = {"case": [int(r["index"]) for r, _ in chunk]}
    for name in names:
        table[name] = [float(c[name]) for _, c in chunk]
    for rec in records:
        table[rec] = [float(r["values"].get(rec, math.nan)) for r, _ in chunk]
    table["status"] = [r["status"] for r, _ in chunk]
    table["reason"] = [r["reason"] for r, _ in chunk]
    table["seconds"] = [float(r["seconds"]) for r, _ in chunk]
    table["worker"] = [r["worker"] for r, _ in chunk]
    return table


def read_columns(path: Path, names: Sequence[str]) -> dict:
    """Return some columns of a written sweep table (Parquet), e.g. for :func:`plot`."""
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=list(dict.fromkeys(names))).to_pydict()


def plot(table: dict, value: str, against: Sequence[str], path: str | Path) -> Path:
    """Plot ``value`` against one swept name (a line per value of a second one, if given as a grid).

    Or a coloured scatter over two swept names; written atomically.
    """
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
