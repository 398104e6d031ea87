"""Readers of the ``[friction]`` and ``[diodes]`` tables.

See :class:`~bridge.model.efforts.Friction` and :class:`~bridge.model.efforts.Diode`. Names are declared
first, expressions parsed once every name is known.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from . import symbols as S
from .efforts import DIODE_KEYS, FRICTION_KEYS, INTEGRAL_SUFFIX, REGULARIZATION_FLOOR, Diode, Friction
from .read_context import ReadContext
from .units import parse_unit

__all__ = ["DiodeTable", "FrictionTable"]


class FrictionTable:
    """The ``[friction]`` table: Coulomb friction elements, or their smooth forces when regularised."""

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.add = ctx.tables.add
        self.specs: dict[str, dict] = {}
        self.smooth: dict[sp.Symbol, sp.Expr] = {}  # regularised friction elements -> their smooth forces

    @property
    def force_symbols(self) -> set[sp.Symbol]:
        """The friction forces: unknowns of the dynamic system like the efforts."""
        return {sp.Symbol(n) for n in self.specs}

    def declare(self) -> None:
        """Declare the friction elements: each name stands for its force (e.g. a reaction on another coordinate)."""
        for name, spec in self.tables.table("friction").items():
            entry = f"friction.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ coordinate = "x", normal = "m*g", '
                         "mu_static = 0.4, mu_kinetic = 0.3 }")
                continue
            self.tables.check_keys(entry, spec, FRICTION_KEYS)
            if self.tables.declare(entry, name, "friction element"):
                self.specs[name] = spec
                self.symbols.add_symbol(name, sp.Symbol(name))  # its force, e.g. a reaction on another coordinate

    def read(self, forces: dict[str, sp.Expr], unknowns: set[sp.Symbol],
             hidden: set[sp.Symbol]) -> tuple[Friction, ...]:
        """Read the friction elements.

        A regularised one is added to ``forces`` as a smooth force instead (and its name
        stands for that force where another entry uses it: :meth:`substitute_smooth`). ``unknowns``: the efforts,
        friction forces and diode voltages; ``hidden``: the dynamic variables' symbols (none may appear in the normal
        force or relative velocity).
        """
        out: list[Friction] = []
        coords = [c.name for c in self.symbols.coordinates if not c.name.endswith(INTEGRAL_SUFFIX)]
        for name, spec in self.specs.items():
            entry = f"friction.{name}"
            coord = spec.get("coordinate")
            if not isinstance(coord, str) or coord not in coords:
                self.add(f"{entry}.coordinate", f"{coord!r} is not a coordinate" if coord is not None
                        else "the coordinate is missing", "name the coordinate the friction force acts on: "
                        + ", ".join(coords))
                continue
            before = self.tables.count()
            mu_s = self.tables.number(f"{entry}.mu_static", spec.get("mu_static"))
            mu_k = self.tables.number(f"{entry}.mu_kinetic", spec.get("mu_kinetic"))
            eps = self.tables.number(f"{entry}.regularization", spec.get("regularization"), required=False)
            refused = self.tables.count() > before  # no comparison of a refused value
            if not refused and (mu_k < 0 or mu_s < 0):
                self.add(entry, f"a friction coefficient is negative (mu_static = {mu_s:g}, mu_kinetic = {mu_k:g})",
                        "friction coefficients are >= 0")
                continue
            if not refused and mu_s < mu_k:
                self.add(f"{entry}.mu_static", f"the static coefficient {mu_s:g} is below the kinetic one {mu_k:g}",
                        "Coulomb friction needs mu_static >= mu_kinetic (equal for a plain Coulomb law)")
                continue
            if not refused and eps < 0:
                self.add(f"{entry}.regularization", f"the regularization velocity {eps:g} is negative",
                        "give a small positive velocity (e.g. 1e-4) to smooth the law, or leave it out for events")
                continue
            if 0 < eps < REGULARIZATION_FLOOR:
                self.add(f"{entry}.regularization", f"the regularization velocity {eps:g} is below the floor "
                        f"{REGULARIZATION_FLOOR:g}: the smooth law -mu_kinetic*N*tanh(v_r/{eps:g}) turns within about "
                        f"+-{eps:g} of v_r = 0, and the integrators resolve a velocity v only to a relative precision "
                        "of about 2.2e-14 (100 ulps, the FMU's smallest tolerance; the native default is 1e-10), "
                        "i.e. to about 1e-10 for velocities up to 1e4: a narrower transition is a sign function to "
                        "them, and its stiffness mu_kinetic*N/regularization makes their steps vanish",
                        f"give a regularization of at least {REGULARIZATION_FLOOR:g} (typically 1e-4 of the "
                        "velocities), or leave it out for stick and slip located by events")
                continue
            if "normal" not in spec:
                self.add(f"{entry}.normal", "the normal force is missing", 'write normal = "m*g" (>= 0)')
                continue
            normal = self.symbols.expression(f"{entry}.normal", spec["normal"], velocities=True, inputs_ok=True,
                                  what="the normal force")
            vr = self.symbols.expression(f"{entry}.relative_velocity", spec.get("relative_velocity", f"der({coord})"),
                              velocities=True, inputs_ok=True, what="the relative velocity")
            if normal is None or vr is None:
                continue
            if not (vr.free_symbols & self.symbols.velocity_symbols()):
                self.add(f"{entry}.relative_velocity", "the relative velocity contains no velocity der(...)",
                        f'write it in the velocities, e.g. "der({coord}) - v_belt"')
                continue
            bad = (normal.free_symbols | vr.free_symbols) & (unknowns | hidden)
            if bad:
                self.add(entry, "the normal force and relative velocity may not contain efforts, friction forces, "
                        "diode voltages or dynamic variables",
                        "write them in coordinates, velocities, parameters, inputs and time")
                continue
            description = self.tables.text(f"{entry}.description", spec.get("description"))
            if refused:
                continue
            element = Friction(name, coord, normal, mu_s, mu_k, vr, eps, description)
            if element.inert:  # no force in any mode: a zero force, no modes, no events
                self.smooth[element.symbol] = sp.Integer(0)
            elif eps > 0:  # the stated regularisation: a smooth force, no events
                law = -mu_k * normal * sp.tanh(vr / eps)
                self.smooth[element.symbol] = law
                forces[coord] = forces.get(coord, sp.Integer(0)) + law
            out.append(element)
        return tuple(out)

    def substitute_smooth(self, *tables: dict[str, sp.Expr]) -> None:
        """Replace the name of every regularised friction element by its smooth force in these tables.

        The tables are forces and outputs; such an element has no unknown of its own.
        """
        for table in tables:
            for key, expr in table.items():
                if expr.free_symbols & set(self.smooth):
                    table[key] = expr.xreplace(self.smooth)


class DiodeTable:
    """The ``[diodes]`` table: ideal diodes on the currents of charge coordinates."""

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.add = ctx.tables.add
        self.specs: dict[str, dict] = {}

    @property
    def voltage_symbols(self) -> set[sp.Symbol]:
        """The diode voltages: unknowns of the dynamic system like the efforts."""
        return {sp.Symbol(n) for n in self.specs}

    def declare(self) -> None:
        """Declare the diodes: each name stands for its voltage."""
        for name, spec in self.tables.table("diodes").items():
            entry = f"diodes.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ flow = "der(q)" }}')
                continue
            self.tables.check_keys(entry, spec, DIODE_KEYS)
            if self.tables.declare(entry, name, "diode"):
                self.specs[name] = spec
                self.symbols.add_symbol(name, sp.Symbol(name))  # its voltage

    def read(self, hidden: set[sp.Symbol]) -> tuple[Diode, ...]:
        """Read the diodes, each on the velocity of a coordinate (a charge).

        ``hidden``: the dynamic variables' symbols.
        """
        out: list[Diode] = []
        coords = {S.qd(c.name): c.name for c in self.symbols.coordinates if not c.name.endswith(INTEGRAL_SUFFIX)}
        for name, spec in self.specs.items():
            entry = f"diodes.{name}"
            text = spec.get("flow")
            if text is None:
                self.add(f"{entry}.flow", "the flow is missing", 'write flow = "der(q)" with the charge coordinate q')
                continue
            flow = self.symbols.parse(f"{entry}.flow", text)
            if flow is None:
                continue
            if flow not in coords:
                self.add(f"{entry}.flow", f"{text!r} is not a flow: a diode sits on the velocity der(q) of a "
                        "coordinate (the current of a charge q)",
                        "declare the charge through the diode as a coordinate and write flow = \"der(<charge>)\""
                        + (f"; {text} is a dynamic variable, not a coordinate's velocity"
                           if flow in hidden else ""))
                continue
            if not self._flow_is_a_current(f"{entry}.flow", coords[flow]):
                continue
            values = {}
            for key in ("forward_voltage", "on_resistance", "off_conductance"):
                values[key] = self.tables.number(f"{entry}.{key}", spec.get(key), required=False)
                if values[key] < 0:
                    self.add(f"{entry}.{key}", f"{key} is negative ({values[key]:g})",
                            "give 0 for the ideal element or a positive value")
            if any(v < 0 for v in values.values()):
                continue
            if values["on_resistance"] * values["off_conductance"] >= 1:
                self.add(entry, "on_resistance*off_conductance must be below 1 (the conducting branch must be "
                        "steeper than the blocking one)", "use a small on-resistance and off-conductance")
                continue
            diode = Diode(name, coords[flow], **values,
                          description=self.tables.text(f"{entry}.description", spec.get("description")))
            same = next((d for d in out if d.coordinate == diode.coordinate), None)
            if same is not None:
                twin = replace(diode, name=same.name, description=same.description) == same
                self.add(f"{entry}.flow", (f"{name} duplicates the diode {same.name} (the same flow "
                        f"der({diode.coordinate}) and the same values)" if twin else
                        f"{name} sits on the current der({diode.coordinate}) of the diode {same.name}")
                        + ": two diodes in series on one current have blocking voltages that nothing determines "
                        "(each blocking row holds the same current)",
                        f"remove {name}" if twin else "describe them as one diode (forward voltages and "
                        "on-resistances added), or give each its own charge coordinate")
                continue
            out.append(diode)
        return tuple(out)

    def _flow_is_a_current(self, entry: str, coordinate: str) -> bool:
        """Check that a diode's flow is a current; else record the problem.

        Its coordinate is a charge (unit C, A.s) or has no unit.
        """
        unit = next((c.unit for c in self.symbols.coordinates if c.name == coordinate), "")
        base = parse_unit(unit) if unit else None
        if base is None and unit:
            return True  # a unit nhbridge cannot reduce to base units: left to the unit checks
        charge = parse_unit("C")
        if base is None or (charge is not None and base.exponents == charge.exponents):
            return True
        self.add(entry, f"the flow der({coordinate}) of a diode must be a current, but {coordinate} has the unit "
                     f"{unit!r} (so its flow is in {unit}/s, not A)",
                     "a diode sits on the current der(q) of a charge coordinate q (unit C); a one-way element on "
                     "a mechanical coordinate is friction or a constraint, not a diode")
        return False
