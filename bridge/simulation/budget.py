"""A bound on the work of one native run: the number of evaluations of the equations of motion.

An integrator that meets a fast mode (a friction element's small regularization velocity, a stiff spring) with an
explicit method takes steps as short as the mode's time constant, and a run of seconds may need billions of them:
it would not hang silently but stop with a message naming how far it got.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..errors import SimulationError

#: evaluations of the equations of one native run refused without ``max_evaluations=None`` (``simulate --yes``)
MAX_EVALUATIONS = 10**6


class EvaluationBudget:
    """Counts the evaluations of a run's right-hand sides (all segments) and stops the run past ``limit``."""

    def __init__(self, limit: int | None, stop_time: float):
        self.limit = limit
        self.stop_time = stop_time
        self.count = 0

    def counted(self, rhs: Callable[[float, np.ndarray], np.ndarray]) -> Callable[[float, np.ndarray], np.ndarray]:
        """Return ``rhs`` counting against this budget."""
        def evaluate(t: float, x: np.ndarray) -> np.ndarray:
            self.count += 1
            if self.limit is not None and self.count > self.limit:
                raise SimulationError(
                    f"the integration needed more than {self.limit:.0e} evaluations of the equations and reached "
                    f"only t = {t:.9g} s of {self.stop_time:g} s: the equations are too stiff there for the "
                    "integrator's steps (a fast mode, e.g. a friction element's small regularization velocity v_eps: "
                    "its force -mu_kinetic*N*tanh(v_r/v_eps) changes by mu_kinetic*N within v_eps). Give a larger "
                    "regularization (or none, for stick and slip by events), choose a stiff integrator "
                    "(integrator='LSODA' or 'BDF' in Python; the default DOP853 hands a segment to LSODA by itself "
                    "only where its own steps show the stiffness), or confirm with --yes (max_evaluations=None in "
                    "Python)")
            return rhs(t, x)
        return evaluate
