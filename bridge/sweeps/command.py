"""``nhbridge sweep``: parameter sweeps of a system's native FMU (FMI 2 Co-Simulation) on Dask.

The system is derived and its FMU built once; the cases run on the workers (:mod:`.engine`); the rows are
written as Parquet and CSV (:mod:`.results`). Bad input (names, ranges, sizes, scheduler, output paths) is
reported before anything is built. Ctrl-C writes the finished rows and exits 130.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import re
import sys
import tempfile
import time
from pathlib import Path

from ..commandline import Command, add_progress_options, add_set_option, positive
from ..errors import ProblemCollector
from .spec import (
    MAX_CASES,
    MAX_SAMPLES,
    SweepError,
    SweepSpec,
    check_names,
    check_size,
    parse_assignments,
    read_sweep_file,
    shown_name,
)


def add_parser(subparsers) -> None:
    """Add ``nhbridge sweep`` to the CLI's subparsers."""
    from ..derivation.methods import METHODS

    sw = subparsers.add_parser(
        "sweep", help="run a parameter sweep of a system's FMU on Dask (local cores or a cluster)",
        description="Sweep parameters and start values of a system through its FMU (built once, "
        "run by fmpy in Dask worker processes) and write one row per case as Parquet and CSV. "
        "FILE is a system file or a sweep file (TOML with a [sweep] table). Exit code 0: all cases "
        "ran; 1: some cases failed (their rows say why); 2: bad input; 130: interrupted (the "
        "finished rows are written).")
    sw.add_argument("file", metavar="FILE", help="system file (.toml) or sweep file ([sweep] table)")
    sw.add_argument("--grid", action="append", default=[], metavar="NAME=START:STOP:NUM",
                    help="NUM evenly spaced values from START to STOP (repeatable; the grids multiply)")
    sw.add_argument("--values", dest="value_lists", action="append", default=[], metavar="NAME=A,B,C",
                    help="the listed values (repeatable)")
    sw.add_argument("--random", action="append", default=[], metavar="NAME=LOW:HIGH",
                    help="Latin-hypercube samples in [LOW, HIGH) (repeatable; with --samples, --seed)")
    sw.add_argument("--samples", type=int, default=None, metavar="N", help="number of Latin-hypercube samples")
    sw.add_argument("--seed", type=int, default=None, metavar="S", help="seed of the Latin hypercube")
    sw.add_argument("--record", action="append", default=[], metavar="EXPR",
                    help="what to record per case (repeatable; default final): final, series, series(s), or "
                         "final/initial/min/max/mean(EXPR), e.g. 'max(abs(theta))', 'max(abs(residual))'")
    sw.add_argument("--reference", default=None, metavar="CSV",
                    help="a reference run (CSV: time and signal columns, e.g. from nhbridge simulate) for the metric "
                         "records max_abs(s), max_rel(s), rms(s), tube_violations(s)")
    sw.add_argument("--stop-time", type=positive, default=None, metavar="T", help="stop time (default: the file's)")
    sw.add_argument("--interval", type=positive, default=None, metavar="DT",
                    help="output interval of each case (default: stop time / 500)")
    sw.add_argument("--rtol", type=positive, default=None, metavar="RTOL",
                    help="relative tolerance of the FMU's integrator (default: 1e-8)")
    sw.add_argument("--method", "-m", choices=list(METHODS), default="lagrange",
                    help="derivation method of the FMU (default: lagrange)")
    sw.add_argument("-o", "--output", default="sweep.parquet", metavar="FILE",
                    help="the table (.parquet or .csv; the other format is written beside it; default sweep.parquet)")
    sw.add_argument("--scheduler", default="local", metavar="ADDRESS",
                    help="'local' (a LocalCluster on this machine, default) or a Dask scheduler, e.g. "
                         "tcp://host:8786")
    sw.add_argument("--workers", type=int, default=None, metavar="N",
                    help="worker processes of the local cluster (default: the number of cores)")
    sw.add_argument("--case-timeout", type=positive, default=300.0, metavar="SECONDS",
                    help="a case running longer is stopped and recorded as failed (default: 300)")
    sw.add_argument("--max-cases", type=int, default=MAX_CASES, metavar="N",
                    help=f"refuse sweeps with more cases unless --yes (default: {MAX_CASES:,})")
    sw.add_argument("--yes", action="store_true", help="run a sweep larger than --max-cases")
    sw.add_argument("--plot", default=None, metavar="FILE", help="plot a recorded value (.png, .pdf, .svg)")
    sw.add_argument("--plot-value", default=None, metavar="RECORD",
                    help="the recorded column to plot (default: the first --record that is not final)")
    sw.add_argument("--plot-against", default=None, metavar="NAME[,NAME]",
                    help="one or two swept names for the axes (default: the first one or two swept)")
    add_set_option(sw)
    add_progress_options(sw)


def _spec(args, problems: ProblemCollector) -> SweepSpec:
    from ..model.loader import load_system  # noqa: F401 - surfaces import problems early

    path = Path(args.file)
    text = ""
    with contextlib.suppress(OSError, UnicodeDecodeError):  # the loader reports a missing or unreadable file itself
        text = path.read_text(encoding="utf-8")
    is_sweep = any(line.strip() == "[sweep]" for line in text.splitlines())
    spec = read_sweep_file(path, problems) if is_sweep else SweepSpec(system=str(path))
    spec.axes += parse_assignments("grid", args.grid, problems)
    spec.axes += parse_assignments("values", args.value_lists, problems)
    spec.axes += parse_assignments("random", args.random, problems)
    spec.samples = args.samples if args.samples is not None else spec.samples
    spec.seed = args.seed if args.seed is not None else spec.seed
    spec.record = list(args.record) or spec.record
    spec.stop_time = args.stop_time or spec.stop_time
    spec.interval = args.interval or spec.interval
    spec.rtol = args.rtol or spec.rtol
    if args.reference:
        spec.reference = args.reference
    if args.samples is not None and args.samples < 1:
        problems.add("--samples", f"expected a positive number of samples, got {args.samples}")
    if args.workers is not None and args.workers < 1:
        problems.add("--workers", f"expected a positive number of workers, got {args.workers}")
    return spec


class _Progress:
    """``sweep: 120/1000 cases (2 failed), 35.1 cases/s, about 25 s left`` on stderr, at most once a second."""

    def __init__(self, args, total: int):
        self.on = bool(getattr(args, "progress", False)) or (not getattr(args, "quiet", False) and _tty())
        self.total, self.done, self.failed = total, 0, 0
        self.t0 = self.last = time.perf_counter()

    def row(self, row: dict) -> None:
        self.done += 1
        self.failed += row["status"] != "ok"
        now = time.perf_counter()
        if self.on and (now - self.last >= 1.0 or self.done == self.total):
            self.last = now
            rate = self.done / max(now - self.t0, 1e-9)
            left = (self.total - self.done) / rate
            print(f"sweep: {self.done}/{self.total} cases ({self.failed} failed), {rate:.1f} cases/s, "
                  f"about {_duration(left)} left", file=sys.stderr, flush=True)


def _tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _duration(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _plot_choice(args, spec: SweepSpec, columns: list[str], problems: ProblemCollector) -> tuple[str, list[str]]:
    value = args.plot_value or next((c for c in columns if not c.startswith("final(")), columns[0] if columns else "")
    if value not in columns:
        problems.add("--plot-value", f"{value!r} is not a recorded column", "recorded: " + ", ".join(columns))
    against = [n.strip() for n in args.plot_against.split(",")] if args.plot_against else spec.names[:2]
    if not 1 <= len(against) <= 2 or any(n not in spec.names for n in against):
        problems.add("--plot-against", f"expected one or two swept names, got {', '.join(against) or 'none'}",
                     "swept: " + ", ".join(spec.names))
    return value, against


def prepare(args):
    """Everything checked before a case runs: (spec, system, eom, plan, cases, paths, plot choice)."""
    from ..model.loader import load_system
    from ..model.overrides import override_names
    from ..simulation.plot import check_plot_path, pyplot
    from .record import parse_records
    from .results import check_writable, output_paths

    problems = ProblemCollector(args.file)
    spec = _spec(args, problems)
    paths = output_paths(args.output)
    system = load_system(spec.system, dict(getattr(args, "values", None) or []) or None)
    check_names(spec, override_names(system), system.name, problems)
    signals = [c.name for c in system.coordinates] + [f"der({c.name})" for c in system.coordinates] + \
        list(system.outputs)
    entry = f"--reference {args.reference}" if args.reference else f"[sweep] reference {spec.reference}"
    reference = read_reference(spec.reference, problems, entry) if spec.reference else None
    plan = parse_records(spec.record, signals, len(system.constraints), problems,
                         None if reference is None else [k for k in reference if k != "time"])
    choice = _plot_choice(args, spec, [r.column for r in plan.records], problems) if args.plot else None
    problems.raise_if_any(SweepError)
    stop = spec.stop_time or system.stop_time
    if spec.interval and stop / spec.interval > MAX_SAMPLES:
        problems.add("--interval", f"stop time / interval = {stop / spec.interval:.3g} samples per case, more than "
                     f"{MAX_SAMPLES:.0e}", "choose a larger --interval")
    problems.raise_if_any(SweepError)
    check_size(spec, args.max_cases, args.yes)
    if args.scheduler not in (None, "", "local"):
        from .engine import CONNECT_TIMEOUT, check_address

        check_address(args.scheduler, CONNECT_TIMEOUT)  # before the FMU is built
    check_writable([*paths[:2], *([paths[2]] if plan.series else [])])
    if args.plot:
        check_plot_path(args.plot)
        pyplot()
    return spec, system, plan, paths, choice, reference


def read_reference(path: str, problems: ProblemCollector, entry: str | None = None) -> dict | None:
    """Read the reference run: ``time`` (increasing) and finite numeric signal columns.

    None and a problem (under ``entry``, default ``--reference PATH``) if the file is not such a run.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.csv as pacsv

    entry = entry or f"--reference {path}"

    try:
        table = pacsv.read_csv(path)
    except OSError as exc:
        problems.add(entry, f"cannot read the CSV ({exc.strerror or type(exc).__name__})",
                     "give a CSV with a time column, e.g. written by nhbridge simulate")
        return None
    except pa.ArrowInvalid as exc:  # its text quotes the file's rows: only the kind of fault is said
        counts = re.search(r"Expected \d+ columns, got \d+", str(exc))
        problems.add(entry, "cannot read the CSV (" + (counts.group(0) if counts else "not a CSV table") + ")",
                     "give a CSV with a time column, e.g. written by nhbridge simulate")
        return None
    columns = {}
    for k, name in enumerate(table.column_names):
        try:
            columns[name] = np.asarray(table[name].to_numpy(), dtype=float)
        except (TypeError, ValueError, pa.ArrowInvalid):
            problems.add(entry, f"column {k + 1} {shown_name(name)} is not numeric")
    time = columns.get("time")
    if time is None or time.size < 2 or not np.all(np.diff(time) > 0):
        problems.add(entry, "needs a time column with at least two increasing values")
        return None
    bad = [n for n, v in columns.items() if not np.all(np.isfinite(v))]
    if bad:
        problems.add(entry, f"column(s) {', '.join(bad)} hold values that are not finite numbers")
    return columns


def build_payload(system, plan, spec: SweepSpec, method: str, timeout: float, reference: dict | None = None):
    """Derive, build the FMU once (FMI 2, native) and pack what the workers need."""
    from ..derivation.methods import METHODS
    from ..fmu.build import build_fmu
    from ..fmu.layout import layout, start_split
    from .engine import Payload

    eom = METHODS[method].derive(system, system.independent)
    with tempfile.TemporaryDirectory(prefix="nhbridge-sweep-") as tmp:
        fmu = build_fmu(eom, Path(tmp) / f"{system.name}.fmu", 2).read_bytes()
    lay = layout(eom, 2)
    dependent = start_split(eom)
    recompute = {f"der({system.coordinates[i].name})" for i in dependent}
    if system.holonomic:
        recompute |= {system.coordinates[i].name for i in dependent}
    settable = tuple(v.name for v in lay.variables if v.start is not None)
    stop = spec.stop_time or system.stop_time
    return Payload(fmu=fmu, plan=plan, residuals=len(system.constraints), stop_time=float(stop),
                   interval=float(spec.interval or stop / 500), rtol=float(spec.rtol), timeout=float(timeout),
                   system=system,
                   recompute=frozenset(recompute & set(spec.names)), settable=settable, reference=reference)


def run(args: argparse.Namespace) -> int:
    """Check everything, build the FMU once, run the cases on Dask and write the rows as they arrive."""
    from .engine import dask_client, run_cases
    from .results import StreamingTables, plot, read_columns

    spec, system, plan, paths, choice, reference = prepare(args)
    total = spec.size()
    progress = _Progress(args, total)
    t0 = time.perf_counter()
    if progress.on:
        print(f"sweep: deriving {system.name} ({args.method}) and building its FMU ...", file=sys.stderr, flush=True)
    payload = build_payload(system, plan, spec, args.method, args.case_timeout, reference)
    t_build = time.perf_counter() - t0
    records = [r.column for r in plan.records]
    interrupted, workers = False, 0
    with StreamingTables(spec.names, records, paths[0], paths[1], paths[2] if plan.series else None) as tables:

        def on_row(row: dict, case: dict) -> None:
            tables.add(row, case)
            progress.row(row)

        t1 = time.perf_counter()
        try:  # Ctrl-C while the cluster starts, runs or shuts down: the rows finished so far are written
            with dask_client(args.scheduler, args.workers) as client:
                workers = len(client.nthreads())
                if progress.on:
                    print(f"sweep: {total} cases on {workers} worker(s) at {client.scheduler.address}",
                          file=sys.stderr, flush=True)
                progress.t0 = progress.last = time.perf_counter()
                run_cases(client, payload, spec.iter_cases(), on_row)
        except KeyboardInterrupt:
            interrupted = True
        t_run = time.perf_counter() - t1
    rows, failed = tables.rows, tables.failed
    print(f"{system.name}: {rows} of {total} cases in {t_run:.1f} s on {workers} worker(s) "
          f"({rows / max(t_run, 1e-9):.1f} cases/s; FMU built in {t_build:.1f} s), {failed} failed")
    print(f"  wrote {paths[0]} and {paths[1]} ({rows} rows, {len(tables.schema)} columns)")
    if plan.series:
        print(f"  wrote {paths[2]} ({tables.series_rows} rows)")
    if tables.first_failure is not None:
        print(f"  case {tables.first_failure[0]} failed: {tables.first_failure[1]}")
    if args.plot and rows:
        plot(read_columns(paths[0], [choice[0], *choice[1], "status"]), choice[0], choice[1], args.plot)
        print(f"  wrote {args.plot}")
    if interrupted:
        print(f"nhbridge: interrupted; the {rows} finished case(s) are written", file=sys.stderr)
        return 130
    return 1 if failed else 0


COMMANDS = (Command("sweep", add_parser, run),)
