"""Where no split of the velocities is regular.

The message of the native run, the FMU's and the Modelica model's (``fmu/nhb_split.c`` writes the same text), naming the
constraints that are dependent there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..model.mechanics import all_splits, split_health


def _rank(A: np.ndarray, tol: float) -> int:
    if A.shape[0] == 0:
        return 0
    return int(np.sum(np.linalg.svd(A, compute_uv=False) > tol))


def dependent_rows(A: np.ndarray, names: Sequence[str], threshold: float) -> list[str]:
    """Return the constraints that are dependent at the tolerance ``threshold * sigma_max(A)``.

    The rows whose removal keeps the rank of A (every row when A has full rank there).
    """
    top = np.linalg.norm(A, 2) if A.size else 0.0
    tol = threshold * top
    rank = _rank(A, tol)
    m = A.shape[0]
    return [names[r] for r in range(m) if rank == m or _rank(np.delete(A, r, axis=0), tol) == rank]


def best_health(A: np.ndarray, exclude: Sequence[int] = ()) -> float:
    """Return the best health of any split but the one with dependent coordinates ``exclude``."""
    m, n = A.shape
    best = 0.0
    for ind in all_splits(n, m):
        dep = [i for i in range(n) if i not in ind]
        if tuple(dep) != tuple(exclude):
            best = max(best, split_health(A, dep))
    return best


def no_regular_split(t: float, independent: Sequence[str], method: str, A: np.ndarray, names: Sequence[str],
                     threshold: float, any_healthy: bool) -> str:
    """Return the message for a split that turns singular at ``t`` when no split the method accepts is healthy.

    The split with independent ``independent`` turns singular and no split has a health of at least ``threshold``: the
    method's limit when another split is healthy (``any_healthy``), else a singular configuration of the constraints,
    named.
    """
    old = ", ".join(independent)
    if any_healthy:
        return (f"at t = {t:.9g} the split with independent {old} becomes singular and method {method} has no "
                "other usable split; use maggi or lagrange")
    rows = ", ".join(dependent_rows(A, names, threshold))
    return (f"at t = {t:.9g} the split with independent {old} becomes singular and no split of the velocities is "
            f"regular (health below {threshold:g} for every choice): the constraint rows {rows} are dependent "
            "there, a singular configuration of the constraints; check the constraints and the start state")


__all__ = ["best_health", "dependent_rows", "no_regular_split"]
