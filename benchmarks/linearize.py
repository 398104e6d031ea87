"""Time to linearize the benchmark bicycle: nhbridge (exact symbolic Jacobians of each method's equations,
evaluated at the point) side by side with sympy's ``Linearizer`` (``KanesMethod.to_linearizer()``, sympy issue
21652: over an hour on the bicycle), each in its own forked child with a wall-clock limit.

Run from the repository root::

    python benchmarks/linearize.py [--timeout 600] [--methods lagrange maggi] [--no-sympy]

Reported per row: ``derive`` (the method's equations from the parsed system), ``jacobian`` (the symbolic
Jacobians of its equations and constraints), ``point`` (one linear model at v = 4.6 m/s, evaluated by substitution),
``next`` (another speed), the total of the first three (the time to linearize), ``sweep`` (101 speeds, 0 to 10
m/s, after which the Jacobians are compiled) and the eigenvalues at 5 m/s against Table 2 of Meijaard et al.
(2007). The sympy row times ``kanes_equations`` plus
``to_linearizer().linearize(op_point, A_and_B=True)`` about upright straight running at 4.6 m/s (timing only: the
Kane model of ``bicycle.kanes_method()`` is the peer's, its result is not compared). A child past the limit is
killed and shown as ``>limit``. The ratio is sympy's total over ours (a lower bound when sympy was stopped).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bicycle
from timing import machine

ROOT = Path(__file__).resolve().parents[1]
SPEED = 4.6
TABLE2_5 = [-14.07838969279822, -0.32286642900409, -0.77534188219585 - 4.46486771378823j,
            -0.77534188219585 + 4.46486771378823j]


def _ours(method: str) -> dict:
    import bridge
    from bridge.linearization.linearize import Linearizer
    from bridge.linearization.point import operating_point

    system = bridge.load_system(ROOT / "examples" / "engineering" / "bicycle.toml")
    t0 = time.perf_counter()
    eom = bridge.derive(system, method)
    t1 = time.perf_counter()
    lin = Linearizer(eom)
    t2 = time.perf_counter()
    lin.at(operating_point(system))
    t3 = time.perf_counter()
    at5 = system.with_values({"der(theta_R)": -5.0 / 0.3})
    t4 = time.perf_counter()
    model = lin.at(operating_point(at5))
    t5 = time.perf_counter()
    got = np.sort_complex(model.eigenvalues())
    err = float(np.abs(got - np.sort_complex(np.array(TABLE2_5))).max())
    from bridge.linearization.sweep import Sweep, parse_sweep

    t6 = time.perf_counter()
    Sweep(lin, system, parse_sweep("der(theta_R)=0:-33.333333333333336:101", system)).run()
    t7 = time.perf_counter()
    return {"derive": t1 - t0, "compile": t2 - t1, "point": t3 - t2, "next": t5 - t4, "total": t3 - t0,
            "sweep": t7 - t6, "error": err, "states": len(model.states)}


def _sympy() -> dict:
    from sympy.physics.mechanics import dynamicsymbols

    t0 = time.perf_counter()
    km, bodies, loads = bicycle.kanes_method()
    km.kanes_equations(bodies, loads)
    names = list(bicycle.COORDINATES)
    q = dict(zip(names, dynamicsymbols(" ".join(names))))
    u = dict(zip(names, dynamicsymbols(" ".join(f"u_{n}" for n in names))))
    vel = bicycle.start_velocities(SPEED)
    point = {q[n]: 0.0 for n in names}
    point.update({u[n]: vel.get(n, 0.0) for n in names})
    point.update({u[n].diff(): 0.0 for n in names})
    point.update({q[n].diff(): vel.get(n, 0.0) for n in names})
    params = {__import__("sympy").Symbol(k): v[0] for k, v in bicycle.PARAMETERS.items()}
    point.update(params)
    linearizer = km.to_linearizer()
    A, _B = linearizer.linearize(op_point=point, A_and_B=True)
    return {"total": time.perf_counter() - t0, "shape": tuple(A.shape)}


def _child(conn, what: str) -> None:
    try:
        result = _sympy() if what == "sympy" else _ours(what)
    except Exception as exc:  # reported in the table
        result = {"failed": f"{type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"}
    conn.send(result)
    conn.close()


def run(what: str, timeout: float) -> dict:
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(child, what))
    t0 = time.monotonic()
    proc.start()
    child.close()
    result = None
    while time.monotonic() - t0 < timeout:
        if parent.poll(0.2):
            result = parent.recv()
            break
    if result is None:
        proc.kill()
        result = {"timeout": True, "total": time.monotonic() - t0}
    proc.join()
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--timeout", type=float, default=600.0, help="wall-clock limit per child, seconds")
    p.add_argument("--methods", nargs="+", default=["lagrange", "nielsen", "maggi", "appell"])
    p.add_argument("--no-sympy", action="store_true", help="leave out sympy's Linearizer")
    args = p.parse_args(argv)
    print(machine())
    print(f"Whipple bicycle (8 coordinates, 1 holonomic + 4 nonholonomic constraints), limit {args.timeout:g} s")
    print(f"{'':<22}{'derive':>9}{'jacobian':>9}{'point':>9}{'next':>9}{'total':>10}{'sweep':>9}"
          "   eigenvalues at 5 m/s")
    best = None
    for method in args.methods:
        r = run(method, args.timeout)
        if "failed" in r or r.get("timeout"):
            print(f"nhbridge {method:<13}{r.get('failed', f'>{args.timeout:g} s')}")
            continue
        best = r["total"] if best is None else min(best, r["total"])
        print(f"nhbridge {method:<13}{r['derive']:>8.2f}s{r['compile']:>8.2f}s{r['point']:>8.2f}s{r['next']:>8.2f}s"
              f"{r['total']:>9.2f}s{r['sweep']:>8.1f}s   {r['states']} states, max error vs Table 2 {r['error']:.1e}")
    if not args.no_sympy:
        r = run("sympy", args.timeout)
        if "failed" in r:
            print(f"{'sympy Linearizer':<22}{r['failed']}")
        else:
            stopped = r.get("timeout", False)
            total = f">{args.timeout:g}s" if stopped else f"{r['total']:.2f}s"
            print(f"{'sympy Linearizer':<22}{'':>36}{total:>10}{'':>9}   "
                  + ("stopped at the limit" if stopped else f"A {r['shape'][0]}x{r['shape'][1]}"))
            if best:
                ratio = r["total"] / best
                print(f"ratio sympy / fastest nhbridge: {'>' if stopped else ''}{ratio:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
