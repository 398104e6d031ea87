"""Size of equations: arithmetic operation count after one joint common-subexpression pass.

Counted operations: each binary ``+``/``*`` (an n-ary sum or product of k terms counts k - 1;
a subtraction or division counts as one), each power, each function call. Numbers and symbols
are free. The same count is applied to every method and to sympy.physics.mechanics, so the
figures compare.
"""

from __future__ import annotations

from collections.abc import Iterable

import symengine as se


def _ops(expr: se.Basic, memo: dict) -> int:
    key = expr
    if key in memo:
        return 0
    if expr.is_Atom:
        return 0
    args = expr.args
    own = len(args) - 1 if isinstance(expr, (se.Add, se.Mul)) else 1
    total = own + sum(_ops(a, memo) for a in args)
    memo[key] = total
    return total


def operation_count(exprs: Iterable, cse: bool = True) -> int:
    """Operations to evaluate all ``exprs`` together, after one joint CSE pass when ``cse``."""
    items = [se.sympify(e) for e in exprs]
    if cse:
        replacements, reduced = se.cse(items)
        return sum(_ops(e, {}) for _, e in replacements) + sum(_ops(e, {}) for e in reduced)
    return sum(_ops(e, {}) for e in items)


def eom_operation_count(eom) -> int:
    """Operations in the mass matrix, forcing and kinematics of an :class:`EquationsOfMotion`."""
    return operation_count(list(eom.mass_matrix) + list(eom.forcing) + list(eom.kinematics))
