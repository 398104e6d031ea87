"""The operating point: a state on the constraints (the file's start state, ``--set`` overrides applied).

The point is ``(t, q, q', parameters, inputs)`` with ``phi(q, t) = 0`` and ``A(q, t) q' + a0 = 0`` (the loader and
:meth:`System.with_values` make the start state consistent). It is *steady* when the retained coordinates do not
move and no speed accelerates: ``q'_i = 0`` for every coordinate kept in the linear state and ``u' = 0``;
cyclic coordinates may move (a steady motion such as rolling or a steady turn).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import BridgeError, Problem

#: residual accelerations below this (times ``max(1, |q'|)``) count as steady
STEADY_TOL = 1e-9


class LinearizationError(BridgeError):
    """The operating point or the options of a linearization are bad input (exit code 2)."""


@dataclass(frozen=True)
class OperatingPoint:
    """A consistent state and the parameter and input values at it."""

    t: float
    q: np.ndarray
    qd: np.ndarray
    params: np.ndarray
    inputs: np.ndarray

    def mapping(self, system) -> dict[str, float]:
        """Return every coordinate, der(coordinate), parameter and input by name."""
        out = {c.name: float(v) for c, v in zip(system.coordinates, self.q)}
        out.update({f"der({c.name})": float(v) for c, v in zip(system.coordinates, self.qd)})
        out.update({p.name: float(v) for p, v in zip(system.parameters, self.params)})
        out.update({w.name: float(v) for w, v in zip(system.inputs, self.inputs)})
        return out


def inputs_with_values(system) -> set[str]:
    """Return the inputs whose start value the system file gives explicitly (``[inputs] NAME = { start = ... }``)."""
    path = Path(system.source)
    try:
        data = tomllib.loads(path.read_text()) if path.is_file() else {}
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return set()
    table = data.get("inputs", {})
    return {k for k, v in table.items() if isinstance(v, Mapping) and "start" in v} if isinstance(table, Mapping) \
        else set()


def system_at(system, at=None):
    """Return ``system`` with the values of ``at`` (names -> numbers, see :meth:`System.with_values`) applied."""
    if at is None:
        return system
    if isinstance(at, Mapping):
        return system.with_values(dict(at)) if at else system
    if hasattr(at, "coordinates") and hasattr(at, "parameters"):
        return at
    raise LinearizationError(f"at: expected a mapping of names to values (or a System), got {type(at).__name__}")


def operating_point(system, given: Mapping[str, float] | None = None, t: float = 0.0) -> OperatingPoint:
    """Return the start state of ``system`` as an operating point.

    Every input must have a value (from the file's ``start`` or from ``given``), since the linear model depends on where
    the inputs are held.
    """
    missing = [w.name for w in system.inputs
               if w.name not in (given or {}) and w.name not in inputs_with_values(system)]
    if missing:
        raise LinearizationError(Problem(
            "inputs", f"the system has inputs without values at the operating point: {', '.join(missing)}",
            "give each input's value, e.g. --set " + f"{missing[0]}=0 (or start = ... under [inputs])",
            system.source))
    return OperatingPoint(float(t), np.array([c.start for c in system.coordinates], dtype=float),
                          np.array([c.velocity for c in system.coordinates], dtype=float),
                          np.array([p.value for p in system.parameters], dtype=float),
                          np.array([w.start for w in system.inputs], dtype=float))


def not_steady(system, names: list[str], residuals: np.ndarray, scale: float) -> list[tuple[str, float]]:
    """Return (name, residual) of every state derivative that should vanish at a steady point and does not."""
    tol = STEADY_TOL * max(1.0, scale)
    return [(nm, float(r)) for nm, r in zip(names, residuals) if not abs(r) <= tol]
