"""Dimensional algebra of expressions over a system's symbols: base-unit exponents, products and sums.

A unit is a tuple of exponents of the SSP base units (:data:`bridge.model.units.BASE`: kg, m, s, A, K, mol, cd,
rad); only SI-coherent units (factor 1) take part. Coordinates ``q`` carry their unit, ``q'`` ``<unit>/s``,
``q''`` ``<unit>/s2``, ``t`` s, parameters, inputs and efforts theirs. Angles are counted in rad where that is
consistent and as 1 (the SI's convention, the MSL's torque ``N.m``) where it is not (``keep_rad=False``).

Used by the export (units of generated variables, :mod:`bridge.modelica.dimensions`) and by the consistency check
of system files (:mod:`bridge.model.unit_check`).
"""

from __future__ import annotations

import sympy as sp

from . import symbols as S
from .units import BASE, BaseUnit, parse_unit, unit_text

RAD_INDEX = BASE.index("rad")
DIMENSIONLESS_FUNCTIONS = (sp.sin, sp.cos, sp.tan, sp.cot, sp.sinh, sp.cosh, sp.tanh, sp.exp, sp.log, sp.sign)
ANGLE_FUNCTIONS = (sp.asin, sp.acos, sp.atan, sp.atan2, sp.acot)
SAME_UNIT_FUNCTIONS = (sp.Abs, sp.Min, sp.Max)
Exponents = tuple[int, ...]
__all__ = ["Exponents", "Inconsistent", "UnitAlgebra", "exponents", "mul", "system_units", "unit_text",
           "without_rad"]
ONE: Exponents = (0,) * len(BASE)
RADIAN: Exponents = tuple(1 if i == RAD_INDEX else 0 for i in range(len(BASE)))
SECOND: Exponents = tuple(1 if n == "s" else 0 for n in BASE)
PER_SECOND: Exponents = tuple(-1 if n == "s" else 0 for n in BASE)
JOULE: Exponents = tuple({"kg": 1, "m": 2, "s": -2}.get(n, 0) for n in BASE)


class Inconsistent(Exception):
    """A sum of terms in different units, or an exponent that is not an integer."""


def exponents(unit: str) -> Exponents | None:
    """Return the base-unit exponents of a unit string; None when it is empty, unknown or not SI-coherent (factor 1)."""
    base: BaseUnit | None = parse_unit(unit) if unit else None
    if base is None or abs(base.factor - 1.0) > 1e-12:
        return None
    return base.exponents


def mul(a: Exponents, b: Exponents, k: int = 1) -> Exponents:
    """Return the exponents of ``a * b^k``."""
    return tuple(x + k * y for x, y in zip(a, b))


def without_rad(e: Exponents) -> Exponents:
    """Return ``e`` with rad taken as 1."""
    return tuple(0 if i == RAD_INDEX else x for i, x in enumerate(e))


def system_units(system) -> dict[sp.Symbol, Exponents | None]:
    """Return the unit of every symbol of ``system`` (None where not declared or not SI-coherent)."""
    env: dict[sp.Symbol, Exponents | None] = {S.t: SECOND}
    for c in system.coordinates:
        unit = exponents(c.unit)
        env[c.symbol] = unit
        env[c.velocity_symbol] = None if unit is None else mul(unit, PER_SECOND)
        env[c.acceleration_symbol] = None if unit is None else mul(unit, PER_SECOND, 2)
    for p in (*system.parameters, *system.inputs):
        env[p.symbol] = exponents(p.unit)
    for eff in getattr(system, "efforts", ()):
        env[eff.symbol] = exponents(getattr(eff, "unit", ""))
    return env


class UnitAlgebra:
    """The units of expressions over the symbols in ``env``.

    Strict: a sum of terms in different units raises :class:`Inconsistent`, a number is dimensionless, 0 has every unit.
    """

    def __init__(self, env: dict[sp.Symbol, Exponents | None]):
        self.env = env

    def of(self, expr: sp.Expr, keep_rad: bool = True) -> Exponents | None:
        """Return the unit of ``expr`` (rad kept or taken as 1), or None when unknown or inconsistent."""
        try:
            return self._of(expr if isinstance(expr, sp.Basic) else sp.sympify(expr), keep_rad)
        except Inconsistent:
            return None

    def best(self, expr: sp.Expr) -> Exponents | None:
        """Return the unit of ``expr`` with rad kept where that is consistent, else with rad as 1; None when unknown."""
        e = self.of(expr, True)
        return e if e is not None else self.of(expr, False)

    def text(self, expr: sp.Expr) -> str:
        """Return the unit text of ``expr`` (rad kept where consistent), or "" when unknown."""
        e = self.best(expr)
        return "" if e is None else unit_text(e)

    def _of(self, expr: sp.Basic, keep: bool) -> Exponents | None:
        if expr.is_Number or expr is sp.pi or expr is sp.E:
            return None if expr == 0 else ONE  # 0 has every unit
        if expr.is_Symbol:
            e = self.env.get(expr)
            return None if e is None else (e if keep else without_rad(e))
        if expr.is_Add:
            units = [self._of(a, keep) for a in expr.args]
            if any(u is None for u in units):
                return None
            if len(set(units)) > 1:
                raise Inconsistent
            return units[0]
        if expr.is_Mul:
            total = ONE
            for a in expr.args:
                u = self._of(a, keep)
                if u is None:
                    return None
                total = mul(total, u)
            return total
        if expr.is_Pow:
            base, power = expr.args
            u = self._of(base, keep)
            if u is None:
                return None
            if not power.is_Rational:
                return ONE if u == ONE and self._of(power, keep) == ONE else None
            scaled = [x * power for x in u]
            if any(not sp.Integer(x) == x for x in scaled):
                raise Inconsistent
            return tuple(int(x) for x in scaled)
        if isinstance(expr, DIMENSIONLESS_FUNCTIONS):
            return ONE
        if isinstance(expr, ANGLE_FUNCTIONS):
            return RADIAN if keep else ONE
        if isinstance(expr, SAME_UNIT_FUNCTIONS):
            found = {self._of(a, keep) for a in expr.args}
            if None in found:
                return None
            if len(found) > 1:
                raise Inconsistent
            return found.pop()
        return None
