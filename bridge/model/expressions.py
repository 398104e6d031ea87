"""Whitelisting parser for the expression language of system files.

Grammar (precedence climbing, ``^`` and ``**`` right-associative, binding tighter than unary minus)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/") unary)*
    unary  := ("+" | "-") unary | power
    power  := atom (("^" | "**") unary)?
    atom   := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"

Only ASCII digits, letters, ``_``, the operators and white space belong to the language.
Names are resolved by the caller; nothing is ever passed to ``eval`` or ``sympify``.
Numbers become exact rationals so that printed values keep full precision.

The work a file can cause is bounded: a literal has at most :data:`MAX_DIGITS` digits and a magnitude
in [1e-300, 1e300]; every constant subexpression is evaluated alongside (30 digits) and must be a finite
real number of magnitude <= 1e300 whose exact form needs at most :data:`MAX_BITS` bits; a power is
estimated before it is computed; and every expression, with definitions substituted, has at most
:data:`MAX_TREE_SIZE` nodes counted as a tree (shared subexpressions count each time they occur).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import sympy as sp

MAX_LENGTH = 200_000
MAX_DEPTH = 100
MAX_EXPONENT = 1000
MAX_DIGITS = 100            # significant digits of a literal
MAX_MAGNITUDE_EXP10 = 300   # every constant lies in [1e-300, 1e300] (or is zero)
MAX_BITS = 4096             # numerator and denominator of an exact constant
MAX_TREE_SIZE = 50_000      # nodes of one expression with definitions substituted

FUNCTIONS: dict[str, tuple[Callable[..., sp.Expr], int, int]] = {
    # name: (constructor, min arity, max arity)
    "sin": (sp.sin, 1, 1),
    "cos": (sp.cos, 1, 1),
    "tan": (sp.tan, 1, 1),
    "asin": (sp.asin, 1, 1),
    "acos": (sp.acos, 1, 1),
    "atan": (sp.atan, 1, 1),
    "atan2": (lambda y, x: sp.atan2(y, x), 2, 2),
    "sinh": (sp.sinh, 1, 1),
    "cosh": (sp.cosh, 1, 1),
    "tanh": (sp.tanh, 1, 1),
    "exp": (sp.exp, 1, 1),
    "log": (sp.log, 1, 1),
    "sqrt": (sp.sqrt, 1, 1),
    "abs": (sp.Abs, 1, 1),
    "sign": (sp.sign, 1, 1),
    "min": (sp.Min, 2, 64),
    "max": (sp.Max, 2, 64),
}
SPECIAL_NAMES = ("t", "pi", "der")

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),])
    """,
    re.VERBOSE | re.ASCII,
)
_NUMBER = re.compile(r"([0-9]*)\.?([0-9]*)(?:[eE]([+-]?[0-9]+))?\Z", re.ASCII)

#: constant values are computed alongside with 30 significant digits
_MP = mpmath.MPContext()
_MP.dps = 30
_MP_FUNCTIONS: dict[str, Callable[..., object]] = {
    "sin": _MP.sin, "cos": _MP.cos, "tan": _MP.tan, "asin": _MP.asin, "acos": _MP.acos, "atan": _MP.atan,
    "sinh": _MP.sinh, "cosh": _MP.cosh, "tanh": _MP.tanh, "exp": _MP.exp, "log": _MP.log, "sqrt": _MP.sqrt,
    "abs": _MP.fabs, "sign": _MP.sign, "min": min, "max": max,
}
_NOT_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan, sp.I)


class ExpressionError(Exception):
    """A parse error at a character position of the expression text."""

    def __init__(self, message: str, position: int | None = None, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint


@dataclass(frozen=True)
class Token:
    """One token of an expression: its kind, its text and its position in the expression."""

    kind: str
    text: str
    pos: int


@dataclass(frozen=True)
class Node:
    """A parsed subexpression: its sympy form, its size as a tree and, when constant, its value."""

    expr: sp.Expr
    size: int
    value: Any = None  # an mpmath real when the subexpression is constant


def tokenize(text: str) -> list[Token]:
    """Split an expression into tokens (whitespace dropped), ending with an ``end`` token.

    Parameters
    ----------
    text : str
        The expression text.

    Returns
    -------
    list of Token
        The tokens.

    Raises
    ------
    ExpressionError
        When the text is too long or holds a character the grammar does not allow.
    """
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise _bad_character(text, pos)
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, m.group(), pos))
        pos = m.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def _bad_character(text: str, pos: int) -> ExpressionError:
    ch = text[pos]
    if not ch.isascii():
        return ExpressionError(f"character {ch!r} (U+{ord(ch):04X}) is not part of the expression language "
                               "(non-ASCII)", pos,
                               "use ASCII digits, letters and operators only, e.g. theta instead of \u03b8")
    if ch in "'\"":
        return ExpressionError("string literals are not allowed in expressions", pos)
    if not ch.isprintable():
        return ExpressionError(f"control character U+{ord(ch):04X} is not allowed in expressions", pos,
                               "remove it")
    return ExpressionError(f"character {ch!r} is not allowed in expressions", pos,
                           "allowed: numbers, names, + - * / ^ ** ( ) and commas")


def number_value(text: str) -> sp.Rational:
    """Return the exact value of a decimal literal, bounded before it is converted."""
    m = _NUMBER.match(text)
    if m is None:
        raise ExpressionError(f"malformed number {text!r}")
    whole, frac, exp_text = m.group(1), m.group(2), m.group(3) or "0"
    digits = (whole + frac).lstrip("0")
    if len(digits.rstrip("0")) > MAX_DIGITS:
        raise ExpressionError(f"number {_short(text)} has more than {MAX_DIGITS} significant digits",
                              hint="round it; computations use double precision (about 16 digits)")
    if len(exp_text.lstrip("+-").lstrip("0")) > 6:
        raise ExpressionError(f"number {_short(text)} is out of range (its exponent is too large)",
                              hint=f"numbers lie between 1e-{MAX_MAGNITUDE_EXP10} and 1e{MAX_MAGNITUDE_EXP10}")
    if not digits:
        return sp.Integer(0)
    # decimal exponent of the leading digit: digits[0] * 10^lead
    lead = int(exp_text) + len(whole.lstrip("0")) - 1 if whole.lstrip("0") else \
        int(exp_text) - (len(frac) - len(frac.lstrip("0"))) - 1
    if not -MAX_MAGNITUDE_EXP10 - 1 <= lead <= MAX_MAGNITUDE_EXP10:
        raise ExpressionError(f"number {_short(text)} is {'too large' if lead > 0 else 'too small'}",
                              hint=f"numbers lie between 1e-{MAX_MAGNITUDE_EXP10} and 1e{MAX_MAGNITUDE_EXP10}")
    value = Fraction(text.replace("E", "e"))
    return _check_rational(sp.Rational(value.numerator, value.denominator), f"number {_short(text)}")


def literal_value(value: int | float) -> sp.Rational:
    """Return a number given directly (a TOML integer or float) as an exact rational, bounded like a literal."""
    if isinstance(value, int) and abs(value).bit_length() > MAX_BITS:
        raise ExpressionError("the number is too large", hint=f"numbers lie between 1e-{MAX_MAGNITUDE_EXP10} "
                              f"and 1e{MAX_MAGNITUDE_EXP10}")
    magnitude = number_value(repr(abs(float(value))) if isinstance(value, float) else str(abs(value)))
    return -magnitude if value < 0 else magnitude


def _short(text: str) -> str:
    return text if len(text) <= 24 else text[:20] + "..."


def _check_rational(r: sp.Rational, what: str, pos: int | None = None) -> sp.Rational:
    """Check the magnitude in [1e-300, 1e300] (or zero) and at most MAX_BITS bits in numerator and denominator."""
    p, q = abs(int(r.p)), int(r.q)
    if p == 0:
        return r
    if p.bit_length() > MAX_BITS or q.bit_length() > MAX_BITS:
        raise ExpressionError(f"{what} needs more than {MAX_BITS} bits as an exact fraction", pos,
                              "write the constant as a decimal number")
    limit = 10**MAX_MAGNITUDE_EXP10
    if p > limit * q:
        raise ExpressionError(f"{what} is too large (above 1e{MAX_MAGNITUDE_EXP10})", pos,
                              "rescale the units of the model")
    if p * limit < q:
        raise ExpressionError(f"{what} is too small (below 1e-{MAX_MAGNITUDE_EXP10}, but not zero)", pos,
                              "rescale the units of the model")
    return r


def _finite_real(value, what: str, pos: int | None):
    """Return ``value`` (mpmath) as a real number, or an error when it is not a finite real of magnitude <= 1e300."""
    if isinstance(value, _MP.mpc):
        if abs(value.imag) > 1e-20 * max(1, abs(value.real)):
            raise ExpressionError(f"{what} is not a real number (it is {_MP.nstr(value, 6)})", pos,
                                  "check the argument's domain (log and sqrt of negatives, asin/acos beyond 1)")
        value = value.real
    if not _MP.isfinite(value):
        raise ExpressionError(f"{what} is not a finite number", pos, "check for a division by zero or a pole")
    if abs(value) > _MP.mpf(10) ** MAX_MAGNITUDE_EXP10:
        raise ExpressionError(f"{what} is too large (above 1e{MAX_MAGNITUDE_EXP10})", pos,
                              "rescale the units of the model")
    return value


def tree_size(expr: sp.Basic, cap: int = MAX_TREE_SIZE) -> int:
    """Count the nodes of ``expr`` as a tree (a shared subexpression at each occurrence), up to ``cap + 1``."""
    count, stack = 0, [expr]
    while stack and count <= cap:
        e = stack.pop()
        count += 1
        stack.extend(e.args)
    return count


class Parser:
    """Recursive-descent parser; ``resolve(name, pos)`` maps names, ``der(expr, pos)`` differentiates."""

    def __init__(self, text: str, resolve: Callable[[str, int], sp.Expr],
                 der: Callable[[sp.Expr, int], sp.Expr]):
        self.text = text
        self.tokens = tokenize(text)
        self.i = 0
        self.depth = 0
        self.resolve = resolve
        self.der = der

    # -- helpers -------------------------------------------------------
    @property
    def tok(self) -> Token:
        """The current token."""
        return self.tokens[self.i]

    def advance(self) -> Token:
        """Return the current token and move to the next one."""
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> Token:
        """Consume the token ``text``.

        Parameters
        ----------
        text : str
            The expected token text.

        Returns
        -------
        Token
            The consumed token.

        Raises
        ------
        ExpressionError
            When the current token is another one.
        """
        if self.tok.text != text:
            found = repr(self.tok.text) if self.tok.kind != "end" else "the end of the expression"
            raise ExpressionError(f"expected {text!r} but found {found}", self.tok.pos)
        return self.advance()

    def enter(self) -> None:
        """Enter a nesting level.

        Raises
        ------
        ExpressionError
            When the expression is nested deeper than ``MAX_DEPTH``.
        """
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression is nested too deep (more than {MAX_DEPTH} levels)",
                                  self.tok.pos, "split it with [definitions]")

    def node(self, expr: sp.Expr, size: int, value, what: str, pos: int | None) -> Node:
        """Check a new subexpression: bounded size; a constant is a finite real; folded numbers are bounded."""
        if size > MAX_TREE_SIZE:
            raise ExpressionError(f"expression is too large (more than {MAX_TREE_SIZE} operations with "
                                  "definitions substituted)", pos,
                                  "simplify it or split the model; definitions used many times multiply the size")
        parts = (expr, *expr.args[:2]) if expr.is_Add or expr.is_Mul else (expr, *expr.args[:64])
        for part in parts:  # sympy folds numbers into the first arguments of a sum or product
            if part is sp.I:
                raise ExpressionError(f"{what} is not a real number (it is {_short(str(expr))})", pos,
                                      "check the argument's domain (log and sqrt of negatives, asin/acos beyond 1)")
            if any(part is bad for bad in _NOT_FINITE):
                raise ExpressionError(f"{what} is not a finite number ({part})", pos,
                                      "check for a division by zero or a pole")
            if isinstance(part, sp.Rational):
                _check_rational(part, "a constant", pos)
        if value is not None:
            value = _finite_real(value, what, pos)
        return Node(expr, size, value)

    def leaf(self, expr: sp.Expr, pos: int) -> Node:
        """Return a resolved name: its size counted as a tree, its value when it is constant."""
        size = tree_size(expr)
        if size > MAX_TREE_SIZE:
            return self.node(expr, size, None, "the name", pos)
        value = None
        if not expr.free_symbols:
            re_, im_ = expr.evalf(30).as_real_imag()
            if not (re_.is_Number and im_.is_Number) or abs(im_) > 1e-20 * max(1, abs(re_)):
                raise ExpressionError(f"the value {_short(str(expr))} is not a finite real number", pos)
            value = _MP.mpf(str(re_))
        return self.node(expr, size, value, "the name's value", pos)

    # -- grammar -------------------------------------------------------
    def parse(self) -> sp.Expr:
        """Parse the whole expression.

        Returns
        -------
        sympy.Expr
            The expression.

        Raises
        ------
        ExpressionError
            When the expression is empty, malformed, or has text after its end.
        """
        if self.tok.kind == "end":
            raise ExpressionError("expression is empty", 0, 'write "0" for a zero expression')
        node = self.expr()
        if self.tok.kind != "end":
            raise ExpressionError(f"unexpected {self.tok.text!r}", self.tok.pos)
        return node.expr

    def expr(self) -> Node:
        """Parse a sum: ``term (("+" | "-") term)*``."""
        self.enter()
        left = self.term()
        while self.tok.text in ("+", "-"):
            op = self.advance()
            right = self.term()
            value = None if left.value is None or right.value is None else \
                left.value + right.value if op.text == "+" else left.value - right.value
            expr = left.expr + right.expr if op.text == "+" else left.expr - right.expr
            left = self.node(expr, left.size + right.size + 1, value, "the sum", op.pos)
        self.depth -= 1
        return left

    def term(self) -> Node:
        """Parse a product: ``unary (("*" | "/") unary)*`` (a division by a zero constant is refused)."""
        left = self.unary()
        while self.tok.text in ("*", "/"):
            op = self.advance()
            right = self.unary()
            if op.text == "/" and (right.expr == 0 or (right.value is not None and right.value == 0)):
                raise ExpressionError("division by zero", op.pos)
            value = None if left.value is None or right.value is None else \
                left.value / right.value if op.text == "/" else left.value * right.value
            self._check_product(left, right, op)
            expr = left.expr / right.expr if op.text == "/" else left.expr * right.expr
            left = self.node(expr, left.size + right.size + 1, value,
                             "the quotient" if op.text == "/" else "the product", op.pos)
        return left

    @staticmethod
    def _check_product(left: Node, right: Node, op: Token) -> None:
        """Refuse a product of exact numbers before computing what would exceed the bounds."""
        if isinstance(left.expr, sp.Rational) and isinstance(right.expr, sp.Rational):
            bits = max(abs(int(left.expr.p)).bit_length(), int(left.expr.q).bit_length()) + \
                max(abs(int(right.expr.p)).bit_length(), int(right.expr.q).bit_length())
            if bits > 2 * MAX_BITS:
                raise ExpressionError("the product of exact constants is too large", op.pos)

    def unary(self) -> Node:
        """Parse a signed factor: ``("+" | "-") unary | power``."""
        if self.tok.text in ("+", "-"):
            self.enter()
            op = self.advance()
            operand = self.unary()
            self.depth -= 1
            if op.text == "+":
                return operand
            value = None if operand.value is None else -operand.value
            return self.node(-operand.expr, operand.size + 1, value, "the negation", op.pos)
        return self.power()

    def power(self) -> Node:
        """Parse a power: ``atom (("^" | "**") unary)?`` (a constant exponent is bounded)."""
        base = self.atom()
        if self.tok.text not in ("^", "**"):
            return base
        op = self.advance()
        self.enter()
        exponent = self.unary()
        self.depth -= 1
        if exponent.value is not None and abs(exponent.value) > MAX_EXPONENT:
            raise ExpressionError(f"exponent {exponent.expr} is too large (at most {MAX_EXPONENT})", op.pos)
        value = None
        if base.value is not None and exponent.value is not None:
            value = self._power_value(base.value, exponent.value, op.pos)
        try:
            expr = base.expr**exponent.expr
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise ExpressionError(f"the power cannot be computed ({exc})", op.pos) from exc
        return self.node(expr, base.size + exponent.size + 1, value, "the power", op.pos)

    @staticmethod
    def _power_value(b, k, pos: int):
        """Return b^k (mpmath), refused before it is computed when its magnitude would exceed 1e300."""
        if b == 0:
            if k < 0:
                raise ExpressionError("zero to a negative power (division by zero)", pos)
            return _MP.mpf(1) if k == 0 else _MP.mpf(0)
        if abs(k * _MP.log10(abs(b))) > MAX_MAGNITUDE_EXP10 + 1:
            raise ExpressionError(f"the power is {'too large' if k * _MP.log10(abs(b)) > 0 else 'too small'} "
                                  f"(beyond 1e\u00b1{MAX_MAGNITUDE_EXP10})", pos, "rescale the units of the model")
        return _MP.power(b, k) if b > 0 or k == int(k) else _MP.power(_MP.mpc(b), k)

    def atom(self) -> Node:
        """Parse an atom: a number, a parenthesized expression, a name or a function call."""
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            try:
                value = number_value(tok.text)
            except ExpressionError as exc:
                exc.position = tok.pos
                raise
            return Node(value, 1, _MP.mpf(value.p) / value.q)
        if tok.text == "(":
            self.advance()
            inner = self.expr()
            self.expect(")")
            return inner
        if tok.kind == "name":
            self.advance()
            if self.tok.text == "(":
                return self.call(tok)
            if tok.text in FUNCTIONS or tok.text == "der":
                raise ExpressionError(f"{tok.text} is a function: write {tok.text}(...)", tok.pos)
            if tok.text == "pi":
                return Node(sp.pi, 1, _MP.pi)
            if tok.text.startswith("__"):
                raise ExpressionError(f"name {tok.text!r} is not allowed", tok.pos)
            return self.leaf(self.resolve(tok.text, tok.pos), tok.pos)
        if tok.kind == "end":
            raise ExpressionError("expression ends unexpectedly", tok.pos)
        raise ExpressionError(f"unexpected {tok.text!r}", tok.pos)

    def call(self, name: Token) -> Node:
        """Parse the arguments of a call of the function ``name`` and form it.

        Parameters
        ----------
        name : Token
            The function name's token.

        Returns
        -------
        Node
            The call.

        Raises
        ------
        ExpressionError
            When the function is not allowed or takes another number of arguments.
        """
        if name.text != "der" and name.text not in FUNCTIONS:
            raise ExpressionError(
                f"unknown function {name.text!r}", name.pos,
                "allowed functions: der, " + ", ".join(FUNCTIONS))
        self.expect("(")
        self.enter()
        args = [self.expr()]
        while self.tok.text == ",":
            self.advance()
            args.append(self.expr())
        self.expect(")")
        self.depth -= 1
        if name.text == "der":
            if len(args) != 1:
                raise ExpressionError(f"der takes 1 argument, got {len(args)}", name.pos)
            return self.leaf(self.der(args[0].expr, name.pos), name.pos)
        func, lo, hi = FUNCTIONS[name.text]
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise ExpressionError(f"{name.text} takes {want} argument(s), got {len(args)}", name.pos)
        what = f"{name.text}(...)"
        if name.text == "atan2" and args[0].expr == 0 and args[1].expr == 0:
            raise ExpressionError("atan2(0, 0) is undefined", name.pos, "check the arguments")
        value = self._call_value(name, [a.value for a in args])
        try:
            expr = func(*[a.expr for a in args])
        except (ValueError, TypeError, ArithmeticError) as exc:
            raise ExpressionError(f"{what} cannot be evaluated ({exc})", name.pos) from exc
        return self.node(expr, sum(a.size for a in args) + 1, value, what, name.pos)

    @staticmethod
    def _call_value(name: Token, values: list):
        """Return the function's value when all arguments are constant; atan2(0, 0) is undefined."""
        if any(v is None for v in values):
            return None
        if name.text == "atan2":
            y, x = values
            if y == 0 and x == 0:
                raise ExpressionError("atan2(0, 0) is undefined", name.pos, "check the arguments")
            return _MP.atan2(y, x)
        if name.text == "log" and values[0] == 0:
            raise ExpressionError("log(0) is not a finite number", name.pos)
        x = values[0]
        edge = _MP.mpf(10) ** (5 - _MP.dps)  # rounding of the 30-digit values at a domain's edge
        if name.text in ("asin", "acos") and 1 < abs(x) <= 1 + edge:
            x = _MP.sign(x)
        if name.text == "sqrt" and -edge <= x < 0:
            x = _MP.mpf(0)
        try:
            if (name.text in ("log", "sqrt") and x < 0) or (name.text in ("asin", "acos") and abs(x) > 1):
                return _MP_FUNCTIONS[name.text](_MP.mpc(x))
            if len(values) == 1:
                return _MP_FUNCTIONS[name.text](x)
            return _MP_FUNCTIONS[name.text](*values)
        except (ValueError, ZeroDivisionError, OverflowError) as exc:
            raise ExpressionError(f"{name.text}(...) cannot be evaluated ({exc})", name.pos) from exc


def parse_expression(text: str, resolve: Callable[[str, int], sp.Expr],
                     der: Callable[[sp.Expr, int], sp.Expr]) -> sp.Expr:
    """Parse ``text`` into a sympy expression using only the whitelisted grammar."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression string, got {type(text).__name__}")
    return Parser(text, resolve, der).parse()


def caret(text: str, position: int | None, width: int = 60) -> str:
    """Return a one-line excerpt of ``text`` with the position marked, e.g. ``sin(x) + [>]foo(y)``."""
    if position is None:
        return ""
    start = max(0, position - width // 2)
    snippet = text[start:position] + "\u2192" + text[position:position + width // 2]
    snippet = "".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in snippet.replace("\n", " "))
    return f' at column {position + 1}: "{"..." if start else ""}{snippet}"'
