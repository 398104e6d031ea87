"""Common factors pulled out of sums, before common-subexpression elimination.

``a*b*x + a*b^2*y -> a*b*(x + b*y)``: in every sum (inner sums first) the factors that every term has are
multiplied once instead of once per term; numbers, and bases with non-integer or negative exponents, stay in
the terms. Exact (an identity of the expression, no assumptions, no expansion) and linear in the size of the
expression DAG, so it runs on any system size; a later CSE pass then shares the factored sums. Used by the
generated C code (:func:`bridge.codegen.c.cse_block`) and by the operation count
(:mod:`bridge.derivation.stats`), which therefore count what the C code evaluates.
"""

from __future__ import annotations

from collections.abc import Iterable

import sympy as sp


def _factors(term: sp.Expr) -> tuple[list[sp.Expr], dict[sp.Expr, int]]:
    """Return the numbers and other factors of ``term``, and ``{base: positive integer exponent}`` of the rest."""
    kept: list[sp.Expr] = []
    powers: dict[sp.Expr, int] = {}
    for f in sp.Mul.make_args(term):
        if f.is_Number:
            kept.append(f)
        elif f.is_Pow and f.exp.is_Integer and f.exp > 0:
            powers[f.base] = powers.get(f.base, 0) + int(f.exp)
        elif f.is_Pow and not (f.exp.is_Integer and f.exp > 0):
            kept.append(f)
        else:
            powers[f] = powers.get(f, 0) + 1
    return kept, powers


def _pull(expr: sp.Expr, memo: dict) -> sp.Expr:
    if expr in memo:
        return memo[expr]
    if expr.is_Atom or not expr.args:
        memo[expr] = expr
        return expr
    args = [_pull(a, memo) if isinstance(a, sp.Expr) else a for a in expr.args]
    new = expr.func(*args) if any(a is not b for a, b in zip(args, expr.args)) else expr
    if new.is_Add:
        terms = [_factors(t) for t in new.args]
        common = dict(terms[0][1])
        for _, powers in terms[1:]:
            common = {b: min(k, powers[b]) for b, k in common.items() if b in powers}
            if not common:
                break
        if common:
            rest = [sp.Mul(*kept, *(b ** (k - common.get(b, 0)) for b, k in powers.items())) for kept, powers in terms]
            new = sp.Mul(*(b ** k for b, k in common.items()), sp.Add(*rest))
    memo[expr] = new
    return new


def pull_common_factors(exprs: Iterable[sp.Expr]) -> list[sp.Expr]:
    """Return each expression with the common factors of its sums pulled out (one memo for all: shared parts once)."""
    memo: dict = {}
    return [_pull(sp.sympify(e), memo) for e in exprs]
