"""The native simulation path: building the numeric model, one right-hand side, a whole run.

Run from the repository root::

    python benchmarks/native.py [--repeats 5] [--systems disk car bicycle-lagrange bicycle-maggi snake8]

Per system and method, all in CPU seconds of this process (``time.process_time``, the least of ``--repeats``):

* ``build ms``: compiling everything a ``NumericModel`` of equations derived beforehand evaluates (the right-hand
  side, the accelerations, outputs, constraint residuals and matrix: ``CompiledParts``), with the kept symengine
  forms of the expressions dropped first (as in a fresh process that has derived the equations but not compiled
  them);
* ``us/rhs``: one ``NumericModel.rhs`` at a new state (the state changes at every call, so nothing is reused);
* ``simulate s``: ``bridge.simulate(eom)`` to the file's stop time, after a first run (so with its model built),
  and the number of right-hand-side evaluations it made (``nfev``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import snake
from timing import machine

ROOT = Path(__file__).resolve().parents[1]
#: name -> (system file or snake size, method)
SYSTEMS: dict[str, tuple[str | int, str]] = {
    "disk": ("examples/rolling_disk.toml", "lagrange"),
    "car": ("examples/car.toml", "maggi"),
    "bicycle-lagrange": ("examples/engineering/bicycle.toml", "lagrange"),
    "bicycle-maggi": ("examples/engineering/bicycle.toml", "maggi"),
    "snake8": (8, "lagrange"),
    "snake8-maggi": (8, "maggi"),
}


def _cpu(fn, repeats: int) -> float:
    """The least CPU time (s) of ``repeats`` calls of ``fn``."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _forget_forms() -> None:
    """Drop the kept symengine forms, so a build converts its expressions as a fresh process would."""
    from bridge.derivation import symengine_forms as forms

    forms._KEPT.clear()  # the benchmark resets the caches it measures around
    forms._NODES.clear()


def measure(name: str, repeats: int) -> dict:
    """Build, evaluate and simulate one system; return the figures."""
    import bridge
    from bridge.derivation import numeric_model
    from bridge.derivation.dense import single_threaded_blas

    source, method = SYSTEMS[name]
    if isinstance(source, int):
        system = bridge.parse_system(snake.snake_toml(source))
    else:
        system = bridge.load_system(ROOT / source)
    eom = bridge.derive(system, method)

    def build():  # everything a model compiles, the parts compiled at their first use included
        _forget_forms()
        if not hasattr(numeric_model, "CompiledParts"):  # an implementation compiling all in the model
            numeric_model.NumericModel(eom)
            return
        parts = numeric_model.CompiledParts(eom)
        parts.accelerations, parts.outputs, parts.constraints, parts.jacobian  # noqa: B018

    build_s = _cpu(build, repeats)
    num = eom.numeric
    q0 = np.array([c.start for c in system.coordinates], dtype=float)
    qd0 = np.array([c.velocity for c in system.coordinates], dtype=float)
    x0 = num.state(q0, qd0)
    calls = 2000
    states = [x0 + 1e-9 * (k + 1) for k in range(calls)]

    def evaluate():
        rhs = num.rhs
        for x in states:
            rhs(0.0, x)

    with single_threaded_blas():
        rhs_s = _cpu(evaluate, repeats) / calls
    runs = [bridge.simulate(eom)]  # the first run also compiles what the model compiles at first use
    sim_s = _cpu(lambda: runs.append(bridge.simulate(eom)), max(1, repeats // 2))
    return {"name": name, "method": method, "n": system.n, "p": num.p, "build_ms": 1e3 * build_s,
            "us_rhs": 1e6 * rhs_s, "simulate_s": sim_s, "nfev": runs[-1].nfev,
            "stop": float(runs[-1].time[-1]), "q_end": runs[-1].q[-1]}


def main(argv: list[str] | None = None) -> int:
    """Print one row per system."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=list(SYSTEMS))
    args = parser.parse_args(argv)
    print(machine())
    print(f"{'system':18} {'n':>3} {'p':>3} {'build ms':>9} {'us/rhs':>8} {'simulate s':>11} {'nfev':>7}  stop")
    for name in args.systems:
        r = measure(name, args.repeats)
        print(f"{r['name']:18} {r['n']:3d} {r['p']:3d} {r['build_ms']:9.1f} {r['us_rhs']:8.1f} "
              f"{r['simulate_s']:11.3f} {r['nfev']:7d}  {r['stop']:g}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
