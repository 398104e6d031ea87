"""The auxiliary stages of a reduced method, solved into one argument array, satisfy their linear blocks.

At random states of the MSL rolling wheel (maggi), the placeholders that :meth:`AuxiliarySolver.arguments` writes
after the arguments satisfy ``matrix Z = rhs`` of every stage, with the matrix and right-hand side evaluated
independently by substitution (``evaluate_once``, no compiled code); the right-hand side of the model agrees with a
``numpy.linalg`` solve of the same equations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.model import symbols as S
from bridge.model.numeric import evaluate_once

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def wheel_maggi():
    return bridge.derive(bridge.load_system(ROOT / "examples" / "rolling_wheel.toml"), "maggi")


def test_stage_placeholders_solve_their_blocks(wheel_maggi):
    eom = wheel_maggi
    assert len(eom.auxiliary) == 2  # the split and its time derivative
    system = eom.system
    num = eom.numeric
    base = [S.t, *system.q, *eom.u, *[p.symbol for p in system.parameters], *[u.symbol for u in system.inputs]]
    rng = np.random.default_rng(11)
    x0 = num.state(np.array([c.start for c in system.coordinates]), np.array([c.velocity for c in system.coordinates]))
    for _ in range(3):
        x = x0 + rng.normal(scale=0.05, size=x0.size)
        values = np.concatenate([[0.3], x, num.params, num.inputs])
        full = np.concatenate([values, num.auxiliary(0.3, x[: system.n], x[system.n:])])
        known = list(base)
        for stage in eom.auxiliary:
            point = full[: len(known)]
            L = evaluate_once(known, list(stage.matrix), point).reshape(stage.matrix.shape)
            R = evaluate_once(known, list(stage.rhs), point).reshape(stage.rhs.shape)
            Z = evaluate_once(known + list(stage.symbols), list(stage.unknowns),
                              full[: len(known) + len(stage.symbols)]).reshape(stage.unknowns.shape)
            assert np.allclose(L @ Z, R, rtol=1e-10, atol=1e-10 * max(1.0, np.abs(R).max()))
            known += list(stage.symbols)
        size = num.size
        M = evaluate_once(known, list(eom.mass_matrix), full).reshape(size, size)
        F = evaluate_once(known, list(eom.forcing), full)
        du = np.linalg.solve(M, F)[: num.p]
        assert np.allclose(num.rhs(0.3, x)[system.n:], du, rtol=1e-9, atol=1e-9)

