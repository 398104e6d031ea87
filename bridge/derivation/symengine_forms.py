"""The symengine form of each sympy expression of the equations, converted once and kept.

:class:`~bridge.derivation.eom.EquationsOfMotion` holds sympy expressions; the numeric evaluators compile symengine
ones. ``symengine.sympify`` of a large sympy expression walks it node by node in Python and costs about as much as
compiling it, and the same entries are needed several times for one model: the start-state check of the
derivation, the compiled model, a re-derived split. :func:`symengine_forms` converts an expression once; the kept
forms are bounded (:data:`MAX_KEPT`, the oldest dropped first).

A conversion walks the expression graph, not the tree: the equations of a multibody system share their
subexpressions (the bicycle's maggi equations: 100 expressions over 3,100 distinct nodes, each met many times), and
each distinct node of the arithmetic and elementary functions is built once in symengine from its converted
arguments, by the constructor ``symengine.sympify`` uses, so the result is the same expression (a hundred times
faster there). Any other node (numbers, symbols, piecewise, undefined functions) is converted whole by
``symengine.sympify``. The node map is shared by the conversions and started afresh past :data:`MAX_NODES` entries.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import symengine as se
import sympy as sp

from ..model.sympy_forms import symengine_origin

#: expressions whose symengine form is kept
MAX_KEPT = 20_000
_KEPT: OrderedDict = OrderedDict()
#: distinct sympy nodes whose symengine form is remembered (then the map starts afresh)
MAX_NODES = 400_000
_NODES: dict = {}

#: sympy node types rebuilt in symengine from their converted arguments (anything else converted whole)
_REBUILT = {sp.Add: se.Add, sp.Mul: se.Mul, sp.Pow: se.Pow, sp.sin: se.sin, sp.cos: se.cos, sp.tan: se.tan,
            sp.exp: se.exp, sp.log: se.log}


def _convert(expr, memo: dict) -> se.Basic:
    """Return ``expr`` in symengine, each distinct node built once (an explicit stack: no recursion limit)."""
    stack = [expr]
    while stack:
        node = stack[-1]
        if node in memo:
            stack.pop()
            continue
        build = _REBUILT.get(type(node))
        if build is None:
            memo[node] = se.sympify(node)
            stack.pop()
            continue
        pending = [a for a in node.args if a not in memo]
        if pending:
            stack.extend(pending)
            continue
        memo[node] = build(*[memo[a] for a in node.args])
        stack.pop()
    return memo[expr]


def convert_graph(expr) -> se.Basic:
    """Return ``symengine.sympify(expr)``, building each distinct subexpression of a sympy expression once.

    Parameters
    ----------
    expr : sympy.Basic, symengine.Basic or number
        The expression (anything but a sympy expression is converted by ``symengine.sympify`` itself).

    Returns
    -------
    symengine.Basic
        The same expression as ``symengine.sympify(expr)``.
    """
    global _NODES
    if not isinstance(expr, sp.Basic):
        return se.sympify(expr)
    memo = _NODES
    if len(memo) > MAX_NODES:
        memo = _NODES = {}  # a conversion under way elsewhere keeps the map it started with
    return _convert(expr, memo)


def symengine_form(expr) -> se.Basic:
    """Return ``symengine.sympify(expr)``, converted once per (equal) sympy expression."""
    if isinstance(expr, se.Basic):
        return expr
    origin = symengine_origin(expr)  # converted from symengine by the derivation: that form, not a new walk
    if origin is not None:
        return origin
    try:
        return _KEPT[expr]
    except KeyError:
        pass
    except TypeError:  # not hashable: nothing to keep
        return se.sympify(expr)
    form = convert_graph(expr)
    _KEPT[expr] = form
    if len(_KEPT) > MAX_KEPT:
        _KEPT.popitem(last=False)
    return form


def symengine_forms(exprs: Iterable) -> list[se.Basic]:
    """Return :func:`symengine_form` of every expression."""
    return [symengine_form(e) for e in exprs]


__all__ = ["MAX_KEPT", "MAX_NODES", "convert_graph", "symengine_form", "symengine_forms"]
