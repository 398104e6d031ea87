"""Common factors pulled out of sums, before common-subexpression elimination.

``a*b*x + a*b^2*y -> a*b*(x + b*y)``: in every sum (inner sums first) the factors that every term has are
multiplied once instead of once per term; numbers, and bases with non-integer or negative exponents, stay in
the terms. Exact (an identity of the expression, no assumptions, no expansion) and linear in the size of the
expression DAG, so it runs on any system size; a later CSE pass then shares the factored sums. Used by the
generated C code (:func:`bridge.codegen.c.cse_block`, on symengine expressions:
:func:`pull_common_factors_symengine`) and by the operation count (:mod:`bridge.derivation.stats`), which
therefore count what the C code evaluates.
"""

from __future__ import annotations

from collections.abc import Iterable

import symengine as se
import sympy as sp


def _factors(term, mul=sp.Mul) -> tuple[list, dict]:
    """Return the numbers and other factors of ``term``, and ``{base: positive integer exponent}`` of the rest."""
    kept: list = []
    powers: dict = {}
    for f in mul.make_args(term):
        if f.is_Number:
            kept.append(f)
        elif f.is_Pow and f.exp.is_Integer and f.exp > 0:
            powers[f.base] = powers.get(f.base, 0) + int(f.exp)
        elif f.is_Pow and not (f.exp.is_Integer and f.exp > 0):
            kept.append(f)
        else:
            powers[f] = powers.get(f, 0) + 1
    return kept, powers


def _pull(expr, memo: dict, engine=sp):
    """Pull the common factors of the sums in ``expr`` (sympy or, ``engine=se``, symengine), inner sums first."""
    if expr in memo:
        return memo[expr]
    if expr.is_Atom or not expr.args or not _rebuildable(expr, engine):
        memo[expr] = expr
        return expr
    args = [_pull(a, memo, engine) if isinstance(a, engine.Expr) else a for a in expr.args]
    new = expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr
    if new.is_Add:
        terms = [_factors(t, engine.Mul) for t in new.args]
        common = dict(terms[0][1])
        for _, powers in terms[1:]:
            common = {b: min(k, powers[b]) for b, k in common.items() if b in powers}
            if not common:
                break
        if common:
            rest = [engine.Mul(*kept, *(b ** (k - common.get(b, 0)) for b, k in powers.items()))
                    for kept, powers in terms]
            new = engine.Mul(*(b ** k for b, k in common.items()), engine.Add(*rest))
    memo[expr] = new
    return new


def pull_common_factors(exprs: Iterable[sp.Expr]) -> list[sp.Expr]:
    """Return each expression with the common factors of its sums pulled out (one memo for all: shared parts once)."""
    memo: dict = {}
    return [_pull(sp.sympify(e), memo) for e in exprs]


def _rebuildable(expr, engine) -> bool:
    """Whether ``expr.func(*args)`` rebuilds ``expr``: always in sympy; in symengine not for a Piecewise (flat args)."""
    return engine is sp or not isinstance(expr, se.Piecewise)


def pull_common_factors_symengine(exprs: Iterable[se.Basic]) -> list[se.Basic]:
    """Return each symengine expression with the common factors of its sums pulled out (as :func:`pull_common_factors`).

    The same identity on symengine expressions (faster on large systems); one memo for all.
    """
    memo: dict = {}
    return [_pull(e, memo, se) for e in exprs]
