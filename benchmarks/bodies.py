"""Body-based system files against their energy-based peers, in the same run: loading (for the body tables
this includes the kinematics, T, V, Q and the contacts' constraints) and deriving by every method.

Each measurement runs in a fresh interpreter (sympy's cache would favour whichever runs second).
Run ``python benchmarks/bodies.py [--repeats 3]``; prints seconds (best of the repeats) and the ratio
body-based / energy-based.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAIRS = {
    "bicycle": (ROOT / "examples/engineering/bicycle_bodies.toml", ROOT / "examples/engineering/bicycle.toml"),
    "wheel": (ROOT / "examples/rolling_wheel.toml", None),
}
SCRIPT = """
import sys, time, bridge
t0 = time.perf_counter(); s = bridge.load_system(sys.argv[1]); t1 = time.perf_counter()
if sys.argv[2] != "-":
    bridge.derive(s, sys.argv[2])
print(t1 - t0, time.perf_counter() - t1)
"""


def measure(path: Path, method: str, repeats: int) -> tuple[float, float]:
    """(load seconds, derive seconds), best of ``repeats`` fresh processes."""
    runs = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", SCRIPT, str(path), method], capture_output=True, text=True,
                             check=True, cwd=ROOT).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    return min(r[0] for r in runs), min(r[1] for r in runs)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    bodies, energy = PAIRS["bicycle"]
    print(f"{'bicycle':<10} {'bodies s':>9} {'energy s':>9} {'ratio':>6}")
    for method in ("-", "lagrange", "nielsen", "maggi", "appell"):
        (lb, db), (le, de) = measure(bodies, method, args.repeats), measure(energy, method, args.repeats)
        b, e = (lb, le) if method == "-" else (db, de)
        print(f"{'load' if method == '-' else method:<10} {b:>9.3f} {e:>9.3f} {b / e:>6.2f}")
    kane = measure(bodies, "kane", args.repeats)[1]  # kane needs the bodies (System.multibody)
    print(f"{'kane':<10} {kane:>9.3f} {'-':>9} {'-':>6}")
    wheel = PAIRS["wheel"][0]
    for method in ("-", "lagrange", "maggi", "chaplygin", "kane"):
        lw, dw = measure(wheel, method, args.repeats)
        print(f"wheel {'load' if method == '-' else method:<10} {lw if method == '-' else dw:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
