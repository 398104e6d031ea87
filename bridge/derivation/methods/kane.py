"""Kane's method: generalized active and inertia forces from the bodies' partial velocities."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se
import sympy as sp

from ...errors import DerivationError, Problem
from ...model.mechanics import (
    Differentiator,
    LinearForm,
    state_args,
    to_se,
    to_sp_matrix,
    velocity_constraints,
)
from ...model.multibody import Multibody
from ...model.numeric import evaluate_once
from ...model.system import System
from .base import METHODS, Method
from .reduced import finish_reduced, pick_independent, project, reduce

ZERO = se.Integer(0)


def _vec(v) -> list:
    return [to_se(x) for x in v]


def _cross(a: Sequence, b: Sequence) -> list:
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _partials(d: Differentiator, v: Sequence) -> list[list]:
    """Return ``p[k][i] = d v_k / d q'_i`` (zero without a call where v_k lacks q'_i)."""
    out = []
    for x in v:
        free = x.free_symbols
        out.append([d.partial(x, s) if s in free else ZERO for s in d.qd])
    return out


def _accumulate(coeffs: list, rest: list, partial: list[list], force: Sequence[LinearForm], extra=None) -> None:
    """Add ``sum_k partial[k][i] * (force_k + extra_k)`` to ``E_i`` for every i (force_k linear in q'')."""
    n = len(rest)
    for k in range(3):
        f = force[k]
        add = f.rest + (extra[k] if extra is not None else ZERO)
        nz = [j for j in range(n) if f.coeffs[j] != 0]
        for i in range(n):
            p = partial[k][i]
            if p == 0:
                continue
            rest[i] += p * add
            for j in nz:
                coeffs[i][j] += p * f.coeffs[j]


def inertia_forces(mb: Multibody, d: Differentiator, partials: list) -> list[LinearForm]:
    """Return the generalized inertia forces ``-F*_i = sum_b m a_b . v_b,i + (dH_b/dt) . w_b,i`` as forms linear in q''.

    ``a_b = d/dt v_b`` (N components); ``H_b = I_b w_b`` and ``dH_b/dt = d/dt(H components) + Omega x H`` with
    ``Omega`` the rate of the basis the body's vectors are given in (its own angular velocity by default).
    """
    n = len(d.qd)
    coeffs = [[ZERO] * n for _ in range(n)]
    rest = [ZERO] * n
    for body, (pv, pw) in zip(mb.bodies, partials):
        m = to_se(body.mass)
        v = _vec(body.velocity)
        acc = [d.time(m * x) for x in v]
        _accumulate(coeffs, rest, pv, acc)
        if body.is_particle or pw is None:
            continue
        w = _vec(body.angular_velocity)
        inertia = [[to_se(body.inertia[r, c]) for c in range(3)] for r in range(3)]
        H = [sum((inertia[r][c] * w[c] for c in range(3) if inertia[r][c] != 0), ZERO) for r in range(3)]
        rate = w if body.basis_angular_velocity is None else _vec(body.basis_angular_velocity)
        _accumulate(coeffs, rest, pw, [d.time(h) for h in H], _cross(rate, H))
    return [LinearForm(coeffs[i], rest[i]) for i in range(n)]


def active_forces(system: System, mb: Multibody, d: Differentiator, partials: list) -> list:
    """Return ``F_i = sum_b m_b g . v_b,i + sum_loads F . v_P,i`` plus the forces not described by bodies.

    ``-dV'/dq_i + Q'_i - dD/dq'_i`` with ``V' = V - V_bodies``, ``Q' = Q - Q_loads`` (zero for a system built from
    bodies alone).
    """
    n = system.n
    F = [ZERO] * n
    g = _vec(mb.gravity)
    if any(x != 0 for x in g):
        for body, (pv, _pw) in zip(mb.bodies, partials):
            m = to_se(body.mass)
            for k in range(3):
                if g[k] != 0:
                    for i in range(n):
                        if pv[k][i] != 0:
                            F[i] += m * g[k] * pv[k][i]
    for load in mb.loads:
        vec = _vec(load.vector)
        pl = _partials(d, _vec(load.velocity))
        for k in range(3):
            if vec[k] != 0:
                for i in range(n):
                    if pl[k][i] != 0:
                        F[i] += vec[k] * pl[k][i]
    V_rest = _difference(system.potential, mb.potential_energy())
    if V_rest != 0:
        F = [F[i] - d.partial(V_rest, d.q[i]) for i in range(n)]
    Q_loads = mb.generalized_forces(system.qd) if mb.loads else [sp.Integer(0)] * n
    for i, c in enumerate(system.coordinates):
        Q_rest = _difference(system.forces.get(c.name, sp.Integer(0)), Q_loads[i])
        if Q_rest != 0:
            F[i] += Q_rest
    if system.dissipation != 0:
        D = to_se(system.dissipation)
        F = [F[i] - d.partial(D, d.qd[i]) for i in range(n)]
    return F


def _difference(a: sp.Expr, b: sp.Expr):
    """Return ``a - b`` in symengine, zero when they agree term by term."""
    diff = to_se(sp.sympify(a) - sp.sympify(b))
    return diff if diff == 0 else se.expand(diff)


def _check_kinetic_energy(system: System, mb: Multibody) -> None:
    """Check that the system's T is the bodies' (checked at random states): Kane's inertia forces come from them."""
    rng = np.random.default_rng(11)
    args = state_args(system)
    exprs = [system.kinetic, mb.kinetic_energy()]
    for _ in range(3):
        values = rng.uniform(-1.0, 1.0, len(args))
        values[1 + 2 * system.n:] = [p.value for p in system.parameters] + [u.start for u in system.inputs]
        T, Tb = evaluate_once(args, exprs, values)
        if not np.isfinite(T) or not np.isfinite(Tb):
            continue
        if abs(T - Tb) > 1e-9 * max(1.0, abs(T)):
            raise DerivationError(Problem(
                "energy.kinetic", f"the kinetic energy of {system.name} has terms that none of its bodies carries "
                f"(T = {T:.6g} but the bodies give {Tb:.6g} at a test state); Kane's method forms the inertia forces "
                "from the bodies", "describe every moving mass as a body, or use lagrange", system.source))


class Kane(Method):
    """Kane's equations ``F_r + F*_r = 0`` (r = 1..p) in the independent speeds u.

    Generalized speeds are the velocities q'. Partial velocities of the mass centres and partial angular velocities
    ``v_b,i = dv_b/dq'_i``, ``w_b,i = dw_b/dq'_i`` are formed from the bodies (not from T); unconstrained
    ``F_i = sum_b m_b g . v_b,i + sum_loads F . v_P,i (T . w_B,i for torques)`` (plus forces of the system not
    described by bodies) and ``F*_i = -sum_b [m_b a_b . v_b,i + (I_b alpha_b + w_b x I_b w_b) . w_b,i]`` with
    ``a_b, alpha_b`` the time derivatives of ``v_b, w_b``. Constraints ``A q' + a0 = 0`` enter through the dependent
    speeds, ``q' = C u + c0`` solved implicitly as in maggi: the partial velocities of ``u_k`` are
    ``sum_i v_b,i C_ik``, so ``sum_i C_ik (F_i + F*_i) = 0`` with ``q'' = C u' + C'u + c0'``.
    Needs bodies (a system file with [bodies], or ``bridge.from_mechanics``).
    """

    name = "kane"
    title = "Kane's equations"
    reduced = True

    def applicable(self, system: System) -> str | None:
        """Return why Kane's method cannot treat ``system``, or None when it can.

        Parameters
        ----------
        system : System
            The system to derive.

        Returns
        -------
        str or None
            The reason (the system has no bodies to form partial velocities from), with what to do instead.
        """
        if system.multibody is None:
            return ("it is described by energies only; Kane's method forms partial velocities from bodies "
                    "(describe it with [bodies] or import it with bridge.from_mechanics, or use lagrange or maggi)")
        return None

    def _derive(self, system, d, independent, baumgarte):
        mb = system.multibody
        _check_kinetic_energy(system, mb)
        g, A, a0 = velocity_constraints(system, d)
        red = reduce(system, d, pick_independent(system, d, A, independent), A, a0)
        partials = [(_partials(d, _vec(b.velocity)),
                     None if b.is_particle else _partials(d, _vec(b.angular_velocity))) for b in mb.bodies]
        E = inertia_forces(mb, d, partials)
        F = active_forces(system, mb, d, partials)
        mass, forcing, fr = project(red, E, F)
        forms = [("C", to_sp_matrix(red.C, len(red.u))), ("F_r", to_sp_matrix(fr))]
        return finish_reduced(system, self.name, red, g, A, mass, forcing, forms)


METHODS.register(Kane())
