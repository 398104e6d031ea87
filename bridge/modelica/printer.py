"""Printing sympy expressions as Modelica (the numbers both code printers share: :mod:`bridge.codegen.numbers`).

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

from collections.abc import Mapping
from typing import Any, ClassVar

import sympy as sp
from sympy.printing.codeprinter import CodePrinter
from sympy.printing.precedence import PRECEDENCE, precedence

from ..codegen.numbers import EXACT_INTEGER, double_literal, exact_division, nearest_double, short  # noqa: F401
from ..codegen.printer import PLAIN_IDENTIFIER, CheckedPrinter
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



def modelica_ident(name: str) -> str:
    """``name`` as a Modelica identifier: as is, or quoted (``'Real'``) when Modelica reserves it."""
    if PLAIN_IDENTIFIER.match(name) and name not in RESERVED:
        return name
    return "'" + name.replace("\\", "\\\\").replace("'", "\\'") + "'"


# -- the printer ----------------------------------------------------------------------------------------
class ModelicaCodePrinter(CheckedPrinter, CodePrinter):
    """Modelica 3 expression printer."""

    printmethod = "_modelica"
    language = "Modelica"
    _default_settings: ClassVar[dict[str, Any]] = dict(CodePrinter._default_settings, precision=17, user_functions={},
                                                       contract=False, strict=True)
    reserved_words: ClassVar[set[str]] = set(RESERVED)

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
        if not (exp.is_Atom and ((exp.is_Integer and exp >= 0) or exp.is_Symbol)):
            e = f"({e})"
        return f"{b}^{e}"

    def _print_Mul(self, expr) -> str:
        # Modelica has no unary minus inside a product operand: -a*b prints as -(a*b)
        coeff, _rest = expr.as_coeff_Mul()
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
