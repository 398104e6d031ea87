"""Values set from outside the system file: ``--set NAME=VALUE`` and ``load_system(path, overrides=...)``.

A name is a parameter (its value), a coordinate ``q`` (its start position), ``der(q)`` (its start
velocity) or an input (its start value). Values are numbers or constant expressions (``pi/4``), read by
the whitelisting expression parser. All problems are reported at once, like the file's own.

After the change the start state is made consistent with the constraints as the loader does under
``[method] independent``: with a split whose independent coordinates include every overridden one,
the dependent positions solve ``phi(q) = 0`` (Newton) and the dependent velocities
``A_dep q'_dep = -(A_ind q'_ind + a0)``. A state that already satisfies the constraints is kept.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.linalg
import sympy as sp

from ..errors import ProblemCollector, SystemFileError
from .effort_checks import effort_jacobian_problems
from .expressions import ExpressionError, parse_expression
from .mechanics import SINGULAR_SPLIT, Differentiator, choose_independent, split_health, velocity_constraints
from .start_state import (
    StartConstraints,
    dependent_constraint_problems,
    dependent_positions,
    dependent_velocities,
    violations,
)
from .system import System, finite, set_values_with
from .values import check_values

__all__ = ["apply_overrides", "override_names", "split_assignment"]

_DER = re.compile(r"der\(\s*([A-Za-z][A-Za-z0-9_]*)\s*\)\Z")


def split_assignment(text: str) -> tuple[str, str]:
    """``"NAME=VALUE"`` -> (name, value text); ValueError when there is no ``=`` or a side is empty."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise ValueError(f"expected NAME=VALUE, e.g. m=2.5 or der(phi)=3, got {text!r}")
    return re.sub(r"der\(\s*(\w+)\s*\)", r"der(\1)", name), value


def override_names(system: System) -> list[str]:
    """Every name that can be set: parameters, coordinates, der(coordinates), inputs."""
    return ([p.name for p in system.parameters] + [c.name for c in system.coordinates]
            + [f"der({c.name})" for c in system.coordinates] + [u.name for u in system.inputs])


def _constant(name: str, pos: int) -> sp.Expr:
    raise ExpressionError(f"it contains the name {name!r}", pos)


def _no_der(expr: sp.Expr, pos: int) -> sp.Expr:
    raise ExpressionError("der() has no meaning in a value", pos, "give a number")


def _value(entry: str, value: Any, problems: ProblemCollector) -> float | None:
    """Return a finite float from a number, a number's text or a constant expression; None (and a problem) if not."""
    if finite(value):
        return float(value)
    if isinstance(value, str):
        try:  # a plain number exactly as Python reads it
            number = float(value)
        except ValueError:
            constant = _constant_expression(entry, value, problems)
            if constant is None:
                return None
            number = constant
        if np.isfinite(number):
            return number
    problems.add(entry, f"expected a finite number, got {value!r}",
                 "give a number like 2.5 or a constant expression like pi/4")
    return None


def _constant_expression(entry: str, text: str, problems: ProblemCollector) -> float | None:
    """Evaluate a constant expression of the file's grammar (``pi/4``, ``2*0.3``); None and a problem if not."""
    try:
        expr = parse_expression(text, _constant, _no_der)
    except ExpressionError as exc:
        problems.add(entry, f"{text!r} is not a number ({exc.message})",
                     "give a number like 2.5 or a constant expression like pi/4")
        return None
    except RecursionError:
        expr = sp.nan
    return float(expr) if expr.is_number and expr.is_finite else float("nan")


def apply_overrides(system: System, overrides: Mapping[str, Any] | Sequence[tuple[str, Any]]) -> System:
    """``system`` with the given values set and its start state made consistent with the constraints.

    Raises :class:`~bridge.errors.SystemFileError` naming every unknown name (with a did-you-mean
    hint), every value that is not a finite number, and a start state that cannot be made consistent.
    """
    items = list(overrides.items() if isinstance(overrides, Mapping) else overrides)
    if not items:
        return system
    problems = ProblemCollector(system.source)
    known = override_names(system)
    values: dict[str, float] = {}
    dynamic = {d.name: f"der({d.coordinate})" for d in system.dynamic}  # s is the flow of its integral
    for name, raw in items:
        entry = f"--set {name}"
        name = dynamic.get(name, name)
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            problems.add(entry, f"{name!r} is not a parameter, coordinate, der(coordinate) or input of "
                         f"{system.name}", f"did you mean {close[0]!r}?" if close else
                         "settable names: " + ", ".join(known))
            continue
        if name in values:
            problems.add(entry, f"{name!r} is set twice", "give each name once")
            continue
        value = _value(entry, raw, problems)
        if value is not None:
            values[name] = value
    problems.raise_if_any()
    return checked(_with_values(system, values), values, problems)


def checked(system: System, values: Mapping[str, float], problems: ProblemCollector) -> System:
    """Return ``system`` with ``values`` set, passed through the loader's checks of values.

    The checks are those of masses, radii, inertia tensors, rates and effort constraints
    (:mod:`bridge.model.values`); then the start state is made consistent and the constraints and effort
    constraints independent there.

    Raises
    ------
    SystemFileError
        When a check fails (:class:`~bridge.errors.SystemFileError`).
    """
    check_values(system, problems)
    system = _consistent(system, values, problems)
    for entry, message, hint in dependent_constraint_problems(system) + effort_jacobian_problems(system):
        problems.add(entry, message, hint)
    problems.raise_if_any()
    return system


def _with_values(system: System, values: Mapping[str, float]) -> System:
    """Return the system with parameter values, start positions, start velocities and input start values replaced."""
    params = tuple(replace(p, value=values.get(p.name, p.value)) for p in system.parameters)
    coords = tuple(replace(c, start=values.get(c.name, c.start), velocity=values.get(f"der({c.name})", c.velocity))
                   for c in system.coordinates)
    inputs = tuple(replace(u, start=values.get(u.name, u.start)) for u in system.inputs)
    return replace(system, parameters=params, coordinates=coords, inputs=inputs)


def _given(system: System, values: Mapping[str, float]) -> list[int]:
    """Return the indices of the coordinates whose start velocity (or, with holonomic constraints, position) was set."""
    given = []
    for i, c in enumerate(system.coordinates):
        if f"der({c.name})" in values or (system.holonomic and c.name in values):
            given.append(i)
    return given


def _consistent(system: System, values: Mapping[str, float], problems: ProblemCollector) -> System:
    """Keep a start state that satisfies the constraints; otherwise compute the dependent part of it."""
    if system.m == 0:
        return system
    constraints = StartConstraints(system)
    q0 = np.array([c.start for c in system.coordinates], dtype=float)
    v0 = np.array([c.velocity for c in system.coordinates], dtype=float)
    names = [entry for entry, _ in system.constraints]
    A, a0 = constraints.velocity_form(q0)
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(a0))):
        problems.add("constraints", "with the values set the constraints cannot be evaluated at the start state "
                     "(not finite)", "check the values given with --set")
        problems.raise_if_any()
    if not violations(constraints, q0, v0, names):
        return system
    given = _given(system, values)
    independent = _split(system, A, given)
    if independent is None:
        kept = {system.coordinates[i].name for i in given}
        shown = ", ".join(n for n in values if (n.startswith("der(") and n[4:-1] in kept)
                          or (system.holonomic and n in kept))
        why = (f"the system has only {system.dof} independent velocities" if len(given) > system.dof else
               "the constraints cannot be solved for the other velocities at this state")
        for entry, residual in violations(constraints, q0, v0, names):
            problems.add(entry, f"the start state after --set violates this constraint (residual {residual:.6g}) "
                         f"and cannot be made consistent while keeping the values set for {shown or 'them'}: {why}",
                         "set fewer start values, or values that satisfy the constraints")
        raise SystemFileError(problems.problems)
    dep = [i for i in range(system.n) if i not in independent]
    qv = dependent_positions(constraints, q0, dep)
    if qv is None:
        problems.add("constraints", "with the values set, the dependent start positions could not be found from "
                     "the holonomic constraints (Newton did not converge)",
                     "give start values (or parameters) for which the holonomic constraints have a solution nearby")
        problems.raise_if_any()
        return system
    vv = dependent_velocities(constraints, qv, v0, list(independent), dep)
    left = violations(constraints, qv, vv, names)
    for entry, residual in left:
        problems.add(entry, f"the start state after --set cannot be made to satisfy this constraint "
                     f"(residual {residual:.6g})", "check the values given with --set")
    problems.raise_if_any()
    cn = [c.name for c in system.coordinates]
    adjusted = [cn[i] for i in dep if qv[i] != q0[i]] + [f"der({cn[i]})" for i in dep if vv[i] != v0[i]]
    return system.with_start(dict(zip(cn, qv)), dict(zip(cn, vv)),
                             tuple(dict.fromkeys([*system.adjusted_start, *adjusted])))


def _split(system: System, A: np.ndarray, given: list[int]) -> tuple[int, ...] | None:
    """Choose independent coordinates containing ``given``.

    The file's split when it contains them, else the healthiest (Chaplygin-preferring) choice of
    :func:`choose_independent`; None when no regular split contains them.
    """
    keep = set(given)

    def regular(ind: Sequence[int]) -> bool:
        return keep <= set(ind) and split_health(A, [i for i in range(system.n) if i not in ind]) >= SINGULAR_SPLIT

    if system.independent is not None:
        file_split = tuple(i for i, c in enumerate(system.coordinates) if c.name in system.independent)
        if regular(file_split):
            return file_split
    _, A_rows, _ = velocity_constraints(system, Differentiator(system))
    chosen = choose_independent(system, A_rows, accept=lambda ind: keep <= set(ind))
    if chosen is not None and regular(chosen):
        return tuple(chosen)
    free = [i for i in range(system.n) if i not in keep]  # dependent ones among the others, by pivoted QR
    if len(free) < system.m:
        return None
    _, _, piv = scipy.linalg.qr(A[:, free], pivoting=True, mode="economic")
    dep = {free[p] for p in piv[: system.m]}
    chosen = tuple(i for i in range(system.n) if i not in dep)
    return chosen if regular(chosen) else None


set_values_with(apply_overrides)
