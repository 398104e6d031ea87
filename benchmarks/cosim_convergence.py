"""Convergence of the co-simulation to the monolithic model: error against communication step.

Run from the repository root::

    python benchmarks/cosim_convergence.py [--stop-time 2] [--steps 0.02 0.01 0.005 0.0025 0.00125]

The scenario examples/cosim/hydropulsator_motors.toml (pulsator FMU from nhbridge, two motor FMUs from
Rumoca) runs with every communication step h, with Jacobi and with Gauss-Seidel ordering. The reference is
examples/cosim/hydropulsator_monolithic.toml, the same coupled system in one model, simulated natively
(scipy DOP853, rtol 1e-10) with the scenario's motor parameters. The error of a signal is its largest
deviation from the reference on the grid of the coarsest step; the observed order is log2(e(2h) / e(h)).
A second table runs the adaptive communication step (step doubling) at several tolerances.
"""

from __future__ import annotations

import argparse
import math
import platform
from pathlib import Path

import numpy as np

import bridge
from bridge.cosim import prepare

ROOT = Path(__file__).resolve().parent.parent
COSIM = ROOT / "examples" / "cosim"
SIGNALS = {"pulsator.w_r": "der(phi)", "pulsator.w_d": "der(psi)", "pulsator.x1": "x1", "pulsator.x2": "x2"}
SHORT = {"pulsator.w_r": "phi'", "pulsator.w_d": "psi'", "pulsator.x1": "x1", "pulsator.x2": "x2"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stop-time", type=float, default=2.0)
    ap.add_argument("--steps", type=float, nargs="+", default=[0.02, 0.01, 0.005, 0.0025, 0.00125])
    ap.add_argument("--tolerances", type=float, nargs="*", default=[1e-2, 1e-3])
    args = ap.parse_args()
    steps = sorted(args.steps, reverse=True)
    coarse = steps[0]
    stop = args.stop_time
    with prepare(COSIM / "hydropulsator_motors.toml") as cosim:
        params = {c.name: dict(c.parameters) for c in cosim.scenario.components}
        motors = {"M0r": params["motor_r"]["M0"], "w0r": params["motor_r"]["w0"],
                  "M0d": params["motor_d"]["M0"], "w0d": params["motor_d"]["w0"]}
        eom = bridge.derive(bridge.load_system(COSIM / "hydropulsator_monolithic.toml"), "lagrange")
        ref = bridge.simulate(eom, stop, interval=coarse, parameters=motors).columns()
        table: dict[str, list[dict[str, float]]] = {}
        for algorithm in ("jacobi", "gauss-seidel"):
            table[algorithm] = []
            for h in steps:
                r = cosim.run(step=h, stop_time=stop, algorithm=algorithm)
                every = round(coarse / h)
                table[algorithm].append({s: float(np.max(np.abs(r[s][::every] - ref[c]))) for s, c in SIGNALS.items()})
        fine = bridge.simulate(eom, stop, interval=stop / 20000, parameters=motors).columns()
        adaptive = []
        for tol in args.tolerances:
            r = cosim.run(step=steps[-1], stop_time=stop, algorithm="gauss-seidel", adaptive=True, tolerance=tol)
            w = np.interp(r.time, fine["time"], fine["der(phi)"])
            adaptive.append((tol, r.stats, float(np.max(np.abs(r["pulsator.w_r"] - w))),
                             tol * (1 + float(np.max(np.abs(w)))) * stop))
    print(f"Hydropulsator with two motors of limited power: co-simulation vs monolithic model, t = 0..{stop:g} s")
    print(f"Python {platform.python_version()}, fmpy; errors = max over the {coarse:g} s grid; "
          "order = log2(e(2h)/e(h)) of the rotor speed phi'")
    head = f"{'h [s]':>8} | " + " | ".join(
        f"{alg:^44}" for alg in table) + "\n" + f"{'':>8} | " + " | ".join(
        " ".join(f"{SHORT[s]:>9}" for s in SIGNALS) + f" {'order':>6}" for _ in table)
    print(head)
    print("-" * len(head.splitlines()[1]))
    for k, h in enumerate(steps):
        cells = []
        for alg in table:
            e = table[alg][k]
            order = "" if k == 0 else f"{math.log2(table[alg][k - 1]['pulsator.w_r'] / e['pulsator.w_r']):6.2f}"
            cells.append(" ".join(f"{e[s]:9.2e}" for s in SIGNALS) + f" {order:>6}")
        print(f"{h:8.5f} | " + " | ".join(cells))
    print("units: phi', psi' in rad/s; x1, x2 in m")
    print()
    print("adaptive communication step (step doubling, error per unit step), gauss-seidel:")
    print(f"{'tolerance':>10} {'steps':>7} {'rejected':>9} {'smallest h':>11} {'largest h':>10} {'error phi_':>11} "
          f"{'bound':>9} {'seconds':>8}".replace("phi_", "phi'"))
    for tol, st, err, bound in adaptive:
        print(f"{tol:10.0e} {st['steps']:7d} {st['rejected']:9d} {st['smallest_step']:11.2e} "
              f"{st['largest_step']:10.2e} {err:11.2e} {bound:9.2e} {st['seconds']:8.2f}")
    print("bound = tol (1 + max|phi'|) (t_stop - t_start): the aim of the per-unit-step control if errors do not grow")


if __name__ == "__main__":
    main()
