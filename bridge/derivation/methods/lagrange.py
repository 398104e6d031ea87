"""Lagrange's equations of the second kind with multipliers, and Nielsen's form."""

from __future__ import annotations

from collections.abc import Sequence

import symengine as se
import sympy as sp

from ...model import symbols as S
from ...model.mechanics import (
    Differentiator,
    LinearForm,
    generalized_forces,
    to_se,
    to_sp,
    to_sp_matrix,
    velocity_constraints,
)
from ...model.system import System
from ..eom import EquationsOfMotion
from .base import METHODS, Method

#: the first term of the equations, d/dt(dT/dq') resp. dT'/dq', whose differentiations the seed counts
INERTIA_TERM = "inertia term"


def multiplier_form(system: System, d: Differentiator, E: list[LinearForm], method: str,
                    baumgarte: tuple[float, float] | None, forms: list) -> EquationsOfMotion:
    """Assemble ``E(q, q', q'') = Q~ + A^T lambda`` with the constraints at acceleration level.

    Index-1 form: ``A q'' = -(dA/dt q' + da0/dt) - 2 alpha g - beta^2 phi`` (Baumgarte terms optional),
    giving the block system ``[[M, -A^T], [A, 0]] [q''; lambda] = [Q~ - r; gamma]``.
    """
    n, m = system.n, system.m
    Q = generalized_forces(system, d)
    g, A, _a0 = velocity_constraints(system, d)
    M = [[E[i].coeffs[j] for j in range(n)] for i in range(n)]
    rhs = [Q[i] - E[i].rest for i in range(n)]
    gamma = []
    for k in range(m):
        # d/dt of g_k at zero acceleration: the velocity-product (and explicit time) terms
        gk = d.time(g[k])
        gam = -gk.rest
        if baumgarte is not None:
            alpha, beta = baumgarte
            gam -= 2 * alpha * g[k]
            if k < len(system.holonomic):
                gam -= beta**2 * to_se(system.holonomic[k])
        gamma.append(gam)
    size = n + m
    full = [[se.Integer(0)] * size for _ in range(size)]
    for i in range(n):
        for j in range(n):
            full[i][j] = M[i][j]
    for k in range(m):
        for j in range(n):
            full[n + k][j] = A[k][j]
            full[j][n + k] = -A[k][j]
    lambdas = tuple(S.multiplier(k + 1) for k in range(m))
    forms += [("M", to_sp_matrix(M, n)), ("A", to_sp_matrix(A, n)), ("Q", to_sp_matrix(Q))]
    return EquationsOfMotion(
        system=system, method=method, u=system.qd,
        kinematics=sp.ImmutableMatrix(system.qd), acceleration_map=sp.ImmutableMatrix(system.qdd),
        mass_matrix=to_sp_matrix(full, size), forcing=to_sp_matrix(rhs + gamma), multipliers=lambdas,
        velocity_constraints=tuple(to_sp(x) for x in g), baumgarte=baumgarte, forms=tuple(forms),
        constraint_jacobian=to_sp_matrix(A, n),
        independent=tuple(c.name for c in system.coordinates),
    )


class Lagrange(Method):
    """Lagrange's equations with multipliers.

    ``d/dt(dT/dq'_i) - dT/dq_i = Q_i - dV/dq_i - dD/dq'_i + sum_k lambda_k A_ki``  (i = 1..n)
    with the constraints ``A(q,t) q' + a0(q,t) = 0`` kept and differentiated once for the
    index-1 form ``A q'' + dA/dt q' + da0/dt = 0`` (optionally Baumgarte-stabilised:
    ``+ 2 alpha g + beta^2 phi``). Unknowns: all accelerations q'' and the multipliers lambda,
    which are reported as outputs ``lambda[k]`` (the constraint forces along A^T).
    """

    name = "lagrange"
    title = "Lagrange's equations with multipliers"

    def _derive(self, system: System, d: Differentiator, independent: Sequence[str] | None,
                baumgarte: tuple[float, float] | None) -> EquationsOfMotion:
        T = to_se(system.kinetic)
        E = []
        for i in range(system.n):
            with d.tally(INERTIA_TERM):
                p = d.partial(T, d.qd[i])        # dT/dq'_i
                dp = d.time(p)                   # d/dt (dT/dq'_i), linear in q''
            E.append(dp - d.partial(T, d.q[i]))  # - dT/dq_i
        return multiplier_form(system, d, E, self.name, baumgarte, [])


class Nielsen(Method):
    """Nielsen's equations with multipliers.

    ``d(T')/dq'_i - 2 dT/dq_i = Q_i - dV/dq_i - dD/dq'_i + sum_k lambda_k A_ki``, where
    ``T' = dT/dt`` is the total time derivative of the kinetic energy (containing q'').
    Since ``dT'/dq'_i = d/dt(dT/dq'_i) + dT/dq_i`` this is Lagrange's equation; the work differs:
    one time derivative of T, then n partial derivatives of T'. Constraints as in ``lagrange``.
    """

    name = "nielsen"
    title = "Nielsen's equations with multipliers"

    def _derive(self, system: System, d: Differentiator, independent: Sequence[str] | None,
                baumgarte: tuple[float, float] | None) -> EquationsOfMotion:
        T = to_se(system.kinetic)
        with d.tally(INERTIA_TERM):
            Tdot = d.time(T)  # T' as a form linear in q''
        E = []
        for i in range(system.n):
            with d.tally(INERTIA_TERM):
                dTdot = Tdot.partial(d, d.qd[i])
            E.append(dTdot - 2 * d.partial(T, d.q[i]))
        forms = [("T_dot", to_sp(Tdot.expr(d)))]
        return multiplier_form(system, d, E, self.name, baumgarte, forms)


METHODS.register(Lagrange())
METHODS.register(Nielsen())
