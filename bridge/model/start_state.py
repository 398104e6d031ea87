"""The start state and the constraints: checked independent and satisfied, or completed from a split.

Used by the loader (a file's start state, its ``[method] independent``) and by
:mod:`bridge.model.overrides` (values set from outside): the constraints compiled at t = 0
(:class:`StartConstraints`), the rank test of their rows, and the dependent positions (Newton on
``phi(q) = 0``) and velocities (``A_dep q'_dep = -(A_ind q'_ind + a0)``) of a split.
"""

from __future__ import annotations

import numpy as np

from ..errors import ProblemCollector
from . import symbols as S
from .mechanics import SINGULAR_SPLIT, Differentiator, independent_from_names, split_health, velocity_constraints
from .numeric import compile_exprs
from .system import System

__all__ = [
    "MAX_NEWTON",
    "START_TOL",
    "StartConstraints",
    "check_start",
    "dependent_constraint_problems",
    "dependent_positions",
    "dependent_velocities",
    "independent_rows_problems",
    "violations",
]

#: relative tolerance of a constraint's residual at the start state
START_TOL = 1e-9
#: Newton steps for the dependent start positions
MAX_NEWTON = 50


class StartConstraints:
    """The constraints compiled for the start checks, at t = 0: phi(q) and A(q), a0(q) of A q' + a0 = 0.

    The holonomic rows of A come first; they are the Jacobian d phi/dq.
    """

    def __init__(self, system: System):
        _, A_rows, a0_sym = velocity_constraints(system, Differentiator(system))
        args = [S.t, *system.q, *system.parameter_values]
        self.par = list(system.parameter_values.values())
        self.m, self.n = system.m, system.n
        self.mh = len(system.holonomic)
        self._fA = compile_exprs(args, [x for row in A_rows for x in row] + a0_sym)
        self._fphi = compile_exprs(args, list(system.holonomic)) if system.holonomic else None

    def velocity_form(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return (A, a0) of the velocity constraints ``A q' + a0 = 0`` at q."""
        flat = np.asarray(self._fA(np.concatenate([[0.0], q, self.par])), dtype=float).ravel()
        m, n = self.m, self.n
        return flat[: m * n].reshape(m, n), flat[m * n:]

    def holonomic(self, q: np.ndarray) -> np.ndarray:
        """Phi at q (empty without holonomic constraints)."""
        if self._fphi is None:
            return np.zeros(0)
        return np.asarray(self._fphi(np.concatenate([[0.0], q, self.par])), dtype=float).ravel()


def check_start(system: System, problems: ProblemCollector) -> System:
    """Check the constraints at the start state: independent and satisfied.

    With ``[method] independent`` the dependent positions (Newton on phi = 0) and velocities
    (solving A q' = -a0 for the dependent ones) are computed instead of checked.
    """
    if system.m == 0:
        return system
    constraints = StartConstraints(system)
    q0 = np.array([c.start for c in system.coordinates])
    v0 = np.array([c.velocity for c in system.coordinates])
    names = [entry for entry, _ in system.constraints]
    A, a0 = constraints.velocity_form(q0)
    if not np.all(np.isfinite(A)) or not np.all(np.isfinite(a0)):
        problems.add("constraints", "the constraints cannot be evaluated at the start state (not finite)",
                     "check the start values against the constraint expressions")
        problems.raise_if_any()
    for entry, message, hint in independent_rows_problems(A, names):
        problems.add(entry, message, hint)
    problems.raise_if_any()
    if system.independent is None:
        _check_start_positions(constraints, q0, names, problems)
        _check_start_velocities(A, a0, v0, names, problems)
        problems.raise_if_any()
        return system
    return _complete_start(system, constraints, q0, v0, A, problems)


def dependent_constraint_problems(system: System) -> list[tuple[str, str, str]]:
    """Return (entry, message, hint) of the constraints of ``system`` dependent on those before them.

    The test is that of :func:`independent_rows_problems`, at the start state.
    """
    if system.m == 0:
        return []
    A, _a0 = StartConstraints(system).velocity_form(np.array([c.start for c in system.coordinates], dtype=float))
    return independent_rows_problems(A, [entry for entry, _ in system.constraints])


def independent_rows_problems(A: np.ndarray, names: list[str]) -> list[tuple[str, str, str]]:
    """Return (entry, message, hint) of the constraint rows of A dependent on those before them.

    Rows are added one at a time: the first that adds no rank is reported; so is a count of too many
    constraints (m < n must remain).

    The rows are normalised to unit length, so that the rank test does not depend on the units.
    """
    m, n = A.shape
    norms = np.linalg.norm(A, axis=1)
    An = A / np.where(norms > 0, norms, 1.0)[:, None]
    rank = 0
    out = []
    for k in range(m):
        r = np.linalg.matrix_rank(An[: k + 1], tol=1e-9)
        if r == rank:
            out.append((names[k], "this constraint is dependent on (redundant with) the constraints before it "
                        "at the start state", "remove it, or check the start state is not a singular configuration"))
        rank = r
    if not out and m >= n:
        out.append(("constraints", f"{m} independent constraints on {n} coordinates leave no degree of freedom",
                    "remove constraints or add coordinates"))
    return out


def violations(constraints: StartConstraints, q: np.ndarray, v: np.ndarray,
               names: list[str]) -> list[tuple[str, float]]:
    """Return (entry, residual) of every constraint the state (q, v) violates, positions first, one entry each.

    A satisfied constraint has ``|phi_k(q)| <= START_TOL * max(1, max |q|)`` and
    ``|(A v + a0)_k| <= START_TOL * max(1, sum |A_k v| + |a0_k|)``.
    """
    out = []
    for k, value in enumerate(constraints.holonomic(q)):
        if not abs(value) <= START_TOL * max(1.0, float(np.abs(q).max())):
            out.append((names[k], float(value)))
    A, a0 = constraints.velocity_form(q)
    for k, value in enumerate(A @ v + a0):
        size = max(1.0, float(np.abs(A[k] * v).sum() + abs(a0[k])))
        if not abs(value) <= START_TOL * size and names[k] not in dict(out):
            out.append((names[k], float(value)))
    return out


def _check_start_positions(constraints: StartConstraints, q0: np.ndarray, names: list[str],
                           problems: ProblemCollector) -> None:
    """|phi_k(q0)| <= START_TOL * max(1, max |q0|)."""
    for k, value in enumerate(constraints.holonomic(q0)):
        if abs(value) > START_TOL * max(1.0, float(np.abs(q0).max())):
            problems.add(names[k], f"the start positions violate this constraint (residual {value:.6g})",
                         "correct the start values, or list the independent coordinates under "
                         "[method] independent to have the dependent ones computed")


def _check_start_velocities(A: np.ndarray, a0: np.ndarray, v0: np.ndarray, names: list[str],
                            problems: ProblemCollector) -> None:
    """Check the start velocities: ``|(A v0 + a0)_k| <= START_TOL * max(1, sum |A_k v0| + |a0_k|)``."""
    for k, value in enumerate(A @ v0 + a0):
        size = max(1.0, float(np.abs(A[k] * v0).sum() + abs(a0[k])))
        if abs(value) > START_TOL * size:
            problems.add(names[k], f"the start velocities violate this constraint (residual {value:.6g})",
                         "correct the start velocities, or list the independent coordinates under "
                         "[method] independent to have the dependent ones computed")


def _complete_start(system: System, constraints: StartConstraints, q0: np.ndarray, v0: np.ndarray, A: np.ndarray,
                    problems: ProblemCollector) -> System:
    """Return the start state with the dependent positions and velocities computed from the independent ones."""
    indep = list(independent_from_names(system, system.independent or ()))
    dep = [i for i in range(system.n) if i not in indep]
    if split_health(A, dep) < SINGULAR_SPLIT:
        problems.add("method.independent", "with these independent coordinates the constraints cannot be "
                     "solved for the dependent velocities at the start state", "choose another set")
        problems.raise_if_any()
    qv = dependent_positions(constraints, q0, dep)
    if qv is None:
        problems.add("method.independent", "the dependent start positions could not be found from the "
                     "holonomic constraints (Newton did not converge)", "give start values closer to a solution")
        problems.raise_if_any()
        return system
    vv = dependent_velocities(constraints, qv, v0, indep, dep)
    names_q = [c.name for c in system.coordinates]
    adjusted = [names_q[i] for i in dep if abs(qv[i] - q0[i]) > 0]
    adjusted += [f"der({names_q[i]})" for i in dep if abs(vv[i] - v0[i]) > 0]
    return system.with_start(dict(zip(names_q, qv)), dict(zip(names_q, vv)), tuple(adjusted))


def dependent_positions(constraints: StartConstraints, q0: np.ndarray, dep: list[int]) -> np.ndarray | None:
    """Solve phi(q) = 0 for the dependent positions by Newton's method from ``q0``.

    Each step is ``q_dep += lstsq(d phi/dq_dep, -phi)``. None when it does not converge in
    :data:`MAX_NEWTON` steps or phi is not finite on the way.
    """
    qv = q0.copy()
    if constraints.mh == 0:
        return qv
    for _ in range(MAX_NEWTON):
        phi = constraints.holonomic(qv)
        if not np.all(np.isfinite(phi)):
            return None
        if np.abs(phi).max() < 1e-14 * max(1.0, np.abs(qv).max()):
            return qv
        Ah, _a = constraints.velocity_form(qv)
        qv[dep] += np.linalg.lstsq(Ah[: constraints.mh][:, dep], -phi, rcond=None)[0]
    return None


def dependent_velocities(constraints: StartConstraints, q: np.ndarray, v0: np.ndarray, indep: list[int],
                         dep: list[int]) -> np.ndarray:
    """q'_dep = A_dep^-1 (-(a0 + A_ind q'_ind)) at q, the independent velocities kept."""
    A, a0 = constraints.velocity_form(q)
    vv = v0.copy()
    vv[dep] = np.linalg.solve(A[:, dep], -(a0 + A[:, indep] @ v0[indep]))
    return vv
