"""A longer fuzzing run than CI's (tests/test_fuzz.py): the same generators, many more inputs, every failure
kept instead of stopping at the first.

    python3 benchmarks/fuzz.py [--examples 1000] [--seed 0] [--keep DIR]

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
    exported,
    expressions,
    mutations,
    run_check,
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
                except BaseException:  # noqa: BLE001
                    tally.failures.append(text + "\n# " + traceback.format_exc().replace("\n", "\n# "))
        except AssertionError:
            pass  # recorded in the tally
        except BaseException:  # noqa: BLE001 (a traceback is exactly what is being counted)
            tally.inputs += 1
            tally.failures.append(text + "\n# " + traceback.format_exc().replace("\n", "\n# "))
        elapsed = time.perf_counter() - start
        if elapsed > slowest[0]:
            slowest[:] = [elapsed, text]

    run()
    return tally, slowest[0], slowest[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=1000, help="inputs per generator (default 1000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, default=Path("fuzz-failures"))
    args = parser.parse_args()
    print(machine())
    generators = [("expressions", expressions(), lambda e: EXPRESSION_FILE % toml_string(e), True),
                  ("system files", system_files(), lambda t: t, False),
                  ("mutations", mutations(), lambda t: t, True)]
    total = Tally()
    print(f"{'generator':<14}{'inputs':>8}{'loaded':>8}{'refused':>9}{'failures':>10}{'slowest':>10}")
    args.keep.mkdir(parents=True, exist_ok=True)
    for name, strategy, to_file, export in generators:
        start = time.perf_counter()
        tally, slow, slow_text = fuzz(strategy, to_file, args.examples, args.seed, export)
        (args.keep / f"slowest_{name.replace(' ', '_')}.toml").write_text(slow_text, encoding="utf-8",
                                                                          errors="surrogateescape")
        print(f"{name:<14}{tally.inputs:>8}{tally.loaded:>8}{tally.rejected:>9}{len(tally.failures):>10}"
              f"{slow:>9.2f}s   ({time.perf_counter() - start:.0f} s)")
        total.inputs += tally.inputs
        total.loaded += tally.loaded
        total.rejected += tally.rejected
        total.failures += tally.failures
    print(f"{'total':<14}{total.inputs:>8}{total.loaded:>8}{total.rejected:>9}{len(total.failures):>10}")
    if total.failures:
        for i, text in enumerate(total.failures):
            (args.keep / f"failure_{i:03d}.toml").write_text(text, encoding="utf-8", errors="surrogateescape")
        print(f"failing inputs written to {args.keep}/")
    print(f"the slowest input of each generator is in {args.keep}/slowest_*.toml")
    return 1 if total.failures else 0


if __name__ == "__main__":
    sys.exit(main())
