"""Vector expressions of the ``[frames]``/``[points]``/``[bodies]``/``[loads]``/``[contacts]`` tables.

A separate entry point beside the scalar parser of :mod:`bridge.model.expressions`; it only splits the text
into vector operations and hands every purely scalar part (a span of the original text) to the scalar parser,
which keeps its whitelist and its bounds. Grammar (the scalar grammar plus vector atoms)::

    expr   := term (("+" | "-") term)*
    term   := unary (("*" | "/") unary)*
    unary  := ("+" | "-") unary | power
    power  := atom (("^" | "**") unary)?
    atom   := NUMBER | NAME | NAME "." AXIS | NAME "[" expr "," expr "," expr "]"
            | "[" expr "," expr "," expr "]" | NAME "(" expr ("," expr)* ")" | "(" expr ")"

``[a, b, c]`` are components along N (the inertial frame), ``F[a, b, c] = a F.x + b F.y + c F.z``, ``F.x``
the unit vector of frame F, a point or body name its position (from N's origin, N components);
``cross(u, v)``, ``dot(u, v)``, ``norm(u)``, ``der(u)`` (total time derivative, by components). A vector is
always evaluated to its three N components. A ``[[..], [..], [..]]`` matrix is read by :func:`parse_matrix`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import sympy as sp

from .expressions import FUNCTIONS, MAX_DEPTH, MAX_LENGTH, MAX_TREE_SIZE, ExpressionError, tree_size
from .names import closest_name

Vector = tuple[sp.Expr, sp.Expr, sp.Expr]
AXES = {"x": 0, "y": 1, "z": 2}
VECTOR_FUNCTIONS = {"cross": 2, "dot": 2, "norm": 1}

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t\r\n]+)
  | (?P<number>(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\*\*|[-+*/^(),\[\].])
    """,
    re.VERBOSE | re.ASCII,
)


class Context(Protocol):
    """What a vector expression refers to: frames, points and the scalar parser of the system file."""

    def frame_matrix(self, name: str, pos: int) -> sp.Matrix | None:
        """Return the direction cosines ``R`` (``v_N = R v_F``) of frame ``name``, None if it is not a frame."""

    def frame_names(self) -> list[str]:
        """Return the declared frames' names (for did-you-mean hints)."""

    def point(self, name: str, pos: int) -> Vector | None:
        """Return the position of point/body ``name`` (N components), None if it is not a point."""

    def scalar(self, text: str, offset: int) -> sp.Expr:
        """Return the scalar parser on ``text`` (a span starting at ``offset`` of the whole expression)."""

    def der(self, expr: sp.Expr, pos: int) -> sp.Expr:
        """Return the total time derivative."""


@dataclass
class _Node:
    kind: str                 # num name axis fvec vec call bin neg paren
    start: int
    end: int
    text: str = ""
    args: list[_Node] = field(default_factory=list)
    vectorish: bool = False   # contains a vector construct (cannot be handed to the scalar parser as text)


class _Value:
    """A scalar (``vec`` None), a vector (3 components) or a matrix (3 rows)."""

    def __init__(self, scalar: sp.Expr | None = None, vec: Vector | None = None, rows: list[Vector] | None = None):
        self.scalar, self.vec, self.rows = scalar, vec, rows

    @property
    def number(self) -> sp.Expr:
        """The scalar of a scalar value (neither a vector nor a matrix)."""
        if self.scalar is None:
            raise ExpressionError(f"expected a scalar, not {self.what}")
        return self.scalar

    @property
    def what(self) -> str:
        return "a matrix" if self.rows is not None else "a vector" if self.vec is not None else "a scalar"


class VectorParser:
    """Parses one vector expression ``text`` against a :class:`Context`."""

    def __init__(self, text: str, ctx: Context):
        if len(text) > MAX_LENGTH:
            raise ExpressionError(f"expression is too long ({len(text)} characters, at most {MAX_LENGTH})")
        self.text, self.ctx = text, ctx
        self.tokens = self._tokenize(text)
        self.i = 0
        self.depth = 0

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str, int]]:
        tokens, pos = [], 0
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if m is None:
                ch = text[pos]
                raise ExpressionError(f"character {ch!r} (U+{ord(ch):04X}) is not allowed in vector expressions",
                                      pos, "allowed: numbers, names, + - * / ^ ( ) [ ] . and commas")
            if m.lastgroup != "ws":
                tokens.append((m.lastgroup or "", m.group(), pos))
            pos = m.end()
        tokens.append(("end", "", len(text)))
        return tokens

    # -- tokens --------------------------------------------------------------------
    @property
    def tok(self) -> tuple[str, str, int]:
        """The current token ``(kind, text, position)``."""
        return self.tokens[self.i]

    def advance(self) -> tuple[str, str, int]:
        """Return the current token and move to the next one."""
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def expect(self, text: str) -> tuple[str, str, int]:
        """Consume the token ``text``.

        Parameters
        ----------
        text : str
            The expected token text.

        Returns
        -------
        tuple of (str, str, int)
            The consumed token.

        Raises
        ------
        ExpressionError
            When the current token is another one.
        """
        if self.tok[1] != text:
            found = repr(self.tok[1]) if self.tok[0] != "end" else "the end of the expression"
            raise ExpressionError(f"expected {text!r} but found {found}", self.tok[2])
        return self.advance()

    def _end_of_previous(self) -> int:
        _, text, pos = self.tokens[self.i - 1]
        return pos + len(text)

    # -- grammar: a tree with text spans -----------------------------------------------
    def tree(self) -> _Node:
        """Parse the whole expression into a syntax tree.

        Returns
        -------
        _Node
            The root.

        Raises
        ------
        ExpressionError
            When the expression is empty, malformed, or has text after its end.
        """
        if self.tok[0] == "end":
            raise ExpressionError("expression is empty", 0, "write a vector, e.g. [0, 0, 1]")
        node = self.expr()
        if self.tok[0] != "end":
            raise ExpressionError(f"unexpected {self.tok[1]!r}", self.tok[2])
        return node

    def _binary(self, left: _Node, op: str, right: _Node) -> _Node:
        return _Node("bin", left.start, right.end, op, [left, right], left.vectorish or right.vectorish)

    def expr(self) -> _Node:
        """Parse a sum: ``term (("+" | "-") term)*``."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise ExpressionError(f"expression is nested too deep (more than {MAX_DEPTH} levels)", self.tok[2])
        left = self.term()
        while self.tok[1] in ("+", "-"):
            op = self.advance()[1]
            left = self._binary(left, op, self.term())
        self.depth -= 1
        return left

    def term(self) -> _Node:
        """Parse a product: ``unary (("*" | "/") unary)*``."""
        left = self.unary()
        while self.tok[1] in ("*", "/"):
            op = self.advance()[1]
            left = self._binary(left, op, self.unary())
        return left

    def unary(self) -> _Node:
        """Parse a signed factor: ``("+" | "-") unary | power``."""
        if self.tok[1] in ("+", "-"):
            _, op, pos = self.advance()
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise ExpressionError(f"expression is nested too deep (more than {MAX_DEPTH} levels)", pos)
            operand = self.unary()
            self.depth -= 1
            return _Node("neg" if op == "-" else "paren", pos, operand.end, op, [operand], operand.vectorish)
        return self.power()

    def power(self) -> _Node:
        """Parse a power: ``atom (("^" | "**") unary)?``."""
        base = self.atom()
        if self.tok[1] not in ("^", "**"):
            return base
        self.advance()
        exponent = self.unary()
        return self._binary(base, "^", exponent)

    def atom(self) -> _Node:
        """Parse an atom: a number, a parenthesized expression, a bracketed vector or matrix, a name or a call."""
        kind, text, pos = self.tok
        if kind == "number":
            self.advance()
            return _Node("num", pos, pos + len(text), text)
        if text == "(":
            self.advance()
            inner = self.expr()
            self.expect(")")
            return _Node("paren", pos, self._end_of_previous(), "(", [inner], inner.vectorish)
        if text == "[":
            self.advance()
            items = self._items(pos)
            return _Node("vec", pos, self._end_of_previous(), "", items, True)
        if kind == "name":
            return self._name()
        if kind == "end":
            raise ExpressionError("expression ends unexpectedly", pos)
        raise ExpressionError(f"unexpected {text!r}", pos)

    def _items(self, pos: int) -> list[_Node]:
        items = [self.expr()]
        while self.tok[1] == ",":
            self.advance()
            items.append(self.expr())
        self.expect("]")
        if len(items) != 3:
            raise ExpressionError(f"a vector has 3 components, this one has {len(items)}", pos,
                                  "write [x, y, z]")
        return items

    def _name(self) -> _Node:
        _, name, pos = self.advance()
        if self.tok[1] == ".":
            self.advance()
            _, axis, apos = self.advance()
            if axis not in AXES:
                raise ExpressionError(f"{name}.{axis}: a frame's unit vectors are .x, .y and .z", apos)
            return _Node("axis", pos, apos + 1, name, [], True)
        if self.tok[1] == "[":
            self.advance()
            items = self._items(pos)
            return _Node("fvec", pos, self._end_of_previous(), name, items, True)
        if self.tok[1] == "(":
            self.advance()
            args = [self.expr()]
            while self.tok[1] == ",":
                self.advance()
                args.append(self.expr())
            self.expect(")")
            vectorish = name in VECTOR_FUNCTIONS or any(a.vectorish for a in args)
            return _Node("call", pos, self._end_of_previous(), name, args, vectorish)
        vectorish = self.ctx.point(name, pos) is not None or self.ctx.frame_matrix(name, pos) is not None
        return _Node("name", pos, pos + len(name), name, [], vectorish)

    # -- evaluation --------------------------------------------------------------------
    def value(self, node: _Node) -> _Value:
        """Return the value of a syntax tree node: a scalar, a 3-vector or a 3x3 matrix.

        Parameters
        ----------
        node : _Node
            The node.

        Returns
        -------
        _Value
            The value.

        Raises
        ------
        ExpressionError
            When an operation does not apply to its operands or a component is too large.
        """
        if not node.vectorish:
            return _Value(self.ctx.scalar(self.text[node.start:node.end], node.start))
        handler: Callable[[_Node], _Value] = getattr(self, f"_v_{node.kind}")
        value = handler(node)
        parts = [value.scalar] if value.vec is None and value.rows is None else \
            list(value.vec) if value.vec is not None else [x for r in value.rows for x in r]  # type: ignore[union-attr]
        if any(tree_size(p) > MAX_TREE_SIZE for p in parts if p is not None):
            raise ExpressionError(f"expression is too large (more than {MAX_TREE_SIZE} operations in a component)",
                                  node.start, "simplify it, or split it into [points]")
        return value

    def _v_paren(self, node: _Node) -> _Value:
        return self.value(node.args[0])

    def _v_neg(self, node: _Node) -> _Value:
        v = self.value(node.args[0])
        if v.rows is not None:
            raise ExpressionError("a matrix cannot be negated here", node.start)
        return _Value(-v.number) if v.vec is None else _Value(vec=_scale(v.vec, -1))

    def _v_vec(self, node: _Node) -> _Value:
        items = [self.value(a) for a in node.args]
        if all(v.vec is not None for v in items):
            return _Value(rows=[v.vec for v in items])  # type: ignore[misc]
        for item, arg in zip(items, node.args):
            if item.vec is not None or item.rows is not None:
                raise ExpressionError(f"a component of a vector must be a scalar, not {item.what}", arg.start)
        return _Value(vec=tuple(v.scalar for v in items))  # type: ignore[arg-type]

    def _frame(self, name: str, pos: int) -> sp.Matrix:
        R = self.ctx.frame_matrix(name, pos)
        if R is None:
            close = closest_name(name, self.ctx.frame_names())
            raise ExpressionError(f"{name!r} is not a frame", pos,
                                  f"did you mean {close!r}?" if close else
                                  "declare it under [frames] (N is the inertial frame)")
        return R

    def _v_axis(self, node: _Node) -> _Value:
        R = self._frame(node.text, node.start)
        axis = self.text[node.end - 1]
        return _Value(vec=tuple(R[:, AXES[axis]]))

    def _v_fvec(self, node: _Node) -> _Value:
        R = self._frame(node.text, node.start)
        items = [self.value(a) for a in node.args]
        for item, arg in zip(items, node.args):
            if item.vec is not None or item.rows is not None:
                raise ExpressionError(f"a component of a vector must be a scalar, not {item.what}", arg.start)
        comps = [v.scalar for v in items]
        return _Value(vec=tuple(sum((R[i, k] * comps[k] for k in range(3)), sp.Integer(0)) for i in range(3)))

    def _v_name(self, node: _Node) -> _Value:
        p = self.ctx.point(node.text, node.start)
        if p is None:
            raise ExpressionError(f"{node.text!r} is a frame, not a vector", node.start,
                                  f"use its unit vectors {node.text}.x, .y, .z or components {node.text}[a, b, c]")
        return _Value(vec=p)

    def _v_call(self, node: _Node) -> _Value:
        args = [self.value(a) for a in node.args]
        name, pos = node.text, node.start
        if any(a.rows is not None for a in args):
            raise ExpressionError(f"{name}() of a matrix is not available", pos)
        if name in VECTOR_FUNCTIONS:
            if len(args) != VECTOR_FUNCTIONS[name] or any(a.vec is None for a in args):
                raise ExpressionError(f"{name} takes {VECTOR_FUNCTIONS[name]} vector argument(s)", pos,
                                      "e.g. cross(u, v), dot(u, v), norm(u)")
            if name == "cross":
                return _Value(vec=cross(args[0].vec, args[1].vec))  # type: ignore[arg-type]
            if name == "dot":
                return _Value(dot(args[0].vec, args[1].vec))  # type: ignore[arg-type]
            return _Value(sp.sqrt(dot(args[0].vec, args[0].vec)))  # type: ignore[arg-type]
        if name == "der":
            if len(args) != 1:
                raise ExpressionError(f"der takes 1 argument, got {len(args)}", pos)
            a = args[0]
            if a.vec is not None:
                return _Value(vec=tuple(self.ctx.der(c, pos) for c in a.vec))
            return _Value(self.ctx.der(a.scalar, pos))
        if name not in FUNCTIONS:
            raise ExpressionError(f"unknown function {name!r}", pos,
                                  "allowed: cross, dot, norm, der, " + ", ".join(FUNCTIONS))
        func, lo, hi = FUNCTIONS[name]
        if any(a.vec is not None for a in args):
            raise ExpressionError(f"{name}() takes scalars, not vectors", pos, "use dot() or norm() to get a scalar")
        if not lo <= len(args) <= hi:
            raise ExpressionError(f"{name} takes {lo if lo == hi else f'{lo} to {hi}'} argument(s), got {len(args)}",
                                  pos)
        return _Value(func(*[a.scalar for a in args]))

    def _v_bin(self, node: _Node) -> _Value:
        op = node.text
        left, right = self.value(node.args[0]), self.value(node.args[1])
        pos = node.args[1].start
        if left.rows is not None or right.rows is not None:
            raise ExpressionError("matrices cannot be combined with operators here", pos)
        if op in "+-":
            if (left.vec is None) != (right.vec is None):
                raise ExpressionError(f"cannot {'add' if op == '+' else 'subtract'} {right.what} "
                                      f"{'to' if op == '+' else 'from'} {left.what}", pos,
                                      "both sides of + and - must be vectors, or both scalars")
            if left.vec is None:
                return _Value(left.number + right.number if op == "+" else left.number - right.number)
            sign = 1 if op == "+" else -1
            return _Value(vec=tuple(a + sign * b for a, b in zip(left.vec, right.vec)))  # type: ignore[arg-type]
        if op == "*":
            if left.vec is not None and right.vec is not None:
                raise ExpressionError("the product of two vectors is ambiguous", pos, "use dot(u, v) or cross(u, v)")
            if left.vec is None and right.vec is None:
                return _Value(left.number * right.number)
            s, v = (left.number, right.vec) if left.vec is None else (right.number, left.vec)
            return _Value(vec=_scale(v, s))  # type: ignore[arg-type]
        if right.vec is not None:
            raise ExpressionError(f"cannot {'divide by' if op == '/' else 'raise to'} a vector", pos)
        if op == "/":
            if right.number == 0:
                raise ExpressionError("division by zero", pos)
            if left.vec is None:
                return _Value(left.number / right.number)
            return _Value(vec=_scale(left.vec, 1 / right.number))
        if left.vec is not None:
            raise ExpressionError("a vector cannot be raised to a power", pos, "use dot(u, u) for the squared length")
        return _Value(left.number ** right.number)


def _scale(v: Vector, s: sp.Expr) -> Vector:
    return (s * v[0], s * v[1], s * v[2])


def cross(a: Vector, b: Vector) -> Vector:
    """Return the cross product ``a x b`` of two vectors in the same basis."""
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def dot(a: Vector, b: Vector) -> sp.Expr:
    """Return the dot product ``a . b`` of two vectors in the same basis."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def parse_vector(text: str, ctx: Context) -> Vector:
    """Return a vector expression's three N components."""
    p = VectorParser(text, ctx)
    v = p.value(p.tree())
    if v.vec is None:
        raise ExpressionError(f"expected a vector, got {v.what}", 0,
                              "write [x, y, z], a frame's F[a, b, c] or unit vectors F.x, or a point name")
    return v.vec


def parse_scalar(text: str, ctx: Context) -> sp.Expr:
    """Return a scalar expression that may use vector operations (e.g. ``dot(der(P), N.x)``)."""
    p = VectorParser(text, ctx)
    v = p.value(p.tree())
    if v.scalar is None or v.vec is not None or v.rows is not None:
        raise ExpressionError(f"expected a scalar, got {v.what}", 0, "use dot(u, v) to get a scalar from vectors")
    return v.scalar


def parse_matrix(text: str, ctx: Context) -> list[Vector] | Vector:
    """Return a 3x3 matrix ``[[..], [..], [..]]`` (its rows) or a 3-vector (e.g. principal moments)."""
    p = VectorParser(text, ctx)
    v = p.value(p.tree())
    if v.rows is not None:
        return v.rows
    if v.vec is not None:
        return v.vec
    raise ExpressionError(f"expected a matrix [[a, b, c], [d, e, f], [g, h, i]] or [a, b, c], got {v.what}", 0)
