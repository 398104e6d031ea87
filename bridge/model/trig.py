"""Cheap trigonometric identities within a node budget: ``sin(a)^2 + cos(a)^2 = 1`` after expansion.

Used where a structural decision (does a coordinate appear, is a matrix orthonormal) must not be fooled by an
unsimplified term such as ``I*sin(phi)^2 + I*cos(phi)^2``, and to print such terms tidied. Beyond the budget the
expressions are left as they are (the decision then takes them as written).
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp

from .expressions import tree_size

#: operations of an expression above which it is not reduced
MAX_TRIG_NODES = 2_000


def _squared_sine(x: sp.Basic) -> bool:
    return bool(x.is_Pow and isinstance(x.base, sp.sin) and x.exp.is_Integer and x.exp >= 2)


def _as_cosine(x: sp.Pow) -> sp.Expr:
    k = int(x.exp)
    return (1 - sp.cos(x.base.args[0]) ** 2) ** (k // 2) * x.base ** (k % 2)


@lru_cache(maxsize=256)
def reduce_trig(expr: sp.Expr, max_nodes: int = MAX_TRIG_NODES, angle_sums: bool = False) -> sp.Expr | None:
    """Return ``expr`` with every ``sin(a)^k`` (k >= 2) written with ``1 - cos(a)^2``, expanded.

    A canonical form in which ``sin^2 + cos^2 = 1`` cancels; angle sums are expanded first with ``angle_sums``. None
    when ``expr`` or its expansion exceeds the budget. The latest results are kept: asking whether each of several
    coordinates appears in one expression expands it once.
    """
    if tree_size(expr, max_nodes) > max_nodes:
        return None
    e = sp.expand(sp.expand_trig(expr) if angle_sums else expr)
    if tree_size(e, 10 * max_nodes) > 10 * max_nodes:
        return None
    if not e.has(sp.sin):
        return e
    r = sp.expand(e.replace(_squared_sine, _as_cosine))
    return None if tree_size(r, 10 * max_nodes) > 10 * max_nodes else r


def tidy_trig(expr: sp.Expr, max_nodes: int = MAX_TRIG_NODES) -> sp.Expr:
    """Return ``expr`` with ``sin^2 + cos^2`` cancelled where that makes it smaller (:func:`reduce_trig`)."""
    if not isinstance(expr, sp.Basic) or not (expr.has(sp.sin) and expr.has(sp.cos)):
        return expr
    r = reduce_trig(expr, max_nodes)
    if r is None:
        return expr
    return r if tree_size(r, max_nodes) < tree_size(expr, max_nodes) else expr


def depends_on(expr: sp.Expr, symbol: sp.Symbol, max_nodes: int = MAX_TRIG_NODES) -> bool:
    """Return whether ``symbol`` appears in ``expr`` once ``sin^2 + cos^2 = 1`` is applied (:func:`reduce_trig`).

    Beyond the budget, whether it appears as written.
    """
    if symbol not in expr.free_symbols:
        return False
    r = reduce_trig(expr, max_nodes)
    return r is None or symbol in r.free_symbols
