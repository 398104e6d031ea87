"""Derivation speed and equation size: nhbridge vs sympy.physics.mechanics on the n-link wheeled snake.

Run from the repository root::

    python benchmarks/derivation.py [--min-n 2] [--max-n 20] [--peer-max-n N] [--peer-timeout S] [--profile N ...]

For every N the table gives

* ``derive``: parsed System -> ``bridge.derive(system, "lagrange")`` -> ``eom.numeric`` (compiled), with the
  split into derive and compile in the next two columns (of the fastest run),
* ``e2e``: TOML text -> ``parse_system`` -> derive -> numeric,
* ``ops``: arithmetic operations after one joint CSE pass (``bridge.derivation.stats``),
* ``sympy``: ``LagrangesMethod(...)`` + ``form_lagranges_equations()`` + ``mass_matrix_full`` + ``forcing_full``
  in a subprocess with a timeout; its op count over mass_matrix_full and forcing_full,
* ``ratio``: sympy time / our derive time.

Our timings are the minimum over ``--repeats`` runs, sympy's cache cleared before each; the peer's
likewise, as long as the repeats fit in the timeout.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import pstats
import queue
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
from sympy.core.cache import clear_cache

import bridge
from bridge.derivation.stats import eom_operation_count, operation_count

sys.path.insert(0, str(Path(__file__).resolve().parent))
from snake import snake_sympy, snake_sympy_model, snake_toml
from timing import machine

HERE = Path(__file__).resolve()


# -- ours --------------------------------------------------------------------------------------------------
@dataclass
class Ours:
    derive: float        # derive + numeric (best run)
    derive_only: float   # of that best run: derive()
    compile: float       # of that best run: eom.numeric
    e2e: float           # parse + derive (best run): file -> equations
    e2e_compiled: float  # parse + derive + numeric (best run)
    ops: int


def _fresh() -> None:
    clear_cache()
    gc.collect()


def time_ours(n: int, repeats: int) -> Ours:
    text = snake_toml(n)
    best = (float("inf"), 0.0, 0.0)
    eom = None
    for _ in range(repeats):
        system = bridge.parse_system(text, source=f"snake{n}")
        _fresh()
        t0 = time.perf_counter()
        eom = bridge.derive(system, "lagrange")
        t1 = time.perf_counter()
        eom.numeric  # noqa: B018 -- compiles the equations
        t2 = time.perf_counter()
        if t2 - t0 < best[0]:
            best = (t2 - t0, t1 - t0, t2 - t1)
    e2e = e2e_compiled = float("inf")
    for _ in range(repeats):
        _fresh()
        t0 = time.perf_counter()
        e = bridge.derive(bridge.parse_system(text, source=f"snake{n}"), "lagrange")
        t1 = time.perf_counter()
        e.numeric  # noqa: B018
        t2 = time.perf_counter()
        e2e, e2e_compiled = min(e2e, t1 - t0), min(e2e_compiled, t2 - t0)
    return Ours(best[0], best[1], best[2], e2e, e2e_compiled, eom_operation_count(eom))


def profile_ours(n: int, top: int = 15) -> str:
    """cProfile of derive() for the snake with n links, top entries by cumulative time."""
    system = bridge.parse_system(snake_toml(n), source=f"snake{n}")
    _fresh()
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    eom = bridge.derive(system, "lagrange")
    prof.disable()
    t1 = time.perf_counter()
    eom.numeric  # noqa: B018
    t2 = time.perf_counter()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    head = f"derive() {t1 - t0:.3f} s under the profiler; eom.numeric afterwards {t2 - t1:.3f} s (not profiled)\n"
    return head + out.getvalue()


# -- the peer (sympy.physics.mechanics), run in a worker process ---------------------------------------------
def plain_symbols(exprs: list[sp.Expr]) -> list[sp.Expr]:
    """Replace dynamicsymbols and their derivatives by plain symbols (derivatives matched first, as subtrees)."""
    from sympy.core.function import AppliedUndef

    atoms: set = set()
    for e in exprs:
        atoms |= e.atoms(sp.Derivative, AppliedUndef)
    rule = {}
    for a in atoms:
        if isinstance(a, sp.Derivative):
            order = sum(c for _, c in a.variable_count)
            rule[a] = sp.Symbol(f"{a.expr.func.__name__}_d{order}")
        else:
            rule[a] = sp.Symbol(a.func.__name__)
    return [e.xreplace(rule) for e in exprs]


def peer_worker(n: int, repeats: int, budget: float) -> None:
    """Print JSON lines: {"ready"}, then {"seconds"} per run, then {"ops"}."""
    model = snake_sympy_model(n)

    def emit(**kw) -> None:
        print(json.dumps(kw), flush=True)

    emit(ready=True)
    spent, eqs = 0.0, None
    for r in range(repeats):
        if r and spent + 1.2 * (spent / r) > budget:
            break
        _fresh()
        t0 = time.perf_counter()
        eqs = snake_sympy(n, model)
        dt = time.perf_counter() - t0
        spent += dt
        emit(seconds=dt)
    exprs = plain_symbols(list(eqs.mass_matrix_full) + list(eqs.forcing_full))
    emit(ops=operation_count(exprs))


@dataclass
class Peer:
    seconds: float | None = None   # None: not finished within the timeout
    ops: int | None = None
    runs: int = 0


def run_peer(n: int, repeats: int, timeout: float) -> Peer:
    """Run the worker for n; the timeout counts from the moment the model is built."""
    cmd = [sys.executable, str(HERE), "--peer-worker", str(n), "--repeats", str(repeats),
           "--peer-timeout", str(timeout)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: queue.Queue = queue.Queue()

    def reader() -> None:
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=reader, daemon=True).start()
    result, deadline = Peer(), None
    times = []
    try:
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                break
            try:
                line = lines.get(timeout=wait)
            except queue.Empty:
                break
            if line is None:
                break
            msg = json.loads(line)
            if msg.get("ready"):
                deadline = time.monotonic() + timeout
            elif "seconds" in msg:
                times.append(msg["seconds"])
            elif "ops" in msg:
                result.ops = msg["ops"]
                break
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    if times:
        result.seconds, result.runs = min(times), len(times)
    if result.seconds is None and proc.returncode not in (0, -9):
        err = proc.stderr.read() if proc.stderr else ""
        print(f"peer worker for N = {n} failed:\n{err}", file=sys.stderr)
    return result


# -- table -------------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--min-n", type=int, default=2)
    ap.add_argument("--max-n", type=int, default=20)
    ap.add_argument("--peer-max-n", type=int, default=None, help="run sympy.physics.mechanics up to this N")
    ap.add_argument("--peer-timeout", type=float, default=120.0, help="seconds per N for the peer")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--profile", type=int, nargs="*", default=[], help="print a cProfile of derive() for these N")
    ap.add_argument("--peer-worker", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.peer_worker is not None:
        peer_worker(args.peer_worker, args.repeats, args.peer_timeout)
        return 0
    peer_max = args.max_n if args.peer_max_n is None else args.peer_max_n

    print(machine())
    print(f"snake with N links: N + 2 coordinates, N nonholonomic constraints; method lagrange; "
          f"our times: min of {args.repeats}; peer timeout {args.peer_timeout:g} s per N\n")
    header = (f"{'N':>3} {'derive':>8} {'compile':>8} {'e2e':>8} {'e2e+comp':>9} {'ops':>7} "
              f"{'sympy':>9} {'sympy ops':>9} {'ratio':>7} {'ratio+c':>8}")
    print(header)
    print("-" * len(header))
    timed_out = False
    for n in range(args.min_n, args.max_n + 1):
        ours = time_ours(n, args.repeats)
        row = (f"{n:>3} {ours.derive_only:>8.3f} {ours.compile:>8.3f} {ours.e2e:>8.3f} {ours.e2e_compiled:>9.3f} "
               f"{ours.ops:>7}")
        if n > peer_max:
            row += f" {'not run':>9}"
        elif timed_out:
            row += f" {'> timeout':>9}"
        else:
            peer = run_peer(n, args.repeats, args.peer_timeout)
            if peer.seconds is None:
                timed_out = True
                row += f" {'> ' + format(args.peer_timeout, 'g') + ' s':>9}"
            else:
                ops = f"{peer.ops}" if peer.ops is not None else "(timeout)"
                row += (f" {peer.seconds:>9.3f} {ops:>9} {peer.seconds / ours.derive_only:>6.0f}x"
                        f" {peer.seconds / ours.derive:>7.0f}x")
        print(row, flush=True)
    print("\nderive = parsed System -> bridge.derive(): mass matrix, forcing and constraint terms (sympy matrices);"
          "\ncompile = eom.numeric (symengine Lambdify with CSE); e2e = TOML text -> parse -> derive;"
          " e2e+comp = the same plus compile;"
          "\nops = CSE operation count (mass matrix, forcing, kinematics); sympy = LagrangesMethod + "
          "form_lagranges_equations + mass_matrix_full + forcing_full (seconds);"
          "\nratio = sympy / derive; ratio+c = sympy / (derive + compile).")
    for n in args.profile:
        print(f"\n=== cProfile of derive(), N = {n} ===")
        print(profile_ours(n))
    return 0


if __name__ == "__main__":
    sys.exit(main())
