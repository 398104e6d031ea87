"""Checks of the efforts and friction elements of a built system at its start state.

Normal forces are non-negative, and the effort constraints determine their efforts (``dGamma/de`` regular).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .efforts import NEGATIVE_NORMAL_HINT
from .mechanics import state_args
from .numeric import evaluate_once
from .system import System

__all__ = ["effort_jacobian_problems", "friction_normal_problems"]


def _start_point(system: System) -> list[float]:
    """Return the values of :func:`~bridge.model.mechanics.state_args` at the start state (t = 0)."""
    return [0.0, *[c.start for c in system.coordinates], *[c.velocity for c in system.coordinates],
            *[p.value for p in system.parameters], *[u.start for u in system.inputs]]


def friction_normal_problems(system: System) -> list[tuple[str, str, str]]:
    """Return (entry, message, hint) for each friction element whose start normal force is negative or not finite.

    Inert elements are checked too: their normal force is still a statement about the contact.
    """
    elements = getattr(system, "friction", ())
    if not elements:
        return []
    values = evaluate_once(state_args(system), [f.normal for f in elements], _start_point(system))
    out = []
    for f, N in zip(elements, values):
        if not np.isfinite(N):
            out.append((f"friction.{f.name}.normal", f"the normal force is not finite at the start state (N = {N})",
                        "check the expression and the start values it depends on"))
        elif N < 0:
            out.append((f"friction.{f.name}.normal", f"the normal force of {f.name} is negative at the start state "
                        f"(N = {N:.6g} at t = 0)", NEGATIVE_NORMAL_HINT))
    return out


def effort_jacobian_problems(system: System) -> list[tuple[str, str, str]]:
    """Return (entry, message, hint) when ``dGamma/de`` is singular at the start state.

    A singular ``dGamma/de`` means the effort constraints Gamma do not determine their efforts e. Columns
    and rows are scaled to unit length, so the test does not depend on units.
    """
    if not system.efforts:
        return []
    E = [e.symbol for e in system.efforts]
    J = [sp.diff(e.constraint, x) for e in system.efforts for x in E]
    Jn = evaluate_once(state_args(system), J, _start_point(system)).reshape(len(E), len(E))
    names = [e.name for e in system.efforts]
    if not np.all(np.isfinite(Jn)):
        return [("efforts", "the effort constraints cannot be evaluated at the start state (not finite)",
                 "check the start values against the constraint expressions")]
    out = []
    rank = 0
    rows = Jn / np.where(np.linalg.norm(Jn, axis=1) > 0, np.linalg.norm(Jn, axis=1), 1.0)[:, None]
    for k in range(len(E)):
        r = np.linalg.matrix_rank(rows[: k + 1], tol=1e-9) if np.any(rows[: k + 1]) else 0
        if r == rank:
            out.append((f"efforts.{names[k]}.constraint",
                        f"the constraint does not determine its effort at the start state (dGamma/de is singular: "
                        f"it is dependent on the constraints before it or does not depend on the efforts "
                        f"{', '.join(names)} there)",
                        f"make the constraint of {names[k]} depend on {names[k]} (e.g. \"{names[k]} - k*der(x)\")"))
        rank = r
    return out
