"""symengine -> sympy conversion that builds every shared subexpression once.

The derivation works in symengine, whose expressions share their subexpressions: the mass matrix and forcing of a
reduced method on a multibody system are trees of some 10^5 nodes over a few thousand distinct ones.
``sympy.sympify`` of a symengine expression (its ``_sympy_``) walks the tree, rebuilding (and re-evaluating) a shared
subexpression at each of its occurrences. :func:`sympy_form` walks the graph instead: each distinct node is built
once, by the same sympy constructor as ``_sympy_`` and from the same arguments, so the result is the very expression
``sympy.sympify`` returns (its ``srepr`` included).

The symengine expression each result came from is kept (:func:`symengine_origin`): the numeric evaluators compile
symengine forms, and converting the sympy expression back (``symengine.sympify``, again a walk of the tree) is then
not needed. Both records are bounded: the node map is started afresh past :data:`MAX_NODES` entries, the origins past
:data:`MAX_ORIGINS` (the oldest dropped first).
"""

from __future__ import annotations

from collections import OrderedDict

import symengine as se
import sympy as sp
from symengine.lib import symengine_wrapper as _wrapper

#: symengine nodes whose sympy form is remembered (then the map starts afresh)
MAX_NODES = 400_000
#: converted expressions whose symengine origin is kept
MAX_ORIGINS = 20_000

_ONE_ARG = _wrapper.OneArgFunction
_ONE_ARG_SYMPY = _wrapper.OneArgFunction._sympy_
_nodes: dict = {}
_origins: OrderedDict = OrderedDict()


def _build(node, converted: list):
    """Return the sympy node of ``node`` from its converted arguments, as symengine's ``_sympy_`` builds it."""
    kind = type(node)
    if kind is se.Add:
        return sp.Add(*converted)
    if kind is se.Mul:
        return sp.Mul(*converted)
    if kind is se.Pow:
        return converted[0] ** converted[1]
    return getattr(sp, kind.__name__)(converted[0])  # a one-argument function (sin, cos, exp, ...)


def _composite(node) -> bool:
    """Return whether ``node`` is converted from its converted arguments (else by its own ``_sympy_``)."""
    kind = type(node)
    return (kind is se.Add or kind is se.Mul or kind is se.Pow
            or (isinstance(node, _ONE_ARG) and kind._sympy_ is _ONE_ARG_SYMPY))


def _convert(expr, memo: dict):
    """Return the sympy form of the symengine ``expr``, each distinct node built once (iteratively: no recursion)."""
    stack = [expr]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        if not _composite(node):
            memo[node] = node._sympy_()
            stack.pop()
            continue
        args = node.args
        missing = [a for a in args if a not in memo]
        if missing:
            stack.extend(missing)
            continue
        memo[node] = _build(node, [memo[a] for a in args])
        stack.pop()
    return memo[expr]


def sympy_form(expr) -> sp.Basic:
    """Return ``sympy.sympify(expr)`` of a symengine expression, building each shared subexpression once.

    A sympy object is returned as it is.

    Parameters
    ----------
    expr : symengine.Basic or sympy.Basic
        The expression.

    Returns
    -------
    sympy.Basic
        The same expression as ``sympy.sympify(expr)``; its symengine origin is kept (:func:`symengine_origin`).
    """
    if isinstance(expr, sp.Basic):
        return expr
    if not isinstance(expr, se.Basic):
        return sp.sympify(expr)
    global _nodes
    memo = _nodes
    if len(memo) > MAX_NODES:
        memo = _nodes = {}  # a conversion under way elsewhere keeps the map it started with
    result = _convert(expr, memo)
    try:
        _origins[result] = expr
    except TypeError:  # not hashable: nothing to keep
        return result
    if len(_origins) > MAX_ORIGINS:
        _origins.popitem(last=False)
    return result


def symengine_origin(expr) -> se.Basic | None:
    """Return the symengine expression :func:`sympy_form` converted into ``expr``, or None.

    Parameters
    ----------
    expr : sympy.Basic
        A sympy expression.

    Returns
    -------
    symengine.Basic or None
        The symengine expression it was converted from (equal to it), None when it was not converted here.
    """
    try:
        return _origins.get(expr)
    except TypeError:
        return None


__all__ = ["MAX_NODES", "MAX_ORIGINS", "symengine_origin", "sympy_form"]
