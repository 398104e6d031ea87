"""Every method on engineering-sized systems: the wheeled snake N = 2..20 and the benchmark bicycle.

Run from the repository root::

    python benchmarks/methods.py [--snake 2 4 8 12 16 20] [--timeout 60] [--no-bicycle] [--display]
    python benchmarks/methods.py --quick        # a smoke run: N = 2 and 8 and the bicycle (about 3 minutes)

Each derivation runs in its own forked child process with a wall-clock limit; a method that exceeds it at
some N is not tried at larger N. Reported per system and method:

* ``seconds``: ``METHODS[name].derive(system)`` (the parsed system is ready; parsing is not counted), or
  for the peers ``sympy.physics.mechanics``: ``LagrangesMethod`` (form_lagranges_equations, mass_matrix_full,
  forcing_full) and ``KanesMethod`` with the dependent speeds given (model set-up, kanes_equations,
  mass_matrix_full, forcing_full);
* ``peak MB``: the child's peak resident memory (``VmHWM``, polled; includes the interpreter and sympy,
  about 100 MB);
* ``ops``: arithmetic operations after one joint CSE pass (``bridge.derivation.stats``, counted as
  ``sympy.count_ops`` counts): what one right-hand-side evaluation needs for ours (the reduced methods' auxiliary
  split blocks, mass matrix, forcing and kinematics), mass_matrix_full and forcing_full for the peers (not part of
  ``seconds``); for both the sums' common factors are pulled out first, as our generated C code does
  (``bridge.derivation.factors``).

``--display`` also times ``derive --format text|latex|json`` (rendering only) on the 20-link snake.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bicycle
import snake
from timing import machine

METHODS = ["lagrange", "nielsen", "maggi", "appell", "chaplygin"]
PEERS = ["sympy Lagrange", "sympy Kane"]
ROOT = Path(__file__).resolve().parents[1]


# -- the work done in a child ------------------------------------------------------------------------------
def _system(name: str):
    import bridge

    if name == "bicycle":
        return bridge.load_system(ROOT / "examples" / "engineering" / "bicycle.toml")
    return bridge.parse_system(snake.snake_toml(int(name.removeprefix("snake"))))


def _ours(system_name: str, method: str) -> dict:
    from bridge.derivation.methods import METHODS as REGISTRY
    from bridge.derivation.stats import eom_operation_count

    system = _system(system_name)
    reason = REGISTRY[method].applicable(system)
    if reason:
        return {"skip": "n/a", "reason": reason}
    t0 = time.perf_counter()
    eom = REGISTRY[method].derive(system)
    seconds = time.perf_counter() - t0
    return {"seconds": seconds, "ops": eom_operation_count(eom)}


def _peer_ops(mass_matrix, forcing) -> int:
    from derivation import plain_symbols

    from bridge.derivation.factors import pull_common_factors
    from bridge.derivation.stats import operation_count

    return operation_count(pull_common_factors(plain_symbols(list(mass_matrix) + list(forcing))))


def _snake_kane(n: int):
    """The snake for KanesMethod: links as rigid bodies, u = q', x' and th1' independent."""
    import sympy as sp
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

    q = dynamicsymbols(" ".join(["x", "y"] + [f"th{i}" for i in range(1, n + 1)]))
    u = dynamicsymbols(" ".join(["ux", "uy"] + [f"w{i}" for i in range(1, n + 1)]))
    L, m, J, k, c = (sp.Symbol(s) for s in ("L", "m", "J", "k", "c"))
    N = ReferenceFrame("N")
    origin = Point("O")
    origin.set_vel(N, 0)
    to_u = {qi.diff(): ui for qi, ui in zip(q, u)}
    end = origin.locatenew("E0", q[0] * N.x + q[1] * N.y)
    bodies, loads, constraints, frames = [], [], [], []
    for i in range(n):
        B = N.orientnew(f"B{i + 1}", "Axis", [q[2 + i], N.z])
        B.set_ang_vel(N, u[2 + i] * N.z)
        centre = end.locatenew(f"C{i + 1}", L / 2 * B.x)
        centre.set_vel(N, centre.pos_from(origin).dt(N).subs(to_u))
        bodies.append(RigidBody(f"link{i + 1}", centre, B, m, (inertia(B, 0, 0, J), centre)))
        constraints.append(centre.vel(N).dot(B.y))
        frames.append(B)
        end = end.locatenew(f"E{i + 1}", L * B.x)
    for i in range(n - 1):  # spring and damper between links i and i+1
        torque = k * (q[3 + i] - q[2 + i]) + c * (u[3 + i] - u[2 + i])
        loads += [(frames[i], torque * N.z), (frames[i + 1], -torque * N.z)]
    km = KanesMethod(N, q_ind=q, u_ind=[u[0], u[2]], kd_eqs=[qi.diff() - ui for qi, ui in zip(q, u)],
                     u_dependent=[u[1], *list(u[3:])], velocity_constraints=constraints)
    return km, bodies, loads


def _peer(system_name: str, peer: str) -> dict:
    import sympy as sp
    from sympy.physics.mechanics import LagrangesMethod, ReferenceFrame, dynamicsymbols

    t0 = time.perf_counter()
    if peer == "sympy Kane":
        if system_name == "bicycle":
            km, bodies, loads = bicycle.kanes_method()
        else:
            km, bodies, loads = _snake_kane(int(system_name.removeprefix("snake")))
        km.kanes_equations(bodies, loads)
        M, F = km.mass_matrix_full, km.forcing_full
    elif system_name == "bicycle":  # LagrangesMethod from the system's T, V and constraints
        system = _system("bicycle")
        t0 = time.perf_counter()
        q = dynamicsymbols(" ".join(c.name for c in system.coordinates))
        rule = {s: qi.diff() for s, qi in zip(system.qd, q)} | {s: qi for s, qi in zip(system.q, q)}
        lagrangian = (system.kinetic - system.potential).xreplace(rule)
        lm = LagrangesMethod(lagrangian, q, hol_coneqs=[h.xreplace(rule) for h in system.holonomic],
                             nonhol_coneqs=[e.xreplace(rule) for e in system.nonholonomic], frame=ReferenceFrame("N"))
        lm.form_lagranges_equations()
        M, F = lm.mass_matrix_full, lm.forcing_full
    else:
        eqs = snake.snake_sympy(int(system_name.removeprefix("snake")))
        M, F = eqs.mass_matrix_full, eqs.forcing_full
    seconds = time.perf_counter() - t0
    del sp
    return {"seconds": seconds, "ops": _peer_ops(M, F)}


def _child(conn, system_name: str, method: str) -> None:
    from bridge.errors import DerivationError

    try:
        result = _peer(system_name, method) if method in PEERS else _ours(system_name, method)
    except DerivationError as exc:  # e.g. not a Chaplygin system for the split the method needs
        result = {"skip": "n/a", "reason": str(exc).splitlines()[0][:200]}
    except Exception as exc:  # reported in the table
        result = {"skip": "failed", "reason": f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"}
    conn.send(result)
    conn.close()


def _peak_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def run(system_name: str, method: str, timeout: float) -> dict:
    """One derivation in a forked child: its result, or {"timeout": True}; with "peak" (MB)."""
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(child, system_name, method))
    t0 = time.monotonic()
    proc.start()
    child.close()
    peak, result = 0.0, None
    while time.monotonic() - t0 < timeout:
        peak = max(peak, _peak_mb(proc.pid))
        if parent.poll(0.1):
            peak = max(peak, _peak_mb(proc.pid))
            result = parent.recv()
            break
    if result is None:
        peak = max(peak, _peak_mb(proc.pid))
        proc.kill()
        result = {"timeout": True}
    proc.join()
    result["peak"] = peak
    return result


def _cell(result: dict, timeout: float) -> str:
    """``seconds MB ops``, ``>limit MB``, ``n/a`` or ``failed``."""
    if "skip" in result:
        return result["skip"]
    if result.get("timeout"):
        return f">{timeout:g}s {result['peak']:.0f}MB"
    return f"{result['seconds']:.3f}s {result['peak']:.0f}MB {result['ops']}"


def display_times(n: int) -> list[str]:
    """Rendering time of each derive format on the n-link snake (lagrange), in this process."""
    import bridge
    from bridge.derivation.render import FORMATS

    eom = bridge.derive(bridge.parse_system(snake.snake_toml(n)), "lagrange")
    lines = []
    for fmt, render in FORMATS.items():
        t0 = time.perf_counter()
        out = render(eom)
        lines.append(f"  {fmt:<6} {time.perf_counter() - t0:6.2f} s  {len(out) / 1e3:8.0f} kB")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--snake", type=int, nargs="*", default=[2, 4, 8, 12, 16, 20], metavar="N")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds per derivation (default 60)")
    p.add_argument("--no-bicycle", action="store_true")
    p.add_argument("--display", action="store_true", help="also time the derive formats on the 20-link snake")
    p.add_argument("--quick", action="store_true",
                   help="a smoke run: the snake N = 2 and 8 and the bicycle")
    args = p.parse_args(argv)
    if args.quick:
        args.snake = [2, 8]
    print(machine())
    print(f"one forked child per derivation, limit {args.timeout:g} s; a method past the limit is not tried at "
          "larger N;\neach cell: seconds, peak memory of the child (VmHWM, includes ~70-100 MB of interpreter and "
          "sympy), ops after CSE\n")
    systems = [f"snake{n}" for n in args.snake] + ([] if args.no_bicycle else ["bicycle"])
    names = METHODS + PEERS
    header = f"{'system':<8} {'n':>2} " + " ".join(f"{m:>20}" for m in names)
    print(header)
    print("-" * len(header))
    timed_out: set[str] = set()
    for system_name in systems:
        n = len(bicycle.COORDINATES) if system_name == "bicycle" else int(system_name[5:]) + 2
        cells = []
        for method in names:
            if method in timed_out and system_name != "bicycle":
                cells.append("(skipped)")
                continue
            result = run(system_name, method, args.timeout)
            if result.get("timeout") and system_name != "bicycle":
                timed_out.add(method)
            cells.append(_cell(result, args.timeout))
            print(f"  {system_name} {method}: {cells[-1]} {result.get('reason', '')}", file=sys.stderr, flush=True)
        print(f"{system_name:<8} {n:>2} " + " ".join(f"{c:>20}" for c in cells), flush=True)
    if args.display:
        print("\nderive --format on the 20-link snake (rendering only, lagrange):")
        print("\n".join(display_times(20)))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    sys.exit(main())
