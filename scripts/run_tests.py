"""Run every test module in its own pytest process, several at a time, and sum up.

One process per module keeps what a module leaves loaded (FMU libraries, fmpy's process-wide logger,
signal handlers) from changing what another module sees. ``--jobs`` processes run at once (default: the
number of cores); the slowest modules start first so that the lanes finish together. Each module's
output is printed whole when it ends, and the last line sums all modules as pytest does
(``N passed, N failed, N skipped``), so a CI log reads like one pytest run.

Usage: ``python3 scripts/run_tests.py [--jobs N] [--modules GLOB] [pytest options...]``
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Started first: the modules that take longest (they build many FMUs or run the compilers).
SLOW_FIRST = ["test_wheel", "test_methods", "test_forms", "test_fmu_events", "test_validation",
              "test_switched_modelica", "test_pymoca", "test_cosim", "test_sweeps", "test_bicycle", "test_snake",
              "test_fmu", "test_linearize", "test_msl_flanges", "test_compiler_defects", "test_fmu_sanitizers"]
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


def modules(pattern: str) -> list[Path]:
    found = sorted((ROOT / "tests").glob(pattern))
    rank = {name: i for i, name in enumerate(SLOW_FIRST)}
    return sorted(found, key=lambda p: (rank.get(p.stem, len(rank)), p.name))


def run(module: Path, extra: list[str], env: dict[str, str]) -> tuple[Path, int, str, float]:
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *extra,
                           str(module.relative_to(ROOT))], cwd=ROOT, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    return module, proc.returncode, proc.stdout, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="modules run at once")
    parser.add_argument("--modules", default="test_*.py", help="which modules of tests/ (a glob)")
    args, extra = parser.parse_known_args()
    # Each pytest process is one lane: numerical libraries get one thread each instead of every process
    # spinning up a thread per core for tiny matrices.
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    totals: dict[str, int] = {}
    failed: list[str] = []
    times: list[tuple[float, str]] = []
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures = [pool.submit(run, m, extra, env) for m in modules(args.modules)]
        for future in as_completed(futures):
            module, code, output, seconds = future.result()
            print(f"==== {module.name} ({seconds:.0f} s, exit {code})", flush=True)
            print(output.rstrip(), flush=True)
            tail = output.strip().splitlines()[-1:] or [""]
            for number, word in COUNTS.findall(tail[0]):
                word = "errors" if word.startswith("error") else word
                totals[word] = totals.get(word, 0) + int(number)
            if code not in (0, 5):  # 5: every test deselected by the options given
                failed.append(module.name)
            times.append((seconds, module.name))
    print("\nslowest modules: " + ", ".join(f"{n} {s:.0f} s" for s, n in sorted(times, reverse=True)[:8]))
    if failed:
        print("failed modules: " + " ".join(sorted(failed)))
    summary = f"{totals.get('passed', 0)} passed, {totals.get('failed', 0) + totals.get('errors', 0)} failed"
    if totals.get("skipped"):
        summary += f", {totals['skipped']} skipped"
    print(f"\nall modules in {time.monotonic() - started:.0f} s")
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
