"""C text straight from symengine expressions, with the rules of :class:`~bridge.codegen.c.NhbCPrinter`.

The joint CSE pass of the generated C runs in symengine (:func:`bridge.codegen.c.cse_block`); its temporaries and
reduced expressions print here without a conversion back to sympy. Sums, products, powers, numbers and the
elementary functions print as sympy's C99 printer prints them (``pow(x, 2)``, ``sqrt``, ``exp``, ``1.0/x``,
denominators gathered after ``/``, a leading ``-``, the same parentheses); integers below 2^31 as ``int``
literals, rationals as ``p.0/q.0`` (or the nearest double), floats with ``repr``, an identically zero expression
as ``0``. A sum's terms and a product's factors keep symengine's order (deterministic: it depends on the
expressions alone), so C may round in another order than the sympy printer's. Every other node (a ``Piecewise``,
``sign``, a named constant, ...) is converted to sympy on its own and printed by the sympy printer.
"""

from __future__ import annotations

import math

import symengine as se
import sympy as sp

from .numbers import double_literal

#: sympy's precedences (:mod:`sympy.printing.precedence`) of what this printer writes
_ADD, _MUL, _POW, _FUNC, _ATOM = 40, 50, 60, 70, 1000
#: the precedence that puts a product's only factor in parentheses after a unary minus (sympy's rule)
_UNARY = 0.5 * (_POW + _MUL)

#: symengine functions of one or two arguments and their C99 names (as sympy's C99 printer spells them)
C_FUNCTIONS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan", "atan2": "atan2",
    "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh", "acosh": "acosh", "atanh": "atanh",
    "log": "log", "Abs": "fabs", "floor": "floor", "ceiling": "ceil",
}


class SymengineCPrinter:
    """Print symengine expressions as C; what it does not handle goes to ``printer`` (a sympy C printer).

    Parameters
    ----------
    printer : NhbCPrinter
        The sympy printer: its ``names`` give the C names of the symbols, and it prints the nodes this class
        does not handle.
    """

    def __init__(self, printer):
        self.printer = printer
        self.names: dict[se.Basic, str] = {}
        for sym, name in printer.names.items():
            try:
                self.names[se.sympify(sym)] = name
            except (TypeError, ValueError, NotImplementedError, RuntimeError, AttributeError, se.SympifyError):
                continue  # not a symengine symbol: the sympy printer names it

    def name(self, sym: se.Basic, name: str) -> None:
        """Give the symbol ``sym`` (a CSE temporary) the C name ``name``, here and in the sympy printer."""
        self.names[sym] = name
        self.printer.names[sp.Symbol(str(sym))] = name

    def doprint(self, expr: se.Basic) -> str:
        """Return the C text of ``expr``."""
        return self._print(expr)[0]

    # -- dispatch: every method returns the text and its precedence --------------------------------------
    def _print(self, expr) -> tuple[str, float]:
        kind = type(expr).__name__
        if expr.is_Symbol and expr in self.names:
            return self.names[expr], _ATOM
        if expr.is_Integer:
            return self._integer(int(expr))
        if expr.is_Rational:
            return self._rational(int(expr.p), int(expr.q))
        if kind == "RealDouble":
            value = float(expr)
            if math.isfinite(value):
                return repr(value), (_ADD if value < 0 else _ATOM)
        elif kind == "Add":
            return self._add(expr), _ADD
        elif kind == "Mul":
            return self._mul(expr)
        elif kind == "Pow":
            return self._pow(expr)
        elif kind in C_FUNCTIONS and len(expr.args) == (2 if kind == "atan2" else 1):
            return f"{C_FUNCTIONS[kind]}({', '.join(self._print(a)[0] for a in expr.args)})", _FUNC
        return self._sympy(expr)

    def _sympy(self, expr) -> tuple[str, float]:
        """Print ``expr`` through sympy (its precedence from sympy's rules)."""
        from sympy.printing.precedence import precedence

        converted = sp.sympify(expr)
        return self.printer.doprint(converted), precedence(converted)

    def _paren(self, expr, level: float) -> str:
        text, prec = self._print(expr)
        return f"({text})" if prec < level else text

    # -- numbers -----------------------------------------------------------------------------------------
    def _integer(self, value: int) -> tuple[str, float]:
        if abs(value) < 2**31:
            return str(value), (_ADD if value < 0 else _ATOM)
        return double_literal(sp.Integer(value)), (_ADD if value < 0 else _ATOM)

    def _rational(self, p: int, q: int) -> tuple[str, float]:
        text = self.printer._print_Rational(sp.Rational(p, q))
        return text, (_ADD if p < 0 else _MUL)

    # -- sums, products, powers --------------------------------------------------------------------------
    def _add(self, expr) -> str:
        out: list[str] = []
        for term in expr.args:
            text, prec = self._print(term)
            if text.startswith("-") and not term.is_Add:
                sign, text = "-", text[1:]
            else:
                sign = "+"
            out += [sign, f"({text})" if prec < _ADD or term.is_Add else text]
        sign = out.pop(0)
        return ("" if sign == "+" else sign) + " ".join(out)

    def _mul(self, expr) -> tuple[str, float]:
        args = list(expr.args)
        coefficient = args[0] if args[0].is_Number else None
        sign = ""
        if coefficient is not None and _negative(coefficient):
            sign = "-"
            args[0] = -coefficient
            if args[0] == 1:
                args = args[1:]
        numerator, denominator = [], []
        for factor in args:
            exp = factor.args[1] if factor.is_Pow else None
            if exp is not None and exp.is_Rational and _negative(exp) and not _is_e(factor.args[0]):
                base = factor.args[0]
                denominator.append(base if exp == -1 else se.Pow(base, -exp))
            else:
                numerator.append(factor)
        numerator = numerator or [se.Integer(1)]
        if len(numerator) == 1 and sign == "-":
            a = [self._paren(numerator[0], _UNARY)]
        else:
            a = [self._paren(f, _MUL) for f in numerator]
        b = [f"({self._print(f)[0]})" if f.is_Mul else self._paren(f, _MUL) for f in denominator]
        text = sign + "*".join(a)
        if len(b) == 1:
            text += "/" + b[0]
        elif b:
            text += "/(" + "*".join(b) + ")"
        return text, (_ADD if sign else _MUL)

    def _pow(self, expr) -> tuple[str, float]:
        base, exp = expr.args
        if _is_e(base):
            return f"exp({self._print(exp)[0]})", _FUNC
        if exp == -1:
            return f"1.0/{self._paren(base, _POW)}", _POW
        if exp == se.Rational(1, 2):
            return f"sqrt({self._print(base)[0]})", _FUNC
        if exp == se.Rational(1, 3):  # x^(1/3) is not cbrt(x) for x < 0 (sympy: principal root)
            return f"pow({self._print(base)[0]}, 1.0/3.0)", _FUNC
        return f"pow({self._print(base)[0]}, {self._print(exp)[0]})", _FUNC


def _negative(number) -> bool:
    """Whether the symengine number ``number`` is a negative real."""
    return bool(number.is_Number and number.is_negative)


def _is_e(expr) -> bool:
    """Whether ``expr`` is Euler's number (symengine writes ``exp(x)`` as ``E**x``)."""
    return type(expr).__name__ == "Exp1"
