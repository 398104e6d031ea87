"""Fast numeric evaluation of symbolic expressions (symengine ``Lambdify`` with CSE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se
import sympy as sp


def compile_exprs(args: Sequence[sp.Basic], exprs: Sequence[sp.Basic]):
    """A callable ``f(values) -> ndarray`` evaluating ``exprs`` at ``args = values``.

    One common-subexpression pass covers all expressions together.
    """
    if not exprs:
        return lambda values: np.zeros(0)
    se_args = [se.sympify(a) for a in args]
    se_exprs = [se.sympify(e) for e in exprs]
    return se.Lambdify(se_args, se_exprs, cse=True, real=True)
