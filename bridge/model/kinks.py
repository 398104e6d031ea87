"""Partial derivatives of expressions with kinks: abs, sign, min and max.

symengine leaves ``d/dx abs(u)`` unevaluated (a ``Derivative`` that would print as a time derivative).
Here each outermost kink is replaced by a placeholder ``k``, the expression is differentiated by the
chain rule ``d/dx f(x, k(x)) = df/dx + df/dk * dk/dx``, and the kinks' derivatives are defined almost
everywhere, with sign (printed as ``sign`` in Modelica and C):

* ``d abs(u) = sign(u) du``;  ``d sign(u) = 0``;
* ``max(a, b) = (a + b)/2 + abs(a - b)/2``, so ``d max(a, b) = (da + db)/2 + sign(a - b) (da - db)/2``;
  ``min(a, b)`` with ``-sign``; more arguments pairwise, ``max(a, b, c) = max(max(a, b), c)``.

At a kink (``u = 0``, ``a = b``) the derivative is the mean of the one-sided ones.
"""

from __future__ import annotations

import symengine as se

_KINKS = (se.Abs, se.Max, se.Min, type(se.sign(se.Symbol("x"))))


def diff(expr: se.Basic, var: se.Basic) -> se.Basic:
    """Return d expr / d var, with the kinks' derivatives defined as above (no unevaluated ``Derivative``)."""
    kinks = outer_kinks(expr)
    if not kinks:
        return se.diff(expr, var)
    holders = {k: se.Symbol(f"kink[{i}]") for i, k in enumerate(kinks)}  # brackets: no user name has them
    flat = expr.xreplace(holders)
    out = se.diff(flat, var)
    for k, h in holders.items():
        if var not in k.free_symbols:
            continue
        dk = _kink_diff(k, var)
        if dk != 0:
            out += se.diff(flat, h) * dk
    return out.xreplace({h: k for k, h in holders.items()})


def outer_kinks(expr: se.Basic) -> list[se.Basic]:
    """Return the kinks that are not inside another kink, each once.

    All of them: symengine leaves even the derivative of ``max(y, z)`` with respect to an absent ``x`` unevaluated.
    """
    found: dict[se.Basic, None] = {}
    seen: set[se.Basic] = set()
    stack = [expr]
    while stack:
        e = stack.pop()
        if e in seen:
            continue
        seen.add(e)
        if isinstance(e, _KINKS):
            found[e] = None
            continue
        stack.extend(e.args)
    return list(found)


def _kink_diff(k: se.Basic, var: se.Basic) -> se.Basic:
    if isinstance(k, se.Abs):
        (u,) = k.args
        return se.sign(u) * diff(u, var)
    if isinstance(k, (se.Max, se.Min)):
        s = 1 if isinstance(k, se.Max) else -1
        args = list(k.args)
        acc, dacc = args[0], diff(args[0], var)
        for b in args[1:]:
            db = diff(b, var)
            dacc = (dacc + db) / 2 + s * se.sign(acc - b) * (dacc - db) / 2
            acc = se.Max(acc, b) if s == 1 else se.Min(acc, b)
        return dacc
    return se.Integer(0)  # sign: zero almost everywhere
