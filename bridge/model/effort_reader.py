"""The reader of the ``[dynamic]``, ``[efforts]``, ``[friction]`` and ``[diodes]`` tables.

See :mod:`bridge.model.efforts`. Names are declared first, expressions parsed once every name is known.
"""

from __future__ import annotations

import sympy as sp

from . import symbols as S
from .efforts import (
    DYNAMIC_KEYS,
    EFFORT_KEYS,
    INTEGRAL_SUFFIX,
    Diode,
    Dynamic,
    Effort,
    Friction,
    affine_problem,
    integral_unit,
)
from .element_tables import DiodeTable, FrictionTable
from .read_context import ReadContext
from .system import Coordinate

__all__ = ["EffortTables"]


class DynamicTable:
    """The ``[dynamic]`` table: first-order states, each carried as the flow of an auxiliary coordinate."""

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.add = ctx.tables.add
        self.specs: dict[str, dict] = {}
        self.units: dict[str, str] = {}
        self.starts: dict[str, float] = {}

    def declare(self) -> None:
        """Declare the dynamic variables with their auxiliary coordinates (time integrals)."""
        for name, spec in self.tables.table("dynamic").items():
            entry = f"dynamic.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ start = 0.0, rate = "..." }}')
                continue
            self.tables.check_keys(entry, spec, DYNAMIC_KEYS)
            if not self.tables.declare(entry, name, "dynamic variable"):
                continue
            hidden = name + INTEGRAL_SUFFIX
            if not self.tables.declare(entry, hidden, "integral of a dynamic variable"):
                continue
            unit = self.tables.unit(f"{entry}.unit", spec.get("unit"))
            before = self.tables.count()
            start = self.tables.number(f"{entry}.start", spec.get("start"), required=False)
            if self.tables.count() > before:
                self.symbols.refuse(S.qd(hidden))
            self.starts[name] = start  # read once: a refused value is reported once
            self.symbols.add_coordinate(Coordinate(hidden, 0.0, start, integral_unit(unit), "time integral of the "
                                                   f"dynamic variable {name} (its flow is {name})"), auxiliary=True)
            self.symbols.add_symbol(name, S.qd(hidden))
            self.specs[name] = spec
            self.units[name] = unit

    @property
    def hidden_symbols(self) -> set[sp.Symbol]:
        """The auxiliary coordinates and their flows (the dynamic variables)."""
        hidden = [n + INTEGRAL_SUFFIX for n in self.specs]
        return {S.q(h) for h in hidden} | {S.qd(h) for h in hidden}

    def read(self, efforts: set[sp.Symbol]) -> tuple[Dynamic, ...]:
        """Read the dynamic variables with their rates, each affine in ``efforts`` (and the other unknowns)."""
        dynamic = tuple(self._dynamic(name, spec, efforts) for name, spec in self.specs.items())
        return tuple(d for d in dynamic if d is not None)

    def _dynamic(self, name: str, spec: dict, E: set[sp.Symbol]) -> Dynamic | None:
        entry = f"dynamic.{name}"
        if "rate" not in spec:
            self.add(f"{entry}.rate", f"the rate of {name} is missing",
                    f'write {name} = {{ start = 0.0, rate = "..." }} with the rate der({name}) as an expression')
            return None
        expr = self.symbols.expression(f"{entry}.rate", spec["rate"], velocities=True, inputs_ok=True, what="a rate")
        if expr is None:
            return None
        v = affine_problem(expr, E)
        if v is not None:
            self.add(f"{entry}.rate", f"the rate is not affine in the effort {v}",
                    "efforts enter rates linearly; introduce another effort for a non-linear relation")
            return None
        unit = self.units.get(name, "")
        description = self.tables.text(f"{entry}.description", spec.get("description"))
        return Dynamic(name, self.starts.get(name, 0.0), expr, name + INTEGRAL_SUFFIX, unit, description)


class EffortTable:
    """The ``[efforts]`` table: effort variables fixed by constraints affine in them."""

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.add = ctx.tables.add
        self.specs: dict[str, dict] = {}

    def declare(self) -> None:
        """Declare the efforts."""
        for name, spec in self.tables.table("efforts").items():
            entry = f"efforts.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ constraint = "{name} - ..." }}')
                continue
            self.tables.check_keys(entry, spec, EFFORT_KEYS)
            if self.tables.declare(entry, name, "effort"):
                self.symbols.add_symbol(name, sp.Symbol(name))
                self.specs[name] = spec

    @property
    def effort_symbols(self) -> set[sp.Symbol]:
        return {sp.Symbol(n) for n in self.specs}

    def read(self, efforts: set[sp.Symbol], unknowns: set[sp.Symbol]) -> tuple[Effort, ...]:
        """Read the efforts with their constraints (each naming one of ``efforts``, affine in ``unknowns``)."""
        out = tuple(self._effort(name, spec, efforts, unknowns) for name, spec in self.specs.items())
        return tuple(e for e in out if e is not None)

    def _effort(self, name: str, spec: dict, E: set[sp.Symbol], U: set[sp.Symbol]) -> Effort | None:
        entry = f"efforts.{name}"
        unit = self.tables.unit(f"{entry}.unit", spec.get("unit"))
        description = self.tables.text(f"{entry}.description", spec.get("description"))
        if "constraint" not in spec:
            self.add(f"{entry}.constraint", f"the effort {name} has no constraint, so nothing determines it",
                    f'write {name} = {{ constraint = "{name} - k*der(x)" }} (Gamma(q, der(q), e, s, t) = 0), or '
                    "give the force as an expression under [forces] instead of an effort")
            return None
        expr = self.symbols.expression(f"{entry}.constraint", spec["constraint"], velocities=True, inputs_ok=True,
                            what="an effort constraint")
        if expr is None:
            return None
        if not (expr.free_symbols & E):
            self.add(f"{entry}.constraint", "the constraint names no effort",
                    f"an effort constraint Gamma(q, der(q), e, s, t) = 0 determines efforts; write it in {name} "
                    f'(e.g. "{name} - k*der(x)")')
            return None
        v = affine_problem(expr, U)
        if v is not None:
            self.add(f"{entry}.constraint", f"the constraint is not affine in the effort {v}",
                    "nhbridge keeps Gamma = 0 as linear rows dGamma/de*e = -Gamma(e=0) solved with the "
                    "accelerations; write it linearly in the efforts")
            return None
        return Effort(name, expr, unit, description)


class EffortTables:
    """The ``[dynamic]``, ``[efforts]``, ``[friction]`` and ``[diodes]`` tables.

    Their names are unknowns of one dynamic system: they are read in two passes (declare names first, parse
    later) with the reading's context.

    Parameters
    ----------
    ctx : ReadContext
        The tables, the symbol table and the problems of the file being read.
    """

    def __init__(self, ctx: ReadContext):
        self.add = ctx.tables.add
        self.dynamic_table = DynamicTable(ctx)
        self.effort_table = EffortTable(ctx)
        self.friction_table = FrictionTable(ctx)
        self.diode_table = DiodeTable(ctx)

    # -- pass 1: names --------------------------------------------------------------------------------------
    def declare(self) -> None:
        """Declare the names of the dynamic variables, efforts, friction elements and diodes.

        The dynamic variables get their auxiliary coordinates. Every expression may then refer to these names.
        """
        self.dynamic_table.declare()
        self.effort_table.declare()
        self.friction_table.declare()
        self.diode_table.declare()

    def friction(self, forces: dict[str, sp.Expr]) -> tuple[Friction, ...]:
        """Read the friction elements (:meth:`FrictionTable.read`)."""
        return self.friction_table.read(forces, self.unknown_symbols, self.hidden_symbols)

    def substitute_smooth(self, *tables: dict[str, sp.Expr]) -> None:
        """Replace the name of every regularised friction element by its smooth force in these tables."""
        self.friction_table.substitute_smooth(*tables)

    def diodes(self) -> tuple[Diode, ...]:
        """Read the diodes (:meth:`DiodeTable.read`)."""
        return self.diode_table.read(self.hidden_symbols)

    @property
    def unknown_symbols(self) -> set[sp.Symbol]:
        """The efforts, friction forces and diode voltages: the unknowns solved with the accelerations."""
        return (self.effort_table.effort_symbols | self.friction_table.force_symbols
                | self.diode_table.voltage_symbols)

    @property
    def hidden_symbols(self) -> set[sp.Symbol]:
        """The dynamic variables' symbols."""
        return self.dynamic_table.hidden_symbols

    # -- pass 2: expressions --------------------------------------------------------------------------------
    def parse(self, energies: dict[str, sp.Expr | None], forces: dict[str, sp.Expr],
              constraints: dict[str, sp.Expr], outputs: dict[str, sp.Expr]
              ) -> tuple[tuple[Effort, ...], tuple[Dynamic, ...]]:
        """Parse the efforts and dynamic variables; problems are recorded in the context.

        ``energies`` and ``constraints`` (entry -> expression) must not contain efforts or dynamic variables.
        """
        E = self.effort_table.effort_symbols
        U = self.unknown_symbols  # efforts, friction forces, diode voltages
        hidden = self.hidden_symbols
        if not U and not hidden:
            return (), ()
        for entry, expr in [*energies.items(), *constraints.items()]:
            if expr is None or not isinstance(expr, sp.Basic) or expr.has(sp.nan):
                continue
            bad = sorted(map(str, expr.free_symbols & (U | hidden)))
            if bad:
                self.add(entry, f"{self._names(bad)} may not appear here (an effort, friction force, diode voltage or "
                        "dynamic variable)",
                        "efforts and dynamic variables enter through [forces], effort constraints, rates and "
                        "[outputs]; the energies and displacement constraints are differentiated by the derivation")
        for name in self.dynamic_table.specs:
            if name + INTEGRAL_SUFFIX in forces:
                self.add(f"forces.{name}{INTEGRAL_SUFFIX}", f"{name}{INTEGRAL_SUFFIX} carries the dynamic variable "
                        f"{name}; it takes no force", f"give the rate of {name} under [dynamic] instead")
        for cname, expr in forces.items():
            v = affine_problem(expr, U)
            if v is not None:
                self.add(f"forces.{cname}", f"the force is not affine in {v} (an effort, friction force or diode "
                        "voltage)", "these unknowns enter the forces linearly (e.g. tau or k*tau), so that they are "
                        "solved with the accelerations; introduce another effort for a non-linear relation")
        return self.effort_table.read(E, U), self.dynamic_table.read(U)

    @staticmethod
    def _names(names: list[str]) -> str:
        return ", ".join(n[4:-1][: -len(INTEGRAL_SUFFIX)] if n.startswith("der(") and n.endswith(
            INTEGRAL_SUFFIX + ")") else n for n in names)
