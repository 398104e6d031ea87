"""The linear model about an operating point, as every linear exporter receives it.

``x' = A x + B u``, ``y = C x + D u`` in deviations from the operating point ``(x0, u0, y0)``; the states are
the retained (non-cyclic) independent coordinates and speeds of the split, named as in the system file
(``theta``, ``der(theta)``). Immutable, like :class:`bridge.derivation.eom.EquationsOfMotion`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class LinearModel:
    """A, B, C, D with names and units, about the operating point they were taken at."""

    system: str                       # the system's name
    method: str                       # the derivation method the equations came from
    states: tuple[str, ...]           # e.g. ("theta", "delta", "der(theta)", "der(delta)")
    state_units: tuple[str, ...]
    inputs: tuple[str, ...]
    input_units: tuple[str, ...]
    outputs: tuple[str, ...]
    output_units: tuple[str, ...]
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    x0: np.ndarray                    # the operating point's state values (same order as ``states``)
    u0: np.ndarray
    y0: np.ndarray
    point: Mapping[str, float] = field(default_factory=dict)   # every coordinate, der(q), parameter at the point
    dropped: tuple[str, ...] = ()     # cyclic coordinates left out of the state
    independent: tuple[str, ...] = ()  # the split's independent coordinates
    conserved: tuple[str, ...] = ()   # decoupled neutral speeds left out of the state (e.g. a bicycle's speed)
    residual: tuple[tuple[str, float], ...] = ()  # rates of the retained states at the point (steady: ~0)

    def eigenvalues(self) -> np.ndarray:
        return np.linalg.eigvals(self.A)
