"""Unit strings as FMI and the system files write them (``N.m``, ``rad/s``, ``kg.m2``, ``m3/rad``).

A unit is parsed into a factor and exponents of the SSP base units (kg, m, s, A, K, mol, cd, rad):
``N.m.s/rad`` = kg m² s⁻¹ rad⁻¹. Two units are compatible when their exponents and factors agree,
so ``N.m`` and ``J`` match and ``rad/s`` and ``rpm`` do not (their factors differ).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


@dataclass(frozen=True)
class BaseUnit:
    """factor * kg^kg m^m s^s A^A K^K mol^mol cd^cd rad^rad (the SSP ``ssc:BaseUnit``)."""

    exponents: tuple[int, ...]
    factor: float = 1.0

    def __mul__(self, other: BaseUnit) -> BaseUnit:
        return BaseUnit(tuple(a + b for a, b in zip(self.exponents, other.exponents)), self.factor * other.factor)

    def __pow__(self, k: int) -> BaseUnit:
        return BaseUnit(tuple(a * k for a in self.exponents), self.factor ** k)

    def compatible(self, other: BaseUnit) -> bool:
        return self.exponents == other.exponents and math.isclose(self.factor, other.factor, rel_tol=1e-12)

    def attributes(self) -> dict[str, str]:
        """Attributes of ``ssc:BaseUnit`` (zero exponents and a unit factor left out)."""
        attrs = {n: str(e) for n, e in zip(BASE, self.exponents) if e}
        if self.factor != 1.0:
            attrs["factor"] = repr(self.factor)
        return attrs


def _b(factor: float = 1.0, **exps: int) -> BaseUnit:
    return BaseUnit(tuple(exps.get(n, 0) for n in BASE), factor)


ATOMS: dict[str, BaseUnit] = {
    "1": _b(), "kg": _b(kg=1), "g": _b(1e-3, kg=1), "m": _b(m=1), "mm": _b(1e-3, m=1), "cm": _b(1e-2, m=1),
    "km": _b(1e3, m=1), "s": _b(s=1), "ms": _b(1e-3, s=1), "min": _b(60.0, s=1), "h": _b(3600.0, s=1),
    "A": _b(A=1), "K": _b(K=1), "mol": _b(mol=1), "cd": _b(cd=1), "rad": _b(rad=1), "deg": _b(math.pi / 180, rad=1),
    "rev": _b(2 * math.pi, rad=1), "rpm": _b(2 * math.pi / 60, rad=1, s=-1),
    "N": _b(kg=1, m=1, s=-2), "J": _b(kg=1, m=2, s=-2), "W": _b(kg=1, m=2, s=-3), "Pa": _b(kg=1, m=-1, s=-2),
    "bar": _b(1e5, kg=1, m=-1, s=-2), "Hz": _b(s=-1), "V": _b(kg=1, m=2, s=-3, A=-1), "l": _b(1e-3, m=3),
    "Ohm": _b(kg=1, m=2, s=-3, A=-2), "H": _b(kg=1, m=2, s=-2, A=-2), "C": _b(s=1, A=1),
    "Wb": _b(kg=1, m=2, s=-2, A=-1), "F": _b(kg=-1, m=-2, s=4, A=2), "S": _b(kg=-1, m=-2, s=3, A=2),
}
_FACTOR = re.compile(r"^([A-Za-z]+|1)(-?\d+)?$")


def parse_unit(text: str) -> BaseUnit | None:
    """The base-unit form of ``text``, or None when it is not a product/quotient of known units."""
    text = text.strip()
    if not text:
        return None
    parts = text.split("/")
    if len(parts) > 2:
        return None
    result = _b()
    for sign, part in zip((1, -1), parts):
        if sign == -1 and part.startswith("(") and part.endswith(")") and "/" not in part:
            part = part[1:-1]  # a product as denominator: kg/(m.s)
        for factor in part.split("."):
            match = _FACTOR.match(factor)
            if not match or match.group(1) not in ATOMS:
                return None
            result = result * ATOMS[match.group(1)] ** (sign * int(match.group(2) or 1))
    return result


def compatible(a: str, b: str) -> bool:
    """Whether values in unit ``a`` may be passed unchanged to a variable in unit ``b``.

    Equal strings always are; otherwise both must parse to the same base unit and factor.
    """
    if a == b:
        return True
    pa, pb = parse_unit(a), parse_unit(b)
    return pa is not None and pb is not None and pa.compatible(pb)


# -- the unit syntax of Modelica (specification section 19.1) and FMI ----------------------------------------
#
#   unit-expression  := unit-numerator ["/" unit-denominator]
#   unit-numerator   := "1" | unit-factors | "(" unit-expression ")"
#   unit-denominator := unit-factor | "(" unit-expression ")"
#   unit-factors     := unit-factor ["." unit-factors]
#   unit-factor      := unit-operand [["+" | "-"] integer]
#   unit-operand     := [prefix] symbol
#
# The symbols are those of the SI and the units accepted with it that Modelica.Units uses.

PREFIXES = ("Y", "Z", "E", "P", "T", "G", "M", "k", "h", "da", "d", "c", "m", "u", "n", "p", "f", "a", "z", "y")
SYMBOLS = frozenset("""
m g s A K mol cd rad sr Hz N Pa J W C V F Ohm S Wb T H degC degF degRk lm lx Bq Gy Sv kat
min h d deg rev rpm l L bar t eV Wh Ah
""".split())
MAX_UNIT_LENGTH = 100
_UNIT_TOKEN = re.compile(r"\s*(?:([A-Za-z]+)([+-]?[0-9]+)?|(1)|([./()]))", re.ASCII)


class _UnitSyntax(Exception):
    pass


def unit_problem(text: str) -> str | None:
    """Why ``text`` is not a unit in the Modelica/FMI syntax with known symbols, or None when it is one.

    The empty string (no unit) is accepted.
    """
    if text == "":
        return None
    if len(text) > MAX_UNIT_LENGTH:
        return f"the unit is longer than {MAX_UNIT_LENGTH} characters"
    bad = next((ch for ch in text if not (ch.isascii() and (ch.isalnum() or ch in "./()+-"))), None)
    if bad is not None:
        return f"the unit {text!r} contains {bad!r} (U+{ord(bad):04X}), which is not part of the unit syntax"
    try:
        tokens = _unit_tokens(text)
        pos = _unit_expression(tokens, 0)
        if pos != len(tokens):
            raise _UnitSyntax(f"unexpected {tokens[pos][1]!r}")
    except _UnitSyntax as exc:
        return f"the unit {text!r} is not in the unit syntax ({exc})"
    return None


def _unit_tokens(text: str) -> list[tuple[str, str]]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _UNIT_TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise _UnitSyntax(f"unexpected {text[pos]!r}")
        if m.group(1):
            if not _known_operand(m.group(1)):
                raise _UnitSyntax(f"unknown unit symbol {m.group(1)!r}")
            tokens.append(("factor", m.group(0).strip()))
        elif m.group(3):
            tokens.append(("one", "1"))
        else:
            tokens.append(("op", m.group(4)))
        pos = m.end()
    return tokens


def _known_operand(word: str) -> bool:
    return word in SYMBOLS or any(word.startswith(p) and word[len(p):] in SYMBOLS for p in PREFIXES)


def _unit_expression(tokens: list[tuple[str, str]], pos: int) -> int:
    pos = _unit_numerator(tokens, pos)
    if pos < len(tokens) and tokens[pos] == ("op", "/"):
        pos = _unit_denominator(tokens, pos + 1)
    return pos


def _unit_numerator(tokens: list[tuple[str, str]], pos: int) -> int:
    if pos < len(tokens) and tokens[pos][0] == "one":
        return pos + 1
    if pos < len(tokens) and tokens[pos] == ("op", "("):
        return _closing(tokens, _unit_expression(tokens, pos + 1))
    pos = _unit_factor(tokens, pos)
    while pos < len(tokens) and tokens[pos] == ("op", "."):
        pos = _unit_factor(tokens, pos + 1)
    return pos


def _unit_denominator(tokens: list[tuple[str, str]], pos: int) -> int:
    if pos < len(tokens) and tokens[pos] == ("op", "("):
        return _closing(tokens, _unit_expression(tokens, pos + 1))
    return _unit_factor(tokens, pos)


def _unit_factor(tokens: list[tuple[str, str]], pos: int) -> int:
    if pos >= len(tokens):
        raise _UnitSyntax("it ends where a unit symbol is expected")
    if tokens[pos][0] != "factor":
        raise _UnitSyntax(f"a unit symbol is expected before {tokens[pos][1]!r}")
    return pos + 1


def _closing(tokens: list[tuple[str, str]], pos: int) -> int:
    if pos >= len(tokens) or tokens[pos] != ("op", ")"):
        raise _UnitSyntax("a ')' is missing")
    return pos + 1
