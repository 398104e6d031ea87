"""Building blocks shared by the derivation methods, computed with symengine.

* :class:`Differentiator` performs (and optionally counts, see :mod:`bridge.model.diffcount`)
  partial and total time derivatives;
* :class:`LinearForm` represents an expression linear in the accelerations,
  ``sum_j c_j q''_j + r``, so mass matrices are read off instead of re-differentiated;
* :class:`Split` holds an independent/dependent partition of the velocities with the
  kinematic relations ``q'_dep = B q'_ind + beta`` solved from ``A q' + a0 = 0``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import combinations
from typing import TypeAlias

import numpy as np
import symengine as se
import sympy as sp

from ..errors import DerivationError, Problem
from . import symbols as S
from .diffcount import partial_cost, time_cost
from .kinks import diff
from .numeric import compile_exprs
from .sympy_forms import sympy_form
from .system import System

Expr: TypeAlias = se.Basic


def to_se(expr) -> Expr:
    """Return a sympy (or symengine) object as symengine.

    Text is refused (it is parsed by bridge.model.expressions only).
    """
    if isinstance(expr, str):
        raise TypeError("to_se converts expressions, not text")
    return se.sympify(expr)


def to_sp(expr) -> sp.Expr:
    """Return ``expr`` as a sympy object (symengine objects converted, each shared subexpression once)."""
    return sympy_form(expr)


def to_sp_matrix(rows: Sequence[Sequence[Expr]] | Sequence[Expr], ncols: int | None = None) -> sp.ImmutableMatrix:
    """Return a sympy immutable matrix of rows (or a column of entries).

    Parameters
    ----------
    rows : sequence of sequence, or sequence
        The rows, or the entries of a column when ``ncols`` is None.
    ncols : int, optional
        The number of columns (gives the shape of an empty matrix).

    Returns
    -------
    sympy.ImmutableMatrix
        The matrix.
    """
    if ncols is None:
        return sp.ImmutableMatrix([to_sp(e) for e in rows])
    return sp.ImmutableMatrix([[to_sp(e) for e in row] for row in rows]) if rows else sp.ImmutableMatrix.zeros(0, ncols)


@dataclass
class DiffCounts:
    """Tally of elementary differentiation operations (see :mod:`bridge.model.diffcount`)."""

    partial: int = 0
    time: int = 0
    calls: int = 0
    tallies: dict = field(default_factory=dict)

    @property
    def total(self) -> int:
        """The elementary differentiations in all: partial plus time derivatives."""
        return self.partial + self.time


class Differentiator:
    """Partial and total time derivatives over the coordinates of one system."""

    def __init__(self, system: System, count: bool = False, reference: np.ndarray | None = None):
        #: the state [t, q, q', parameters, inputs] at which numeric checks (split regularity) are made
        self.reference = start_values(system) if reference is None else reference
        self.q = [to_se(s) for s in system.q]
        self.qd = [to_se(s) for s in system.qd]
        self.qdd = [to_se(s) for s in system.qdd]
        self.t = to_se(S.t)
        self.count = count
        self.counts = DiffCounts()
        self._timed = frozenset(system.q) | frozenset(system.qd) | {S.t}

    @contextmanager
    def tally(self, label: str):
        """Attribute the differentiations made inside the block to ``label`` as well."""
        before = self.counts.total
        try:
            yield
        finally:
            self.counts.tallies[label] = self.counts.tallies.get(label, 0) + self.counts.total - before

    def partial(self, expr: Expr, var: Expr) -> Expr:
        """Return ``d expr / d var`` (counted when counting).

        Parameters
        ----------
        expr : Expr
            The expression.
        var : Expr
            A coordinate, velocity or time symbol.

        Returns
        -------
        Expr
            The partial derivative.
        """
        self.counts.calls += 1
        if self.count:
            self.counts.partial += partial_cost(to_sp(expr), to_sp(var))
        return diff(expr, var)

    def time(self, expr: Expr) -> LinearForm:
        """Return d/dt of an expression in (q, q', t): a form linear in q''."""
        self.counts.calls += 1
        if self.count:
            self.counts.time += time_cost(to_sp(expr), self._timed)
        free = expr.free_symbols
        coeffs = [diff(expr, v) if v in free else se.Integer(0) for v in self.qd]
        rest = diff(expr, self.t) if self.t in free else se.Integer(0)
        for a, b in zip(self.q, self.qd):
            if a in free:
                rest += diff(expr, a) * b
        return LinearForm(coeffs, rest)


@dataclass
class LinearForm:
    """``sum_j coeffs[j] * q''_j + rest``."""

    coeffs: list[Expr]
    rest: Expr

    def __sub__(self, other: Expr) -> LinearForm:
        return LinearForm(self.coeffs, self.rest - other)

    def partial(self, d: Differentiator, var: Expr) -> LinearForm:
        """Return the partial derivative with respect to a coordinate or velocity (q'' held fixed)."""
        if d.count:
            d.counts.partial += partial_cost(to_sp(self.expr(d)), to_sp(var))
        d.counts.calls += 1
        return LinearForm([diff(c, var) for c in self.coeffs], diff(self.rest, var))

    def expr(self, d: Differentiator) -> Expr:
        """Return the form as an expression, ``sum_j coeffs[j] * q''_j + rest``.

        Parameters
        ----------
        d : Differentiator
            Provides the acceleration symbols ``q''``.

        Returns
        -------
        Expr
            The expression.
        """
        return sum((c * a for c, a in zip(self.coeffs, d.qdd)), self.rest)


def generalized_forces(system: System, d: Differentiator) -> list[Expr]:
    """Return Q~ = Q - dV/dq - dD/dq' (non-potential, potential and dissipative forces).

    Parameters
    ----------
    system : System
        The system.
    d : Differentiator
        Its differentiator.

    Returns
    -------
    list of symengine.Basic
        One generalized force per coordinate.
    """
    V, D = to_se(system.potential), to_se(system.dissipation)
    Q = [to_se(f) for f in system.generalized_forces()]
    out = []
    for i in range(system.n):
        f = Q[i]
        if system.potential != 0:
            f -= d.partial(V, d.q[i])
        if system.dissipation != 0:
            f -= d.partial(D, d.qd[i])
        out.append(f)
    return out


def velocity_constraints(system: System, d: Differentiator) -> tuple[list[Expr], list[list[Expr]], list[Expr]]:
    """Return the constraints at velocity level g = A q' + a0 (holonomic ones differentiated once).

    Parameters
    ----------
    system : System
        The system.
    d : Differentiator
        Its differentiator.

    Returns
    -------
    g : list of symengine.Basic
        The m constraint expressions, holonomic ones first.
    A : list of list of symengine.Basic
        The m x n Jacobian ``dg/dq'``.
    a0 : list of symengine.Basic
        The rest ``g`` at ``q' = 0``.
    """
    g = [d.time(to_se(e)).rest for e in system.holonomic] + [to_se(e) for e in system.nonholonomic]
    zero = {v: se.Integer(0) for v in d.qd}
    A = [[diff(gi, v) for v in d.qd] for gi in g]
    a0 = [gi.subs(zero) for gi in g]
    return g, A, a0


@dataclass(frozen=True)
class Split:
    """Independent velocities u = q'[ind]; q'[dep] = B u + beta, from A q' + a0 = 0."""

    independent: tuple[int, ...]
    dependent: tuple[int, ...]
    B: tuple[tuple[Expr, ...], ...]   # s x p
    beta: tuple[Expr, ...]            # s

    def kinematics(self, n: int, u: Sequence[Expr]) -> list[Expr]:
        """Return q' as expressions of (q, u, t) in coordinate order."""
        out: list[Expr] = [se.Integer(0)] * n
        for k, i in enumerate(self.independent):
            out[i] = u[k]
        for r, i in enumerate(self.dependent):
            out[i] = sum((b * uk for b, uk in zip(self.B[r], u)), self.beta[r])
        return out


def _simplify(expr: sp.Expr) -> sp.Expr:
    expr = sp.cancel(expr)
    if sp.count_ops(expr) < 120:
        expr = sp.simplify(expr)
    return expr


def solve_split(system: System, A: list[list[Expr]], a0: list[Expr], independent: Sequence[int]) -> Split:
    """Solve A_dep q'_dep = -(A_ind u + a0) symbolically for B and beta (s x s, small).

    Only for small dependent blocks; the methods keep larger splits implicit (placeholders solved numerically).

    Parameters
    ----------
    system : System
        The system.
    A : list of list of Expr
        The constraint Jacobian, m x n.
    a0 : list of Expr
        The rest of the constraints at ``q' = 0``.
    independent : sequence of int
        The independent coordinates.

    Returns
    -------
    Split
        ``q'[dep] = B u + beta``.
    """
    n = system.n
    ind = tuple(independent)
    dep = tuple(i for i in range(n) if i not in ind)
    Ad = sp.Matrix([[to_sp(A[r][i]) for i in dep] for r in range(len(A))])
    Ai = sp.Matrix([[to_sp(A[r][i]) for i in ind] for r in range(len(A))])
    b0 = sp.Matrix([to_sp(x) for x in a0])
    if Ad.shape[0] == 0:
        return Split(ind, dep, (), ())
    if Ad.is_diagonal():
        inv = sp.diag(*[1 / Ad[i, i] for i in range(Ad.shape[0])])
        Bm, beta = -inv * Ai, -inv * b0
    else:
        rhs = (-Ai).row_join(-b0)
        sol = Ad.LUsolve(rhs)
        Bm, beta = sol[:, :-1], sol[:, -1]
    Bm = Bm.applyfunc(_simplify)
    beta = beta.applyfunc(_simplify)
    return Split(ind, dep,
                 tuple(tuple(to_se(Bm[r, k]) for k in range(Bm.shape[1])) for r in range(Bm.shape[0])),
                 tuple(to_se(x) for x in beta))


def start_values(system: System, t: float = 0.0) -> np.ndarray:
    """Return [t, q0, q'0, parameters, inputs] for numeric checks at the start state.

    Parameters
    ----------
    system : System
        The system.
    t : float, optional
        The time.

    Returns
    -------
    numpy.ndarray
        The values in the order of :func:`state_args`.
    """
    return np.array([t, *[c.start for c in system.coordinates], *[c.velocity for c in system.coordinates],
                     *[p.value for p in system.parameters], *[u.start for u in system.inputs]], dtype=float)


def state_args(system: System) -> list[sp.Symbol]:
    """Return the argument list of compiled system functions: ``[t, q, q', parameters, inputs]``.

    Parameters
    ----------
    system : System
        The system.

    Returns
    -------
    list of sympy.Symbol
        The arguments in that order.
    """
    return [S.t, *system.q, *system.qd, *[p.symbol for p in system.parameters], *[u.symbol for u in system.inputs]]


#: below this split health the dependent velocities count as not solvable
SINGULAR_SPLIT = 1e-10


def split_health(A: np.ndarray, dependent: Sequence[int]) -> float:
    """Return sigma_min(A[:, dep]) / sigma_max(A): 0 when the dependent velocities cannot be solved for.

    A scale-free measure of how well the dependent block determines the dependent velocities: 1 for an
    orthonormal block, 0 for a singular one (or a matrix that is not finite).

    Parameters
    ----------
    A : numpy.ndarray
        The constraint matrix at a state, m x n.
    dependent : sequence of int
        The dependent coordinates' columns.

    Returns
    -------
    float
        The health in [0, 1]; 1 without constraints.

    Examples
    --------
    A knife edge along ``theta = 0``, ``-sin(theta) x' + cos(theta) y' = 0``: ``y'`` follows from the rest, ``x'``
    does not.

    >>> import numpy as np
    >>> from bridge.model.mechanics import split_health
    >>> A = np.array([[-np.sin(0.0), np.cos(0.0), 0.0]])
    >>> split_health(A, [1]), split_health(A, [0])
    (1.0, 0.0)
    """
    if A.shape[0] == 0:
        return 1.0
    if not np.all(np.isfinite(A)):
        return 0.0
    top = np.linalg.norm(A, 2)
    if top == 0:
        return 0.0
    return float(np.linalg.svd(A[:, list(dependent)], compute_uv=False)[-1] / top)


def numeric_constraint_matrix(system: System, A: list[list[Expr]], values: np.ndarray) -> np.ndarray:
    """Return the constraint matrix ``A`` evaluated at a state.

    Parameters
    ----------
    system : System
        The system.
    A : list of list of Expr
        The symbolic m x n matrix.
    values : numpy.ndarray
        The state ``[t, q, q', parameters, inputs]``.

    Returns
    -------
    numpy.ndarray
        The m x n matrix.
    """
    f = compile_exprs(state_args(system), [e for row in A for e in row])
    return np.asarray(f(values), dtype=float).reshape(len(A), system.n)


MAX_SPLIT_CANDIDATES = 2000
GOOD_SPLIT = 1e-2


def cyclic_coordinates(system: System) -> set[int]:
    """Return the coordinates that appear in no expression except through their velocity (ignorable coordinates).

    Decided after ``sin^2 + cos^2 = 1`` (:func:`bridge.model.trig.depends_on`, within its budget).

    Parameters
    ----------
    system : System
        The system.

    Returns
    -------
    set of int
        The indices of the cyclic coordinates.
    """
    from .trig import depends_on

    exprs = [system.kinetic, system.potential, system.dissipation, *system.forces.values(), *system.holonomic,
             *system.nonholonomic]
    used = set().union(*(e.free_symbols for e in exprs))
    return {i for i, c in enumerate(system.coordinates)
            if c.symbol not in used or not any(depends_on(e, c.symbol) for e in exprs)}


def choose_independent(system: System, A: list[list[Expr]], values: np.ndarray | None = None,
                       accept=None, exclude: Sequence[int] | None = None) -> tuple[int, ...] | None:
    """Pick the independent velocities at a state (default: the start state).

    Candidates are ranked by (1) how many dependent coordinates are cyclic, i.e. appear in no
    expression but through their velocity (the classical Chaplygin choice, which keeps B free of
    them), among splits whose health ``sigma_min(A_dep)/sigma_max(A)`` is at least 1e-2, then
    (2) by that health; ties favour later coordinates as dependent. ``accept(independent)`` may
    veto candidates; ``exclude`` is a split not to return. For very many candidates the
    dependent set comes from column-pivoted QR of A.

    Parameters
    ----------
    system : System
        The system.
    A : list of list of Expr
        The constraint Jacobian, m x n.
    values : numpy.ndarray, optional
        The state ``[t, q, q', parameters, inputs]`` (default the start state).
    accept : callable, optional
        ``accept(independent) -> bool``.
    exclude : sequence of int, optional
        An independent set not to return.

    Returns
    -------
    tuple of int or None
        The independent coordinates, or None when no split is regular there.
    """
    import scipy.linalg

    m, n = len(A), system.n
    if m == 0:
        return tuple(range(n))
    vals = start_values(system) if values is None else values
    An = numeric_constraint_matrix(system, A, vals)
    cyclic = cyclic_coordinates(system)
    if math.comb(n, m) > MAX_SPLIT_CANDIDATES:
        order = list(range(n))[::-1]
        _, _, piv = scipy.linalg.qr(An[:, order], pivoting=True, mode="economic")
        dep = sorted(order[p] for p in piv[:m])
        return tuple(i for i in range(n) if i not in dep)
    best, best_key = None, None
    for rank, ind in enumerate(all_splits(n, m)):
        if exclude is not None and tuple(ind) == tuple(exclude):
            continue
        dep = [i for i in range(n) if i not in ind]
        health = split_health(An, dep)
        if health <= 1e-8:
            continue
        if accept is not None and not accept(ind):
            continue
        key = (health >= GOOD_SPLIT, sum(i in cyclic for i in dep) if health >= GOOD_SPLIT else 0, health, -rank)
        if best_key is None or key > best_key:
            best, best_key = ind, key
    return best


def independent_from_names(system: System, names: Sequence[str]) -> tuple[int, ...]:
    """Return the coordinate indices of the independent velocities: each a coordinate, listed once, n - m of them.

    Parameters
    ----------
    system : System
        The system.
    names : sequence of str
        The independent coordinates' names (``[method] independent`` or ``--independent``).

    Returns
    -------
    tuple of int
        Their indices, in the order given.

    Raises
    ------
    DerivationError
        When a name is not a coordinate, is listed twice, or the count is not the system's degrees of freedom.
    """
    idx = []
    for nm in names:
        try:
            idx.append(system.q.index(S.q(nm)))
        except ValueError:
            raise DerivationError(Problem("method.independent", f"{nm!r} is not a coordinate",
                                          "list coordinate names", system.source)) from None
    if len(set(idx)) != len(idx):
        raise DerivationError(Problem("method.independent", "a coordinate is listed twice", "list each name once",
                                      system.source))
    if len(idx) != system.dof:
        raise DerivationError(Problem("method.independent", f"{len(idx)} independent velocities given, but the "
                                      f"system has {system.n} coordinates and {system.m} constraints, so exactly "
                                      f"{system.dof} are independent", "list that many coordinates", system.source))
    return tuple(sorted(idx))


def all_splits(n: int, m: int):
    """Yield every choice of m dependent coordinates, later coordinates first.

    Parameters
    ----------
    n : int
        The number of coordinates.
    m : int
        The number of constraints.

    Yields
    ------
    tuple of int
        The independent coordinates of each split.

    Examples
    --------
    >>> from bridge.model.mechanics import all_splits
    >>> list(all_splits(3, 1))
    [(0, 1), (0, 2), (1, 2)]
    """
    for dep in combinations(range(n - 1, -1, -1), m):
        yield tuple(i for i in range(n) if i not in dep)
