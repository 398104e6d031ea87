"""The split-free form of the reduced methods (maggi, appell, chaplygin), for evaluators that re-partition.

The reduced methods project the equations of motion ``E(q, q', q'') = Q(q, q', t)`` onto the independent
velocities of a split, ``C^T (M q'' - h) = 0`` with ``q' = C u + c0`` from ``A q' + a0 = 0``. Which velocities
are independent is a choice that must change where the split turns singular. This form keeps the split out
of the expressions: the full inertia matrix ``M(q, t)``, the right-hand side ``h = Q - r`` (``r``: the velocity
terms of the method's inertia forces), the constraints ``A(q, t)``, ``a0(q, t)`` and their time derivatives
along the motion ``A'(q, q', t)``, ``a0'(q, q', t)``. An evaluator chooses the split numerically (column
permutation data), solves ``A_dep [B, beta] = -[A_ind, a0]`` for the dependent velocities, then
``A_dep a_dep = -(A' q' + a0')`` for the acceleration terms, and ``(C^T M C) u' = C^T (h - M a)``; every linear
system by LU with partial pivoting at each evaluation, nothing inverted symbolically.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..model.mechanics import (
    Differentiator,
    cyclic_coordinates,
    generalized_forces,
    to_se,
    to_sp,
    velocity_constraints,
)
from .eom import EquationsOfMotion

#: the reduced methods whose exported models may re-partition through this form
REPARTITIONING_METHODS = ("maggi", "appell", "chaplygin")


@dataclass(frozen=True)
class SplitFreeForm:
    """``M q'' = h`` projected onto any split of ``A q' + a0 = 0`` (sympy expressions in q, q', t, p, inputs)."""

    mass: list[sp.Expr]          # n x n, row-major
    rhs: list[sp.Expr]           # n: h = Q - r
    A: list[sp.Expr]             # m x n, row-major (holonomic rows differentiated first)
    a0: list[sp.Expr]            # m
    A_dot: list[sp.Expr]         # m x n: dA/dq q' + dA/dt
    a0_dot: list[sp.Expr]        # m
    may_be_dependent: tuple[bool, ...]  # per coordinate: the method accepts it among the dependent ones
    cyclic: tuple[bool, ...]     # per coordinate: it appears only through its velocity (the Chaplygin ranking)


def repartitions(eom: EquationsOfMotion) -> bool:
    """Return whether an exported model of ``eom`` re-partitions through :func:`split_free_form`.

    A reduced method with dependent velocities and no effort unknowns (whose rows would join the projected system).
    """
    return (eom.method in REPARTITIONING_METHODS and eom.is_reduced and bool(eom.dependent)
            and not eom.efforts and not eom.multipliers)


def _velocity_terms(method: str, T, d: Differentiator, M: list[list]) -> list:
    """Return R of ``E = M q'' + r``.

    Gibbs-Appell's Christoffel terms for a natural kinetic energy (as the method derives them), else the velocity part
    of ``d/dt dT/dq' - dT/dq`` (Maggi's and Chaplygin's).
    """
    n = len(d.q)
    if method == "appell":
        from .methods.reduced import natural_kinetic_energy

        if natural_kinetic_energy(T, d, M):
            h = []
            for i in range(n):
                hi = to_se(sp.Integer(0))
                for j in range(n):
                    for k in range(n):
                        gamma = (d.partial(M[i][j], d.q[k]) + d.partial(M[i][k], d.q[j])
                                 - d.partial(M[j][k], d.q[i])) / 2
                        if gamma != 0:
                            hi += gamma * d.qd[j] * d.qd[k]
                h.append(hi)
            return h
    grad = [d.partial(T, v) for v in d.qd]
    return [(d.time(grad[i]) - d.partial(T, d.q[i])).rest for i in range(n)]


def split_free_form(eom: EquationsOfMotion) -> SplitFreeForm:
    """Return the split-free quantities of ``eom``'s method for its system (see the module docstring)."""
    system = eom.system
    n = system.n
    d = Differentiator(system)
    T = to_se(system.kinetic)
    grad = [d.partial(T, v) for v in d.qd]
    M = [[d.partial(grad[i], d.qd[j]) for j in range(n)] for i in range(n)]
    r = _velocity_terms(eom.method, T, d, M)
    Q = generalized_forces(system, d)
    _, A, a0 = velocity_constraints(system, d)
    A_dot = [[d.time(e).rest if e != 0 else e for e in row] for row in A]
    a0_dot = [d.time(e).rest if e != 0 else e for e in a0]
    cyclic = cyclic_coordinates(system)
    allowed = tuple(i in cyclic if eom.method == "chaplygin" else True for i in range(n))
    return SplitFreeForm(
        mass=[to_sp(e) for row in M for e in row], rhs=[to_sp(q - ri) for q, ri in zip(Q, r)],
        A=[to_sp(e) for row in A for e in row], a0=[to_sp(e) for e in a0],
        A_dot=[to_sp(e) for row in A_dot for e in row], a0_dot=[to_sp(e) for e in a0_dot],
        may_be_dependent=allowed, cyclic=tuple(i in cyclic for i in range(n)))


__all__ = ["REPARTITIONING_METHODS", "SplitFreeForm", "repartitions", "split_free_form"]
