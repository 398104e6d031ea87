"""Fast numeric evaluation of symbolic expressions (symengine ``Lambdify`` with CSE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se
import sympy as sp


def compile_exprs(args: Sequence[sp.Basic], exprs: Sequence[sp.Basic]):
    """A callable ``f(values) -> ndarray`` evaluating ``exprs`` at ``args = values``.

    One common-subexpression pass covers all expressions together. The arguments are renamed
    to private symbols first: symengine names its CSE temporaries ``x0, x1, ...``, which would
    otherwise capture user symbols of the same names.
    """
    if not exprs:
        return lambda values: np.zeros(0)
    private = [se.Symbol(f"_nhb_arg{i}") for i in range(len(args))]
    rename = {se.sympify(a): p for a, p in zip(args, private)}
    se_exprs = [se.sympify(e).xreplace(rename) for e in exprs]
    return se.Lambdify(private, se_exprs, cse=True, real=True)
