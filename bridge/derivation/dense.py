"""Small dense linear solves by pivoted LU that never go through threaded BLAS.

The systems solved at every evaluation of the equations (the split ``A_dep``, the mass matrix) are tiny, a few rows.
A multithreaded BLAS (OpenBLAS) hands a triangular solve with a matrix right-hand side (``?trsm``, as in
``scipy.linalg.lu_solve(lu, R)``) to its thread pool whatever its size: on a machine whose cores are busy each such
call waits for a thread to be scheduled, some milliseconds for a 3 x 3 system instead of microseconds. Here the
factorisation is LAPACK's ``dgetrf`` and every right-hand-side column is solved by ``dgetrs`` with one column, which
runs the single-threaded triangular solves (``?trsv``): the cost stays that of the arithmetic on a busy machine.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

_GETRF = lapack.dgetrf
_GETRS = lapack.dgetrs


class LUFactors:
    """``P L U`` of a square matrix (LAPACK layout), with the smallest and largest absolute pivot."""

    __slots__ = ("lu", "piv", "pivot_max", "pivot_min")

    def __init__(self, matrix: np.ndarray):
        self.lu, self.piv, _ = _GETRF(matrix)
        pivots = [abs(x) for x in self.lu.diagonal().tolist()]  # a few entries: cheaper in Python than in numpy
        self.pivot_min = min(pivots, default=0.0)
        self.pivot_max = max(pivots, default=0.0)

    def singular(self, relative: float, scale: float | None = None) -> bool:
        """Return whether the smallest pivot is at most ``relative`` times ``scale`` (default: the largest pivot)."""
        top = self.pivot_max if scale is None else scale
        return self.pivot_min <= relative * max(top, 1e-300)

    def solve(self, rhs: np.ndarray) -> np.ndarray:
        """Return ``matrix^-1 rhs`` for a vector or a matrix right-hand side (column by column)."""
        if rhs.ndim == 1:
            return _GETRS(self.lu, self.piv, rhs)[0]
        out = np.empty(rhs.shape)
        for k in range(rhs.shape[1]):
            out[:, k] = _GETRS(self.lu, self.piv, rhs[:, k])[0]
        return out


__all__ = ["LUFactors"]
