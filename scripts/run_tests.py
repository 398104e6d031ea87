"""Run every test module in its own pytest process, several at a time, and sum up.

One process per module keeps what a module leaves loaded (FMU libraries, fmpy's process-wide logger,
signal handlers) from changing what another module sees. ``--jobs`` processes run at once (default: the
number of cores), longest first (longest-processing-time scheduling) by the CPU seconds each module took
when last measured (``tests/durations.json``; modules not measured yet start first, as if they were the
longest), so that the lanes finish together. Each module's output is printed whole when it ends, with the
CPU it used, and the last lines sum all modules as pytest does (``N passed, N failed, N skipped``), so a CI
log reads like one pytest run.

Every run gets a fresh folder for the FMU build's object cache (``NHBRIDGE_OBJECT_CACHE``): the modules of
one run share the C objects they compile, nothing compiled by an earlier run or another checkout is reused, and
the folder is removed at the end.

``--record-durations`` measures the CPU of every module, test and shared fixture (tests/conftest.py) and
writes them into ``tests/durations.json``, which both orders the next runs and sets the ``slow`` marker.

Usage: ``python3 scripts/run_tests.py [--jobs N] [--modules GLOB]... [--record-durations] [pytest options...]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DURATIONS = ROOT / "tests" / "durations.json"
RUNNING: set[subprocess.Popen] = set()  # the modules' pytest processes still running
RUNNING_LOCK = threading.Lock()
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


@dataclass
class ModuleRun:
    """What one module's pytest process did."""

    module: Path
    code: int
    output: str
    wall: float
    cpu: float  # user + system of the pytest process and every process it waited for


def load_durations() -> dict:
    """tests/durations.json, or empty tables where it is missing or unreadable."""
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        data = {}
    return {key: dict(data.get(key, {})) for key in ("modules", "tests", "fixtures")}


def modules(patterns: list[str], measured: dict[str, float]) -> list[Path]:
    """The modules matching any of ``patterns``, longest first; the ones never measured before all the others."""
    found = sorted({p for pattern in patterns for p in (ROOT / "tests").glob(pattern)})
    return sorted(found, key=lambda p: (p.stem in measured, -measured.get(p.stem, 0.0), p.name))


def run(module: Path, extra: list[str], env: dict[str, str], record: Path | None) -> ModuleRun:
    """Run one module's pytest process; its CPU is read from the kernel's accounting of the process tree."""
    if record is not None:
        env = {**env, "NHBRIDGE_RECORD_DURATIONS": str(record)}
    start = time.monotonic()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
                                 str(module.relative_to(ROOT))], cwd=ROOT, env=env, stdout=out,
                                stderr=subprocess.STDOUT, text=True)
        with RUNNING_LOCK:
            RUNNING.add(proc)
        _, status, usage = os.wait4(proc.pid, 0)
        with RUNNING_LOCK:
            RUNNING.discard(proc)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    return ModuleRun(module, proc.returncode, output, time.monotonic() - start, usage.ru_utime + usage.ru_stime)


def merge_durations(data: dict, runs: list[ModuleRun], records: Path) -> dict:
    """``data`` with the measurements of the modules of ``runs`` replacing what was known of them."""
    for result in runs:
        relative = f"{result.module.relative_to(ROOT)}"
        data["modules"][result.module.stem] = round(result.cpu, 1)
        for table in ("tests", "fixtures"):
            data[table] = {k: v for k, v in data[table].items() if not k.startswith(relative + "::")}
        path = records / f"{result.module.stem}.json"
        if path.is_file():
            recorded = json.loads(path.read_text())
            # tests under 0.5 s CPU are left out: neither the schedule nor the slow marker needs them
            data["tests"].update({k: v for k, v in recorded["tests"].items() if v >= 0.5})
            data["fixtures"].update({k: v for k, v in recorded["fixtures"].items() if v >= 0.5})
    return {key: dict(sorted(data[key].items())) for key in ("modules", "tests", "fixtures")}


def write_durations(data: dict) -> None:
    """Replace tests/durations.json whole (a temporary file renamed over it)."""
    tmp = DURATIONS.with_name(f".{DURATIONS.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, DURATIONS)


def stop(signum: int, _frame) -> None:
    """SIGTERM: stop the modules' processes, then leave through the cleanup (the run's folder is removed)."""
    with RUNNING_LOCK:
        for proc in RUNNING:
            proc.terminate()
    sys.exit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="modules run at once")
    parser.add_argument("--modules", action="append",
                        help="which modules of tests/ (a glob; repeated: any of them); default test_*.py")
    parser.add_argument("--record-durations", action="store_true",
                        help="measure the CPU of every module, test and shared fixture into tests/durations.json")
    args, extra = parser.parse_known_args()
    durations = load_durations()
    signal.signal(signal.SIGTERM, stop)
    scratch = Path(tempfile.mkdtemp(prefix="nhbridge-tests-"))
    objects = scratch / "objects"
    objects.mkdir()
    records = scratch / "durations"
    records.mkdir()
    # Each pytest process is one lane: numerical libraries get one thread each instead of every process
    # spinning up a thread per core for tiny matrices.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NHBRIDGE_OBJECT_CACHE": str(objects)}
    totals: dict[str, int] = {}
    failed: list[str] = []
    finished: list[ModuleRun] = []
    started = time.monotonic()
    try:
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(run, m, extra, env, records / f"{m.stem}.json" if args.record_durations else None)
                       for m in modules(args.modules or ["test_*.py"], durations["modules"])]
            for future in as_completed(futures):
                result = future.result()
                print(f"==== {result.module.name} ({result.wall:.0f} s, {result.cpu:.0f} s CPU, exit {result.code})",
                      flush=True)
                print(result.output.rstrip(), flush=True)
                tail = result.output.strip().splitlines()[-1:] or [""]
                for number, word in COUNTS.findall(tail[0]):
                    word = "errors" if word.startswith("error") else word
                    totals[word] = totals.get(word, 0) + int(number)
                if result.code not in (0, 5):  # 5: every test deselected by the options given
                    failed.append(result.module.name)
                finished.append(result)
        if args.record_durations:
            write_durations(merge_durations(durations, finished, records))
            print(f"\nrecorded the CPU of {len(finished)} module(s) in {DURATIONS.relative_to(ROOT)}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    slowest = sorted(finished, key=lambda r: r.cpu, reverse=True)[:8]
    print("\nslowest modules: " + ", ".join(f"{r.module.stem} {r.cpu:.0f} s CPU" for r in slowest))
    if failed:
        print("failed modules: " + " ".join(sorted(failed)))
    summary = f"{totals.get('passed', 0)} passed, {totals.get('failed', 0) + totals.get('errors', 0)} failed"
    if totals.get("skipped"):
        summary += f", {totals['skipped']} skipped"
    if totals.get("deselected"):
        summary += f", {totals['deselected']} deselected"
    cpu = sum(r.cpu for r in finished)
    print(f"\nall modules in {time.monotonic() - started:.0f} s wall, {cpu:.0f} s CPU")
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
