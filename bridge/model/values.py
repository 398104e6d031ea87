"""Checks of the values of a built :class:`~bridge.model.system.System`: the ones that depend on parameter values
and start values rather than on the structure of the file.

The loader runs them once the system is built, and :func:`~bridge.model.overrides.apply_overrides` (``--set``,
``System.with_values``, every case of a sweep) and :func:`~bridge.model.from_mechanics.from_mechanics` run them
again on the system they produce, so that a value gives the same message whether it is written in the file or set
afterwards:

* every body's and particle's mass, and every constant recorded as positive (a contact's radius), > 0;
* every rigid body's inertia tensor finite, symmetric, positive definite and a real body's (triangle inequality);
* each dynamic variable's rate and each effort constraint finite at the start state (efforts at 0, and their
  derivatives with respect to the efforts).

The message helpers (:func:`positive_problem`, :func:`inertia_problem`) are also what the body tables use while
the file is read.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from ..errors import ProblemCollector

__all__ = ["positive_problem", "inertia_problem", "value_problems", "check_values", "RANGE"]

#: magnitudes of masses, inertias and lengths beyond which products of them (an energy, a mass matrix's
#: pivots) leave the range of a double: refused as out of range, not computed with
RANGE = 1e100


def positive_problem(what: str, value: float) -> tuple[str, str] | None:
    """(message, hint) when a quantity that must be positive (a mass, a radius) is not, or is out of range."""
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
    """(message, hint) when the 3x3 tensor ``M`` (values at the parameter values) is not a rigid body's inertia:
    not finite, not symmetric, not positive definite, out of range or violating the triangle inequality."""
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
    """Arguments and values of the start state: t = 0, q, q', parameters, inputs."""
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
    """Rates and effort constraints not finite at the start state (efforts at 0, and their derivatives)."""
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


def value_problems(system) -> list[tuple[str, str, str]]:
    """(entry, message, hint) of every value check that ``system`` fails (see the module docstring)."""
    args, values = _start(system)
    return _body_problems(system, args, values) + _effort_problems(system, args, values)


def check_values(system, problems: ProblemCollector | None = None) -> None:
    """Raise :class:`~bridge.errors.SystemFileError` with every value problem of ``system`` (added to
    ``problems`` when given, else reported on their own)."""
    problems = problems if problems is not None else ProblemCollector(system.source)
    for entry, message, hint in value_problems(system):
        problems.add(entry, message, hint)
    problems.raise_if_any()
