"""The split a native run changes to, with hysteresis.

A split in use is kept until its health ``sigma_min(A_dep) / sigma_max(A)`` falls below ``SPLIT_THRESHOLD``
(``1e-3``, the terminal event of :mod:`bridge.simulation.simulate`). Then the new split is the *healthiest* one
the method accepts at that state, the split being left excluded. The derivation's preference for cyclic dependent
coordinates (the Chaplygin ranking of :func:`~bridge.model.mechanics.choose_independent`) only breaks near-ties: a
split with more cyclic dependent coordinates wins over the healthiest only when its health is at least
``PREFERENCE_MARGIN`` (0.9) times the best. So the split entered is healthier than the threshold by the largest
margin available, and two splits of about equal health that each turn singular in turn (a wheeled snake, whose
link angles swing) do not make the run change every few milliseconds between splits chosen for their cyclic
coordinates rather than their health. With more than
:data:`~bridge.model.mechanics.MAX_SPLIT_CANDIDATES` candidates the choice is column-pivoted QR's, as in the
derivation.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from ..model.mechanics import (
    MAX_SPLIT_CANDIDATES,
    all_splits,
    choose_independent,
    cyclic_coordinates,
    numeric_constraint_matrix,
    split_health,
)
from ..model.system import System

#: a split preferred for its cyclic dependent coordinates needs at least this fraction of the best health
PREFERENCE_MARGIN = 0.9
#: a split this close to singular is no candidate
MIN_HEALTH = 1e-8


def choose_new_split(system: System, A: list, values: np.ndarray, accept: Callable[[tuple[int, ...]], bool],
                     exclude: Sequence[int]) -> tuple[int, ...] | None:
    """Return the independent coordinates of the split to change to at a state (None: no split is regular).

    Parameters
    ----------
    system : System
        The system.
    A : list of list of Expr
        The constraint Jacobian, m x n.
    values : numpy.ndarray
        The state ``[t, q, q', parameters, inputs]``.
    accept : callable
        ``accept(independent) -> bool``: the method's restriction on the split.
    exclude : sequence of int
        The independent coordinates of the split being left.

    Returns
    -------
    tuple of int or None
        The healthiest accepted split, or one with more cyclic dependent coordinates within
        ``PREFERENCE_MARGIN`` of its health.
    """
    m, n = len(A), system.n
    if m == 0 or math.comb(n, m) > MAX_SPLIT_CANDIDATES:
        return choose_independent(system, A, values, accept=accept, exclude=exclude)
    An = numeric_constraint_matrix(system, A, values)
    cyclic = cyclic_coordinates(system)
    candidates = []
    for rank, ind in enumerate(all_splits(n, m)):
        if tuple(ind) == tuple(exclude):
            continue
        dep = [i for i in range(n) if i not in ind]
        health = split_health(An, dep)
        if health > MIN_HEALTH and accept(tuple(ind)):
            candidates.append((health, sum(i in cyclic for i in dep), -rank, tuple(ind)))
    if not candidates:
        return None
    best = max(c[0] for c in candidates)
    near = [c for c in candidates if c[0] >= PREFERENCE_MARGIN * best]
    return max(near, key=lambda c: (c[1], c[0], c[2]))[3]


__all__ = ["PREFERENCE_MARGIN", "choose_new_split"]
