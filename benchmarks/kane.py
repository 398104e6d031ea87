"""Kane's method on the Whipple bicycle: nhbridge's ``kane`` (and ``lagrange``, ``maggi``) against sympy's KanesMethod.

The bicycle is sympy's own (sympy/physics/mechanics/tests/test_kane3.py, benchmark parameters), imported with
``bridge.from_mechanics``; with ``examples/engineering/bicycle_bodies.toml`` present, that body-based file too.
Figures per row:

* derivation time (sympy: ``KanesMethod(...)`` and ``kanes_equations``; nhbridge: ``bridge.derive`` on the
  imported system, the import timed separately), measured in the same run;
* operations after common-subexpression elimination, two counts: ``bridge.derivation.stats.operation_count``
  (symengine's CSE, every + and * of an n-ary sum or product counted) and ``sympy.cse`` + ``sympy.count_ops``
  (the count sympy users quote). sympy: ``mass_matrix_full`` and ``forcing_full``; nhbridge: what one
  right-hand-side evaluation needs: the auxiliary (implicit split) blocks, the mass matrix, the forcing and the
  kinematics.

Run ``python benchmarks/kane.py`` (about a minute; ``--no-sympy-count`` skips the slow sympy.cse counts).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def eom_exprs(eom) -> list:
    """The expressions one right-hand-side evaluation of ``eom`` needs."""
    aux = [e for stage in eom.auxiliary for e in (*stage.matrix, *stage.rhs)]
    return aux + list(eom.mass_matrix) + list(eom.forcing) + list(eom.kinematics)


def sympy_count(exprs: list) -> int:
    import sympy as sp

    replacements, reduced = sp.cse(exprs)
    return sum(sp.count_ops(e) for _, e in replacements) + sum(sp.count_ops(e) for e in reduced)


def rows(with_sympy_count: bool = True) -> list[tuple[str, float, int, int | None]]:
    import bridge
    from bridge.derivation.stats import operation_count
    from tests import mechanics_models as mm

    out = []
    start = time.perf_counter()
    bike = mm.bicycle()  # builds sympy's KanesMethod and calls kanes_equations
    seconds = time.perf_counter() - start
    km = bike.kane
    exprs = list(km.mass_matrix_full) + list(km.forcing_full)
    out.append(("sympy KanesMethod (test_kane3 bicycle)", seconds, operation_count(exprs),
                sympy_count(exprs) if with_sympy_count else None))
    start = time.perf_counter()
    system = bridge.from_mechanics(km, parameters=bike.parameters, start=bike.start, name="Bicycle")
    out.append(("bridge.from_mechanics (import only)", time.perf_counter() - start, 0, None))
    systems = [("imported", system)]
    path = ROOT / "examples" / "engineering" / "bicycle_bodies.toml"
    if path.exists():
        systems.append(("bicycle_bodies.toml", bridge.load_system(path)))
    for label, sys_ in systems:
        for method in ("kane", "lagrange", "maggi"):
            start = time.perf_counter()
            eom = bridge.derive(sys_, method)
            seconds = time.perf_counter() - start
            exprs = eom_exprs(eom)
            out.append((f"nhbridge {method} ({label})", seconds, operation_count(exprs),
                        sympy_count(exprs) if with_sympy_count else None))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-sympy-count", action="store_true", help="skip the sympy.cse + count_ops column")
    args = parser.parse_args(argv)
    print(f"{'equations':<42} {'derive [s]':>10} {'ops (stats)':>12} {'ops (sympy)':>12}")
    for label, seconds, ops, sops in rows(not args.no_sympy_count):
        print(f"{label:<42} {seconds:>10.2f} {ops or '':>12} {'' if sops is None else sops:>12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
