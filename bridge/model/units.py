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
        """Return whether two units have the same base exponents and factor (``N.m`` and ``J``).

        Parameters
        ----------
        other : BaseUnit
            The other unit.

        Returns
        -------
        bool
            True when a value in one unit is the same value in the other.
        """
        return self.exponents == other.exponents and math.isclose(self.factor, other.factor, rel_tol=1e-12)

    def attributes(self) -> dict[str, str]:
        """Return the attributes of ``ssc:BaseUnit`` (zero exponents and a unit factor left out)."""
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
ATOMS.update({
    "sr": _b(), "T": _b(kg=1, s=-2, A=-1), "Bq": _b(s=-1), "Gy": _b(m=2, s=-2), "Sv": _b(m=2, s=-2),
    "kat": _b(mol=1, s=-1), "lm": _b(cd=1), "lx": _b(cd=1, m=-2), "d": _b(86400.0, s=1), "L": _b(1e-3, m=3),
    "t": _b(1e3, kg=1), "eV": _b(1.602176634e-19, kg=1, m=2, s=-2), "Wh": _b(3600.0, kg=1, m=2, s=-2),
    "Ah": _b(3600.0, s=1, A=1),
})
#: the SI prefixes as factors (``da`` before ``d``)
PREFIX_FACTORS = {"Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6, "k": 1e3, "h": 1e2,
                  "da": 1e1, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15,
                  "a": 1e-18, "z": 1e-21, "y": 1e-24}
#: temperature scales with an offset: no factor makes them SI
OFFSET_UNITS = {"degC": "K", "degF": "K", "degRk": "K"}
_FACTOR = re.compile(r"^([A-Za-z]+|1)(-?\d+)?$")


def _atom(symbol: str) -> BaseUnit | None:
    """Return a unit symbol, possibly with an SI prefix (``kN``, ``mA``); the symbol itself first (``cd``, ``Pa``)."""
    if symbol in ATOMS:
        return ATOMS[symbol]
    for prefix in sorted(PREFIX_FACTORS, key=len, reverse=True):
        if symbol.startswith(prefix) and symbol[len(prefix):] in ATOMS and symbol[len(prefix):] not in ("kg", "1"):
            base = ATOMS[symbol[len(prefix):]]
            return BaseUnit(base.exponents, base.factor * PREFIX_FACTORS[prefix])
    return None


def parse_unit(text: str) -> BaseUnit | None:
    """Return the base-unit form of ``text``, or None when it is not a product/quotient of known units."""
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
            atom = _atom(match.group(1)) if match else None
            if match is None or atom is None:
                return None
            result = result * atom ** (sign * int(match.group(2) or 1))
    return result


def unit_text(e: tuple[int, ...]) -> str:
    """Return the MSL-style text of base-unit exponents.

    ``N`` where kg.m/s2 divides it, one ``/`` (``m/s2``, ``N.m``, ``kg.m2``, ``1/s``, ``N.s/m``, ``kg/(m.s)``).
    """
    exps = list(e)
    num: list[str] = []
    kg, s = BASE.index("kg"), BASE.index("s")
    if exps[kg] == 1 and exps[s] <= -2:
        num.append("N")
        exps = [x - y for x, y in zip(exps, (1, 1, -2, 0, 0, 0, 0, 0))]
    num += [n if x == 1 else f"{n}{x}" for n, x in zip(BASE, exps) if x > 0]
    den = [n if -x == 1 else f"{n}{-x}" for n, x in zip(BASE, exps) if x < 0]
    text = ".".join(num) or "1"
    if den:
        text += "/" + (den[0] if len(den) == 1 else f"({'.'.join(den)})")
    return text


def compatible(a: str, b: str) -> bool:
    """Return whether values in unit ``a`` may be passed unchanged to a variable in unit ``b``.

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
    """Return why ``text`` is not a unit in the Modelica/FMI syntax with known symbols, or None when it is one.

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


def si_problem(text: str) -> tuple[str, str] | None:
    """Return (message, hint) when ``text`` (a unit in the syntax) is not SI-coherent.

    A multiple of an SI unit (``cm``, ``deg``, ``rpm``, ``bar``, ``kN``) or an offset scale (``degC``); None for SI
    units and units not known here.

    Values in system files are in SI units, as in the MSL (whose ``displayUnit`` shows cm, deg or rpm).
    """
    if not text:
        return None
    for scale, si in OFFSET_UNITS.items():
        if re.search(rf"(?<![A-Za-z]){scale}(?![A-Za-z])", text):
            return (f"the unit {text!r} is a temperature scale with an offset, not an SI unit; values are in SI "
                    "units (as in the MSL)", f'give temperatures in {si} (unit = "{si}")')
    base = parse_unit(text)
    if base is None or math.isclose(base.factor, 1.0, rel_tol=1e-12):
        return None
    si = _unprefixed(text) or unit_text(base.exponents)
    return (f"the unit {text!r} is not an SI unit (1 {text} = {base.factor:.10g} {si}); values are in SI units, as "
            "in the MSL", f'multiply the value by {base.factor:.10g} and write unit = "{si}"')


def _unprefixed(text: str) -> str | None:
    """Return ``text`` with each prefixed symbol written without its prefix (``uV`` -> ``V``, ``kN.m`` -> ``N.m``).

    Or None when a symbol is not a prefixed SI-coherent one (``deg``, ``rpm``: their SI unit is spelt from the
    exponents).
    """
    out = []
    for word in re.split(r"([./()])", text):
        m = _FACTOR.match(word)
        if not word or word in "./()" or (m and m.group(1) == "1"):
            out.append(word)
            continue
        if not m:
            return None
        sym, power = m.group(1), m.group(2) or ""
        if sym in ATOMS:
            if ATOMS[sym].factor != 1.0:
                return None
            out.append(word)
            continue
        bare = next((sym[len(p):] for p in sorted(PREFIX_FACTORS, key=len, reverse=True)
                     if sym.startswith(p) and sym[len(p):] in ATOMS), None)
        if bare is None or ATOMS[bare].factor != 1.0:
            return None
        out.append(bare + power)
    return "".join(out)
