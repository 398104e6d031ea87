"""Fast numeric evaluation of symbolic expressions (symengine ``Lambdify`` with CSE, compiled by LLVM).

:func:`compile_exprs` compiles with symengine's LLVM backend at optimisation level 0 where symengine has LLVM (else
its ``lambda`` backend). The common-subexpression pass already removes the repeated work, so LLVM's optimiser
gains little at run time (a call of a few hundred operations takes about as long at levels 0 and 3, the call
overhead dominating) while it costs most of the compilation (the bicycle's dynamics, 200 expressions over 5,000
operations after CSE: about 0.2 s at level 0, 0.5 s at level 3, symengine's default). The interpreter of the
``lambda`` backend builds faster still but evaluates a large CSE graph a hundred times slower.

A small set of expressions (at most :data:`SMALL_OPS` operations) goes to the ``lambda`` backend without CSE instead:
it builds in microseconds where LLVM takes a millisecond or two, and evaluates as fast (the call overhead dominates).

The compiled callables take an array of the arguments and return the values; ``unsafe_real(values, out)`` writes
them into a preallocated array (no checks: both contiguous float64 of the right sizes).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import symengine as se
import sympy as sp

#: the symengine backend of the compiled callables and its LLVM optimisation level
BACKEND = "llvm" if se.have_llvm else "lambda"
OPT_LEVEL = 0
#: expression sets of at most this many operations are interpreted (``lambda`` backend, no CSE), not compiled
SMALL_OPS = 64
#: names symengine gives its CSE temporaries: arguments of such names are renamed before compiling
_CSE_NAME = re.compile(r"x\d+$")


def compile_exprs(args: Sequence[sp.Basic], exprs: Sequence[sp.Basic]):
    """Return a callable ``f(values) -> ndarray`` evaluating ``exprs`` at ``args = values``.

    One common-subexpression pass covers all expressions together. symengine names its CSE temporaries
    ``x0, x1, ...``, which would capture user symbols of the same names: where an argument has such a name, the
    arguments are renamed to private symbols first.

    Parameters
    ----------
    args : sequence of sympy.Basic or symengine.Basic
        The argument symbols, in the order of the values.
    exprs : sequence of sympy.Basic or symengine.Basic
        The expressions (symengine forms are used as they are).

    Returns
    -------
    callable
        ``f(values)``; a symengine ``Lambdify`` object (with ``unsafe_real``) unless ``exprs`` is empty.
    """
    if not exprs:
        return lambda values: np.zeros(0)
    arg_forms = [se.sympify(a) for a in args]
    se_exprs = [e if isinstance(e, se.Basic) else se.sympify(e) for e in exprs]
    if any(_CSE_NAME.match(str(a)) for a in arg_forms):
        private = [se.Symbol(f"_nhb_arg{i}") for i in range(len(arg_forms))]
        rename = dict(zip(arg_forms, private))
        arg_forms, se_exprs = private, [e.xreplace(rename) for e in se_exprs]
    if _small(se_exprs):
        return se.Lambdify(arg_forms, se_exprs, cse=False, real=True, backend="lambda")
    if BACKEND == "llvm":
        return se.Lambdify(arg_forms, se_exprs, cse=True, real=True, backend="llvm", opt_level=OPT_LEVEL)
    return se.Lambdify(arg_forms, se_exprs, cse=True, real=True, backend=BACKEND)


def _small(exprs: Sequence[se.Basic]) -> bool:
    """Return whether the expressions have at most :data:`SMALL_OPS` operations together.

    A walk of the expression trees that stops as soon as it has met more operations, so a large (or shared,
    graph-like) expression costs no more than a small one.
    """
    budget = SMALL_OPS
    stack = list(exprs)
    while stack:
        args = stack.pop().args
        if args:
            budget -= len(args) - 1 if len(args) > 1 else 1  # n arguments: n - 1 binary operations, a function 1
            if budget < 0:
                return False
            stack.extend(args)
    return True


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
