"""The reader of the ``[dynamic]``, ``[efforts]``, ``[friction]`` and ``[diodes]`` tables
(:mod:`bridge.model.efforts`): names declared first, expressions parsed once every name is known."""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from . import symbols as S
from .efforts import (
    DIODE_KEYS,
    DYNAMIC_KEYS,
    EFFORT_KEYS,
    FRICTION_KEYS,
    INTEGRAL_SUFFIX,
    REGULARIZATION_FLOOR,
    Diode,
    Dynamic,
    Effort,
    Friction,
    affine_problem,
    integral_unit,
)
from .read_context import ReadContext
from .system import Coordinate
from .units import parse_unit

__all__ = ["EffortTables"]


class EffortTables:
    """The four tables, read in two passes (declare names first, parse later) with the reading's context.

    Parameters
    ----------
    ctx : ReadContext
        The tables, the symbol table and the problems of the file being read.
    """

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.add = ctx.tables.add
        self.effort_specs: dict[str, dict] = {}
        self.dynamic_specs: dict[str, dict] = {}
        self.dynamic_units: dict[str, str] = {}
        self.dynamic_starts: dict[str, float] = {}
        self.smooth: dict[sp.Symbol, sp.Expr] = {}  # regularised friction elements -> their smooth forces

    # -- pass 1: names --------------------------------------------------------------------------------------
    def declare(self) -> None:
        """Declare the dynamic variables (with their auxiliary coordinates) and the efforts, so that every
        expression may refer to them."""
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
            self.dynamic_starts[name] = start  # read once: a refused value is reported once
            self.symbols.add_coordinate(Coordinate(hidden, 0.0, start, integral_unit(unit), "time integral of the "
                                                   f"dynamic variable {name} (its flow is {name})"), auxiliary=True)
            self.symbols.add_symbol(name, S.qd(hidden))
            self.dynamic_specs[name] = spec
            self.dynamic_units[name] = unit
        for name, spec in self.tables.table("efforts").items():
            entry = f"efforts.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ constraint = "{name} - ..." }}')
                continue
            self.tables.check_keys(entry, spec, EFFORT_KEYS)
            if self.tables.declare(entry, name, "effort"):
                self.symbols.add_symbol(name, sp.Symbol(name))
                self.effort_specs[name] = spec
        self.friction_specs: dict[str, dict] = {}
        for name, spec in self.tables.table("friction").items():
            entry = f"friction.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ coordinate = "x", normal = "m*g", '
                        "mu_static = 0.4, mu_kinetic = 0.3 }")
                continue
            self.tables.check_keys(entry, spec, FRICTION_KEYS)
            if self.tables.declare(entry, name, "friction element"):
                self.friction_specs[name] = spec
                self.symbols.add_symbol(name, sp.Symbol(name))  # its force, e.g. a reaction on another coordinate
        self.diode_specs: dict[str, dict] = {}
        for name, spec in self.tables.table("diodes").items():
            entry = f"diodes.{name}"
            if not isinstance(spec, dict):
                self.add(entry, "expected an inline table", f'write {name} = {{ flow = "der(q)" }}')
                continue
            self.tables.check_keys(entry, spec, DIODE_KEYS)
            if self.tables.declare(entry, name, "diode"):
                self.diode_specs[name] = spec
                self.symbols.add_symbol(name, sp.Symbol(name))  # its voltage

    def diodes(self) -> tuple[Diode, ...]:
        """The diodes, each on the velocity of a coordinate (a charge)."""
        out: list[Diode] = []
        coords = {S.qd(c.name): c.name for c in self.symbols.coordinates if not c.name.endswith(INTEGRAL_SUFFIX)}
        for name, spec in self.diode_specs.items():
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
                           if flow in self.hidden_symbols else ""))
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
        """A diode's flow is a current: its coordinate is a charge (unit C, A.s) or has no unit; else record the
        problem."""
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

    def friction(self, forces: dict[str, sp.Expr]) -> tuple[Friction, ...]:
        """The friction elements; a regularised one is added to ``forces`` as a smooth force instead (and its name
        stands for that force where another entry uses it: :meth:`substitute_smooth`)."""
        out = []
        coords = [c.name for c in self.symbols.coordinates if not c.name.endswith(INTEGRAL_SUFFIX)]
        for name, spec in self.friction_specs.items():
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
            bad = (normal.free_symbols | vr.free_symbols) & (self.unknown_symbols | self.hidden_symbols)
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
        """Replace the name of every regularised friction element by its smooth force in these tables (forces,
        outputs): such an element has no unknown of its own."""
        for table in tables:
            for key, expr in table.items():
                if expr.free_symbols & set(self.smooth):
                    table[key] = expr.xreplace(self.smooth)

    @property
    def effort_symbols(self) -> set[sp.Symbol]:
        return {sp.Symbol(n) for n in self.effort_specs}

    @property
    def element_symbols(self) -> set[sp.Symbol]:
        """The friction forces and diode voltages: unknowns of the dynamic system like the efforts."""
        return {sp.Symbol(n) for n in (*self.friction_specs, *self.diode_specs)}

    @property
    def unknown_symbols(self) -> set[sp.Symbol]:
        return self.effort_symbols | self.element_symbols

    @property
    def hidden_symbols(self) -> set[sp.Symbol]:
        hidden = [n + INTEGRAL_SUFFIX for n in self.dynamic_specs]
        return {S.q(h) for h in hidden} | {S.qd(h) for h in hidden}

    # -- pass 2: expressions --------------------------------------------------------------------------------
    def parse(self, energies: dict[str, sp.Expr | None], forces: dict[str, sp.Expr],
              constraints: dict[str, sp.Expr], outputs: dict[str, sp.Expr]):
        """The efforts and dynamic variables; problems recorded in the builder. ``energies`` and
        ``constraints`` (entry -> expression) must not contain efforts or dynamic variables."""
        E = self.effort_symbols
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
        for name in self.dynamic_specs:
            if name + INTEGRAL_SUFFIX in forces:
                self.add(f"forces.{name}{INTEGRAL_SUFFIX}", f"{name}{INTEGRAL_SUFFIX} carries the dynamic variable "
                        f"{name}; it takes no force", f"give the rate of {name} under [dynamic] instead")
        for cname, expr in forces.items():
            v = affine_problem(expr, U)
            if v is not None:
                self.add(f"forces.{cname}", f"the force is not affine in {v} (an effort, friction force or diode "
                        "voltage)", "these unknowns enter the forces linearly (e.g. tau or k*tau), so that they are "
                        "solved with the accelerations; introduce another effort for a non-linear relation")
        efforts = tuple(self._effort(name, spec, E, U) for name, spec in self.effort_specs.items())
        dynamic = tuple(self._dynamic(name, spec, U) for name, spec in self.dynamic_specs.items())
        return tuple(e for e in efforts if e is not None), tuple(d for d in dynamic if d is not None)

    @staticmethod
    def _names(names: list[str]) -> str:
        return ", ".join(n[4:-1][: -len(INTEGRAL_SUFFIX)] if n.startswith("der(") and n.endswith(
            INTEGRAL_SUFFIX + ")") else n for n in names)

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
        unit = self.dynamic_units.get(name, "")
        description = self.tables.text(f"{entry}.description", spec.get("description"))
        return Dynamic(name, self.dynamic_starts.get(name, 0.0), expr, name + INTEGRAL_SUFFIX, unit, description)
