"""The symengine form of each sympy expression of the equations, converted once and kept.

:class:`~bridge.derivation.eom.EquationsOfMotion` holds sympy expressions; the numeric evaluators compile symengine
ones. ``symengine.sympify`` of a large sympy expression walks it node by node in Python and costs about as much as
compiling it, and the same entries are needed several times for one model: the start-state check of the
derivation, the compiled model, a re-derived split. :func:`symengine_forms` converts an expression once; the kept
forms are bounded (:data:`MAX_KEPT`, the oldest dropped first).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

import symengine as se

from ..model.sympy_forms import symengine_origin

#: expressions whose symengine form is kept
MAX_KEPT = 20_000
_KEPT: OrderedDict = OrderedDict()


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
    form = se.sympify(expr)
    _KEPT[expr] = form
    if len(_KEPT) > MAX_KEPT:
        _KEPT.popitem(last=False)
    return form


def symengine_forms(exprs: Iterable) -> list[se.Basic]:
    """Return :func:`symengine_form` of every expression."""
    return [symengine_form(e) for e in exprs]


__all__ = ["MAX_KEPT", "symengine_form", "symengine_forms"]
