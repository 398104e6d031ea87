"""Fast numeric evaluation of symbolic expressions (symengine ``Lambdify`` with CSE)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se
import sympy as sp


def compile_exprs(args: Sequence[sp.Basic], exprs: Sequence[sp.Basic]):
    """Return a callable ``f(values) -> ndarray`` evaluating ``exprs`` at ``args = values``.

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


def evaluate_once(args: Sequence[sp.Basic], exprs: Sequence[sp.Basic],
                  values: Sequence[float] | np.ndarray) -> np.ndarray:
    """Evaluate ``exprs`` at one point by substitution (cheaper than compiling for a single use)."""
    point = {se.sympify(a): se.Float(float(v)) for a, v in zip(args, values, strict=True)}
    out = []
    for e in exprs:
        try:
            out.append(float(se.sympify(e).xreplace(point)))
        except (RuntimeError, TypeError, ValueError):
            out.append(float("nan"))  # not a real number at this point (e.g. a division by zero)
    return np.array(out, dtype=float)
