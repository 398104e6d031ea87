"""Readers of the tables of the equations: ``[energy]``, ``[forces]``, ``[constraints]`` and ``[outputs]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .bodies import uses_bodies
from .read_context import ReadContext
from .table_reader import close_match

__all__ = [
    "CONSTRAINT_KEYS",
    "ENERGY_KEYS",
    "OUTPUT_KEYS",
    "Outputs",
    "read_constraints",
    "read_energy",
    "read_forces",
    "read_outputs",
]

ENERGY_KEYS = {"kinetic", "potential", "dissipation"}
CONSTRAINT_KEYS = {"holonomic", "nonholonomic"}
OUTPUT_KEYS = {"expr", "unit", "description"}


def read_energy(ctx: ReadContext) -> tuple[sp.Expr | None, sp.Expr | None, sp.Expr | None]:
    """Kinetic energy T(q, q', t), potential V(q, t, u) and dissipation function D(q, q', t, u); V, D default 0."""
    tables, symbols = ctx.tables, ctx.symbols
    bodies = uses_bodies(tables.data)  # then [energy] is optional and adds to the bodies' energies
    energy = tables.table("energy", required=not bodies)
    tables.check_keys("energy", energy, ENERGY_KEYS)
    if "energy" in tables.data and "kinetic" not in energy and not bodies:
        tables.add("energy.kinetic", "the kinetic energy is missing",
                   'add kinetic = "m/2*der(x)^2" (an expression in coordinates and der(coordinates))')
    T = symbols.expression("energy.kinetic", energy.get("kinetic", "0"),
                           velocities=True, inputs_ok=False, what="the kinetic energy")
    V = symbols.expression("energy.potential", energy.get("potential", "0"),
                           velocities=False, inputs_ok=True, what="the potential energy")
    D = symbols.expression("energy.dissipation", energy.get("dissipation", "0"),
                           velocities=True, inputs_ok=True, what="the dissipation function")
    if T is not None and symbols.coordinates and not bodies and not (T.free_symbols & symbols.velocity_symbols()):
        tables.add("energy.kinetic", "the kinetic energy does not depend on any velocity",
                   "write T in terms of der(<coordinate>)")
    return T, V, D


def read_forces(ctx: ReadContext) -> dict[str, sp.Expr]:
    """Generalized forces Q_i(q, q', t, u) by coordinate name."""
    forces: dict[str, sp.Expr] = {}
    coord_names = ctx.symbols.coordinate_names()
    for fname, text in ctx.tables.table("forces").items():
        entry = f"forces.{fname}"
        if fname not in coord_names:
            ctx.tables.add(entry, f"{fname!r} is not a coordinate",
                           close_match(fname, coord_names) or "forces are given per coordinate name")
            continue
        f = ctx.symbols.expression(entry, text, velocities=True, inputs_ok=True, what="the force")
        if f is not None:
            forces[fname] = f
    return forces


def read_constraints(ctx: ReadContext) -> tuple[list[sp.Expr], list[sp.Expr]]:
    """Holonomic phi(q, t) = 0 and nonholonomic A(q, t) q' + a0(q, t) = 0; a broken entry counts as nan."""
    cons = ctx.tables.table("constraints")
    ctx.tables.check_keys("constraints", cons, CONSTRAINT_KEYS)
    return _constraint_list(ctx, cons, "holonomic"), _constraint_list(ctx, cons, "nonholonomic")


def _constraint_list(ctx: ReadContext, cons: dict, kind: str) -> list[sp.Expr]:
    items = cons.get(kind, [])
    if isinstance(items, str):
        items = [items]
    if not isinstance(items, list):
        ctx.tables.add(f"constraints.{kind}", "expected a list of expression strings", f'write {kind} = ["..."]')
        return []
    return [_constraint(ctx, f"constraints.{kind}[{i + 1}]", kind, text) for i, text in enumerate(items)]


def _constraint(ctx: ReadContext, entry: str, kind: str, text: Any) -> sp.Expr:
    expr = ctx.symbols.expression(entry, text, velocities=kind == "nonholonomic", inputs_ok=False,
                                  what=f"a {kind} constraint")
    if expr is None:
        return sp.nan
    if kind == "holonomic":
        if not (expr.free_symbols & ctx.symbols.position_symbols()):
            ctx.tables.add(entry, "the constraint does not depend on any coordinate",
                           "a holonomic constraint is phi(q, t) = 0 in the coordinates")
    else:
        ctx.symbols.check_velocity_form(entry, expr)
    return expr


@dataclass
class Outputs:
    """The output expressions y(q, q', t, u) by name, with the units and descriptions given."""

    expressions: dict[str, sp.Expr] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)


def read_outputs(ctx: ReadContext) -> Outputs:
    """Read ``[outputs]``: ``name = "expr"`` or ``name = { expr = "...", unit = "...", description = "..." }``."""
    outputs = Outputs()
    for oname, text in ctx.tables.table("outputs").items():
        entry = f"outputs.{oname}"
        if isinstance(text, dict):  # { expr = "...", unit = "rad/s", description = "..." }
            if not _output_details(ctx, entry, oname, text, outputs):
                continue
            entry, text = f"{entry}.expr", text["expr"]
        if ctx.tables.declare(f"outputs.{oname}", oname, "output"):
            o = ctx.symbols.expression(entry, text, velocities=True, inputs_ok=True, what="an output")
            if o is not None:
                outputs.expressions[oname] = o
    return outputs


def _output_details(ctx: ReadContext, entry: str, oname: str, spec: dict, outputs: Outputs) -> bool:
    """Record the unit and description of an output table; False when it has no expression."""
    tables = ctx.tables
    tables.check_keys(entry, spec, OUTPUT_KEYS)
    if "expr" not in spec:
        tables.add(f"{entry}.expr", "the expression is missing",
                   f'write {oname} = {{ expr = "...", unit = "..." }} or {oname} = "..."')
        return False
    unit = tables.unit(f"{entry}.unit", spec.get("unit"))
    description = tables.text(f"{entry}.description", spec.get("description"))
    if unit:
        outputs.units[oname] = unit
    if description:
        outputs.descriptions[oname] = description
    return True
