"""Co-simulation speed: communication steps per second, nhbridge's master vs fmpy's ``simulate_ssp``.

Run from the repository root::

    python benchmarks/cosim.py [--stop-time 2] [--steps 0.01 0.001]

Both run the same SSP package (examples/cosim/hydropulsator_motors.ssp: the nhbridge pulsator FMU and two
Rumoca motor FMUs) with the same fixed communication step, in the same process, minimum of 3 runs each.
fmpy's ``simulate_ssp`` unpacks the package and its FMUs on every call, so the fair comparison is the
"cold" figure: nhbridge reading the same package, unpacking, checking, instantiating and running. "warm"
re-runs an already unpacked scenario, "loop" is the stepping alone (nhbridge's own timer). fmpy's runner
is Jacobi only; its parameter values are passed as ``parameter_set`` because it ignores ParameterBindings.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import fmpy
import numpy as np
from fmpy.ssp.simulation import simulate_ssp
from fmpy.ssp.ssd import Parameter, ParameterSet

from bridge.cosim import prepare

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import best, machine

ROOT = Path(__file__).resolve().parent.parent
SSP = ROOT / "examples" / "cosim" / "hydropulsator_motors.ssp"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stop-time", type=float, default=2.0)
    ap.add_argument("--steps", type=float, nargs="+", default=[0.01, 0.001])
    ap.add_argument("--ssp", default=str(SSP))
    args = ap.parse_args()
    stop = args.stop_time
    print(f"co-simulation speed, {Path(args.ssp).name}, t = 0..{stop:g} s; min of 3 runs")
    print(machine())
    print(f"fmpy {fmpy.__version__}")
    header = (f"{'h [s]':>8} {'steps':>6} | {'nhbridge cold':>14} {'warm':>9} {'loop':>9} {'G-S warm':>9} | "
              f"{'fmpy simulate_ssp':>18} | {'speed-up':>9} {'max |dw|':>9}")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        for h in args.steps:
            n = round(stop / h)

            def cold(h=h):
                with prepare(args.ssp, Path(tempfile.mkdtemp(dir=tmp))) as cs:
                    return cs.run(step=h, stop_time=stop, algorithm="jacobi")

            t_cold, _ = best(cold)
            with prepare(args.ssp, Path(tmp) / f"warm{h}") as cs:
                t_warm, ours = best(lambda h=h, cs=cs: cs.run(step=h, stop_time=stop, algorithm="jacobi"))
                t_loop = min(cs.run(step=h, stop_time=stop, algorithm="jacobi").stats["loop_seconds"]
                             for _ in range(3))
                t_gs, _ = best(lambda h=h, cs=cs: cs.run(step=h, stop_time=stop, algorithm="gauss-seidel"))
                pset = ParameterSet(parameters=[Parameter(name=f"{c.name}.{p}", type="Real", value=repr(v))
                                                for c in cs.scenario.components for p, v in c.parameters])
            t_fmpy, rows = best(lambda h=h, pset=pset: simulate_ssp(args.ssp, stop_time=stop, step_size=h,
                                                                     parameter_set=pset))
            steps_fmpy = len(rows)  # it steps while time < stop, with time accumulated by repeated addition
            # fmpy's row k holds the values after the step to (k + 1) h; its first step runs with zero inputs
            m = min(steps_fmpy, n)
            late = slice(m // 2, m)
            diff = float(np.max(np.abs(rows["pulsator.w_r"][:m][late] - ours["pulsator.w_r"][1:m + 1][late])))

            def rate(steps: int, seconds: float) -> str:
                return f"{steps / seconds:>9,.0f}"

            print(f"{h:8.4f} {n:6d} | {rate(n, t_cold):>14} {rate(n, t_warm)} {rate(n, t_loop)} {rate(n, t_gs)} | "
                  f"{rate(steps_fmpy, t_fmpy):>18} | {t_fmpy / t_cold * n / steps_fmpy:8.1f}x {diff:9.2e}")
    print("figures: communication steps per second (3 components per step); cold = read the .ssp, unpack, check, "
          "instantiate, run (like simulate_ssp);")
    print("warm = run again with the FMUs unpacked; loop = stepping only; max |dw| = largest difference of the rotor "
          "speed [rad/s] between the two Jacobi runs over the second half (fmpy starts its inputs at 0)")


if __name__ == "__main__":
    main()
