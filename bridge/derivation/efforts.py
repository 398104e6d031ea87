"""Effort constraints and dynamic variables in the equations of motion (seed eq. 4.4).

A method derives ``M z = F`` with ``z = [u', lambda]`` treating the efforts e as symbols inside the
generalized forces. :func:`with_efforts` then makes the efforts unknowns and keeps their constraints
algebraic:

* rows of the speeds: ``F_i`` is affine in e, so ``F_i = F_i|_{e=0} + sum_j dF_i/de_j e_j``; the columns
  ``M[i, e_j] = -dF_i/de_j`` are added and ``F_i|_{e=0}`` stays on the right;
* the row of a dynamic variable s (the speed of its auxiliary displacement, see
  :mod:`bridge.model.efforts`) becomes ``s' - sum_j dr/de_j e_j = r|_{e=0}`` (its rate r);
* one row per effort constraint: ``sum_j dGamma_k/de_j e_j = -Gamma_k|_{e=0}`` (no accelerations).

For the reduced methods the dependent velocities in rates and constraints are replaced by the kinematic
relations ``q' = K(q, u)`` (the split's placeholders stay implicit).

The grown system is solved numerically like the rest (LU at every evaluation); nothing is solved for e
symbolically. The rows of a dynamic variable are structurally zero before the replacement: its
displacement appears in no energy, constraint or force.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..errors import DerivationError, Problem
from ..model import symbols as S
from ..model.system import total_derivative
from .eom import EquationsOfMotion

#: friction modes: stick, slip with positive / negative relative velocity
STICK, SLIP_POS, SLIP_NEG = 0, 1, -1


def event_friction(system) -> tuple:
    """The friction elements switched by events (the regularised ones are smooth forces)."""
    return tuple(f for f in getattr(system, "friction", ()) if f.regularization == 0)


def _split(expr: sp.Expr, efforts: list[sp.Symbol]) -> tuple[list[sp.Expr], sp.Expr]:
    """(d expr/d e_j, expr at e = 0) of an expression affine in the efforts."""
    free = expr.free_symbols
    coeffs = [sp.diff(expr, e) if e in free else sp.Integer(0) for e in efforts]
    rest = expr.xreplace({e: 0 for e in efforts}) if free & set(efforts) else expr
    return coeffs, rest


def with_efforts(eom: EquationsOfMotion) -> EquationsOfMotion:
    """The equations with the system's efforts as unknowns and its dynamic variables' rate rows."""
    system = eom.system
    friction = event_friction(system)
    if not system.efforts and not system.dynamic and not friction:
        return eom
    if friction and eom.is_reduced:
        raise DerivationError(Problem("friction", f"method {eom.method!r} cannot carry the Coulomb friction "
                                      f"{friction[0].name} (its stick phase is a constraint on the accelerations)",
                                      "use lagrange or nielsen, or give the element a regularization velocity",
                                      system.source))
    E = [e.symbol for e in system.efforts] + [f.symbol for f in friction]
    speeds = list(eom.u)  # all velocities (not reduced), in the method's order
    friction_rows = {speeds.index(S.qd(f.coordinate)): f.symbol for f in friction}
    ne, size = len(E), eom.mass_matrix.shape[0]
    p = len(eom.u)
    # the reduced methods' states are the independent speeds: dependent velocities by the kinematic relations
    kin = {v: k for v, k in zip(system.qd, eom.kinematics) if v not in eom.u}
    rates = {d.coordinate: d.rate.xreplace(kin) for d in system.dynamic}
    M = sp.Matrix(eom.mass_matrix).row_join(sp.zeros(size, ne)) if ne else sp.Matrix(eom.mass_matrix)
    F = list(eom.forcing)
    for i in range(size):
        name = S.base_name(eom.u[i]) if i < p else None
        if name in rates:
            M[i, :] = sp.zeros(1, size + ne)
            M[i, i] = 1
            coeffs, F[i] = _split(rates[name], E)
        else:
            coeffs, F[i] = _split(F[i], E)
        for j, c in enumerate(coeffs):
            M[i, size + j] = -c
        if i in friction_rows and name not in rates:  # Q_i += F (the friction force on its coordinate)
            M[i, size + E.index(friction_rows[i])] -= 1
    for eff in system.efforts:
        coeffs, rest = _split(eff.constraint.xreplace(kin), E)
        M = M.col_join(sp.Matrix([[0] * size + coeffs]))
        F.append(-rest)
    for k, f in enumerate(friction):
        row, rhs = friction_row(eom, f, len(system.efforts) + k, size + len(E), STICK)
        M = M.col_join(sp.Matrix([row]))
        F.append(rhs)
    forms = eom.forms + tuple((f"Gamma[{eff.name}]", eff.constraint) for eff in system.efforts) + tuple(
        (f"v_rel[{f.name}]", f.relative_velocity) for f in friction)
    return replace(eom, mass_matrix=sp.ImmutableMatrix(M), forcing=sp.ImmutableMatrix(F), efforts=tuple(E),
                   forms=forms)


def friction_row(eom: EquationsOfMotion, f, k: int, ncols: int, mode: int) -> tuple[list, sp.Expr]:
    """The row of friction element ``f`` (effort column ``p + m + k``) in ``mode``: stick
    ``d v_r/dt = 0`` (``dv_r/dq' q'' = -(dv_r/dq q' + dv_r/dt)``), slip ``F = -mu_k N mode``."""
    system = eom.system
    p, m = len(eom.u), len(eom.multipliers)
    row = [sp.Integer(0)] * ncols
    if mode == STICK:
        dv = total_derivative(f.relative_velocity, system.q, system.qd, system.qdd)
        for a in system.qdd:
            row[list(eom.du).index(a)] = sp.diff(dv, a)
        return row, -dv.xreplace({a: 0 for a in system.qdd})
    row[p + m + k] = sp.Integer(1)
    return row, -f.mu_kinetic * f.normal * mode


def with_modes(eom: EquationsOfMotion, modes: tuple[int, ...]) -> EquationsOfMotion:
    """The equations with the friction rows of ``modes`` (one per element of :func:`event_friction`)."""
    friction = event_friction(eom.system)
    size = eom.mass_matrix.shape[0]
    M, F = sp.Matrix(eom.mass_matrix), list(eom.forcing)
    first = size - len(friction)
    for k, (f, mode) in enumerate(zip(friction, modes)):
        row, rhs = friction_row(eom, f, len(eom.system.efforts) + k, size, mode)
        M[first + k, :] = sp.Matrix([row])
        F[first + k] = rhs
    return replace(eom, mass_matrix=sp.ImmutableMatrix(M), forcing=sp.ImmutableMatrix(F))
