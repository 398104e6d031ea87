"""Methods in independent velocities: Maggi, Gibbs-Appell and Chaplygin (Do Sanh's matrix form)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import symengine as se

from ...errors import DerivationError, Problem
from ...model.mechanics import (
    SINGULAR_SPLIT,
    Differentiator,
    LinearForm,
    Split,
    choose_independent,
    cyclic_coordinates,
    generalized_forces,
    independent_from_names,
    numeric_constraint_matrix,
    split_health,
    to_se,
    to_sp,
    to_sp_matrix,
    velocity_constraints,
)
from ...model.system import System
from ...model.trig import depends_on, tidy_trig
from ..eom import AuxiliaryStage, EquationsOfMotion
from .base import METHODS, Method, speeds_for

ZERO = se.Integer(0)


@dataclass
class Reduction:
    """A split with its kinematics ``q' = K(q, u, t)`` and ``q'' = C u' + a(q, u, t)``.

    ``B = -A_dep^-1 A_ind``, ``beta = -A_dep^-1 a0`` and their time derivatives are placeholder symbols
    (``B[y,x]``, ``beta[y]``, ``B_dot[y,x]``, ``beta_dot[y]``); ``stages`` are the linear blocks that
    define them, solved numerically by every evaluator (see :class:`~bridge.derivation.eom.AuxiliaryStage`).
    """

    split: Split
    u: tuple                 # symengine speed symbols (q' of the independent coordinates)
    du: tuple                # their accelerations
    kin: list                # q' in terms of (q, u, t)
    C: list                  # n x p: dq'/du
    acc_rest: list           # n: q'' at u' = 0
    sub: dict                # q'_dep -> K_dep
    B_dot: list              # s x p placeholders (zeros where B is zero)
    stages: tuple            # AuxiliaryStage, ...
    forms: list              # (name, matrix) of the split: A_dep, A_ind, a0 and the placeholders

    def substitute(self, expr):
        """Return ``expr`` with the dependent velocities replaced by their expressions in the speeds.

        Parameters
        ----------
        expr : symengine.Basic
            An expression in the velocities.

        Returns
        -------
        symengine.Basic
            The expression with ``q'_dep -> K_dep(q, u, t)``.
        """
        return expr.xreplace(self.sub) if self.sub else expr

    def accelerations(self) -> list:
        """Return ``q'' = C u' + a`` for every coordinate."""
        p = len(self.u)
        return [sum((row[k] * self.du[k] for k in range(p)), rest) for row, rest in zip(self.C, self.acc_rest)]


def _split_regular(system: System, A, dependent: Sequence[int], at: np.ndarray) -> bool:
    """Return whether the dependent velocities can be solved for at the state ``at``.

    The same scale-free test as the loader's.
    """
    return split_health(numeric_constraint_matrix(system, A, at), dependent) > SINGULAR_SPLIT


def _placeholders(label: str, rows: Sequence[str], cols: Sequence[str] | None) -> list:
    """Return symbols ``label[row,col]`` (or ``label[row]``): brackets keep them apart from every user identifier."""
    if cols is None:
        return [se.Symbol(f"{label}[{r}]") for r in rows]
    return [[se.Symbol(f"{label}[{r},{c}]") for c in cols] for r in rows]


def reduce(system: System, d: Differentiator, independent: Sequence[int], A, a0) -> Reduction:
    """Return the reduced kinematics with the split kept implicit.

    Stage 1: ``A_dep [B, beta] = -[A_ind, a0]``; stage 2 (its time derivative along the motion):
    ``A_dep [B', beta'] = -[A'_ind + A'_dep B, a0' + A'_dep beta]`` with ``A' = dA/dq q' + dA/dt`` and the
    dependent ``q' = B u + beta``. Columns of ``A_ind`` that vanish identically give ``B`` columns that
    vanish (and so does ``beta`` without ``a0``); they get no placeholders.
    """
    n = system.n
    independent = tuple(sorted(independent))
    dependent = tuple(i for i in range(n) if i not in independent)
    problem = Problem("method.independent", "the constraints cannot be solved for the dependent velocities "
                      f"({', '.join(system.coordinates[i].name for i in dependent)}) at the reference state",
                      "choose other independent coordinates", system.source)
    if not _split_regular(system, A, dependent, d.reference):  # the split must be regular where the run starts
        raise DerivationError(problem)
    names = [c.name for c in system.coordinates]
    dep_names = [names[i] for i in dependent]
    ind_names = [names[i] for i in independent]
    s, p = len(dependent), len(independent)
    u = tuple(d.qd[i] for i in independent)
    du = tuple(d.qdd[i] for i in independent)
    cols = [k for k, i in enumerate(independent) if any(A[r][i] != 0 for r in range(s))]  # B columns not zero
    affine = any(x != 0 for x in a0)
    Bsym = _placeholders("B", dep_names, ind_names)
    Bdsym = _placeholders("B_dot", dep_names, ind_names)
    B = [[Bsym[r][k] if k in cols else ZERO for k in range(p)] for r in range(s)]
    B_dot = [[Bdsym[r][k] if k in cols else ZERO for k in range(p)] for r in range(s)]
    beta = _placeholders("beta", dep_names, None) if affine else [ZERO] * s
    beta_dot = _placeholders("beta_dot", dep_names, None) if affine else [ZERO] * s
    split = Split(independent, dependent, tuple(tuple(row) for row in B), tuple(beta))
    kin = split.kinematics(n, u)
    sub = {d.qd[i]: kin[i] for i in dependent}
    C = [[ZERO] * p for _ in range(n)]
    acc_rest = [ZERO] * n
    for k, i in enumerate(independent):
        C[i][k] = se.Integer(1)
    for r, i in enumerate(dependent):
        C[i] = list(B[r])
        acc_rest[i] = sum((B_dot[r][k] * u[k] for k in range(p)), beta_dot[r])
    # the two linear stages (unknown columns: the nonzero B columns, then beta)
    A_dep = [[A[r][j] for j in dependent] for r in range(s)]
    unknowns1 = [[B[r][k] for k in cols] + ([beta[r]] if affine else []) for r in range(s)]
    rhs1 = [[-A[r][independent[k]] for k in cols] + ([-a0[r]] if affine else []) for r in range(s)]
    A_dot = [[d.time(A[r][j]).rest.xreplace(sub) if A[r][j] != 0 else ZERO for j in range(n)] for r in range(s)]
    unknowns2 = [[B_dot[r][k] for k in cols] + ([beta_dot[r]] if affine else []) for r in range(s)]
    rhs2 = []
    for r in range(s):
        row = [-(A_dot[r][independent[k]] + sum((A_dot[r][j] * B[jj][k] for jj, j in enumerate(dependent)), ZERO))
               for k in cols]
        if affine:
            a0_dot = d.time(a0[r]).rest.xreplace(sub) if a0[r] != 0 else ZERO
            row.append(-(a0_dot + sum((A_dot[r][j] * beta[jj] for jj, j in enumerate(dependent)), ZERO)))
        rhs2.append(row)
    width = len(cols) + int(affine)
    stages: tuple[AuxiliaryStage, ...] = ()
    if width:
        mat = to_sp_matrix(A_dep, s)
        stages = (AuxiliaryStage(to_sp_matrix(unknowns1, width), mat, to_sp_matrix(rhs1, width)),
                  AuxiliaryStage(to_sp_matrix(unknowns2, width), mat, to_sp_matrix(rhs2, width)))
    forms = [("A_dep", to_sp_matrix(A_dep, s)), ("A_ind", to_sp_matrix([[A[r][i] for i in independent]
                                                                        for r in range(s)], p))]
    return Reduction(split, u, du, kin, C, acc_rest, sub, B_dot, stages, forms)


def finish_reduced(system: System, method: str, red: Reduction, g, A, mass, forcing, forms) -> EquationsOfMotion:
    """Return the equations object; ``g`` and ``A`` are the velocity constraints and their Jacobian."""
    p = len(red.u)
    n = system.n
    return EquationsOfMotion(
        system=system, method=method, u=speeds_for(system, red.split.independent),
        kinematics=to_sp_matrix(red.kin), acceleration_map=to_sp_matrix(red.accelerations()),
        mass_matrix=to_sp_matrix(mass, p), forcing=to_sp_matrix(forcing),
        velocity_constraints=tuple(to_sp(x) for x in g),
        independent=tuple(system.coordinates[i].name for i in red.split.independent),
        dependent=tuple(system.coordinates[i].name for i in red.split.dependent),
        constraint_jacobian=to_sp_matrix(A, n), forms=tuple(red.forms + list(forms)), auxiliary=red.stages,
    )


def pick_independent(system: System, d: Differentiator, A, independent: Sequence[str] | None,
                     accept=None) -> tuple[int, ...]:
    """Return the indices of the independent coordinates of a reduced method.

    The names given, else the first choice whose dependent block of the constraint Jacobian is regular at the
    reference state (and that ``accept`` allows).

    Parameters
    ----------
    system : System
        The system.
    d : Differentiator
        Its differentiator (holds the reference state).
    A : list of list
        The constraint Jacobian ``A(q, t)`` of ``A q' + a0 = 0``.
    independent : sequence of str or None
        Names of the independent coordinates, or None to choose them.
    accept : callable, optional
        ``accept(system, independent_indices) -> bool``: a method's restriction on the split.

    Returns
    -------
    tuple of int
        The independent coordinates' indices.

    Raises
    ------
    DerivationError
        When no split is regular at the reference state, or the given names are not a valid split.
    """
    if independent:
        return independent_from_names(system, independent)
    ind = choose_independent(system, A, d.reference, accept=accept)
    if ind is None:
        raise DerivationError(Problem("constraints", "no choice of independent velocities is regular at the "
                                      "reference state: the constraints cannot be solved for any set of dependent "
                                      "velocities", "check the constraints and the start state", system.source))
    return ind


def project(red: Reduction, E: Sequence[LinearForm], Q: Sequence) -> tuple[list[list], list, list]:
    """Return the projected equations ``C^T E = C^T Q`` in the independent accelerations.

    With ``E_i = sum_j M_ij q''_j + r_i`` and ``q'' = C u' + C' u + c0'``, the mass matrix ``C^T M C``, the forcing
    ``C^T (Q - M (C'u + c0') - r)`` and the projected forces ``C^T Q`` (each with the split's placeholders substituted);
    zero entries of C skipped.
    """
    n, p = len(E), len(red.u)
    mass = [[ZERO] * p for _ in range(p)]
    forcing, projected = [], []
    for k in range(p):
        rhs = ZERO
        Qk = ZERO
        for i in range(n):
            c = red.C[i][k]
            if c == 0:
                continue
            Ei = E[i]
            Qk += c * Q[i]
            rhs += c * (Ei.rest + sum((Ei.coeffs[j] * red.acc_rest[j] for j in range(n) if red.acc_rest[j] != 0),
                                      ZERO))
            for l_ in range(p):
                mass[k][l_] += c * sum((Ei.coeffs[j] * red.C[j][l_] for j in range(n) if red.C[j][l_] != 0), ZERO)
        forcing.append(red.substitute(Qk - rhs))
        projected.append(red.substitute(Qk))
    return [[red.substitute(x) for x in row] for row in mass], forcing, projected


class Maggi(Method):
    """Maggi's equations in the independent velocities (kinematic parameters) u.

    With ``q' = C(q,t) u + c0(q,t)`` solving the constraints ``A q' + a0 = 0`` for the
    dependent velocities, ``sum_i C_ik [d/dt(dT/dq'_i) - dT/dq_i] = Phi_k = sum_i C_ik Q~_i``
    (k = 1..p), the multipliers eliminated since ``A C = 0``. Substituting
    ``q'' = C u' + C' u + c0'`` gives ``(C^T M C) u' = C^T (Q~ - M (C'u + c0') - r)``.
    """

    name = "maggi"
    title = "Maggi's equations"
    reduced = True

    def _derive(self, system, d, independent, baumgarte):
        n = system.n
        g, A, a0 = velocity_constraints(system, d)
        red = reduce(system, d, pick_independent(system, d, A, independent), A, a0)
        T = to_se(system.kinetic)
        Q = generalized_forces(system, d)
        E: list[LinearForm] = []
        for i in range(n):
            E.append(d.time(d.partial(T, d.qd[i])) - d.partial(T, d.q[i]))
        mass, forcing, phi = project(red, E, Q)
        forms = [("C", to_sp_matrix(red.C, len(red.u))), ("Phi", to_sp_matrix(phi))]
        return finish_reduced(system, self.name, red, g, A, mass, forcing, forms)


def natural_kinetic_energy(T: se.Basic, d: Differentiator, M) -> bool:
    """Return whether T = 1/2 q'^T M(q) q' exactly, without explicit time."""
    if d.t in T.free_symbols:
        return False
    qd = set(d.qd)
    if any(set(x.free_symbols) & qd for row in M for x in row):
        return False
    quad = sum((M[i][j] * d.qd[i] * d.qd[j] for i in range(len(M)) for j in range(len(M))), ZERO) / 2
    return se.expand(T - quad) == 0


class GibbsAppell(Method):
    """Gibbs-Appell equations in quasi-accelerations.

    The acceleration energy ``S = 1/2 q''^T M q'' + q''^T h`` with
    ``h_i = sum_jk Gamma_ijk q'_j q'_k`` and the Christoffel symbols of the first kind
    ``Gamma_ijk = 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i)`` of the inertia matrix
    (for a kinetic energy that is not ``1/2 q'^T M(q) q'`` the velocity terms h are those of
    ``d/dt dT/dq' - dT/dq``). S is expressed in the quasi-accelerations u' via
    ``q'' = C u' + a`` and ``dS/du'_k = Pi_k = sum_i C_ik Q~_i`` (k = 1..p).
    """

    name = "appell"
    title = "Gibbs-Appell equations"
    reduced = True

    def _derive(self, system, d, independent, baumgarte):
        n = system.n
        g, A, a0 = velocity_constraints(system, d)
        red = reduce(system, d, pick_independent(system, d, A, independent), A, a0)
        T = to_se(system.kinetic)
        grad = [d.partial(T, v) for v in d.qd]
        M = [[d.partial(grad[i], d.qd[j]) if j >= i else None for j in range(n)] for i in range(n)]
        for i in range(n):
            for j in range(i):
                M[i][j] = M[j][i]
        if natural_kinetic_energy(T, d, M):
            dM = [[[d.partial(M[i][j], d.q[k]) for k in range(n)] for j in range(n)] for i in range(n)]
            h = []
            for i in range(n):
                hi = ZERO
                for j in range(n):
                    for k in range(n):
                        gamma = (dM[i][j][k] + dM[i][k][j] - dM[j][k][i]) / 2
                        if gamma != 0:
                            hi += gamma * d.qd[j] * d.qd[k]
                h.append(hi)
        else:
            h = [(d.time(grad[i]) - d.partial(T, d.q[i])).rest for i in range(n)]
        Q = generalized_forces(system, d)
        p = len(red.u)
        qdd = red.accelerations()
        h = [red.substitute(x) for x in h]
        Mr = [[red.substitute(x) for x in row] for row in M]
        S = ZERO
        for i in range(n):
            if qdd[i] == 0:
                continue
            S += qdd[i] * h[i]
            S += qdd[i] * qdd[i] * Mr[i][i] / 2
            for j in range(i + 1, n):
                if Mr[i][j] != 0:
                    S += qdd[i] * qdd[j] * Mr[i][j]
        zero_du = {x: ZERO for x in red.du}
        mass, forcing, Pi = [], [], []
        for k in range(p):
            dS = d.partial(S, red.du[k])
            Pi_k = red.substitute(sum((red.C[i][k] * Q[i] for i in range(n)), ZERO))
            mass.append([se.diff(dS, red.du[l_]) for l_ in range(p)])
            forcing.append(Pi_k - dS.xreplace(zero_du))
            Pi.append(Pi_k)
        forms = [("S", to_sp(S)), ("Pi", to_sp_matrix(Pi))]
        return finish_reduced(system, self.name, red, g, A, mass, forcing, forms)


def _tidy(e):
    """Return a symengine expression with ``sin^2 + cos^2`` cancelled where that makes it smaller (within a budget)."""
    if not (e.atoms(se.sin) and e.atoms(se.cos)):
        return e
    tidy = tidy_trig(to_sp(e))
    return e if tidy is to_sp(e) else to_se(tidy)


class Chaplygin(Method):
    """Chaplygin systems in Do Sanh's matrix form.

    Coordinates split into independent ``sigma`` (k) and dependent ``xi`` (s) with
    ``xi' = B(sigma, t) sigma'``; ``xi`` must not appear in the inertia matrix A, in B, or in the
    forces. With ``A = [[A1, A4], [A3, A2]]`` (sigma rows first) and
    ``G = dT/dq - d/dt(dT/dq') + A q''`` (the velocity terms of the inertia forces):
    ``A_sigma sigma'' = Q_sigma + G_sigma + B^T (Q_xi + G_xi) - A* sigma'`` with
    ``A_sigma = A1 + B^T A3 + A4 B + B^T A2 B`` and ``A* = (A4 + B^T A2) B'``.
    """

    name = "chaplygin"
    title = "Chaplygin's equations in Do Sanh's matrix form"
    reduced = True

    def accepts_split(self, system: System, independent: Sequence[int]) -> bool:
        """Return whether the dependent coordinates of a split are all cyclic (as Chaplygin's form requires).

        Parameters
        ----------
        system : System
            The system.
        independent : sequence of int
            Indices of the independent coordinates.

        Returns
        -------
        bool
            True when no dependent coordinate appears in the inertia, the constraints or the forces.
        """
        cyclic = cyclic_coordinates(system)
        return all(i in cyclic for i in range(system.n) if i not in independent)

    def applicable(self, system: System) -> str | None:
        """Return why Chaplygin's form cannot treat ``system``, or None when it can.

        Parameters
        ----------
        system : System
            The system to derive.

        Returns
        -------
        str or None
            The reason (holonomic constraints, or no nonholonomic one), with the method to use instead.
        """
        if system.holonomic:
            return ("it has holonomic constraints; Do Sanh's form needs only nonholonomic constraints "
                    "xi' = B sigma' (use maggi or lagrange)")
        if not system.nonholonomic:
            return "it has no nonholonomic constraint (use lagrange)"
        return None

    @staticmethod
    def violations(system: System, d: Differentiator, A, a0, independent: Sequence[int],
                   M, Q) -> list[str]:
        """Return why the split is not a Chaplygin split (empty when it is)."""
        dep = [i for i in range(system.n) if i not in independent]
        reasons = []
        for i in dep:
            x = d.q[i]
            nm = system.coordinates[i].name

            def appears(exprs, x=x) -> bool:  # after sin^2 + cos^2 = 1, within a budget
                return any(x in e.free_symbols and depends_on(to_sp(e), to_sp(x)) for e in exprs)

            if appears(e for row in M for e in row):
                reasons.append(f"dependent coordinate {nm} appears in the inertia matrix")
            if appears(e for row in A for e in row):
                reasons.append(f"dependent coordinate {nm} appears in the constraint coefficients")
            if appears(Q):
                reasons.append(f"dependent coordinate {nm} appears in the generalized forces")
            if not reasons and appears([system.kinetic]):
                reasons.append(f"dependent coordinate {nm} appears in the kinetic energy")
        for k, e in enumerate(a0):
            if e != 0:
                reasons.append(f"constraint {k + 1} has a term without velocities (xi' = B sigma' + beta); "
                               "Do Sanh's form needs homogeneous constraints")
                break
        return reasons

    def _derive(self, system, d, independent, baumgarte):
        n = system.n
        g, A, a0 = velocity_constraints(system, d)
        T = to_se(system.kinetic)
        grad = [d.partial(T, v) for v in d.qd]
        E = [d.time(grad[i]) - d.partial(T, d.q[i]) for i in range(n)]
        M = [[_tidy(e) for e in E[i].coeffs] for i in range(n)]  # sin^2 + cos^2 cancelled where it shrinks
        G = [-E[i].rest for i in range(n)]   # velocity terms of the inertia forces
        Q = [_tidy(e) for e in generalized_forces(system, d)]
        if independent:
            ind = independent_from_names(system, independent)
            why = self.violations(system, d, A, a0, ind, M, Q)
            if why:
                raise DerivationError(Problem("method.independent", f"not a Chaplygin system with independent "
                                              f"{', '.join(independent)}: {'; '.join(why)}",
                                              "choose other independent coordinates or use maggi", system.source))
        else:
            cyclic = cyclic_coordinates(system)
            ind = choose_independent(system, A, d.reference,
                                     accept=lambda c: all(i in cyclic for i in range(n) if i not in c))
            if ind is None:
                best = choose_independent(system, A, d.reference) or tuple(range(n - system.m))
                why = self.violations(system, d, A, a0, best, M, Q) or [
                    "the constraints cannot be solved for the dependent velocities"]
                dep = ", ".join(system.coordinates[i].name for i in range(n) if i not in best)
                raise DerivationError(Problem(
                    "constraints", f"{system.name} is not a Chaplygin system: with dependent {dep}, "
                    f"{'; '.join(why)} (and no other choice of dependent coordinates works)",
                    "use maggi, appell or lagrange", system.source))
        red = reduce(system, d, ind, A, a0)
        sig, xi = list(red.split.independent), list(red.split.dependent)
        B = [list(r) for r in red.split.B]
        k, s = len(sig), len(xi)
        Bdot = [list(r) for r in red.B_dot]  # B' = dB/dsigma sigma' + dB/dt, solved with B (stage 2)
        A1 = [[M[i][j] for j in sig] for i in sig]
        A4 = [[M[i][j] for j in xi] for i in sig]
        A3 = [[M[i][j] for j in sig] for i in xi]
        A2 = [[M[i][j] for j in xi] for i in xi]

        def mm(X, Y):
            return [[sum((X[i][l_] * Y[l_][j] for l_ in range(len(Y))), ZERO) for j in range(len(Y[0]))]
                    for i in range(len(X))]

        def tr(X, rows, cols):
            return [[X[j][i] for j in range(rows)] for i in range(cols)] if rows else [[] for _ in range(cols)]

        Bt = tr(B, s, k)
        BtA2 = mm(Bt, A2) if s else [[ZERO] * 0 for _ in range(k)]
        A_sigma = [[A1[i][j] + (sum((Bt[i][l_] * A3[l_][j] for l_ in range(s)), ZERO))
                    + sum((A4[i][l_] * B[l_][j] for l_ in range(s)), ZERO)
                    + sum((BtA2[i][l_] * B[l_][j] for l_ in range(s)), ZERO)
                    for j in range(k)] for i in range(k)]
        A_star = [[sum(((A4[i][l_] + BtA2[i][l_]) * Bdot[l_][j] for l_ in range(s)), ZERO) for j in range(k)]
                  for i in range(k)]
        sigd = [d.qd[i] for i in sig]
        forcing = []
        for i in range(k):
            f = Q[sig[i]] + G[sig[i]]
            f += sum((Bt[i][r] * (Q[xi[r]] + G[xi[r]]) for r in range(s)), ZERO)
            f -= sum((A_star[i][j] * sigd[j] for j in range(k)), ZERO)
            forcing.append(red.substitute(f))
        A_sigma = [[red.substitute(x) for x in row] for row in A_sigma]
        A_star = [[red.substitute(x) for x in row] for row in A_star]
        Gs = [red.substitute(x) for x in G]
        forms = [("A", to_sp_matrix(M, n)), ("B", to_sp_matrix(B, k)), ("B_dot", to_sp_matrix(Bdot, k)),
                 ("G", to_sp_matrix(Gs)), ("Q", to_sp_matrix([red.substitute(x) for x in Q])),
                 ("A_sigma", to_sp_matrix(A_sigma, k)), ("A_star", to_sp_matrix(A_star, k))]
        return finish_reduced(system, self.name, red, g, A, A_sigma, forcing, forms)


METHODS.register(Maggi())
METHODS.register(GibbsAppell())
METHODS.register(Chaplygin())
