"""The compiled calls per right-hand side: one per level of the auxiliary stages, the dynamics in the last.

Counted by wrapping each compiled call of :class:`~bridge.derivation.stage_chain.StageChain` (no timing). The values
are checked against an independent evaluation: every stage and the dynamics by substitution (``evaluate_once``), the
linear blocks by ``numpy.linalg.solve``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.derivation.dense import blas_single_threaded, single_threaded_blas
from bridge.derivation.numeric_model import NumericModel
from bridge.model import symbols as S
from bridge.model.numeric import evaluate_once

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def sphere():
    return bridge.load_system(ROOT / "examples" / "rolling_sphere.toml")


@pytest.fixture(scope="module")
def wheel():
    return bridge.load_system(ROOT / "examples" / "rolling_wheel.toml")


class _Counted:
    def __init__(self, f):
        self.f, self.calls = f, 0

    def __call__(self, args):
        self.calls += 1
        return self.f(args)


def _count_calls(num) -> list[_Counted]:
    counted = [_Counted(f) for f in num.chain.functions]
    num.chain.functions = counted
    return counted


def _start(num, system) -> np.ndarray:
    return num.state(np.array([c.start for c in system.coordinates], dtype=float),
                     np.array([c.velocity for c in system.coordinates], dtype=float))


def _reference_rhs(eom, num, t: float, x: np.ndarray) -> np.ndarray:
    """(q', u') by substitution into each stage and the dynamics, the blocks solved by numpy.linalg.solve."""
    system = eom.system
    known = [S.t, *system.q, *eom.u, *[p.symbol for p in system.parameters], *[u.symbol for u in system.inputs]]
    values = np.concatenate([[t], x, num.params, num.inputs])
    for stage in eom.auxiliary:
        L = evaluate_once(known, list(stage.matrix), values).reshape(stage.matrix.shape)
        R = evaluate_once(known, list(stage.rhs), values).reshape(stage.rhs.shape)
        values = np.concatenate([values, np.linalg.solve(L, R).ravel()])
        known += list(stage.symbols)
    size = num.size
    M = evaluate_once(known, list(eom.mass_matrix), values).reshape(size, size)
    F = evaluate_once(known, list(eom.forcing), values)
    K = evaluate_once(known, list(eom.kinematics), values)
    return np.concatenate([K, np.linalg.solve(M, F)[: num.p]])


@pytest.mark.parametrize("method, calls", [("lagrange", 1), ("maggi", 2), ("appell", 2)])
def test_calls_per_rhs(wheel, method, calls):
    eom = bridge.derive(wheel, method)
    num = NumericModel(eom)
    counted = _count_calls(num)
    x0 = _start(num, wheel)
    rng = np.random.default_rng(3)
    for k in range(3):
        x = x0 + rng.normal(scale=0.05, size=x0.size)
        before = sum(c.calls for c in counted)
        dx = num.rhs(0.4, x)
        num.kinematics(0.4, x[: wheel.n], x[wheel.n:])  # the same state: no further call
        assert sum(c.calls for c in counted) - before == calls
        assert all(c.calls == k + 1 for c in counted)  # each compiled call once per right-hand side
        assert np.allclose(dx, _reference_rhs(eom, num, 0.4, x), rtol=1e-9, atol=1e-9)


def test_dynamics_share_the_last_level(wheel):
    """Maggi's forcing is affine in the time-derivative stage: no call after the last stage."""
    chain = NumericModel(bridge.derive(wheel, "maggi")).chain
    assert len(chain.functions) == 2 and chain.n_top == len(bridge.derive(wheel, "maggi").auxiliary[1].symbols)


@pytest.mark.parametrize("method", ["maggi", "chaplygin"])
def test_sphere_rhs_inside_and_outside_the_blas_limit(sphere, method):
    eom = bridge.derive(sphere, method)
    num = eom.numeric
    x = _start(num, sphere) + 0.01
    outside = num.rhs(0.2, x)
    with single_threaded_blas():
        assert blas_single_threaded()
        inside = num.rhs(0.2, x + 0.0)  # a copy: the same state is evaluated again
    assert not blas_single_threaded()
    assert np.allclose(inside, outside, rtol=1e-12, atol=1e-12)
    assert np.allclose(outside, _reference_rhs(eom, num, 0.2, x), rtol=1e-9, atol=1e-9)


def test_native_run_and_linearization_use_one_blas_thread(sphere):
    """threadpoolctl reports one BLAS thread inside the run's right-hand side, the original count afterwards."""
    from threadpoolctl import threadpool_info

    before = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    eom = bridge.derive(sphere, "maggi")
    num = eom.numeric
    seen: list[list[int]] = []
    original = num.rhs

    def recording(t, x):
        if not seen:
            seen.append([pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"])
        return original(t, x)

    num.rhs = recording
    try:
        bridge.simulate(eom, 0.05)
    finally:
        del num.rhs
    assert seen and all(n == 1 for n in seen[0])
    assert [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"] == before
    assert not blas_single_threaded()
