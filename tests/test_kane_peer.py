"""The benchmark's sympy peer for the bicycle (``benchmarks/bicycle.kanes_method``) is the same system as ours.

``sympy.physics.mechanics.KanesMethod`` builds its equations from frames, points and rigid bodies, not from the
system file's T, V and constraints: an independent formulation. At random consistent states (leaning, steered,
pitched, yawed, moving) its accelerations from ``mass_matrix_full`` and ``forcing_full`` must equal those of our
``lagrange`` to 1e-10, and upright too (sympy's default LU solve of the dependent speeds gave a wrong steer
equation and NaN upright; the benchmark uses Cramer's rule).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import bridge

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import bicycle  # noqa: E402


# Slow (about 7 s of CPU, once per module): the peer models built with sympy.physics.mechanics, the independent
# reference every test below compares against. Its matrices are evaluated by symengine's Lambdify (sympy's lambdify
# with CSE took 5 s of CPU to print and compile them, symengine 0.2 s; the same values to 6e-16 relative).
@pytest.fixture(scope="module")
def models(derivations):
    import symengine as se
    import sympy as sp
    from sympy.physics.mechanics import dynamicsymbols

    from bridge.derivation.symengine_forms import symengine_forms

    system = bridge.load_system(ROOT / "examples" / "engineering" / "bicycle.toml")
    km, bodies, loads = bicycle.kanes_method()
    km.kanes_equations(bodies, loads)
    names = list(bicycle.COORDINATES)
    q = dynamicsymbols(" ".join(names))
    u = dynamicsymbols(" ".join(f"u_{n}" for n in names))
    params = [sp.Symbol(p.name) for p in system.parameters]
    M, F = km.mass_matrix_full, km.forcing_full
    plain = [se.Symbol(f"nhb_peer_{k}") for k in range(len(q) + len(u))]  # Lambdify's arguments are symbols
    swap = dict(zip(symengine_forms(q + u), plain))
    exprs = [e.xreplace(swap) for e in symengine_forms([*M, *F])]
    evaluate = se.Lambdify([*plain, *symengine_forms(params)], exprs, backend="lambda", cse=True)

    def full(q_values, u_values, parameter_values):
        out = np.asarray(evaluate([*q_values, *u_values, *parameter_values]), dtype=float).ravel()
        return out[:M.shape[0] * M.shape[1]].reshape(M.shape), out[M.shape[0] * M.shape[1]:]
    speeds = [str(s.func) for s in km.u]  # u_phi, u_delta, ... in KanesMethod's order
    values = [p.value for p in system.parameters]
    order = [c.name for c in system.coordinates]

    def kane_accelerations(q_ours: np.ndarray, qd_ours: np.ndarray) -> np.ndarray:
        by_name = dict(zip(order, zip(q_ours, qd_ours)))
        M, F = full([by_name[n][0] for n in names], [by_name[n][1] for n in names], values)
        x = np.linalg.solve(np.array(M, dtype=float), np.array(F, dtype=float).ravel())
        du = dict(zip(speeds, x[len(names):]))
        return np.array([du[f"u_{n}"] for n in order])

    return derivations.eom(ROOT / "examples" / "engineering" / "bicycle.toml", "lagrange").numeric, kane_accelerations


def test_kane_peer_agrees_with_lagrange(models):
    num, kane_accelerations = models
    rng = np.random.default_rng(7)
    states = [bicycle.consistent_state(num, 0.0, 0.0, 0.0, 0.0, 4.0)]  # upright, straight ahead
    for _ in range(4):
        roll, steer = rng.uniform(-0.5, 0.5, 2)
        states.append(bicycle.consistent_state(num, roll, steer, *rng.uniform(-2.0, 2.0, 2), rng.uniform(0.5, 8.0),
                                               yaw=rng.uniform(-3, 3)))
    for q, qd in states:
        ours, theirs = num.accelerations(0.0, q, qd), kane_accelerations(q, qd)
        assert np.all(np.isfinite(theirs))
        assert np.abs(ours - theirs).max() <= 1e-10 * max(1.0, np.abs(ours).max()), (ours, theirs)
    assert np.abs(num.accelerations(0.0, *states[1])).max() > 0.1  # a state with something going on
