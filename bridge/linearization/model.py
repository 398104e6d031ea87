"""The linear model about an operating point, as every linear exporter receives it.

``x' = A x + B u``, ``y = C x + D u`` in deviations from the operating point ``(x0, u0, y0)``; the states are
the retained (non-cyclic) independent coordinates and speeds of the split, named as in the system file
(``theta``, ``der(theta)``). Immutable, like :class:`bridge.derivation.eom.EquationsOfMotion`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import BridgeError

CONTROL_MISSING = ("python-control is not installed: pip install \"nhbridge[control]\" (or pip install control) "
                   "to convert linear models to control.StateSpace")


@dataclass(frozen=True)
class LinearModel:
    """A, B, C, D with names and units, about the operating point they were taken at.

    ``x' = A x + B u``, ``y = C x + D u`` in the deviations ``x - x0``, ``u - u0``, ``y - y0`` from the operating
    point, as :func:`bridge.linearize` returns it.

    Parameters
    ----------
    system : str
        The system's name.
    method : str
        The derivation method the equations came from.
    states, state_units : tuple of str
        The names of the states (e.g. ``("theta", "der(theta)")``) and their units (``""`` where unknown).
    inputs, input_units : tuple of str
        The names of the inputs and their units.
    outputs, output_units : tuple of str
        The names of the outputs and their units.
    A, B, C, D : numpy.ndarray
        The matrices, n x n, n x m, p x n and p x m.
    x0, u0, y0 : numpy.ndarray
        The operating point's state, input and output values.
    point : mapping of str to float, optional
        Every coordinate, velocity, parameter and input at the point.
    dropped : tuple of str, optional
        Cyclic coordinates left out of the state.
    independent : tuple of str, optional
        The split's independent coordinates (reduced methods).
    conserved : tuple of str, optional
        Decoupled neutral speeds left out of the state.
    residual : tuple of (str, float), optional
        The rates of the retained states at the point (about 0 at a steady point).

    Examples
    --------
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.0, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [inputs]
    ... F = { start = 0.0, unit = "N" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... [forces]
    ... x = "F"
    ... [outputs]
    ... position = { expr = "x", unit = "m" }
    ... ''')
    >>> lin = bridge.linearize(bridge.derive(system), given={"F": 0.0})
    >>> lin.states, lin.inputs, lin.outputs
    (('x', 'der(x)'), ('F',), ('position',))
    >>> lin.A.tolist(), lin.B.tolist(), lin.C.tolist()
    ([[0.0, 1.0], [-4.0, 0.0]], [[0.0], [0.5]], [[1.0, 0.0]])
    """

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

    def _repr_html_(self) -> str:
        from ..model.display import linear_html

        return linear_html(self)

    def eigenvalues(self) -> np.ndarray:
        """Return the eigenvalues of ``A`` (the poles of the linear model)."""
        return np.linalg.eigvals(self.A)

    def to_control(self) -> Any:
        """Return the model as a python-control ``StateSpace`` with its state, input and output names.

        ``x' = A x + B u``, ``y = C x + D u`` in deviations from the operating point, as here; the system's name
        becomes the ``StateSpace``'s name. Needs python-control >= 0.10 (``pip install "nhbridge[control]"``).

        Examples
        --------
        >>> import numpy as np
        >>> from bridge.linearization.model import LinearModel
        >>> lin = LinearModel("oscillator", "lagrange", ("x", "der(x)"), ("m", "m/s"), ("F",), ("N",), ("x",),
        ...                   ("m",), np.array([[0.0, 1.0], [-4.0, 0.0]]), np.array([[0.0], [1.0]]),
        ...                   np.array([[1.0, 0.0]]), np.zeros((1, 1)), np.zeros(2), np.zeros(1), np.zeros(1))
        >>> sys = lin.to_control()
        >>> sys.state_labels, sys.input_labels
        (['x', 'der(x)'], ['F'])
        """
        control = control_module()
        return control.ss(self.A, self.B, self.C, self.D, states=list(self.states), inputs=list(self.inputs),
                          outputs=list(self.outputs), name=self.system)

    @classmethod
    def from_control(cls, sys: Any, like: LinearModel) -> LinearModel:
        """Return a linear model with the matrices of the python-control ``StateSpace`` ``sys``.

        Everything else (units, operating point, method) comes from ``like``, whose names ``sys`` must carry in the same
        order: the way back from :meth:`to_control` after working on the matrices in python-control (e.g. a closed loop
        ``A - B K`` built with the same names).
        """
        control_module()
        names = {"states": (list(sys.state_labels), list(like.states)),
                 "inputs": (list(sys.input_labels), list(like.inputs)),
                 "outputs": (list(sys.output_labels), list(like.outputs))}
        wrong = [f"{what}: {got} instead of {want}" for what, (got, want) in names.items() if got != want]
        if wrong:
            raise BridgeError("from_control: the StateSpace's names differ from the linear model's (" + "; ".join(wrong)
                              + "); convert with to_control() and keep the names")
        from dataclasses import replace

        return replace(like, A=np.array(sys.A, dtype=float), B=np.array(sys.B, dtype=float),
                       C=np.array(sys.C, dtype=float), D=np.array(sys.D, dtype=float))


def control_module() -> Any:
    """Import python-control; a :class:`BridgeError` with the install command where it is missing."""
    try:
        import control
    except ImportError as exc:
        raise BridgeError(CONTROL_MISSING) from exc
    return control
