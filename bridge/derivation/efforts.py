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

Switched elements (Coulomb friction switched by events, diodes) are further unknowns after the efforts:
the friction force F (generalized force ``+F`` on its coordinate), the diode voltage v (``-v`` on its
charge). Their rows depend on the element's mode (:func:`element_row`); the equations as derived hold
the first mode (stick, conducting); :func:`with_modes` gives those of any other.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..errors import DerivationError, Problem
from ..model import symbols as S
from ..model.efforts import Diode
from ..model.system import total_derivative
from .eom import EquationsOfMotion

#: friction modes: stick, slip with positive / negative relative velocity
STICK, SLIP_POS, SLIP_NEG = 0, 1, -1
#: diode modes
OFF, ON = 0, 1


def event_friction(system) -> tuple:
    """Return the friction elements switched by events (the regularised ones are smooth forces, the inert ones none)."""
    return tuple(f for f in getattr(system, "friction", ()) if f.regularization == 0 and not f.inert)


def switched(system) -> tuple:
    """Return the elements with modes: friction switched by events, then the diodes."""
    return event_friction(system) + tuple(getattr(system, "diodes", ()))


def switching_velocity(element) -> sp.Expr:
    """Return the element's w, whose zero its switches are tied to.

    Friction's relative velocity v_r, a diode's ``i - G_off V_f`` (i = der(q) of its charge).
    """
    if isinstance(element, Diode):
        return S.qd(element.coordinate) - sp.Float(element.off_conductance) * sp.Float(element.forward_voltage)
    return element.relative_velocity


def first_mode(element) -> int:
    """Return the mode whose rows the derived equations hold."""
    return ON if isinstance(element, Diode) else STICK


def _split(expr: sp.Expr, efforts: list[sp.Symbol]) -> tuple[list[sp.Expr], sp.Expr]:
    """Return (d expr/d e_j, expr at e = 0) of an expression affine in the efforts."""
    free = expr.free_symbols
    coeffs = [sp.diff(expr, e) if e in free else sp.Integer(0) for e in efforts]
    rest = expr.xreplace({e: 0 for e in efforts}) if free & set(efforts) else expr
    return coeffs, rest


def with_efforts(eom: EquationsOfMotion) -> EquationsOfMotion:
    """Return the equations with the system's efforts (and switched elements) as unknowns.

    The dynamic variables' rate rows are added as well.
    """
    system = eom.system
    elements = switched(system)
    if not system.efforts and not system.dynamic and not elements:
        return eom
    if elements and eom.is_reduced:
        raise DerivationError(Problem("friction" if not isinstance(elements[0], Diode) else "diodes",
                                      f"method {eom.method!r} cannot carry {elements[0].name} (its modes constrain "
                                      "the accelerations)", "use lagrange or nielsen, or give friction elements a "
                                      "regularization velocity", system.source))
    E = [e.symbol for e in system.efforts] + [el.symbol for el in elements]
    ne, size = len(E), eom.mass_matrix.shape[0]
    p = len(eom.u)
    # the reduced methods' states are the independent speeds: dependent velocities by the kinematic relations
    kin = {v: k for v, k in zip(system.qd, eom.kinematics) if v not in eom.u}
    rates = {d.coordinate: d.rate.xreplace(kin) for d in system.dynamic}
    speeds = list(eom.u)  # all velocities when there are switched elements, in the method's order
    on_row: dict[int, list[tuple[int, int]]] = {}
    for k, el in enumerate(elements):  # friction: Q += F; diode: Q -= v
        on_row.setdefault(speeds.index(S.qd(el.coordinate)), []).append(
            (len(system.efforts) + k, 1 if isinstance(el, Diode) else -1))
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
        for j, sign in on_row.get(i, []) if name not in rates else []:
            M[i, size + j] += sign
    for eff in system.efforts:
        coeffs, rest = _split(eff.constraint.xreplace(kin), E)
        M = M.col_join(sp.Matrix([[0] * size + coeffs]))
        F.append(-rest)
    for k, el in enumerate(elements):
        row, rhs = element_row(eom, el, len(system.efforts) + k, size + ne, first_mode(el))
        M = M.col_join(sp.Matrix([row]))
        F.append(rhs)
    forms = eom.forms + tuple((f"Gamma[{eff.name}]", eff.constraint) for eff in system.efforts) + tuple(
        (f"v_rel[{f.name}]", f.relative_velocity) for f in event_friction(system))
    return replace(eom, mass_matrix=sp.ImmutableMatrix(M), forcing=sp.ImmutableMatrix(F), efforts=tuple(E),
                   forms=forms)


def element_row(eom: EquationsOfMotion, el, k: int, ncols: int, mode: int) -> tuple[list, sp.Expr]:
    """Return the row of a switched element (unknown column ``p + m + k``) in ``mode``.

    Friction: stick ``dv_r/dt = 0`` (``dv_r/dq' q'' = -(dv_r/dq q' + dv_r/dt)``), slip ``F = -mu_k N mode``.
    Diode (i its current, v its voltage): on ``v = V_f + R_on (i - G_off V_f)``; off ``i = G_off v``, or for the
    ideal diode (G_off = 0) ``di/dt = 0``.
    """
    system = eom.system
    p, m = len(eom.u), len(eom.multipliers)
    du = list(eom.du)
    row = [sp.Integer(0)] * ncols
    col = p + m + k
    if isinstance(el, Diode):
        i = S.qd(el.coordinate)
        vf, ron, goff = (sp.Float(x) if x else sp.Integer(0) for x in (el.forward_voltage, el.on_resistance,
                                                                       el.off_conductance))
        if mode == ON:
            row[col] = sp.Integer(1)
            return row, vf + ron * (i - goff * vf)
        if el.off_conductance > 0:
            row[col] = -goff
            return row, -i
        row[du.index(S.qdd(el.coordinate))] = sp.Integer(1)
        return row, sp.Integer(0)
    if mode == STICK:
        dv = total_derivative(el.relative_velocity, system.q, system.qd, system.qdd)
        for a in system.qdd:
            row[du.index(a)] = sp.diff(dv, a)
        return row, -dv.xreplace({a: 0 for a in system.qdd})
    row[col] = sp.Integer(1)
    return row, -el.mu_kinetic * el.normal * mode


def with_modes(eom: EquationsOfMotion, modes: tuple[int, ...]) -> EquationsOfMotion:
    """Return the equations with the rows of ``modes`` (one per element of :func:`switched`)."""
    elements = switched(eom.system)
    size = eom.mass_matrix.shape[0]
    M, F = sp.Matrix(eom.mass_matrix), list(eom.forcing)
    first = size - len(elements)
    for k, (el, mode) in enumerate(zip(elements, modes)):
        row, rhs = element_row(eom, el, len(eom.system.efforts) + k, size, mode)
        M[first + k, :] = sp.Matrix([row])
        F[first + k] = rhs
    return replace(eom, mass_matrix=sp.ImmutableMatrix(M), forcing=sp.ImmutableMatrix(F))
