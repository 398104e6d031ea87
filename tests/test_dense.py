"""The small dense LU solves of the evaluations (``bridge.derivation.dense``) against numpy's solver."""

from __future__ import annotations

import numpy as np
import pytest

from bridge.derivation.dense import LUFactors


@pytest.mark.parametrize("size, columns", [(1, 1), (3, 2), (8, 5)])
def test_solves_match_numpy(size, columns):
    rng = np.random.default_rng(size)
    M = rng.standard_normal((size, size)) + size * np.eye(size)
    R = rng.standard_normal((size, columns))
    factors = LUFactors(M)
    assert not factors.singular(1e-13)
    np.testing.assert_allclose(factors.solve(R), np.linalg.solve(M, R), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(factors.solve(R[:, 0]), np.linalg.solve(M, R[:, 0]), rtol=1e-12, atol=1e-14)


def test_pivoting_and_singularity():
    M = np.array([[0.0, 1.0], [1.0, 0.0]])  # needs a row exchange
    np.testing.assert_allclose(LUFactors(M).solve(np.array([2.0, 3.0])), [3.0, 2.0])
    assert LUFactors(np.array([[1.0, 2.0], [2.0, 4.0]])).singular(1e-13)
    assert LUFactors(np.array([[1.0, 2.0], [2.0, 4.0 + 1e-15]])).singular(1e-13)
    assert not LUFactors(np.array([[1.0, 2.0], [2.0, 4.1]])).singular(1e-13)
