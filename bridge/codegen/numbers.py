"""Numbers as every generated language (Modelica and C) writes them.

A number is the nearest double of its exact value, printed with ``repr`` (the shortest text that reads back as
the same double); a number without a double is an :class:`~bridge.errors.ExportError` naming it and the
expression it is in.
"""

from __future__ import annotations

import math

import sympy as sp

from ..errors import ExportError

#: integers up to 2^53 are exact doubles
EXACT_INTEGER = 2**53


def short(expr, limit: int = 160) -> str:
    """``expr`` as short text for a message: long numbers in scientific notation, the whole cut at ``limit``."""
    expr = sp.sympify(expr)
    long_numbers = {n: sp.Float(n, 5) for n in expr.atoms(sp.Rational, sp.Float) if len(str(n)) > 24}
    text = str(expr.xreplace(long_numbers) if long_numbers else expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def nearest_double(number, context=None) -> float:
    """Return the double nearest to the exact value of a real sympy number (Integer, Rational, Float, pi, E, ...).

    Raises :class:`ExportError` when the value has no double: beyond the largest (about 1.8e308), a nonzero
    value that rounds to 0 (below about 4.9e-324), or not a finite real (``oo``, ``nan``, ``I``).
    """
    number = sp.sympify(number)
    value = math.nan
    try:
        if number.is_Integer:
            value = float(int(number))  # correctly rounded
        elif number.is_Rational:
            value = int(number.p) / int(number.q)  # Python's int division is correctly rounded
        elif number.is_Float:
            value = float(number)  # mpmath rounds to nearest
        elif number.is_NumberSymbol or (number.is_number and number.is_extended_real is not False
                                         and number.is_finite is not False):
            value = float(number.evalf(40))
    except (OverflowError, TypeError):
        value = math.inf
    if math.isfinite(value) and (value != 0.0 or number.is_zero):
        return value
    where = f" in {short(context)}" if context is not None and sp.sympify(context) != number else ""
    if math.isfinite(value) or (number.is_finite and number.is_extended_real):
        what = "is too large for a double (largest about 1.8e308)" if not math.isfinite(value) else \
            "is too small for a double (it would round to 0; smallest about 4.9e-324)"
        hint = ("rescale the system (other units, or a scale factor folded into a parameter) so that every "
                "constant lies between about 1e-300 and 1e300")
    else:
        what, hint = "is not a finite real number", "remove it from the equations"
    raise ExportError(f"the number {short(number)}{where} {what}; generated code could not mean the same value: "
                      f"{hint}")


def double_literal(number, context=None) -> str:
    """``repr`` of the nearest double: the shortest decimal that reads back as the same double."""
    return repr(nearest_double(number, context))


def exact_division(p: int, q: int) -> bool:
    """Whether ``p.0/q.0`` in double arithmetic gives the nearest double of ``p/q`` (both operands exact)."""
    return abs(p) <= EXACT_INTEGER and 0 < q <= EXACT_INTEGER


def value_literal(x: float) -> str:
    """Return a value (start, parameter, nominal) as its full-precision literal; ExportError if it is not finite."""
    value = float(x)
    if not math.isfinite(value):
        raise ExportError(f"the value {value} (a start, nominal or parameter value) is not a finite number; give "
                          "every value as a finite number")
    return repr(value + 0.0)  # -0.0 + 0.0 is 0.0: never start=-0.0
