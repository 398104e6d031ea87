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

from ..model import symbols as S
from .eom import EquationsOfMotion


def _split(expr: sp.Expr, efforts: list[sp.Symbol]) -> tuple[list[sp.Expr], sp.Expr]:
    """(d expr/d e_j, expr at e = 0) of an expression affine in the efforts."""
    free = expr.free_symbols
    coeffs = [sp.diff(expr, e) if e in free else sp.Integer(0) for e in efforts]
    rest = expr.xreplace({e: 0 for e in efforts}) if free & set(efforts) else expr
    return coeffs, rest


def with_efforts(eom: EquationsOfMotion) -> EquationsOfMotion:
    """The equations with the system's efforts as unknowns and its dynamic variables' rate rows."""
    system = eom.system
    if not system.efforts and not system.dynamic:
        return eom
    E = [e.symbol for e in system.efforts]
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
    for eff in system.efforts:
        coeffs, rest = _split(eff.constraint.xreplace(kin), E)
        M = M.col_join(sp.Matrix([[0] * size + coeffs]))
        F.append(-rest)
    forms = eom.forms + tuple((f"Gamma[{eff.name}]", eff.constraint) for eff in system.efforts)
    return replace(eom, mass_matrix=sp.ImmutableMatrix(M), forcing=sp.ImmutableMatrix(F), efforts=tuple(E),
                   forms=forms)
