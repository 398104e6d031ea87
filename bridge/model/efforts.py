"""Effort variables and dynamic variables: the ``[efforts]`` and ``[dynamic]`` tables of a system file.

The seed (Lagrange's equation with displacement and effort constraints, eq. 4.4) admits constraints

    Gamma_j(q, f, e, s, t) = 0,   j = 1..m_e,

in the displacements q, the flows f = q', the effort variables e and the dynamic variables s; they come
from regulated effort sources (DC motors, diodes, Coulomb friction) and are *kept* in this algebraic
form instead of being solved for e.

* An **effort** ``e_j`` is an unknown of the dynamic system, like a multiplier. It may enter the
  generalized forces ``Q(q, q', e, s, t)`` and the rates of the dynamic variables, affinely; its
  constraint ``Gamma_j`` (affine in e, no accelerations) is a row of the mass-matrix system
  ``dGamma/de e = -Gamma|_{e=0}``, solved numerically together with the accelerations.
* A **dynamic variable** ``s_k`` is a first-order state with its own rate ``s_k' = r_k(q, q', e, s, t)``
  (an armature current, a flux, a controller state). It is carried as the flow of an auxiliary
  displacement ``<s>_integral`` (its time integral, start 0): the displacement's row of the dynamic
  system is replaced by ``der(der(<s>_integral)) - dr/de e = r|_{e=0}``, so every stage that handles
  coordinates handles it. The variable itself is an output of the same name.

Efforts and dynamic variables may appear in ``[forces]``, in effort constraints, in rates and in ``[outputs]``
(an output with an effort is evaluated from the solution of the dynamic system at the same point); never in the
energies or the displacement constraints, which the derivation differentiates.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import sympy as sp

from . import symbols as S
from .units import parse_unit

EFFORT_KEYS = {"constraint", "unit", "description"}
FRICTION_KEYS = {"coordinate", "normal", "mu_static", "mu_kinetic", "relative_velocity", "regularization",
                 "description"}
DYNAMIC_KEYS = {"start", "rate", "unit", "description"}
#: the smallest regularization velocity: the integrators resolve a velocity v to a relative precision of about
#: 100 ulps (2.2e-14, the FMU's smallest tolerance; the native default is 1e-10), i.e. to ~1e-10 for |v| up to 1e4,
#: and a narrower transition of tanh(v_r/v_eps) is a sign function to them (with a stiffness mu_k N / v_eps)
REGULARIZATION_FLOOR = 1e-10
INTEGRAL_SUFFIX = "_integral"


@dataclass(frozen=True)
class Effort:
    """An effort variable e fixed by its constraint ``Gamma(q, q', e, s, t) = 0`` (affine in the efforts)."""

    name: str
    constraint: sp.Expr
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        return sp.Symbol(self.name)


@dataclass(frozen=True)
class Dynamic:
    """A dynamic variable s with ``s' = rate(q, q', e, s, t)``, carried as ``der(<coordinate>)``."""

    name: str
    start: float
    rate: sp.Expr
    coordinate: str  # the auxiliary displacement (time integral of s)
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The symbol standing for s in every expression: the velocity of the auxiliary coordinate."""
        return S.qd(self.coordinate)


@dataclass(frozen=True)
class Friction:
    """Coulomb friction on a coordinate: the generalized force F on ``coordinate`` is, with the relative velocity
    v_r(q, q', t) and the normal force N(q, q', t) >= 0,

    * slip (v_r != 0): ``F = -mu_kinetic N sign(v_r)``;
    * stick (v_r = 0): the effort that keeps ``dv_r/dt = 0``, as long as ``|F| <= mu_static N``.

    The switching is located by events (:mod:`bridge.simulation.events`). With ``regularization = v_eps > 0``
    the element is the smooth force ``-mu_kinetic N tanh(v_r/v_eps)`` instead (no stick, no events). An
    element whose stick limit ``mu_static N`` is identically 0 (``mu_static = 0``, or the normal force 0) exerts
    no force in any mode: it is :attr:`inert`, a zero force without modes or events."""

    name: str
    coordinate: str
    normal: sp.Expr
    mu_static: float
    mu_kinetic: float
    relative_velocity: sp.Expr
    regularization: float = 0.0
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The friction force, an unknown of the dynamic system like an effort."""
        return sp.Symbol(self.name)

    @property
    def inert(self) -> bool:
        """No force in any mode: the stick limit ``mu_static N`` is identically 0 (then so is ``mu_kinetic N``)."""
        return self.mu_static == 0 or self.normal.is_zero is True


DIODE_KEYS = {"flow", "forward_voltage", "on_resistance", "off_conductance", "description"}


@dataclass(frozen=True)
class Diode:
    """A diode on the flow ``der(coordinate)`` (a current: the coordinate is a charge), as the MSL's
    ``Modelica.Electrical.Analog.Ideal.IdealDiode``: its voltage v (an effort, the generalized force ``-v`` on
    the coordinate) and current i = der(coordinate) satisfy, with the knee voltage V_f,

    * conducting: ``v = V_f + R_on (i - G_off V_f)``, until ``i - G_off V_f`` falls to 0;
    * blocking:   ``i = G_off v`` (ideal, G_off = 0: ``i = 0``, kept as ``di/dt = 0``), until ``v`` rises to V_f.
    """

    name: str
    coordinate: str
    forward_voltage: float = 0.0
    on_resistance: float = 0.0
    off_conductance: float = 0.0
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The diode voltage, an unknown of the dynamic system like an effort."""
        return sp.Symbol(self.name)


def integral_unit(unit: str) -> str:
    if not unit:
        return ""
    return "s" if unit == "1" else f"{unit}.s"


def affine_problem(expr: sp.Expr, variables: set[sp.Symbol]) -> sp.Symbol | None:
    """The first of ``variables`` in which ``expr`` is not affine (its derivative contains one of them)."""
    for v in sorted(expr.free_symbols & variables, key=str):
        if sp.diff(expr, v).free_symbols & variables:
            return v
    return None


class EffortTables:
    """The two tables, read in two passes by the loader's builder ``b`` (declare names first, parse later)."""

    def __init__(self, b: Any):
        self.b = b
        self.effort_specs: dict[str, dict] = {}
        self.dynamic_specs: dict[str, dict] = {}
        self.dynamic_units: dict[str, str] = {}
        self.dynamic_starts: dict[str, float] = {}
        self.smooth: dict[sp.Symbol, sp.Expr] = {}  # regularised friction elements -> their smooth forces

    # -- pass 1: names --------------------------------------------------------------------------------------
    def declare(self) -> None:
        """Declare the dynamic variables (with their auxiliary coordinates) and the efforts, so that every
        expression may refer to them."""
        from .system import Coordinate

        b = self.b
        for name, spec in b.table("dynamic").items():
            entry = f"dynamic.{name}"
            if not isinstance(spec, dict):
                b.p.add(entry, "expected an inline table", f'write {name} = {{ start = 0.0, rate = "..." }}')
                continue
            b.check_keys(entry, spec, DYNAMIC_KEYS)
            if not b.declare(entry, name, "dynamic variable"):
                continue
            hidden = name + INTEGRAL_SUFFIX
            if not b.declare(entry, hidden, "integral of a dynamic variable"):
                continue
            unit = b.unit(f"{entry}.unit", spec.get("unit"))
            before = len(b.p.problems)
            start = b.number(f"{entry}.start", spec.get("start"), required=False)
            if len(b.p.problems) > before and hasattr(b, "bad_values"):
                b.bad_values.add(S.qd(hidden))
            self.dynamic_starts[name] = start  # read once: a refused value is reported once
            b.coords.append(Coordinate(hidden, 0.0, start, integral_unit(unit),
                                       f"time integral of the dynamic variable {name} (its flow is {name})"))
            b.symbols[hidden] = S.q(hidden)
            b.auxiliary_coordinates = (*getattr(b, "auxiliary_coordinates", ()), hidden)
            b.symbols[name] = S.qd(hidden)
            self.dynamic_specs[name] = spec
            self.dynamic_units[name] = unit
        for name, spec in b.table("efforts").items():
            entry = f"efforts.{name}"
            if not isinstance(spec, dict):
                b.p.add(entry, "expected an inline table", f'write {name} = {{ constraint = "{name} - ..." }}')
                continue
            b.check_keys(entry, spec, EFFORT_KEYS)
            if b.declare(entry, name, "effort"):
                b.symbols[name] = sp.Symbol(name)
                self.effort_specs[name] = spec
        self.friction_specs: dict[str, dict] = {}
        for name, spec in b.table("friction").items():
            entry = f"friction.{name}"
            if not isinstance(spec, dict):
                b.p.add(entry, "expected an inline table", f'write {name} = {{ coordinate = "x", normal = "m*g", '
                        "mu_static = 0.4, mu_kinetic = 0.3 }")
                continue
            b.check_keys(entry, spec, FRICTION_KEYS)
            if b.declare(entry, name, "friction element"):
                self.friction_specs[name] = spec
                b.symbols[name] = sp.Symbol(name)  # its force, e.g. a reaction on another coordinate
        self.diode_specs: dict[str, dict] = {}
        for name, spec in b.table("diodes").items():
            entry = f"diodes.{name}"
            if not isinstance(spec, dict):
                b.p.add(entry, "expected an inline table", f'write {name} = {{ flow = "der(q)" }}')
                continue
            b.check_keys(entry, spec, DIODE_KEYS)
            if b.declare(entry, name, "diode"):
                self.diode_specs[name] = spec
                b.symbols[name] = sp.Symbol(name)  # its voltage

    def diodes(self) -> tuple[Diode, ...]:
        """The diodes, each on the velocity of a coordinate (a charge)."""
        b = self.b
        out = []
        coords = {S.qd(c.name): c.name for c in b.coords if not c.name.endswith(INTEGRAL_SUFFIX)}
        for name, spec in self.diode_specs.items():
            entry = f"diodes.{name}"
            text = spec.get("flow")
            if text is None:
                b.p.add(f"{entry}.flow", "the flow is missing", 'write flow = "der(q)" with the charge coordinate q')
                continue
            flow = b.parse(f"{entry}.flow", text)
            if flow is None:
                continue
            if flow not in coords:
                b.p.add(f"{entry}.flow", f"{text!r} is not a flow: a diode sits on the velocity der(q) of a "
                        "coordinate (the current of a charge q)",
                        "declare the charge through the diode as a coordinate and write flow = \"der(<charge>)\""
                        + (f"; {text} is a dynamic variable, not a coordinate's velocity"
                           if flow in self.hidden_symbols else ""))
                continue
            if not self._flow_is_a_current(f"{entry}.flow", coords[flow]):
                continue
            values = {}
            for key in ("forward_voltage", "on_resistance", "off_conductance"):
                values[key] = b.number(f"{entry}.{key}", spec.get(key), required=False)
                if values[key] < 0:
                    b.p.add(f"{entry}.{key}", f"{key} is negative ({values[key]:g})",
                            "give 0 for the ideal element or a positive value")
            if any(v < 0 for v in values.values()):
                continue
            if values["on_resistance"] * values["off_conductance"] >= 1:
                b.p.add(entry, "on_resistance*off_conductance must be below 1 (the conducting branch must be "
                        "steeper than the blocking one)", "use a small on-resistance and off-conductance")
                continue
            diode = Diode(name, coords[flow], **values,
                          description=b.text(f"{entry}.description", spec.get("description")))
            same = next((d for d in out if d.coordinate == diode.coordinate), None)
            if same is not None:
                twin = replace(diode, name=same.name, description=same.description) == same
                b.p.add(f"{entry}.flow", (f"{name} duplicates the diode {same.name} (the same flow "
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
        unit = next((c.unit for c in self.b.coords if c.name == coordinate), "")
        base = parse_unit(unit) if unit else None
        if base is None and unit:
            return True  # a unit nhbridge cannot reduce to base units: left to the unit checks
        if base is None or base.exponents == parse_unit("C").exponents:
            return True
        self.b.p.add(entry, f"the flow der({coordinate}) of a diode must be a current, but {coordinate} has the unit "
                     f"{unit!r} (so its flow is in {unit}/s, not A)",
                     "a diode sits on the current der(q) of a charge coordinate q (unit C); a one-way element on "
                     "a mechanical coordinate is friction or a constraint, not a diode")
        return False

    def friction(self, forces: dict[str, sp.Expr]) -> tuple[Friction, ...]:
        """The friction elements; a regularised one is added to ``forces`` as a smooth force instead (and its name
        stands for that force where another entry uses it: :meth:`substitute_smooth`)."""
        b = self.b
        out = []
        coords = [c.name for c in b.coords if not c.name.endswith(INTEGRAL_SUFFIX)]
        for name, spec in self.friction_specs.items():
            entry = f"friction.{name}"
            coord = spec.get("coordinate")
            if not isinstance(coord, str) or coord not in coords:
                b.p.add(f"{entry}.coordinate", f"{coord!r} is not a coordinate" if coord is not None
                        else "the coordinate is missing", "name the coordinate the friction force acts on: "
                        + ", ".join(coords))
                continue
            before = len(b.p.problems)
            mu_s = b.number(f"{entry}.mu_static", spec.get("mu_static"))
            mu_k = b.number(f"{entry}.mu_kinetic", spec.get("mu_kinetic"))
            eps = b.number(f"{entry}.regularization", spec.get("regularization"), required=False)
            refused = len(b.p.problems) > before  # no comparison of a refused value
            if not refused and (mu_k < 0 or mu_s < 0):
                b.p.add(entry, f"a friction coefficient is negative (mu_static = {mu_s:g}, mu_kinetic = {mu_k:g})",
                        "friction coefficients are >= 0")
                continue
            if not refused and mu_s < mu_k:
                b.p.add(f"{entry}.mu_static", f"the static coefficient {mu_s:g} is below the kinetic one {mu_k:g}",
                        "Coulomb friction needs mu_static >= mu_kinetic (equal for a plain Coulomb law)")
                continue
            if not refused and eps < 0:
                b.p.add(f"{entry}.regularization", f"the regularization velocity {eps:g} is negative",
                        "give a small positive velocity (e.g. 1e-4) to smooth the law, or leave it out for events")
                continue
            if 0 < eps < REGULARIZATION_FLOOR:
                b.p.add(f"{entry}.regularization", f"the regularization velocity {eps:g} is below the floor "
                        f"{REGULARIZATION_FLOOR:g}: the smooth law -mu_kinetic*N*tanh(v_r/{eps:g}) turns within about "
                        f"+-{eps:g} of v_r = 0, and the integrators resolve a velocity v only to a relative precision "
                        "of about 2.2e-14 (100 ulps, the FMU's smallest tolerance; the native default is 1e-10), "
                        "i.e. to about 1e-10 for velocities up to 1e4: a narrower transition is a sign function to "
                        "them, and its stiffness mu_kinetic*N/regularization makes their steps vanish",
                        f"give a regularization of at least {REGULARIZATION_FLOOR:g} (typically 1e-4 of the "
                        "velocities), or leave it out for stick and slip located by events")
                continue
            if "normal" not in spec:
                b.p.add(f"{entry}.normal", "the normal force is missing", 'write normal = "m*g" (>= 0)')
                continue
            normal = b.expression(f"{entry}.normal", spec["normal"], velocities=True, inputs_ok=True,
                                  what="the normal force")
            vr = b.expression(f"{entry}.relative_velocity", spec.get("relative_velocity", f"der({coord})"),
                              velocities=True, inputs_ok=True, what="the relative velocity")
            if normal is None or vr is None:
                continue
            if not (vr.free_symbols & b.velocity_symbols()):
                b.p.add(f"{entry}.relative_velocity", "the relative velocity contains no velocity der(...)",
                        f'write it in the velocities, e.g. "der({coord}) - v_belt"')
                continue
            bad = (normal.free_symbols | vr.free_symbols) & (self.unknown_symbols | self.hidden_symbols)
            if bad:
                b.p.add(entry, "the normal force and relative velocity may not contain efforts, friction forces, "
                        "diode voltages or dynamic variables",
                        "write them in coordinates, velocities, parameters, inputs and time")
                continue
            description = b.text(f"{entry}.description", spec.get("description"))
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
        b = self.b
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
                b.p.add(entry, f"{self._names(bad)} may not appear here (an effort, friction force, diode voltage or "
                        "dynamic variable)",
                        "efforts and dynamic variables enter through [forces], effort constraints, rates and "
                        "[outputs]; the energies and displacement constraints are differentiated by the derivation")
        for name in self.dynamic_specs:
            if name + INTEGRAL_SUFFIX in forces:
                b.p.add(f"forces.{name}{INTEGRAL_SUFFIX}", f"{name}{INTEGRAL_SUFFIX} carries the dynamic variable "
                        f"{name}; it takes no force", f"give the rate of {name} under [dynamic] instead")
        for cname, expr in forces.items():
            v = affine_problem(expr, U)
            if v is not None:
                b.p.add(f"forces.{cname}", f"the force is not affine in {v} (an effort, friction force or diode "
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
        b = self.b
        entry = f"efforts.{name}"
        unit = b.unit(f"{entry}.unit", spec.get("unit"))
        description = b.text(f"{entry}.description", spec.get("description"))
        if "constraint" not in spec:
            b.p.add(f"{entry}.constraint", f"the effort {name} has no constraint, so nothing determines it",
                    f'write {name} = {{ constraint = "{name} - k*der(x)" }} (Gamma(q, der(q), e, s, t) = 0), or '
                    "give the force as an expression under [forces] instead of an effort")
            return None
        expr = b.expression(f"{entry}.constraint", spec["constraint"], velocities=True, inputs_ok=True,
                            what="an effort constraint")
        if expr is None:
            return None
        if not (expr.free_symbols & E):
            b.p.add(f"{entry}.constraint", "the constraint names no effort",
                    f"an effort constraint Gamma(q, der(q), e, s, t) = 0 determines efforts; write it in {name} "
                    f'(e.g. "{name} - k*der(x)")')
            return None
        v = affine_problem(expr, U)
        if v is not None:
            b.p.add(f"{entry}.constraint", f"the constraint is not affine in the effort {v}",
                    "nhbridge keeps Gamma = 0 as linear rows dGamma/de*e = -Gamma(e=0) solved with the "
                    "accelerations; write it linearly in the efforts")
            return None
        return Effort(name, expr, unit, description)

    def _dynamic(self, name: str, spec: dict, E: set[sp.Symbol]) -> Dynamic | None:
        b = self.b
        entry = f"dynamic.{name}"
        if "rate" not in spec:
            b.p.add(f"{entry}.rate", f"the rate of {name} is missing",
                    f'write {name} = {{ start = 0.0, rate = "..." }} with the rate der({name}) as an expression')
            return None
        expr = b.expression(f"{entry}.rate", spec["rate"], velocities=True, inputs_ok=True, what="a rate")
        if expr is None:
            return None
        v = affine_problem(expr, E)
        if v is not None:
            b.p.add(f"{entry}.rate", f"the rate is not affine in the effort {v}",
                    "efforts enter rates linearly; introduce another effort for a non-linear relation")
            return None
        unit = self.dynamic_units.get(name, "")
        description = b.text(f"{entry}.description", spec.get("description"))
        return Dynamic(name, self.dynamic_starts.get(name, 0.0), expr, name + INTEGRAL_SUFFIX, unit, description)


def dynamic_outputs(dynamic: tuple[Dynamic, ...]) -> tuple[dict, dict, dict]:
    """(expressions, units, descriptions) of the outputs that report the dynamic variables."""
    return ({d.name: d.symbol for d in dynamic}, {d.name: d.unit for d in dynamic if d.unit},
            {d.name: d.description or f"dynamic variable {d.name}" for d in dynamic})


def _start_point(system) -> list[float]:
    """The values of :func:`~bridge.model.mechanics.state_args` at the start state (t = 0)."""
    return [0.0, *[c.start for c in system.coordinates], *[c.velocity for c in system.coordinates],
            *[p.value for p in system.parameters], *[u.start for u in system.inputs]]


#: the hint of a normal force that is negative, at the start (the loader) or during a run (simulation, FMU)
NEGATIVE_NORMAL_HINT = ("Coulomb friction needs a normal force N >= 0 (a contact that lifts off, N < 0, is a "
                        "different model: the friction law would feed energy in); check its sign and the values "
                        "it depends on")


def friction_normal_problems(system) -> list[tuple[str, str, str]]:
    """(entry, message, hint) for every friction element whose normal force is negative or not finite at the
    start state (also an inert one: its normal force is still a statement about the contact)."""
    from .mechanics import state_args
    from .numeric import evaluate_once

    elements = getattr(system, "friction", ())
    if not elements:
        return []
    values = evaluate_once(state_args(system), [f.normal for f in elements], _start_point(system))
    out = []
    for f, N in zip(elements, values):
        if not np.isfinite(N):
            out.append((f"friction.{f.name}.normal", f"the normal force is not finite at the start state (N = {N})",
                        "check the expression and the start values it depends on"))
        elif N < 0:
            out.append((f"friction.{f.name}.normal", f"the normal force of {f.name} is negative at the start state "
                        f"(N = {N:.6g} at t = 0)", NEGATIVE_NORMAL_HINT))
    return out


def effort_jacobian_problems(system) -> list[tuple[str, str, str]]:
    """(entry, message, hint) when ``dGamma/de`` is singular at the start state: the constraints do not
    determine their efforts. Columns and rows are scaled to unit length, so the test does not depend on units."""
    from .mechanics import state_args
    from .numeric import evaluate_once

    if not system.efforts:
        return []
    E = [e.symbol for e in system.efforts]
    J = [sp.diff(e.constraint, x) for e in system.efforts for x in E]
    Jn = evaluate_once(state_args(system), J, _start_point(system)).reshape(len(E), len(E))
    names = [e.name for e in system.efforts]
    if not np.all(np.isfinite(Jn)):
        return [("efforts", "the effort constraints cannot be evaluated at the start state (not finite)",
                 "check the start values against the constraint expressions")]
    out = []
    rank = 0
    rows = Jn / np.where(np.linalg.norm(Jn, axis=1) > 0, np.linalg.norm(Jn, axis=1), 1.0)[:, None]
    for k in range(len(E)):
        r = np.linalg.matrix_rank(rows[: k + 1], tol=1e-9) if np.any(rows[: k + 1]) else 0
        if r == rank:
            out.append((f"efforts.{names[k]}.constraint",
                        f"the constraint does not determine its effort at the start state (dGamma/de is singular: "
                        f"it is dependent on the constraints before it or does not depend on the efforts "
                        f"{', '.join(names)} there)",
                        f"make the constraint of {names[k]} depend on {names[k]} (e.g. \"{names[k]} - k*der(x)\")"))
        rank = r
    return out
