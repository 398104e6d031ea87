"""FMU build and simulation speed: native FMU (fmpy ME/CVode and CS) vs nhbridge's scipy simulation.

Run from the repository root::

    python benchmarks/fmu.py [--stop-time 5] [--rtol 1e-8] [--snake 4 8 16] [--repeats 3]

For the seed examples and the wheeled snake the table gives the FMU build time per backend
(native; Rumoca where its code generation and compilation succeed) and the simulation time of the
same system, method ``lagrange``, at the same tolerance: nhbridge's native Python path (scipy DOP853
calling the compiled symengine right-hand side), the native FMU in fmpy as Model Exchange (CVode) and
as Co-Simulation (the FMU's own Runge-Kutta, Dormand-Prince 5(4) or DOP853 chosen per doStep,
communication step 0.01 s). Ratios are native Python time / FMU time, measured in the same run
(minimum of ``--repeats`` runs each, default 3; raise it on a machine shared with other work).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import fmpy

import bridge
from bridge.backends.fmu import build_rumoca_fmu
from bridge.errors import BridgeError
from bridge.fmu.build import build_fmu

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from snake import snake_toml  # noqa: E402
from timing import best, machine  # noqa: E402

ROOT = HERE.parent


def row(label: str, system: bridge.System, stop: float, rtol: float, tmp: Path, repeats: int = 3) -> str:
    eom = bridge.derive(system, "lagrange")
    eom.numeric  # noqa: B018 -- compile once, outside the timed runs (as the FMU is compiled outside)
    fmu = tmp / f"{system.name}.fmu"
    t_build, _ = best(lambda: build_fmu(eom, fmu, 2), 1)
    try:
        t_rumoca = f"{best(lambda: build_rumoca_fmu(eom, tmp / f'{system.name}_r.fmu'), 1)[0]:9.2f}"
    except BridgeError:
        t_rumoca = f"{'fails':>9}"
    interval = stop / 500
    t_py, _ = best(lambda: bridge.simulate(eom, stop, rtol=rtol, atol=rtol * 1e-2, interval=interval), repeats)
    t_me, _ = best(lambda: fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode",
                                          relative_tolerance=rtol, stop_time=stop, output_interval=interval),
                repeats)
    t_cs, _ = best(lambda: fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", relative_tolerance=rtol,
                                          stop_time=stop, output_interval=0.01), repeats)
    return (f"{label:<22} {t_build:8.2f} {t_rumoca} {t_py:10.3f} {t_me:9.3f} {t_cs:9.3f} "
            f"{t_py / t_me:8.1f}x {t_py / t_cs:8.1f}x")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stop-time", type=float, default=5.0)
    ap.add_argument("--rtol", type=float, default=1e-8)
    ap.add_argument("--snake", type=int, nargs="*", default=[4, 8, 16])
    ap.add_argument("--repeats", type=int, default=3, help="runs per timing; the minimum is reported")
    args = ap.parse_args(argv)
    print(machine())
    print(f"method lagrange, stop time {args.stop_time:g} s, rtol {args.rtol:g}, times in seconds (min of "
          f"{args.repeats})\n")
    header = (f"{'system':<22} {'build':>8} {'rumoca':>9} {'native py':>10} {'FMU ME':>9} {'FMU CS':>9} "
              f"{'py/ME':>9} {'py/CS':>9}")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted((ROOT / "examples").glob("*.toml")):
            print(row(path.stem, bridge.load_system(path), args.stop_time, args.rtol, Path(tmp), args.repeats),
                  flush=True)
        for n in args.snake:
            system = bridge.parse_system(snake_toml(n), source=f"snake{n}")
            print(row(f"snake N={n}", system, args.stop_time, args.rtol, Path(tmp), args.repeats), flush=True)
    print("\nbuild = native FMU (generate C + gcc + zip); rumoca = Rumoca fmi2 codegen + gcc; native py = "
          "bridge.simulate (scipy DOP853);\nFMU ME = fmpy CVode on the native FMU; FMU CS = the FMU's own "
          "Runge-Kutta (DOPRI5/DOP853) at communication step 0.01 s.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
