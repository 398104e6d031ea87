"""Units of the generated variables, by dimensional analysis of their expressions.

The declared units (coordinates ``q``, parameters, inputs; ``q'`` in ``<unit>/s``, ``q''`` in ``<unit>/s2``,
``time`` in s) give the unit of every expression the model writes: products add exponents, sums need equal
units, ``sin``, ``exp``, ... are dimensionless. Angles are counted in rad where that is consistent (a
residual ``der(phi1) - der(phi2)`` in rad/s); where it is not (``J/2*der(theta)^2 + m/2*der(x)^2``), rad is
taken as 1, as the SI does and the MSL's torque ``N.m`` (not ``N.m/rad``) does. Only SI-coherent units take
part (factor 1: ``mm`` or ``deg`` do not); where a unit is missing or the expression is inconsistent, the
variable gets no unit rather than a wrong one.

* multiplier ``lambda_k``: ``A^T lambda`` is a generalized force, so for every coordinate ``j`` with
  ``A_kj != 0``: ``unit(lambda_k) = unit(T) / unit(q_j) / unit(A_kj)`` (``T`` the kinetic energy, rad as 1);
  all such ``j`` must agree;
* ``residual[k]``: the velocity-level constraint;
* the split's placeholders ``Z`` of ``L Z = R``: ``unit(Z_kj) = unit(R_ij) / unit(L_ik)`` (rad as 1);
* temporaries ``nhb_cse<k>`` (rad as 1) and outputs without a declared unit: their expressions.
"""

from __future__ import annotations

import re

import sympy as sp

from ..derivation.eom import EquationsOfMotion
from ..model.dimensions import (
    ONE,
    PER_SECOND,
    RADIAN,
    Exponents,
    UnitAlgebra,
    exponents,
    mul,
    system_units,
    unit_text,
)

#: the split's placeholders as the reduced methods name them: B[dep,ind], beta[dep], B_dot[...], beta_dot[...]
_PLACEHOLDER = re.compile(r"^(B|beta)(_dot)?\[(\w+)(?:,(\w+))?\]$")
__all__ = ["ONE", "RADIAN", "Dimensions", "Exponents", "exponents", "msl_spelling", "unit_text", "with_units"]


class Dimensions(UnitAlgebra):
    """The units of a model's symbols and of expressions over them.

    A :class:`bridge.model.dimensions.UnitAlgebra` with the units of the split's placeholders.
    """

    def __init__(self, eom: EquationsOfMotion):
        super().__init__(system_units(eom.system))
        self.eom = eom
        self._placeholders()

    def define(self, symbol: sp.Symbol, expr: sp.Expr) -> str:
        """Give ``symbol`` (a temporary ``symbol = expr``) the unit of ``expr``; return its text.

        Rad is taken as 1 (internal variables follow the SI); the text is "" when unknown.
        """
        self.env[symbol] = self.of(expr, keep_rad=False)
        return self.text(symbol)

    # -- the generated variables ------------------------------------------------------------------------------
    def _placeholders(self) -> None:
        """Return the units of the split's placeholders.

        By definition where the name says it (``B[k,j]`` = dq'_k/dq'_j, ``beta[k]`` a velocity of q_k, ``_dot`` their
        rates), else ``unit(Z_kj) = unit(R_ij) / unit(L_ik)`` for any ``L_ik != 0``.
        """
        for stage in self.eom.auxiliary:
            L, Z, R = stage.matrix, stage.unknowns, stage.rhs
            for k in range(Z.shape[0]):
                for j in range(Z.shape[1]):
                    by_name = self._by_name(Z[k, j])
                    self.env[Z[k, j]] = by_name if by_name is not None else self._solve_unit(L, R, k, j)

    def _by_name(self, z: sp.Symbol) -> Exponents | None:
        m = _PLACEHOLDER.match(str(z))
        if not m:
            return None
        coordinates = {c.name: c for c in self.eom.system.coordinates}
        kind, rate, dep, ind = m.groups()
        if dep not in coordinates or (ind is not None and ind not in coordinates):
            return None
        unit = self.of(coordinates[dep].symbol, keep_rad=False)
        if unit is None:
            return None
        per_s = PER_SECOND
        if kind == "B":
            if ind is None:
                return None
            other = self.of(coordinates[ind].symbol, keep_rad=False)
            unit = None if other is None else mul(unit, other, -1)
        else:
            unit = mul(unit, per_s)
        return None if unit is None else (mul(unit, per_s) if rate else unit)

    def _solve_unit(self, L, R, k: int, j: int) -> Exponents | None:
        for i in range(L.shape[0]):
            if L[i, k] == 0:
                continue
            lu, ru = self.of(L[i, k], keep_rad=False), self.of(R[i, j], keep_rad=False)
            if lu is not None and ru is not None:
                return mul(ru, lu, -1)
        return None

    def multipliers(self) -> list[str]:
        """Return the unit of each multiplier (``""`` where unknown or the coordinates disagree)."""
        eom = self.eom
        A = eom.constraint_jacobian
        if not eom.multipliers or A is None:
            return []
        energy = self.of(eom.system.kinetic, keep_rad=False)
        out = []
        for k in range(A.shape[0]):
            units = set()
            for j, c in enumerate(eom.system.coordinates):
                if A[k, j] == 0:
                    continue
                coefficient, coordinate = self.of(A[k, j], keep_rad=False), self.of(c.symbol, keep_rad=False)
                units.add(None if energy is None or coefficient is None or coordinate is None
                          else mul(mul(energy, coordinate, -1), coefficient, -1))
            out.append(unit_text(units.pop()) if len(units) == 1 and None not in units else "")
        return out

    def residuals(self) -> list[str]:
        """Return the unit of each velocity-level constraint (``""`` where unknown)."""
        return [self.text(g) for g in self.eom.system.velocity_constraints()]


def msl_spelling(unit: str) -> str:
    """Return a unit written with negative exponents in the MSL's spelling with one ``/``.

    ``m.s-2`` -> ``m/s2``, ``kg.m-3`` -> ``kg/m3``; any other unit as written.
    """
    if not re.search(r"[A-Za-z]-\d", unit):
        return unit
    e = exponents(unit)
    return unit if e is None else unit_text(e)


_UNIT = re.compile(r'unit="([^"]*)"')


def _array_unit(units: list[str]) -> str:
    if not any(units):
        return ""
    if len(set(units)) == 1:
        return f'(each unit="{units[0]}")'
    return "(unit={" + ", ".join(f'"{u}"' for u in units) + "})"


_DECLARATION = re.compile(r'^(  (?:output )?Real )([A-Za-z_][A-Za-z0-9_]*|\'[^\']*\')(\[\d+\])?( ".*)$')


def with_units(writer, declarations: list[str], repl) -> list[str]:
    """Return the declarations with units on the generated variables that have none.

    ``lambda``, ``residual``, the temporaries ``nhb_cse<k>``, the split's ``nhb_split<k>`` and the outputs without a
    declared unit; every unit in the MSL's spelling (:func:`msl_spelling`).
    """
    eom = writer.eom
    dims = Dimensions(eom)
    units: dict[str, str] = {}
    if eom.multipliers:
        units["lambda"] = _array_unit(dims.multipliers())
    if eom.system.m:
        units["residual"] = _array_unit(dims.residuals())
    for k, (symbol, expr) in enumerate(repl):
        text = dims.define(symbol, expr)
        units[f"nhb_cse{k + 1}"] = f'(unit="{text}")' if text else ""
    for z in eom.auxiliary_symbols:
        text = unit_text(dims.env[z]) if dims.env.get(z) is not None else ""
        units[writer.code(z)] = f'(unit="{text}")' if text else ""
    for name, expr in eom.system.outputs.items():
        if not eom.system.output_units.get(name):
            text = dims.text(expr)
            units[writer.ident(name)] = f'(unit="{text}")' if text else ""
    out = []
    for line in declarations:
        m = _DECLARATION.match(line)
        if m and units.get(m.group(2)):
            line = f"{m.group(1)}{m.group(2)}{m.group(3) or ''}{units[m.group(2)]}{m.group(4)}"
        if line.startswith(("  Real ", "  output Real ", "  parameter Real ", "  input Real ")):  # one spelling
            head, sep, tail = line.partition(' "')
            line = _UNIT.sub(lambda u: f'unit="{msl_spelling(u.group(1))}"', head) + sep + tail
        out.append(line)
    return out


def velocity_unit(unit: str) -> str:
    if not unit:
        return ""
    return f"{unit}/s"  # as the MSL: m/s, rad/s, 1/s


def acceleration_unit(unit: str) -> str:
    if not unit:
        return ""
    return f"{unit}/s2"  # as the MSL: m/s2, rad/s2
