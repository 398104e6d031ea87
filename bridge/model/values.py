"""Checks of the values of a built :class:`~bridge.model.system.System`.

The ones that depend on parameter values and start values rather than on the structure of the file.

The loader runs them once the system is built, and :func:`~bridge.model.overrides.apply_overrides` (``--set``,
``System.with_values``, every case of a sweep) and :func:`~bridge.model.from_mechanics.from_mechanics` run them
again on the system they produce, so that a value gives the same message whether it is written in the file or set
afterwards:

* every body's and particle's mass, and every constant recorded as positive (a contact's radius), > 0;
* every rigid body's inertia tensor finite, symmetric, positive definite and a real body's (triangle inequality);
* the kinetic energy's mass matrix ``M = d2T/dq'dq'`` positive semi-definite at the start state (not checked when
  a body's mass or inertia was already refused; a singular M is the derivation's regularity check's to judge);
* each dynamic variable's rate and each effort constraint finite at the start state (efforts at 0, and their
  derivatives with respect to the efforts).

The message helpers (:func:`positive_problem`, :func:`inertia_problem`) are also what the body tables use while
the file is read.
"""

from __future__ import annotations

import numpy as np
import symengine as se
import sympy as sp

from ..errors import ProblemCollector
from .kinks import diff

__all__ = [
    "RANGE",
    "SEMIDEFINITE_TOL",
    "check_values",
    "inertia_problem",
    "kinetic_mass_matrix",
    "kinetic_problem",
    "positive_problem",
    "value_problems",
]

#: magnitudes of masses, inertias and lengths beyond which products of them (an energy, a mass matrix's
#: pivots) leave the range of a double: refused as out of range, not computed with
RANGE = 1e100

#: the mass matrix of T counts as positive semi-definite when its smallest eigenvalue is at least
#: ``-SEMIDEFINITE_TOL`` times its largest magnitude (rounding of a massless direction stays far below)
SEMIDEFINITE_TOL = 1e-10


def positive_problem(what: str, value: float) -> tuple[str, str] | None:
    """Return (message, hint) when a quantity that must be positive (a mass, a radius) is not, or is out of range."""
    if not np.isfinite(value):
        return (f"{what} is not finite at the parameter values ({value:g})", "check the parameter values")
    if not value > 0:
        return (f"{what} must be positive, but it is {value:g} at the parameter values",
                "check the sign and the parameter values")
    if not 1 / RANGE <= value <= RANGE:
        return (f"{what} is {value:g} at the parameter values, outside the range {1 / RANGE:g} to {RANGE:g} "
                "that the derivation and the simulation can represent",
                "give the value in SI units; a quantity this large or small makes the mass matrix meaningless")
    return None


def inertia_problem(M: np.ndarray) -> tuple[str, str] | None:
    """Return (message, hint) when the 3x3 tensor ``M`` is not a rigid body's inertia.

    Not finite, not symmetric, not positive definite, out of range or violating the triangle inequality.
    """
    if not np.all(np.isfinite(M)):
        return "the inertia tensor is not finite at the parameter values", "check the parameters"
    scale = max(float(np.abs(M).max()), 1e-300)
    if np.abs(M - M.T).max() > 1e-12 * scale:
        i, j = np.unravel_index(np.argmax(np.abs(M - M.T)), M.shape)
        return (f"the inertia tensor is not symmetric (entry [{i + 1}][{j + 1}] = {M[i, j]:g}, "
                f"[{j + 1}][{i + 1}] = {M[j, i]:g})", "an inertia tensor satisfies I[i][j] = I[j][i]")
    if scale > RANGE:
        return (f"the inertia tensor has an entry of magnitude {scale:g} at the parameter values, beyond {RANGE:g} "
                "(the derivation and the simulation cannot represent it)", "give the inertia in kg.m2")
    eig = np.linalg.eigvalsh(M)
    if eig[0] <= 0:
        return (f"the inertia tensor is not positive definite (principal moments {eig[0]:g}, {eig[1]:g}, "
                f"{eig[2]:g} at the parameter values)",
                "every principal moment of a rigid body is positive; use [particles] for a point mass")
    if eig[2] > (eig[0] + eig[1]) * (1 + 1e-9):
        return (f"the principal moments {eig[0]:g}, {eig[1]:g}, {eig[2]:g} violate the triangle inequality "
                "(the largest exceeds the sum of the other two)", "no rigid body has these moments; check the values")
    return None


def _start(system) -> tuple[list[sp.Symbol], list[float]]:
    """Return the arguments and values of the start state: t = 0, q, q', parameters, inputs."""
    from .mechanics import state_args

    values = [0.0, *[c.start for c in system.coordinates], *[c.velocity for c in system.coordinates],
              *[p.value for p in system.parameters], *[u.start for u in system.inputs]]
    return state_args(system), values


def _body_problems(system, args, values) -> list[tuple[str, str, str]]:
    from .numeric import evaluate_once

    mb = system.multibody
    if mb is None:
        return []
    out = []
    for body in mb.bodies:
        table = "particles" if body.is_particle else "bodies"
        mass = float(evaluate_once(args, [body.mass], values)[0])
        problem = positive_problem("the mass", mass)
        if problem:
            out.append((f"{table}.{body.name}.mass", *problem))
        if not body.is_particle:
            M = evaluate_once(args, list(body.inertia), values).reshape(3, 3)
            problem = inertia_problem(M)
            if problem:
                out.append((f"{table}.{body.name}.inertia", *problem))
    for entry, what, expr in getattr(mb, "positive", ()):
        problem = positive_problem(what, float(evaluate_once(args, [expr], values)[0]))
        if problem:
            out.append((entry, *problem))
    return out


def _effort_problems(system, args, values) -> list[tuple[str, str, str]]:
    """Return the rates and effort constraints not finite at the start state (efforts at 0, and their derivatives)."""
    from .numeric import evaluate_once

    unknowns = [e.symbol for e in system.efforts] + [f.symbol for f in system.friction] + [
        d.symbol for d in system.diodes]
    zero = {u: 0 for u in unknowns}
    out = []
    entries = [(f"dynamic.{d.name}.rate", "the rate", d.rate) for d in system.dynamic]
    entries += [(f"efforts.{e.name}.constraint", "the effort constraint", e.constraint) for e in system.efforts]
    for entry, what, expr in entries:
        terms = [expr.xreplace(zero)] + [sp.diff(expr, u) for u in unknowns if u in expr.free_symbols]
        got = evaluate_once(args + unknowns, terms, values + [0.0] * len(unknowns))
        if not np.all(np.isfinite(got)):
            value = (f"it evaluates to {got[0]:g}" if not np.isfinite(got[0]) else
                     "its derivative with respect to the efforts is not finite")
            out.append((entry, f"{what} is not finite at the start state ({value})",
                        "check the expression's domain (a logarithm, square root or division) against the start "
                        "values and parameters"))
    return out


#: sympy node types rebuilt in symengine from their converted arguments (anything else converted whole)
_REBUILD = {sp.Add: se.Add, sp.Mul: se.Mul, sp.Pow: se.Pow, sp.sin: se.sin, sp.cos: se.cos, sp.tan: se.tan,
            sp.exp: se.exp, sp.log: se.log}


def _symengine(expr: sp.Expr) -> se.Basic:
    """Return ``expr`` in symengine, each distinct subexpression converted once.

    A kinetic energy built from bodies repeats its subexpressions (a bicycle's: 4000 nodes, 400 distinct), which a plain
    ``sympify`` converts at every occurrence, ten times the work.
    """
    memo: dict[sp.Basic, se.Basic] = {}

    def convert(e: sp.Basic) -> se.Basic:
        out = memo.get(e)
        if out is None:
            build = _REBUILD.get(type(e))
            out = build(*[convert(a) for a in e.args]) if build is not None else se.sympify(e)
            memo[e] = out
        return out

    try:
        return convert(expr)
    except RecursionError:
        return se.sympify(expr)


def kinetic_mass_matrix(system, args: list[sp.Symbol], values: list[float]) -> np.ndarray:
    """Return the mass matrix ``M = d2T/dq'dq'`` of the kinetic energy of ``system`` at a state.

    The state is ``args = values`` ([t, q, q', parameters, inputs]); entries are NaN where T cannot be evaluated there
    (a real number is expected).
    """
    n = system.n
    M = np.zeros((n, n))
    if system.kinetic is None or not system.kinetic.free_symbols:
        return M
    qd = [se.sympify(v) for v in system.qd]
    velocity = set(system.qd)
    fixed = {se.sympify(a): se.Float(float(v)) for a, v in zip(args, values, strict=True) if a not in velocity}
    at = {se.sympify(a): se.Float(float(v)) for a, v in zip(args, values) if a in velocity}
    T = _symengine(system.kinetic).xreplace(fixed)  # a function of the velocities alone, numbers elsewhere
    free = T.free_symbols
    for i in range(n):
        if qd[i] not in free:
            continue
        grad = diff(T, qd[i])
        for j in range(i, n):
            if qd[j] in grad.free_symbols:
                try:
                    M[i, j] = M[j, i] = float(diff(grad, qd[j]).xreplace(at))
                except (RuntimeError, TypeError, ValueError):
                    M[i, j] = M[j, i] = float("nan")
    return M


def kinetic_problem(system, args: list[sp.Symbol], values: list[float]) -> tuple[str, str, str] | None:
    """Return (entry, message, hint) when the kinetic energy's mass matrix is not positive semi-definite at the start.

    Some velocity gives a negative T. None when it is, and when it cannot be evaluated there (not finite: the
    derivation's check of the mass matrix reports that).
    """
    M = kinetic_mass_matrix(system, args, values)
    if not np.all(np.isfinite(M)):
        return None
    scale = float(np.abs(M).max()) if M.size else 0.0
    if scale == 0:
        return None
    eig, vec = np.linalg.eigh(M / scale)
    if eig[0] >= -SEMIDEFINITE_TOL * np.abs(eig).max():
        return None
    negative = vec[:, eig < -SEMIDEFINITE_TOL * np.abs(eig).max()]
    weight = (negative**2).sum(axis=1)
    along = ", ".join(f"der({c.name})" for c, w in zip(system.coordinates, weight) if w > 0.01)
    smallest = eig[0] * scale
    params = sorted(system.kinetic.free_symbols & {p.symbol for p in system.parameters}, key=str)
    value = system.parameter_values
    signs = [f"{p} = {value[p]:g}" for p in params if value[p] < 0]
    hint = ("check the masses and inertias in the kinetic energy and their signs; "
            + (f"negative parameter{'s' if len(signs) > 1 else ''} in it: {', '.join(signs)}" if signs else
               "no parameter in it is negative, so check its terms (each a mass or inertia times a square)"))
    return ("energy.kinetic", "the kinetic energy is not positive for every velocity at the start state: its mass "
            f"matrix d2T/dq'dq' has the negative eigenvalue {smallest:g} (along {along})", hint)


def value_problems(system) -> list[tuple[str, str, str]]:
    """Return (entry, message, hint) of every value check that ``system`` fails (see the module docstring)."""
    args, values = _start(system)
    bodies = _body_problems(system, args, values)
    kinetic = None if bodies else kinetic_problem(system, args, values)  # T is made of the refused values
    return bodies + ([kinetic] if kinetic else []) + _effort_problems(system, args, values)


def check_values(system, problems: ProblemCollector | None = None) -> None:
    """Raise :class:`~bridge.errors.SystemFileError` with every value problem of ``system``.

    The problems are added to ``problems`` when given, else reported on their own.
    """
    problems = problems if problems is not None else ProblemCollector(system.source)
    for entry, message, hint in value_problems(system):
        problems.add(entry, message, hint)
    problems.raise_if_any()
