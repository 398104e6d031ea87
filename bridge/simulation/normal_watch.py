"""The normal forces of regularised friction elements, watched during a native run.

A friction element with a ``regularization`` velocity is the smooth force ``-mu_kinetic N tanh(v_r/v_eps)``: no
modes and no events of its own. Its normal force N(t, q, q') must stay >= 0 all the same (a negative N turns the
friction law into a drive that feeds energy in; a contact that lifts off is a different model), so each such
element's N is a terminal event of the integration, falling below 0, exactly as the Coulomb elements' normal
forces are in :mod:`bridge.simulation.events`: the run stops with a :class:`~bridge.errors.SimulationError` naming
the element, the located time and the value. A normal force that touches 0 without falling below it goes on.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..derivation.eom import EquationsOfMotion
from ..derivation.numeric_model import NumericModel
from ..errors import SimulationError
from ..model import symbols as S
from ..model.efforts import NEGATIVE_NORMAL_HINT
from ..model.numeric import compile_exprs

_TINY = float(np.finfo(float).tiny)


def regularized_friction(system) -> tuple:
    """Return the friction elements with a regularization velocity that exert a force (not inert)."""
    return tuple(f for f in getattr(system, "friction", ()) if f.regularization > 0 and not f.inert)


class RegularizedNormals:
    """The normal forces N of a system's regularised friction elements, as terminal events of ``solve_ivp``."""

    def __init__(self, eom: EquationsOfMotion):
        system = eom.system
        self.elements = regularized_friction(system)
        self._normal: Callable | None = None
        if self.elements:
            args = [S.t, *system.q, *system.qd, *[p.symbol for p in system.parameters],
                    *[u.symbol for u in system.inputs]]
            self._normal = compile_exprs(args, [el.normal for el in self.elements])

    def values(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        """N of each element at (t, x), x the integrator's state (q, u) of ``num``."""
        n = num.n
        qd = num.kinematics(t, x[:n], x[n:])
        return np.asarray(self._normal(np.concatenate([[t], x[:n], qd, num.params, num.inputs])),  # type: ignore
                          dtype=float).ravel()

    def events(self, num: NumericModel) -> list:
        """Per element its N as a terminal event falling through 0 (0 itself counts as holding)."""
        out = []
        for k in range(len(self.elements)):
            def normal(t, x, k=k):
                value = self.values(num, t, x)[k]
                return value if value != 0 else _TINY
            normal.terminal, normal.direction = True, -1
            out.append(normal)
        return out

    def error(self, num: NumericModel, k: int, t: float, x: np.ndarray) -> SimulationError:
        """Return the error of element k's normal force falling through 0 at the located time t."""
        value = self.values(num, t, x)[k]
        return SimulationError(f"the normal force of the friction element {self.elements[k].name} turns negative at "
                               f"t = {t:.12g} (N = {value:.6g} at the located crossing); {NEGATIVE_NORMAL_HINT}")

    def check(self, sol, num: NumericModel, first: int) -> None:
        """Raise the error of the watched element whose event ended ``sol`` (its events from index ``first``)."""
        if sol.status != 1 or not self.elements:
            return
        times = [(float(te[0]), i) for i, te in enumerate(sol.t_events) if len(te)]
        te, i = min(times)
        if i >= first:
            raise self.error(num, i - first, te, sol.y_events[i][0])
