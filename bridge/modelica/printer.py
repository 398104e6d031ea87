"""Printing sympy expressions as Modelica.

``^`` for powers (with Modelica's precedence: unary minus binds weaker than ``^``), ``time`` for t,
``der(...)`` for derivatives, Modelica's built-in functions, rationals as full-precision reals,
and a symbol map that turns the bridge's symbols (``der(x)``, ``der(der(x))``, ``lambda[k]``) into
model variables. Names that are Modelica reserved words are renamed consistently.
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy as sp
from sympy.printing.codeprinter import CodePrinter
from sympy.printing.precedence import PRECEDENCE, precedence

from ..model import symbols as S
from ..model.loader import MODELICA_KEYWORDS

KNOWN_FUNCTIONS = {
    "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos", "atan": "atan",
    "atan2": "atan2", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "exp": "exp", "log": "log",
    "sqrt": "sqrt", "Abs": "abs", "sign": "sign", "Min": "min", "Max": "max",
}


class ModelicaCodePrinter(CodePrinter):
    """Modelica 3 expression printer."""

    printmethod = "_modelica"
    language = "Modelica"
    _default_settings = dict(CodePrinter._default_settings, precision=17, user_functions={}, contract=False,
                             strict=True)
    reserved_words = set(MODELICA_KEYWORDS)

    def __init__(self, names: Mapping[sp.Symbol, str] | None = None, settings: dict | None = None):
        super().__init__(settings or {})
        self.known_functions = dict(KNOWN_FUNCTIONS)
        self.names = dict(names or {})

    # -- atoms ---------------------------------------------------------------------
    def _print_Symbol(self, expr: sp.Symbol) -> str:
        if expr in self.names:
            return self.names[expr]
        if expr == S.t:
            return "time"
        name = expr.name
        return name + "_" if name in self.reserved_words else name

    def _print_Integer(self, expr) -> str:
        return str(int(expr)) if abs(int(expr)) < 2**31 else repr(float(expr))

    def _print_Rational(self, expr) -> str:
        p, q = int(expr.p), int(expr.q)
        if q == 1:
            return self._print_Integer(sp.Integer(p))
        value = p / q
        if float(sp.Rational(repr(value))) == value and sp.Rational(repr(value)) == expr:
            return repr(value)  # an exact decimal (0.3, 1e-05)
        return f"{p}.0/{q}.0"

    def _print_Float(self, expr) -> str:
        return repr(float(expr))

    def _print_Pi(self, expr) -> str:
        return "Modelica.Constants.pi" if self._settings.get("msl") else "3.141592653589793"

    def _print_Exp1(self, expr) -> str:
        return "exp(1.0)"

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
        inner = self._print(expr.expr)
        for _ in range(sum(n for _, n in expr.variable_count)):
            inner = f"der({inner})"
        return inner

    def _print_sign(self, expr) -> str:
        return f"sign({self._print(expr.args[0])})"

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
        parts = []
        for e, c in expr.args:
            if c == sp.true:
                parts.append(self._print(e))
                break
            parts.append(f"if {self._print(c)} then {self._print(e)} else ")
        return "(" + "".join(parts) + ")"

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
    return ModelicaCodePrinter(names).doprint(expr)
