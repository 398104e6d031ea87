"""Printing sympy expressions as Modelica, and the numbers both code printers share.

``^`` for powers (with Modelica's precedence: unary minus binds weaker than ``^``), ``time`` for t,
``der(...)`` for time derivatives only, Modelica's built-in functions, and a symbol map that turns the
bridge's symbols (``der(x)``, ``der(der(x))``, ``lambda[k]``) into model variables.

Every number means exactly what the sympy number means: the nearest double ``round(x)`` of its exact
value, printed with ``repr`` (the shortest text that reads back as the same double); an integer or
rational whose numerator and denominator are exact doubles (``|p|, q <= 2^53``) may be printed as the
division ``p.0/q.0``, which IEEE arithmetic rounds to the same ``round(p/q)``. Named constants (pi, E,
EulerGamma, ...) become literals at full precision. A number outside the doubles (``|x| > 1.8e308``, or a
nonzero one that rounds to 0) is an :class:`ExportError` naming it and the expression, never ``inf``.

Identifiers that Modelica reserves (keywords, predefined types, the built-in functions the printer
calls) are quoted (``'Real'``), the same way in declarations (:func:`modelica_ident`) and equations.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

import sympy as sp
from sympy.printing.codeprinter import CodePrinter, PrintMethodNotImplementedError
from sympy.printing.precedence import PRECEDENCE, precedence

from ..errors import ExportError
from ..model import symbols as S
from ..model.loader import MODELICA_KEYWORDS

KNOWN_FUNCTIONS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log",
    "sqrt": "sqrt", "Abs": "abs", "sign": "sign", "Min": "min", "Max": "max",
}
#: Modelica's predefined types and the names the printed text calls or refers to
PREDEFINED = frozenset({"Real", "Integer", "Boolean", "String", "StateSelect", "ExternalObject", "AssertionLevel",
                        "Clock", "Connections", "Modelica", "der", "time", "noEvent", *KNOWN_FUNCTIONS.values()})
RESERVED = frozenset(MODELICA_KEYWORDS) | PREDEFINED
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")

#: integers up to 2^53 are exact doubles
EXACT_INTEGER = 2**53


# -- numbers (shared with the C printer) ------------------------------------------------------------------
def short(expr, limit: int = 160) -> str:
    """Return ``expr`` as short text for a message: long numbers in scientific notation, the whole cut at ``limit``."""
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
        elif number.is_NumberSymbol:
            value = float(number.evalf(40))
        elif number.is_number and number.is_extended_real is not False and number.is_finite is not False:
            value = float(number.evalf(40))
    except (OverflowError, TypeError):
        value = math.inf
    if math.isfinite(value) and (value != 0.0 or number.is_zero):
        return value
    where = f" in {short(context)}" if context is not None and sp.sympify(context) != number else ""
    if math.isfinite(value) or number.is_finite and number.is_extended_real:
        what = "is too large for a double (largest about 1.8e308)" if not math.isfinite(value) else \
            "is too small for a double (it would round to 0; smallest about 4.9e-324)"
        hint = ("rescale the system (other units, or a scale factor folded into a parameter) so that every "
                "constant lies between about 1e-300 and 1e300")
    else:
        what, hint = "is not a finite real number", "remove it from the equations"
    raise ExportError(f"the number {short(number)}{where} {what}; generated code could not mean the same value: "
                      f"{hint}")


def double_literal(number, context=None) -> str:
    """Return ``repr`` of the nearest double: the shortest decimal that reads back as the same double."""
    return repr(nearest_double(number, context))


def exact_division(p: int, q: int) -> bool:
    """Return whether ``p.0/q.0`` in double arithmetic gives the nearest double of ``p/q`` (both operands exact)."""
    return abs(p) <= EXACT_INTEGER and 0 < q <= EXACT_INTEGER


def modelica_ident(name: str) -> str:
    """Return ``name`` as a Modelica identifier: as is, or quoted (``'Real'``) when Modelica reserves it."""
    if _PLAIN.match(name) and name not in RESERVED:
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- the printer ----------------------------------------------------------------------------------------
class CheckedPrinter:
    """Printer mixin (shared with the C printer).

    What the target language cannot mean the same way is an :class:`ExportError` naming the expression, and
    ``self._context`` holds the expression being printed.
    """

    language = "Modelica"

    def doprint(self, expr, assign_to=None):
        """Return the text of ``expr`` in :attr:`language`."""
        self._context = expr
        try:
            return super().doprint(expr, assign_to)
        except PrintMethodNotImplementedError as exc:
            what = str(exc).splitlines()[0].rsplit(": ", 1)[-1]
            raise ExportError(f"{short(expr)} cannot be written in {self.language}: it contains {what}, which has "
                              f"no {self.language} equivalent; use the functions of the system-file language only"
                              ) from exc


class ModelicaCodePrinter(CheckedPrinter, CodePrinter):
    """Modelica 3 expression printer."""

    printmethod = "_modelica"
    language = "Modelica"
    _default_settings = dict(CodePrinter._default_settings, precision=17, user_functions={}, contract=False,
                             strict=True)
    reserved_words = set(RESERVED)

    def __init__(self, names: Mapping[sp.Symbol, str] | None = None, settings: dict | None = None):
        super().__init__(settings or {})
        self.known_functions = dict(KNOWN_FUNCTIONS)
        self.names = dict(names or {})
        self._context = None

    # -- atoms ---------------------------------------------------------------------
    def _print_Symbol(self, expr: sp.Symbol) -> str:
        if expr in self.names:
            return self.names[expr]
        if expr == S.t:
            return "time"
        return modelica_ident(expr.name)

    def _print_Integer(self, expr) -> str:
        # Modelica's Integer has 32 bits; beyond, the nearest Real
        return str(int(expr)) if abs(int(expr)) < 2**31 else double_literal(expr, self._context)

    def _print_Rational(self, expr) -> str:
        p, q = int(expr.p), int(expr.q)
        if q == 1:
            return self._print_Integer(sp.Integer(p))
        text = double_literal(expr, self._context)
        if sp.Rational(text) == expr:
            return text  # an exact decimal (0.3, 1e-05)
        return f"{p}.0/{q}.0" if exact_division(p, q) else text

    def _print_Float(self, expr) -> str:
        return double_literal(expr, self._context)

    def _print_NumberSymbol(self, expr) -> str:
        return double_literal(expr, self._context)

    def _print_Pi(self, expr) -> str:
        return "Modelica.Constants.pi" if self._settings.get("msl") else double_literal(expr, self._context)

    _print_Exp1 = _print_EulerGamma = _print_Catalan = _print_GoldenRatio = _print_NumberSymbol
    _print_TribonacciConstant = _print_NumberSymbol

    def _not_a_real(self, expr) -> str:
        return double_literal(expr, self._context)  # raises: no finite real

    _print_Infinity = _print_NegativeInfinity = _print_ComplexInfinity = _print_NaN = _not_a_real
    _print_ImaginaryUnit = _not_a_real

    def _print_BooleanTrue(self, expr) -> str:
        return "true"

    def _print_BooleanFalse(self, expr) -> str:
        return "false"

    # -- operators -------------------------------------------------------------------
    def _print_Pow(self, expr) -> str:
        prec = precedence(expr)
        base, exp = expr.base, expr.exp
        if exp == sp.S.Half:
            return f"sqrt({self._print(base)})"
        if exp == -sp.S.Half:
            return f"1.0/sqrt({self._print(base)})"
        if exp == -1:
            return f"1.0/{self.parenthesize(base, PRECEDENCE['Mul'])}"
        if exp.is_Integer and exp < 0:
            return f"1.0/{self.parenthesize(base, prec, strict=True)}^{self._print(-exp)}"
        b = self.parenthesize(base, prec, strict=True)
        e = self._print(exp)
        if not (exp.is_Atom and (exp.is_Integer and exp >= 0 or exp.is_Symbol)):
            e = f"({e})"
        return f"{b}^{e}"

    def _print_Mul(self, expr) -> str:
        # Modelica has no unary minus inside a product operand: -a*b prints as -(a*b)
        coeff, rest = expr.as_coeff_Mul()
        if coeff.is_negative:
            inner = self._print(-expr)
            return f"-{inner}" if precedence(-expr) >= PRECEDENCE["Mul"] else f"-({inner})"
        return super()._print_Mul(expr)

    def _print_Derivative(self, expr) -> str:
        """Print ``der(...)``: a derivative with respect to time only (a partial derivative has no Modelica text)."""
        if any(v != S.t for v, _ in expr.variable_count):
            raise ExportError(f"the derivative {short(expr)} is not with respect to time and cannot be written "
                              "in Modelica; the equations must not contain unevaluated partial derivatives")
        inner = self._print(expr.expr)
        for _ in range(sum(n for _, n in expr.variable_count)):
            inner = f"der({inner})"
        return inner

    def _print_sign(self, expr) -> str:
        """Print sign(x) as an if-expression: Modelica's sign(0) is 0 too, but Rumoca 0.9 returns 1 there."""
        x = self._print(expr.args[0])
        return f"(if {x} > 0 then 1.0 else if {x} < 0 then -1.0 else 0.0)"

    def _print_Heaviside(self, expr) -> str:
        """Print H(x) = 1 for x > 0, 0 for x < 0 and H0 (sympy's second argument, 1/2 by default) at 0."""
        x = self._print(expr.args[0])
        h0 = self._print(expr.args[1] if len(expr.args) > 1 else sp.S.Half)
        return f"(if {x} > 0 then 1.0 else if {x} < 0 then 0.0 else {h0})"

    def _print_Min(self, expr) -> str:
        return self._fold("min", expr.args)

    def _print_Max(self, expr) -> str:
        return self._fold("max", expr.args)

    def _fold(self, name: str, args) -> str:
        out = self._print(args[0])
        for a in args[1:]:
            out = f"{name}({out}, {self._print(a)})"
        return out

    def _print_Piecewise(self, expr) -> str:
        if expr.args[-1].cond != sp.true:
            raise ExportError(f"the piecewise expression {short(expr)} has no otherwise branch (it is undefined "
                              "where no condition holds) and cannot be written in Modelica")
        parts = []
        for e, c in expr.args:
            if c == sp.true:
                parts.append(self._print(e))
                break
            parts.append(f"if {self._print(c)} then {self._print(e)} else ")
        return "(" + "".join(parts) + ")"

    # -- relations and logic (Modelica allows == and <> on Reals only inside functions) --------------------
    def _print_Relational(self, expr) -> str:
        lhs = self.parenthesize(expr.lhs, PRECEDENCE["Add"])
        rhs = self.parenthesize(expr.rhs, PRECEDENCE["Add"])
        if expr.rel_op == "==":
            return f"({lhs} >= {rhs} and {lhs} <= {rhs})"
        if expr.rel_op == "!=":
            return f"({lhs} < {rhs} or {lhs} > {rhs})"
        return f"{lhs} {expr.rel_op} {rhs}"

    def _print_And(self, expr) -> str:
        return "(" + " and ".join(self._print(a) for a in sorted(expr.args, key=str)) + ")"

    def _print_Or(self, expr) -> str:
        return "(" + " or ".join(self._print(a) for a in sorted(expr.args, key=str)) + ")"

    def _print_Not(self, expr) -> str:
        return f"(not {self._print(expr.args[0])})"

    def _format_code(self, lines):
        return lines

    def _get_statement(self, codestring: str) -> str:
        return f"{codestring};"

    def _get_comment(self, text: str) -> str:
        return f"// {text}"

    def _declare_number_const(self, name, value):
        return f"constant Real {name} = {value};"

    def _traverse_matrix_indices(self, mat):
        rows, cols = mat.shape
        return ((i, j) for i in range(rows) for j in range(cols))


def modelica_code(expr, names: Mapping[sp.Symbol, str] | None = None) -> str:
    """Return the Modelica text of ``expr``.

    Parameters
    ----------
    expr : sympy.Expr
        The expression.
    names : mapping of sympy.Symbol to str, optional
        Modelica names of symbols (default: the symbols' own names).

    Returns
    -------
    str
        The Modelica text.
    """
    return ModelicaCodePrinter(names).doprint(expr)
