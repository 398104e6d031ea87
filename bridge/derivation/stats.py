"""Size of equations: arithmetic operation count after one joint common-subexpression pass.

Counted operations, as ``sympy.count_ops`` counts them: each binary ``+``/``-``/``*``/``/`` (an n-ary sum or
product of k terms counts k - 1; a term with a negative coefficient is a subtraction, not a negation plus an
addition; a factor with a negative exponent is a division, not a reciprocal plus a multiplication; a lone
negation counts one), each power with another exponent than -1, each function call. Numbers and symbols are
free. The same count is applied to every method and to sympy.physics.mechanics, so the figures compare.
"""

from __future__ import annotations

from collections.abc import Iterable

import symengine as se

from .symengine_forms import convert_graph


def _negative(x: se.Basic) -> bool:
    return x.is_Number and x < 0


def _ops(expr: se.Basic, memo: dict) -> int:
    if expr in memo or expr.is_Atom:
        return 0
    if isinstance(expr, se.Add):
        terms = [-a if isinstance(a, se.Mul) and _negative(a.args[0]) else a for a in expr.args]  # a - b: one op
        total = len(terms) - 1 + sum(_ops(a, memo) for a in terms)
    elif isinstance(expr, se.Mul):
        args = list(expr.args)
        own = 0
        if _negative(args[0]):  # a lone negation
            own, args[0] = 1, -args[0]
        if args[0] == 1:
            args = args[1:]
        num = [a for a in args if not (isinstance(a, se.Pow) and _negative(a.args[1]))]
        den = [a.args[0] ** (-a.args[1]) for a in args if isinstance(a, se.Pow) and _negative(a.args[1])]
        own += max(len(num) - 1, 0) + max(len(den) - 1, 0) + (1 if den else 0)  # one division for the denominator
        total = own + sum(_ops(a, memo) for a in num + den)
    elif isinstance(expr, se.Pow) and _negative(expr.args[1]):  # 1/b^k: a division (and b^k)
        total = 1 + _ops(expr.args[0] ** (-expr.args[1]), memo)
    else:  # a power or a function call
        total = 1 + sum(_ops(a, memo) for a in expr.args)
    memo[expr] = total
    return total


def operation_count(exprs: Iterable, cse: bool = True) -> int:
    """Count the operations to evaluate all ``exprs`` together, after one joint CSE pass when ``cse``."""
    # symengine.sympify's own form (not the derivation's symengine origin, equal but grouped otherwise, which the CSE
    # would count differently), each distinct subexpression converted once
    items = [convert_graph(e) for e in exprs]
    if cse:
        replacements, reduced = se.cse(items)
        return sum(_ops(e, {}) for _, e in replacements) + sum(_ops(e, {}) for e in reduced)
    return sum(_ops(e, {}) for e in items)


def eom_exprs(eom) -> list:
    """Return what one evaluation of the right-hand side needs.

    The auxiliary stages' matrices and right-hand sides (the reduced methods' implicit split, solved before the rest),
    the mass matrix, the forcing and the kinematics, as the generated C code (``nhb_rhs``) evaluates them. The LU solves
    are numeric and not counted; neither is the acceleration map (``q''`` from ``u'``: an output, not needed to
    integrate; the peers' counts of ``mass_matrix_full`` and ``forcing_full`` have no such part either).
    """
    aux = [e for stage in eom.auxiliary for e in (*stage.matrix, *stage.rhs)]
    return aux + list(eom.mass_matrix) + list(eom.forcing) + list(eom.kinematics)


def eom_operation_count(eom) -> int:
    """Count the operations of one right-hand-side evaluation of an :class:`EquationsOfMotion`.

    The expressions of :func:`eom_exprs` after one joint CSE pass, the sums' common factors pulled out first as the
    generated C code does (:mod:`bridge.derivation.factors`).
    """
    from .factors import pull_common_factors

    return operation_count(pull_common_factors(eom_exprs(eom)))
