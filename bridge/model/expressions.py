"""Whitelisting parser for the expression language of system files.

Grammar (precedence climbing, ``^`` and ``**`` right-associative, binding tighter than unary minus)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/") unary)*
    unary  := ("+" | "-") unary | power
    power  := atom (("^" | "**") unary)?
    atom   := NUMBER | NAME | NAME "(" expr ("," expr)* ")" | "(" expr ")"

Names are resolved by the caller; nothing is ever passed to ``eval`` or ``sympify``.
Numbers become exact rationals so that printed values keep full precision.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import sympy as sp

MAX_LENGTH = 200_000
MAX_DEPTH = 100
MAX_EXPONENT = 1000

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
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),])
    """,
    re.VERBOSE,
)


class ExpressionError(Exception):
    """A parse error at a character position of the expression text."""

    def __init__(self, message: str, position: int | None = None, hint: str = ""):
        super().__init__(message)
        self.message = message
        self.position = position
        self.hint = hint


@dataclass(frozen=True)
class Token:
    kind: str
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
    tokens: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            if not ch.isascii():
                raise ExpressionError(
                    f"non-ASCII character {ch!r} (U+{ord(ch):04X})",
                    pos,
                    "use ASCII names, e.g. theta instead of \u03b8",
                )
            if ch in "'\"":
                raise ExpressionError("string literals are not allowed in expressions", pos)
            raise ExpressionError(f"character {ch!r} is not allowed in expressions", pos,
                                  "allowed: numbers, names, + - * / ^ ** ( ) and commas")
        kind = m.lastgroup or ""
        if kind != "ws":
            tokens.append(Token(kind, m.group(), pos))
        pos = m.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def _number(text: str) -> sp.Expr:
    value = Fraction(text)  # exact decimal value
    if abs(value) > Fraction(10) ** 300:
        raise ExpressionError(f"number {text} is too large")
    return sp.Rational(value.numerator, value.denominator)


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
        return self.tokens[self.i]

    def advance(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> Token:
        if self.tok.text != text:
            found = repr(self.tok.text) if self.tok.kind != "end" else "the end of the expression"
            raise ExpressionError(f"expected {text!r} but found {found}", self.tok.pos)
        return self.advance()

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression is nested too deep (more than {MAX_DEPTH} levels)",
                                  self.tok.pos, "split it with [definitions]")

    # -- grammar -------------------------------------------------------
    def parse(self) -> sp.Expr:
        if self.tok.kind == "end":
            raise ExpressionError("expression is empty", 0, 'write "0" for a zero expression')
        expr = self.expr()
        if self.tok.kind != "end":
            raise ExpressionError(f"unexpected {self.tok.text!r}", self.tok.pos)
        return expr

    def expr(self) -> sp.Expr:
        self.enter()
        left = self.term()
        while self.tok.text in ("+", "-"):
            op = self.advance().text
            right = self.term()
            left = left + right if op == "+" else left - right
        self.depth -= 1
        return left

    def term(self) -> sp.Expr:
        left = self.unary()
        while self.tok.text in ("*", "/"):
            op = self.advance()
            right = self.unary()
            if op.text == "/":
                if right == 0:
                    raise ExpressionError("division by zero", op.pos)
                left = left / right
            else:
                left = left * right
        return left

    def unary(self) -> sp.Expr:
        if self.tok.text in ("+", "-"):
            self.enter()
            op = self.advance().text
            operand = self.unary()
            self.depth -= 1
            return -operand if op == "-" else operand
        return self.power()

    def power(self) -> sp.Expr:
        base = self.atom()
        if self.tok.text in ("^", "**"):
            op = self.advance()
            self.enter()
            exponent = self.unary()
            self.depth -= 1
            if exponent.is_number and abs(exponent) > MAX_EXPONENT:
                raise ExpressionError(f"exponent {exponent} is too large (at most {MAX_EXPONENT})", op.pos)
            return base**exponent
        return base

    def atom(self) -> sp.Expr:
        tok = self.tok
        if tok.kind == "number":
            self.advance()
            return _number(tok.text)
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
                return sp.pi
            if tok.text.startswith("__"):
                raise ExpressionError(f"name {tok.text!r} is not allowed", tok.pos)
            return self.resolve(tok.text, tok.pos)
        if tok.kind == "end":
            raise ExpressionError("expression ends unexpectedly", tok.pos)
        raise ExpressionError(f"unexpected {tok.text!r}", tok.pos)

    def call(self, name: Token) -> sp.Expr:
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
            return self.der(args[0], name.pos)
        func, lo, hi = FUNCTIONS[name.text]
        if not lo <= len(args) <= hi:
            want = str(lo) if lo == hi else f"{lo} to {hi}"
            raise ExpressionError(f"{name.text} takes {want} argument(s), got {len(args)}", name.pos)
        return func(*args)


def parse_expression(text: str, resolve: Callable[[str, int], sp.Expr],
                     der: Callable[[sp.Expr, int], sp.Expr]) -> sp.Expr:
    """Parse ``text`` into a sympy expression using only the whitelisted grammar."""
    if not isinstance(text, str):
        raise ExpressionError(f"expected an expression string, got {type(text).__name__}")
    return Parser(text, resolve, der).parse()


def caret(text: str, position: int | None, width: int = 60) -> str:
    """A one-line excerpt of ``text`` with the position marked, e.g. ``sin(x) + [>]foo(y)``."""
    if position is None:
        return ""
    start = max(0, position - width // 2)
    snippet = text[start:position] + "\u2192" + text[position:position + width // 2]
    snippet = snippet.replace("\n", " ")
    return f' at column {position + 1}: "{"..." if start else ""}{snippet}"'
