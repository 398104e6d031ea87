"""Dimensional consistency of a system's expressions, checked when the file is read.

With the declared units (:func:`bridge.model.dimensions.system_units`, rad taken as 1 as the SI does), every sum
must add terms of one unit; the kinetic and potential energies must be energies (J), the dissipation function a
power (W), each generalized force ``Q_i`` in ``J / unit(q_i)``, and an output with a declared unit in that unit,
wherever the expression has a parameter or input with a unit (``der(x)^2`` alone has an implied mass).
Where a symbol has no unit, the terms with it are not judged; a number in a sum takes the unit of the other terms
(``x^2 + y^2 - 1`` with x, y in m), and a number multiplying coordinates, velocities or t alone carries an implied
unit (``0.1*der(x)``: not judged; ``c*der(x)`` with ``c`` in N.s/m is); arguments of ``sin``, ``exp``... are checked
inside but not required to be dimensionless.
"""

from __future__ import annotations

from collections.abc import Iterator

import sympy as sp

from .dimensions import (
    ANGLE_FUNCTIONS,
    DIMENSIONLESS_FUNCTIONS,
    JOULE,
    ONE,
    PER_SECOND,
    SAME_UNIT_FUNCTIONS,
    Exponents,
    exponents,
    mul,
    system_units,
    unit_text,
    without_rad,
)

#: a number: dimensionless in a product, any unit in a sum
_NUMBER = "number"
WATT: Exponents = mul(JOULE, PER_SECOND)


class _Mismatch(Exception):
    def __init__(self, a: sp.Expr, ua: Exponents, b: sp.Expr, ub: Exponents):
        super().__init__()
        self.terms = (a, ua, b, ub)


def _text(u: Exponents) -> str:
    return "J" if u == JOULE else "W" if u == WATT else unit_text(u)


def _short(expr: sp.Expr, limit: int = 60) -> str:
    text = sp.sstr(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Units:
    def __init__(self, system):
        self.env = {s: None if e is None else without_rad(e) for s, e in system_units(system).items()}
        self.anchors = {p.symbol for p in (*system.parameters, *system.inputs, *getattr(system, "efforts", ()))
                        if self.env.get(p.symbol) is not None}
        self.names = {c.velocity_symbol: sp.Symbol(f"der({c.name})") for c in system.coordinates}
        self.names |= {c.acceleration_symbol: sp.Symbol(f"der(der({c.name}))") for c in system.coordinates}

    def unit(self, expr: sp.Basic):
        """Return the unit (rad as 1), ``_NUMBER`` or None (unknown).

        Raises :class:`_Mismatch` on a sum of different units anywhere inside.
        """
        if expr.is_Number or expr in (sp.pi, sp.E):
            return _NUMBER
        if expr.is_Symbol:
            return self.env.get(expr)
        if expr.is_Add or isinstance(expr, (sp.Min, sp.Max)):
            return self._sum(expr.args)
        if expr.is_Mul:
            units = [self.unit(a) for a in expr.args]
            if any(u is None for u in units):
                return None
            if any(a.is_Number and abs(a) != 1 for a in expr.args) and not expr.free_symbols & self.anchors:
                return None  # a coefficient of coordinates alone (0.1*der(x)): its unit is implied, not declared
            known = [u for u in units if u != _NUMBER]
            total = ONE
            for u in known:
                total = mul(total, u)
            return total if known else _NUMBER
        if expr.is_Pow:
            base, power = expr.args
            u, pu = self.unit(base), self.unit(power)
            if u is None or u == _NUMBER:
                return u
            if power.is_Integer:
                return tuple(x * int(power) for x in u)
            if power.is_Rational:
                scaled = [x * power for x in u]
                return tuple(int(x) for x in scaled) if all(x.is_Integer for x in scaled) else None
            return ONE if u == ONE and pu in (ONE, _NUMBER) else None
        args = [self.unit(a) for a in expr.args]  # mismatches inside function arguments
        if isinstance(expr, (*DIMENSIONLESS_FUNCTIONS, *ANGLE_FUNCTIONS)):
            return ONE
        if isinstance(expr, SAME_UNIT_FUNCTIONS) and len(args) == 1:
            return args[0]
        return None

    def _sum(self, terms):
        units = [(t, self.unit(t)) for t in terms]
        known = [(t, u) for t, u in units if u is not None and u != _NUMBER]
        for t, u in known[1:]:
            if u != known[0][1]:
                raise _Mismatch(known[0][0], known[0][1], t, u)
        if any(u is None for _, u in units):
            return None
        return known[0][1] if known else _NUMBER

    def readable(self, expr: sp.Expr) -> str:
        return _short(expr.xreplace(self.names))


def unit_problems(system) -> Iterator[tuple[str, str, str]]:
    """Yield (entry, message, hint) for each inconsistency of units in ``system``'s equations.

    Effort constraints, dynamic rates and outputs.
    """
    units = _Units(system)
    bodies = system.multibody is not None
    energies: list[tuple[str, str, sp.Expr, Exponents | None]] = [
                ("bodies and energy.kinetic" if bodies else "energy.kinetic", "the kinetic energy", system.kinetic,
                 JOULE),
                ("bodies and energy.potential" if bodies else "energy.potential", "the potential energy",
                 system.potential, JOULE),
                ("energy.dissipation", "the dissipation function", system.dissipation, WATT)]
    for entry, what, expr, target in energies:
        yield from _judge(units, entry, what, expr, target, "an energy" if target == JOULE else "a power")
    for c in system.coordinates:
        if c.name in system.forces:
            q = exponents(c.unit)
            target = None if q is None else mul(JOULE, without_rad(q), -1)
            yield from _judge(units, f"forces.{c.name}", f"the generalized force of {c.name}",
                              system.forces[c.name], target, f"a force on a coordinate in {c.unit} (J/{c.unit})")
    for entry, expr in system.constraints:
        yield from _judge(units, entry, "the constraint", expr, None, "")
    for eff in getattr(system, "efforts", ()):
        yield from _judge(units, f"efforts.{eff.name}", "the effort constraint", eff.constraint, None, "")
    for dyn in getattr(system, "dynamic", ()):
        yield from _judge(units, f"dynamic.{dyn.name}.rate", "the rate", dyn.rate, None, "")
    for name, expr in system.outputs.items():
        declared = exponents(system.output_units.get(name, ""))
        yield from _judge(units, f"outputs.{name}", "the output", expr,
                          None if declared is None else without_rad(declared),
                          f"its declared unit {system.output_units.get(name, '')}")


def _judge(units: _Units, entry: str, what: str, expr: sp.Expr, target: Exponents | None, target_text: str):
    if expr is None or expr == 0:
        return
    try:
        u = units.unit(expr)
    except _Mismatch as exc:
        a, ua, b, ub = exc.terms
        yield (entry, f"the units of {what} do not match: {units.readable(a)} is in {_text(ua)}, but "
               f"{units.readable(b)} is in {_text(ub)}",
               "check the units declared for the names in these terms (values and units are SI; rad counts as 1)")
        return
    anchored = bool(expr.free_symbols & units.anchors)  # else its coefficients (a mass of 1) are implied
    if target is not None and anchored and u is not None and u != _NUMBER and u != target:
        yield (entry, f"{what} is in {_text(u)}, but {target_text} is in {_text(target)}",
               "check the units declared for its names (values and units are SI; rad counts as 1)")
