"""A compiled model driven by an input table (the inputs follow u(t) instead of their start values)."""

from __future__ import annotations

import numpy as np

from ..derivation.numeric_model import NumericModel
from .inputs import InputTable


class DrivenModel(NumericModel):
    """A compiled model whose inputs follow a table, u(t), instead of their start values (not recompiled).

    Every evaluation at a time t first sets ``inputs`` to the table's values at t; the methods are those of
    :class:`~bridge.derivation.numeric_model.NumericModel`.
    """

    def __init__(self, num: NumericModel, table: InputTable):  # shares the compiled callables of ``num``
        self.__dict__.update(num.__dict__)
        self.own_buffers()  # its own evaluation buffers: the two models evaluate at different inputs
        self.table = table
        self.inputs = table(0.0)

    def inputs_at(self, times: np.ndarray) -> np.ndarray:
        """Return the table's input values at each of ``times`` (one row per time)."""
        return np.array([self.table(t) for t in times], dtype=float).reshape(len(times), len(self.inputs))

    def _at(self, t: float) -> None:
        self.inputs = self.table(t)

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return ``(q', u')`` at ``x = (q, u)``, with the inputs at t."""
        self._at(t)
        return super().rhs(t, x)

    def kinematics(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return ``q' = kinematics(q, u, t)`` at a state, with the inputs at t."""
        self._at(t)
        return super().kinematics(t, q, u)

    def multipliers(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the multipliers ``lambda`` at a state, with the inputs at t (empty for reduced methods)."""
        self._at(t)
        return super().multipliers(t, q, u)

    def efforts(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the effort variables e at a state, with the inputs at t (empty without)."""
        self._at(t)
        return super().efforts(t, q, u)

    def outputs(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the outputs y(t, q, q'), with the inputs at t."""
        self._at(t)
        return super().outputs(t, q, qd)

    def constraint_residuals(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the constraint residuals ``[phi(q, t); A q' + a0]`` at a state, with the inputs at t."""
        self._at(t)
        return super().constraint_residuals(t, q, qd)
