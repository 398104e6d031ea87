"""Counting differentiation operations the way a person does by hand.

Definition (reproduces the seed's count of 18 partial and 50 time differentiations for the
first term of Lagrange's equations of the vibratory exciter):

* the operand is expanded into a sum of terms (products of factors);
* a **partial derivative** d/dv costs one operation per term that contains v;
* a **total time derivative** d/dt costs, per term, one operation per time-dependent factor,
  where a power with integer exponent k > 0 counts as k factors, and a function of a
  time-dependent argument (sin, cos, sqrt, a negative power, ...) counts one for the
  function plus the cost of differentiating its argument.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sp


def _time_cost(expr: sp.Expr, timed: frozenset) -> int:
    if not (expr.free_symbols & timed):
        return 0
    if expr.is_Symbol:
        return 1
    if expr.is_Add:
        return sum(_time_cost(a, timed) for a in expr.args)
    if expr.is_Mul:
        return sum(_time_cost(a, timed) for a in expr.args)
    if expr.is_Pow:
        base, exponent = expr.args
        if exponent.is_Integer and exponent > 0:
            return int(exponent) * _time_cost(base, timed)
        return 1 + _time_cost(base, timed) + _time_cost(exponent, timed)
    # a function of time-dependent arguments: the function itself plus its arguments
    return 1 + sum(_time_cost(a, timed) for a in expr.args)


def time_cost(expr: sp.Expr, timed: Iterable[sp.Symbol]) -> int:
    """Count the operations to differentiate ``expr`` totally with respect to time."""
    return _time_cost(sp.expand(expr), frozenset(timed))


def partial_cost(expr: sp.Expr, var: sp.Symbol) -> int:
    """Count the operations to differentiate ``expr`` partially with respect to ``var``."""
    return sum(1 for term in sp.Add.make_args(sp.expand(expr)) if term.has(var))
