"""A longer fuzzing run than CI's (tests/test_fuzz.py): the same generators, many more inputs, every failure
kept instead of stopping at the first.

    python3 benchmarks/fuzz.py [--examples 1000] [--seed 0] [--keep DIR] [--surfaces files|tables|all]

``--surfaces tables`` runs the generators of the newer surfaces (body, effort, friction and diode tables, sweep
files): each input in a child forked from this process with a CPU-time limit (``--timeout``, default 60 s;
wall time at most 30 times that), the child's CPU time and peak memory taken from ``wait4``; a loaded table file
is also simulated for 0.05 s. The parent checks and simulates one valid input of each generator before the first
fork (:func:`_warm_up`), so that every child starts with the lazily imported modules and the compilers' first-use
caches in place: a warm child takes 0.03-0.2 s of CPU per input where a cold one took about 1 s.
It reports per generator the inputs, loaded, refused, failures (a traceback or a message quoting a reference),
hangs (killed at the limit) and the largest peak memory; failing and hanging inputs go to ``--keep``.

Prints, per generator, the inputs, how many loaded (exit 0), how many were refused cleanly (exit 2, one
paragraph per problem), the failures (any other exit, a traceback or an exception) and the slowest input.
Failing inputs (and the slowest of each generator) are written to ``--keep`` (default ``fuzz-failures/``) to
become regression files. Inputs that load are also derived and printed to Modelica and C (expressions,
mutations), without unevaluated derivatives or non-finite numbers.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from benchmarks.timing import machine  # noqa: E402
from tests.test_fuzz import (  # noqa: E402
    EXPRESSION_FILE,
    Tally,
    body_files,
    diode_files,
    effort_files,
    exported,
    expressions,
    friction_files,
    mutations,
    run_check,
    run_sweep_check,
    sweep_files,
    system_files,
    toml_string,
)


def fuzz(strategy, to_file, examples: int, rng_seed: int, export: bool) -> tuple[Tally, float, str]:
    """Run one generator; ``export``: a loaded input must also derive and print to Modelica and C."""
    tally, slowest = Tally(), [0.0, ""]

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def run(value):
        text = to_file(value)
        start = time.perf_counter()
        try:
            code, _ = run_check(text, tally)
            if export and code == 0:
                try:
                    exported(text)
                except BaseException:
                    tally.failures.append(text + "\n# " + traceback.format_exc().replace("\n", "\n# "))
        except AssertionError:
            pass  # recorded in the tally
        except BaseException:
            tally.inputs += 1
            tally.failures.append(text + "\n# " + traceback.format_exc().replace("\n", "\n# "))
        elapsed = time.perf_counter() - start
        if elapsed > slowest[0]:
            slowest[:] = [elapsed, text]

    run()
    return tally, slowest[0], slowest[1]


def _inputs(strategy, examples: int, rng_seed: int) -> list:
    """``examples`` values drawn by hypothesis (deterministic for a seed)."""
    drawn: list = []

    @seed(rng_seed)
    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value):
        drawn.append(value)

    collect()
    return drawn


#: a child's wall-time limit, in multiples of its CPU-time limit (on a loaded machine a niced child waits long)
WALL_FACTOR = 30


def _in_child(fn, timeout: float) -> tuple[str, float, float, str]:
    """``fn()`` in a forked child: (outcome, CPU seconds, peak MiB, detail); outcome ``ok``, ``failure`` (an
    AssertionError or any exception, with its traceback) or ``hang`` (past ``timeout`` s of CPU time, or
    ``WALL_FACTOR`` times that of wall time). CPU time, not wall time, measures an input: under a niced run on a
    shared machine the wall time mostly measures the other processes."""
    import json
    import math
    import os
    import resource
    import select
    import signal

    read, write = os.pipe()
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:  # the child: run, report one JSON line, leave without cleanup whatever happens
        try:
            os.close(read)
            limit = max(1, math.ceil(timeout))
            resource.setrlimit(resource.RLIMIT_CPU, (limit, limit + 1))  # SIGXCPU past it, SIGKILL a second later
            try:
                outcome = ["ok", str(fn())]
            except BaseException:
                outcome = ["failure", traceback.format_exc()]
            os.write(write, json.dumps(outcome).encode())
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    deadline = start + WALL_FACTOR * timeout
    hung = False
    while True:
        left = deadline - time.perf_counter()
        if left <= 0:
            hung = True
            os.kill(pid, signal.SIGKILL)
            break
        ready, _, _ = select.select([read], [], [], left)
        if ready:
            chunk = os.read(read, 1 << 16)
            if not chunk:
                break
            data += chunk
    os.close(read)
    _, status, usage = os.wait4(pid, 0)
    seconds = usage.ru_utime + usage.ru_stime
    peak = usage.ru_maxrss / 1024
    if hung:
        return "hang", seconds, peak, f"killed after {WALL_FACTOR * timeout:g} s of wall time"
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) in (signal.SIGXCPU, signal.SIGKILL):
        return "hang", seconds, peak, f"killed after {timeout:g} s of CPU time"
    if not data:
        return "failure", seconds, peak, f"the child died (wait status {status})"
    outcome, detail = json.loads(data)
    return outcome, seconds, peak, detail


def _table_check(text: str) -> str:
    """``check``; a file that loads is also simulated for 0.05 s (exit 0, 1 or 2 without a traceback)."""
    import contextlib
    import io
    import tempfile

    from bridge.cli import main as cli

    code, _ = run_check(text)
    if code != 0:
        return "refused"
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.toml"
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            run = cli(["simulate", str(path), "--stop-time", "0.05", "-o", str(Path(folder) / "out.csv"), "-q"])
        assert run in (0, 1, 2) and "Traceback" not in err.getvalue(), f"simulate exit {run}:\n{err.getvalue()}"
    return "loaded"


def _sweep_check(case) -> str:
    return "loaded" if run_sweep_check(*case)[0] == 0 else "refused"


def _warm_up(generators, timeout: float) -> None:
    """Check (and simulate) the first, valid input of each generator in this process before any child is forked:
    the children inherit the modules imported on first use and the compilers' caches (a cold child spends seconds
    importing them). Each warm-up call is cut off after ``timeout`` s of CPU time (it only has to start things)."""
    import signal

    def stop(signum, frame):
        raise TimeoutError

    previous = signal.signal(signal.SIGVTALRM, stop)
    try:
        for _, strategy, check in generators:
            for value in _inputs(strategy, 1, 0):
                signal.setitimer(signal.ITIMER_VIRTUAL, timeout)
                try:
                    check(value)
                except BaseException:
                    pass
                finally:
                    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    finally:
        signal.signal(signal.SIGVTALRM, previous)


def tables(args) -> list[dict]:
    """The newer surfaces, each input in a forked child with a time limit and its peak memory; the generators
    take turns (one input each), so that a run stopped early has counts for every surface; the table is printed
    every ``--report`` inputs and at the end. Returns a row of counts per generator."""
    generators = [("body tables", body_files(), _table_check), ("effort tables", effort_files(), _table_check),
                  ("friction", friction_files(), _table_check), ("diode tables", diode_files(), _table_check),
                  ("sweep files", sweep_files(), _sweep_check)]
    generators = [g for g in generators if _chosen(args, g[0])]
    if not generators:
        return []
    args.keep.mkdir(parents=True, exist_ok=True)
    _warm_up(generators, min(args.timeout, 20.0))
    examples = args.table_examples if args.table_examples is not None else args.examples
    drawn: dict[str, list] = {name: [] for name, _, _ in generators}
    batch = 50  # inputs drawn at a time per generator (seed + batch number): the children start at once
    stats = {name: {"inputs": 0, "loaded": 0, "refused": 0, "failure": 0, "hang": 0, "peak": 0.0, "slowest": 0.0}
             for name, _, _ in generators}
    start, done = time.perf_counter(), 0
    for k in range(examples):
        for name, strategy, check in generators:
            if k % batch == 0:
                drawn[name] = _inputs(strategy, min(batch, examples - k), args.seed * 100_003 + k // batch)
            if k % batch >= len(drawn[name]):
                continue
            value = drawn[name][k % batch]
            outcome, seconds, mib, detail = _in_child(lambda v=value, c=check: c(v), args.timeout)
            st_ = stats[name]
            st_["inputs"] += 1
            st_[detail if outcome == "ok" else outcome] += 1
            st_["peak"], st_["slowest"] = max(st_["peak"], mib), max(st_["slowest"], seconds)
            if outcome != "ok":
                text = value if isinstance(value, str) else value[0] + "\n# reference:\n" + repr(value[1])
                stem = f"{outcome}_{name.replace(' ', '_')}_{k:05d}"
                (args.keep / f"{stem}.toml").write_text(text + "\n# " + detail.replace("\n", "\n# "),
                                                        encoding="utf-8", errors="surrogateescape")
            done += 1
            if done % args.report == 0:
                _print_stats(stats, time.perf_counter() - start)
                _update_page(args, _table_rows(stats))
    _print_stats(stats, time.perf_counter() - start)
    if sum(s["failure"] + s["hang"] for s in stats.values()):
        print(f"failing and hanging inputs written to {args.keep}/")
    return _table_rows(stats)


def _table_rows(stats: dict) -> list[dict]:
    return [{"generator": name, "process": "forked child", **s} for name, s in stats.items()]


def _update_page(args, rows: list[dict]) -> None:
    """The page with the counts so far (a run stopped early still leaves its counts)."""
    if args.page is not None:
        write_page(args, rows, args.started, time.perf_counter() - args.wall)


def _print_stats(stats: dict, seconds: float) -> None:
    print(f"after {seconds:.0f} s:")
    print(f"{'generator':<15}{'inputs':>8}{'loaded':>8}{'refused':>9}{'failures':>10}{'hangs':>7}{'peak MiB':>10}"
          f"{'slowest':>10}")
    total = {"inputs": 0, "loaded": 0, "refused": 0, "failure": 0, "hang": 0, "peak": 0.0, "slowest": 0.0}
    for name, s in [*stats.items(), ("total", total)]:
        if name == "total":
            for key in ("inputs", "loaded", "refused", "failure", "hang"):
                total[key] = sum(v[key] for v in stats.values())
            total["peak"] = max(v["peak"] for v in stats.values())
            total["slowest"] = max(v["slowest"] for v in stats.values())
        print(f"{name:<15}{s['inputs']:>8}{s['loaded']:>8}{s['refused']:>9}{s['failure']:>10}{s['hang']:>7}"
              f"{s['peak']:>10.0f}{s['slowest']:>9.1f}s", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="inputs per generator (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"))
    parser.add_argument("--surfaces", choices=["files", "tables", "all"], default="files",
                        help="files: expressions, system files, mutations (in this process); tables: body, effort, "
                             "friction, diode tables and sweep files (each input in a forked child); all: both")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="CPU seconds per input of --surfaces tables (wall time: 30 times that)")
    parser.add_argument("--report", type=int, default=50, help="--surfaces tables: print the counts every N inputs")
    parser.add_argument("--table-examples", type=int, default=None,
                        help="inputs per generator of --surfaces tables (default: --examples)")
    parser.add_argument("--page", type=Path, default=None,
                        help="also write the tally as a Markdown page (e.g. docs/benchmarks/fuzz.md); the rows of "
                             "generators this run leaves out are kept from the page's previous version")
    parser.add_argument("--chunk", type=int, default=100,
                        help="--surfaces files: the generators take turns of this many inputs; the page follows each")
    parser.add_argument("--only", default=None,
                        help="comma-separated generator names to run (e.g. 'diode tables,sweep files')")
    args = parser.parse_args()
    print(machine())
    args.started, args.wall = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), time.perf_counter()
    rows: list[dict] = []
    if args.surfaces in ("tables", "all"):
        rows += tables(args)
    if args.surfaces in ("files", "all"):
        rows += files(args)
    _update_page(args, rows)
    return 1 if any(r["failure"] or r["hang"] for r in rows) else 0


def files(args) -> list[dict]:
    """Expressions, whole system files and mutations, in this process (no time limit per input)."""
    import resource

    generators = [("expressions", expressions(), lambda e: EXPRESSION_FILE % toml_string(e), True),
                  ("system files", system_files(), lambda t: t, False),
                  ("mutations", mutations(), lambda t: t, True)]
    generators = [g for g in generators if _chosen(args, g[0])]
    tallies = {name: Tally() for name, _, _, _ in generators}
    slowest = {name: (0.0, "") for name, _, _, _ in generators}
    failures: list[str] = []
    args.keep.mkdir(parents=True, exist_ok=True)
    chunk = args.chunk  # the generators take turns, chunk inputs each (seed + chunk number); the page follows
    for c in range((args.examples + chunk - 1) // chunk):
        for name, strategy, to_file, export in generators:
            part, slow, slow_text = fuzz(strategy, to_file, min(chunk, args.examples - c * chunk),
                                         args.seed * 100_003 + c, export)
            total = tallies[name]
            total.inputs, total.loaded, total.rejected = (total.inputs + part.inputs, total.loaded + part.loaded,
                                                          total.rejected + part.rejected)
            total.failures += part.failures
            for text in part.failures:  # kept at once: a run stopped early keeps what it found
                (args.keep / f"failure_{len(failures):03d}.toml").write_text(text, encoding="utf-8",
                                                                             errors="surrogateescape")
                failures.append(text)
            if slow > slowest[name][0]:
                slowest[name] = (slow, slow_text)
        rows = [{"generator": name, "process": "in process", "inputs": t.inputs, "loaded": t.loaded,
                 "refused": t.rejected, "failure": len(t.failures), "hang": 0,
                 "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "slowest": slowest[name][0]}
                for name, t in tallies.items()]
        _update_page(args, rows)
    print(f"{'generator':<14}{'inputs':>8}{'loaded':>8}{'refused':>9}{'failures':>10}{'slowest':>10}")
    for row in rows:
        print(f"{row['generator']:<14}{row['inputs']:>8}{row['loaded']:>8}{row['refused']:>9}{row['failure']:>10}"
              f"{row['slowest']:>9.2f}s", flush=True)
    for name, (_, text) in slowest.items():
        (args.keep / f"slowest_{name.replace(' ', '_')}.toml").write_text(text, encoding="utf-8",
                                                                          errors="surrogateescape")
    if failures:
        print(f"failing inputs written to {args.keep}/")
    print(f"the slowest input of each generator is in {args.keep}/slowest_*.toml")
    return rows


def _chosen(args, name: str) -> bool:
    return args.only is None or name in [n.strip() for n in args.only.split(",")]


def _previous_rows(page: Path, names: set[str]) -> list[dict]:
    """The rows of the page's previous version for generators not in ``names`` (with their start date)."""
    if not page.exists():
        return []
    rows = []
    for line in page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 10 or not cells[2].isdigit() or cells[0].startswith("**") or cells[0] in names:
            continue
        rows.append({"generator": cells[0], "process": cells[1], "inputs": int(cells[2]), "loaded": int(cells[3]),
                     "refused": int(cells[4]), "failure": int(cells[5]), "hang": int(cells[6]),
                     "peak": float(cells[7]), "slowest": float(cells[8]), "started": cells[9]})
    return rows


def write_page(args, rows: list[dict], started: str, seconds: float) -> None:
    """The tally as a Markdown page (a generated file: the machine, the date, the command, a row per generator)."""
    from bridge.atomic import write_text

    command = " ".join(["python3 benchmarks/fuzz.py", *(f"'{a}'" if " " in a else a for a in sys.argv[1:])])
    rows = _previous_rows(args.page, {r["generator"] for r in rows}) + [{**r, "started": started} for r in rows]
    lines = ["# Fuzzing: the long run", "",
             "Generated by `benchmarks/fuzz.py --page`; do not edit by hand. Each input is checked (`nhbridge check`);",
             "an input of the table surfaces that loads is also simulated for 0.05 s, one that loads of the",
             "expressions and mutations is derived and printed to Modelica and C. A failure is a traceback, an exit",
             "code other than 0 and 2, or a refusal that quotes a referenced file; a hang is an input killed at the",
             "CPU-time limit. Peak memory: the forked child's largest resident set (table surfaces), the",
             "process's (in-process surfaces). Slowest: CPU seconds of a forked child, wall seconds in process.", "",
             f"- last run: started {started}, {seconds / 60:.0f} min wall time",
             f"- its command: `{command}` (the rows of other generators are kept from earlier runs, dated)",
             "- machine:"]
    lines += [f"  {line}" for line in machine().splitlines()]
    lines += ["", "| generator | runs in | inputs | loaded | refused | failures | hangs | peak MiB | slowest s | run |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    total = {key: sum(r[key] for r in rows) for key in ("inputs", "loaded", "refused", "failure", "hang")}
    for r in [*rows, {"generator": "**total**", "process": "", **total,
                      "peak": max((r["peak"] for r in rows), default=0.0),
                      "slowest": max((r["slowest"] for r in rows), default=0.0), "started": ""}]:
        lines.append(f"| {r['generator']} | {r['process']} | {r['inputs']} | {r['loaded']} | {r['refused']} | "
                     f"{r['failure']} | {r['hang']} | {r['peak']:.0f} | {r['slowest']:.1f} | {r['started']} |")
    write_text(args.page, "\n".join(lines) + "\n")
    print(f"wrote {args.page}")


if __name__ == "__main__":
    sys.exit(main())
