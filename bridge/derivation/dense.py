"""Small dense linear solves by pivoted LU that never go through threaded BLAS.

The systems solved at every evaluation of the equations (the split ``A_dep``, the mass matrix) are tiny, a few rows.
A multithreaded BLAS (OpenBLAS) hands a triangular solve with a matrix right-hand side (``?trsm``, as in
``scipy.linalg.lu_solve(lu, R)``) to its thread pool whatever its size: on a machine whose cores are busy each such
call waits for a thread to be scheduled, some milliseconds for a 3 x 3 system instead of microseconds. Here the
factorisation is LAPACK's ``dgetrf`` and every right-hand-side column is solved by ``dgetrs`` with one column, which
runs the single-threaded triangular solves (``?trsv``): the cost stays that of the arithmetic on a busy machine.

Inside :func:`single_threaded_blas` (a native run, a linearization) BLAS is limited to one thread
(``threadpoolctl``) for the whole block, and a matrix right-hand side is solved by one ``dgetrs`` call.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from scipy.linalg import lapack
from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]

_GETRF = lapack.dgetrf
_GETRS = lapack.dgetrs
_LOCK = threading.Lock()
_ACTIVE = [0]  # blocks inside single_threaded_blas (any thread): BLAS is limited to one thread while > 0
_LIMITER: list = []  # the threadpoolctl limiter of the outermost block


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit BLAS to one thread for the block (nested and concurrent blocks share one limit).

    Setting the limit costs about a millisecond, so it is set once around a run, not per solve. The limit is
    process-wide: set by the first block to start, lifted when the last block (of any thread) ends.
    """
    with _LOCK:
        if not _ACTIVE[0]:
            _LIMITER.append(threadpool_limits(limits=1, user_api="blas"))
        _ACTIVE[0] += 1
    try:
        yield
    finally:
        with _LOCK:
            _ACTIVE[0] -= 1
            if not _ACTIVE[0]:
                _LIMITER.pop().restore_original_limits()


def blas_single_threaded() -> bool:
    """Return whether a :func:`single_threaded_blas` block is active."""
    return _ACTIVE[0] > 0


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
        """Return ``matrix^-1 rhs`` for a vector or a matrix right-hand side.

        A matrix right-hand side is solved column by column outside :func:`single_threaded_blas`, by one call
        inside it.
        """
        if rhs.ndim == 1 or _ACTIVE[0]:
            return _GETRS(self.lu, self.piv, rhs)[0]
        out = np.empty(rhs.shape)
        for k in range(rhs.shape[1]):
            out[:, k] = _GETRS(self.lu, self.piv, rhs[:, k])[0]
        return out


def solve(matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Return ``matrix^-1 rhs`` by :class:`LUFactors` (``numpy.linalg.solve`` without BLAS threads).

    Raises
    ------
    numpy.linalg.LinAlgError
        When a pivot is exactly zero (as ``numpy.linalg.solve``).
    """
    factors = LUFactors(np.asarray(matrix, dtype=float))
    if matrix.shape[0] and factors.pivot_min == 0.0:
        raise np.linalg.LinAlgError("Singular matrix")
    return factors.solve(np.asarray(rhs, dtype=float))


__all__ = ["LUFactors", "blas_single_threaded", "single_threaded_blas", "solve"]
