"""The ``[frames]``, ``[points]``, ``[bodies]``, ``[particles]``, ``[gravity]``, ``[loads]`` and ``[contacts]``
tables: a :class:`~bridge.model.multibody.Multibody` and what the system takes from it.

* frames: elementary rotations (``axis``/``angle`` or a sequence ``axes``/``angles``) or direction cosines
  (``dcm``, ``v_parent = C v_child``) relative to a ``parent`` (default N, the inertial frame);
* points, bodies' mass centres (``com``), particles' positions: vector expressions (:mod:`.vectors`),
  N components, velocities ``v = d r/dt``; angular velocities from :mod:`.frames`;
* ``T = sum 1/2 m v.v + 1/2 w.(I w)``, ``V = -sum m g.r``, ``Q_i = sum F . dv_P/dq'_i + M . dw/dq'_i``
  (:class:`Multibody`); the ``[energy]`` and ``[forces]`` entries of the file are added to them;
* contacts (:mod:`.contacts`) add constraints after those of ``[constraints]``.

Every problem is reported at its entry (``bodies.disk.inertia``), all at once with the rest of the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sympy as sp

from . import symbols as S
from .expressions import MAX_TREE_SIZE, ExpressionError, caret, parse_expression, tree_size
from .frame_table import FrameTable
from .frames import INERTIAL, Frame
from .load_table import LoadTable
from .multibody import ZERO, Body, Multibody, Vector
from .names import suggest as _suggest
from .numeric import evaluate_once
from .trig import tidy_trig
from .values import inertia_problem, positive_problem
from .vectors import parse_matrix, parse_scalar, parse_vector

TABLES = ("frames", "points", "bodies", "particles", "gravity", "loads", "contacts")
FRAME_KEYS = {"parent", "axis", "angle", "axes", "angles", "dcm", "description"}
POINT_KEYS = {"position", "description"}
BODY_KEYS = {"mass", "frame", "com", "inertia", "description", "shape"}  # shape: drawn by bridge.animation
PARTICLE_KEYS = {"mass", "position", "description"}
GRAVITY_KEYS = {"vector"}


def uses_bodies(data: Mapping[str, Any]) -> bool:
    """Whether a system file describes (part of) its system by bodies."""
    return any(key in data for key in TABLES)




class _Broken(ExpressionError):
    """A reference to an entry whose problem is reported at that entry."""


@dataclass
class BodyModel:
    """What the tables contribute: the multibody, T, V, Q by coordinate, and labelled constraints."""

    multibody: Multibody
    kinetic: sp.Expr
    potential: sp.Expr
    forces: dict[str, sp.Expr]
    holonomic: list[tuple[str, sp.Expr]] = field(default_factory=list)
    nonholonomic: list[tuple[str, sp.Expr]] = field(default_factory=list)


class BodyReader(FrameTable, LoadTable):
    """Reads the tables with the system file's builder (names, scalar parser, problems); the vector
    expressions' :class:`~bridge.model.vectors.Context`."""

    def __init__(self, builder, reported: type[Exception]):
        self.b = builder
        self.p = builder.p
        self.reported = (reported, _Broken)
        self.frames: dict[str, Frame | None] = {"N": INERTIAL}
        self.frame_specs: dict[str, dict] = {}
        self.located: dict[str, tuple[str, str, Any]] = {}  # name -> (entry, key, text) of a position
        self.positions: dict[str, Vector | None] = {}
        self._locating: list[str] = []
        self.body_frame: dict[str, str] = {}
        self.positive: list[tuple[str, str, sp.Expr]] = []  # constants checked positive besides masses
        self.rotation_watch: list[tuple[str, sp.ImmutableMatrix]] = []  # dcm frames not proven orthonormal
        self.body_names: set[str] = set()      # declared under [bodies] (whether or not their entries hold)
        self.particle_names: set[str] = set()  # declared under [particles]

    # -- the vector expressions' context ------------------------------------------------
    def frame_matrix(self, name: str, pos: int) -> sp.Matrix | None:
        if name not in self.frames:
            return None
        frame = self.frames[name]
        if frame is None:
            raise _Broken(f"the frame {name!r} is broken (reported there)", pos)
        return frame.rotation

    def point(self, name: str, pos: int) -> Vector | None:
        if name in self.positions:
            v = self.positions[name]
            if v is None:
                raise _Broken(f"{name!r} is broken (reported there)", pos)
            return v
        if name not in self.located:
            return None
        if name in self._locating:
            cycle = " -> ".join(self._locating[self._locating.index(name):] + [name])
            raise ExpressionError(f"positions refer to each other in a cycle: {cycle}", pos,
                                  "define one of them without the others")
        entry, _key, text = self.located[name]
        self._locating.append(name)
        try:
            self.positions[name] = self.vector(entry, text, what="a position")
        finally:
            self._locating.pop()
        return self.point(name, pos)

    def scalar(self, text: str, offset: int) -> sp.Expr:
        try:
            return parse_expression(text, self.b.resolve, self.b.der)
        except self.reported:
            raise
        except ExpressionError as exc:
            if exc.position is not None:
                exc.position += offset
            raise

    def der(self, expr: sp.Expr, pos: int) -> sp.Expr:
        return self.b.der(expr, pos)

    def frame_names(self) -> list[str]:
        """The declared frames (N first), for did-you-mean hints."""
        return list(self.frames)

    def not_a_body(self, name: Any, what: str = "a rigid body") -> tuple[str, str]:
        """(message, hint) for a reference ``name`` that is not a usable body: a body whose own entry has errors
        (reported there), a particle, or an unknown name with the closest declared body."""
        if isinstance(name, str) and name in self.body_names:
            return (f"{name!r} has errors above (bodies.{name})", "fix that entry; this reference is then checked")
        if isinstance(name, str) and name in self.particle_names:
            return (f"{name!r} is a particle, not {what}", f"declare {name} under [bodies] with a frame and an "
                    "inertia tensor")
        return (f"{name!r} is not {what}",
                _suggest(str(name), sorted(self.body_names)) or "name a body of [bodies] (it needs a frame)")

    # -- entries -------------------------------------------------------------------------
    def _parse(self, entry: str, text: Any, parse, what: str):
        if not isinstance(text, str):
            self.p.add(entry, f"expected an expression string, got {type(text).__name__}",
                       f'write {what} in quotes, e.g. "[0, 0, -g]" for a vector or "m" for a scalar')
            return None
        try:
            return parse(text, self)
        except self.reported:
            return None
        except ExpressionError as exc:
            self.p.add(entry, f"{exc.message}{caret(text, exc.position)}", exc.hint)
            return None
        except RecursionError:
            self.p.add(entry, "expression is nested too deep", "split it into [points] or [definitions]")
            return None

    def _check(self, entry: str, exprs, *, velocities: bool, inputs_ok: bool, what: str) -> bool:
        """Tree size, finiteness and the allowed variables of parsed components."""
        for e in exprs:
            if e.has(sp.nan):
                return False  # a broken definition, reported there
            if tree_size(e) > MAX_TREE_SIZE:
                self.p.add(entry, f"{what} is too large (more than {MAX_TREE_SIZE} operations)",
                           "simplify it or split the model")
                return False
            if e.has(sp.zoo) or e.has(sp.oo) or e.has(sp.I):
                self.p.add(entry, f"{what} is not a finite real number", "check for a division by zero")
                return False
            if not self.b.variables_allowed(
                    entry, e, velocities=velocities, inputs_ok=inputs_ok, what=what, accelerations="",
                    hints=("write it with positions and velocities",
                           "positions and angles are functions of the coordinates and time only",
                           "inputs may appear in loads and [forces]")):
                return False
        return True

    def vector(self, entry: str, text: Any, *, velocities: bool = False, inputs_ok: bool = False,
               what: str = "the vector") -> Vector | None:
        v = self._parse(entry, text, parse_vector, what)
        if v is None or not self._check(entry, v, velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        return v

    def scalar_entry(self, entry: str, text: Any, *, velocities: bool = False, inputs_ok: bool = False,
                     what: str = "the expression") -> sp.Expr | None:
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            text = repr(text)
        e = self._parse(entry, text, parse_scalar, what)
        if e is None or not self._check(entry, [e], velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        return e

    def constant(self, entry: str, text: Any, what: str, positive: bool = True) -> sp.Expr | None:
        """A constant (parameters only) scalar, positive at the parameter values."""
        e = self.scalar_entry(entry, text, what=what)
        if e is None:
            return None
        if e.free_symbols & (self.b.position_symbols() | {S.t}):
            self.p.add(entry, f"{what} must be a constant (parameters only)", "remove coordinates and t from it")
            return None
        if positive and not self.known([e]):
            return None  # its value is refused where it is given
        if positive:
            problem = positive_problem(what, float(self.values([e])[0]))
            if problem:
                self.p.add(entry, *problem)
                return None
            if what != "the mass":  # masses are checked again from the bodies themselves
                self.positive.append((entry, what, e))
        return e

    def known(self, exprs) -> bool:
        """Whether the expressions' values can be checked: none depends on a value refused already."""
        bad = getattr(self.b, "bad_values", set())
        return not any(e.free_symbols & bad for e in exprs)

    def values(self, exprs, perturb: np.ndarray | None = None) -> np.ndarray:
        """The expressions at the start state (coordinates shifted by ``perturb``), parameters and inputs."""
        coords = self.b.coords
        args = [S.t, *[c.symbol for c in coords], *[c.velocity_symbol for c in coords],
                *[p.symbol for p in self.b.params], *[u.symbol for u in self.b.inputs]]
        q0 = np.array([c.start for c in coords]) + (0 if perturb is None else perturb)
        vals = [0.0, *q0, *[c.velocity for c in coords], *[p.value for p in self.b.params],
                *[u.start for u in self.b.inputs]]
        return evaluate_once(args, list(exprs), vals)

    # -- tables --------------------------------------------------------------------------
    def table(self, key: str) -> dict:
        return self.b.table(key)

    def entries(self, key: str, keys: set[str], declare: str | None) -> dict[str, dict]:
        """The entries of a table as dicts (a string value means ``{first key = value}``)."""
        out: dict[str, dict] = {}
        for name, spec in self.table(key).items():
            entry = f"{key}.{name}"
            if isinstance(spec, str) and key == "points":
                spec = {"position": spec}
            if not isinstance(spec, dict):
                self.p.add(entry, "expected an inline table", f"write {name} = {{ ... }} with keys "
                           + ", ".join(sorted(keys)))
                continue
            self.b.check_keys(entry, spec, keys)
            own_frame = declare == "body" and name in self.frame_specs and spec.get("frame") == name
            if declare is None or own_frame or self.b.declare(entry, name, declare):
                out[name] = spec
        return out

    def read(self) -> BodyModel | None:
        before = len(self.p.problems)
        self.b.declare("frames", "N", "frame (the inertial frame N)")
        self.frame_specs = self.entries("frames", FRAME_KEYS, "frame")
        self._frames()
        points = self.entries("points", POINT_KEYS, "point")
        bodies = self.entries("bodies", BODY_KEYS, "body")
        particles = self.entries("particles", PARTICLE_KEYS, "particle")
        self.body_names, self.particle_names = set(bodies), set(particles)
        for name, spec in points.items():
            self._locate(f"points.{name}", name, spec, "position")
        for name, spec in bodies.items():
            self._locate(f"bodies.{name}", name, spec, "com")
        for name, spec in particles.items():
            self._locate(f"particles.{name}", name, spec, "position")
        for name in list(self.located):
            try:
                self.point(name, 0)
            except self.reported:
                pass
            except ExpressionError as exc:  # a cycle found from the top
                entry, _key, text = self.located[name]
                self.p.add(entry, exc.message, exc.hint)
                self.positions[name] = None
        made = [self._body(name, spec) for name, spec in bodies.items()]
        made += [self._particle(name, spec) for name, spec in particles.items()]
        gravity = self._gravity()
        loads = self._loads({b.name: b for b in made if b is not None})
        if not self.table("bodies") and not self.table("particles"):
            self.p.add("bodies", "no bodies or particles are declared", "declare at least one body or particle")
        if len(self.p.problems) > before or any(b is None for b in made):
            return None
        from .contacts import read_contacts

        mb = Multibody(tuple(b for b in made if b is not None), tuple(loads), gravity, tuple(self.rotation_watch))
        # each body's energy and each force with sin^2 + cos^2 cancelled (a wheel's spin angle in its yaw inertia)
        kinetic = sum((tidy_trig(b.kinetic_energy()) for b in mb.bodies), sp.Integer(0))
        model = BodyModel(mb, kinetic, mb.potential_energy(), {})
        Q = mb.generalized_forces([c.velocity_symbol for c in self.b.coords])
        model.forces = {c.name: tidy_trig(f) for c, f in zip(self.b.coords, Q) if f != 0}
        read_contacts(self, {b.name: b for b in mb.bodies}, model)
        model.multibody = replace(mb, positive=tuple(self.positive))
        return model

    def _locate(self, entry: str, name: str, spec: dict, key: str) -> None:
        if key not in spec:
            self.p.add(f"{entry}.{key}", f"the {'centre of mass' if key == 'com' else key} is missing",
                       f'add {key} = "[x, y, z]" (a vector expression, N components)')
            self.positions[name] = None
            return
        self.located[name] = (f"{entry}.{key}", key, spec[key])

    # -- bodies, particles, gravity, loads -------------------------------------------------
    def _body(self, name: str, spec: dict) -> Body | None:
        entry = f"bodies.{name}"
        mass = self.constant(f"{entry}.mass", spec.get("mass"), "the mass") if "mass" in spec else None
        if "mass" not in spec:
            self.p.add(f"{entry}.mass", "the mass is missing", 'add mass = "m"')
        frame_name = spec.get("frame")
        frame = None
        if frame_name is None:
            self.p.add(f"{entry}.frame", "a rigid body needs a frame (its orientation)",
                       'add frame = "<a frame of [frames]>", or declare a point mass under [particles]')
        elif not isinstance(frame_name, str) or frame_name not in self.frames:
            self.p.add(f"{entry}.frame", f"unknown frame {frame_name!r}",
                       _suggest(str(frame_name), self.frames) or "declare it under [frames]")
        else:
            frame = self.frames[frame_name]
            self.body_frame[name] = frame_name
        inertia = self._inertia(f"{entry}.inertia", spec)
        position = self.positions.get(name)
        if mass is None or frame is None or inertia is None or position is None:
            return None
        velocity = tuple(self.b.der(c, 0) for c in position)
        return Body(name, mass, position, velocity, frame.rotation, frame.omega, inertia)  # type: ignore[arg-type]

    def _inertia(self, entry: str, spec: dict) -> sp.ImmutableMatrix | None:
        """Principal moments ``[a, b, c]`` or a full symmetric tensor, positive definite, about the centre of mass
        in the body frame; each principal moment at most the sum of the other two (a real body's)."""
        if "inertia" not in spec:
            self.p.add(entry, "the inertia tensor is missing",
                       'add inertia = "[Ixx, Iyy, Izz]" (principal) or "[[Ixx, Ixy, Ixz], [..], [..]]"')
            return None
        value = self._parse(entry, spec["inertia"], parse_matrix, "the inertia tensor")
        if value is None:
            return None
        I = sp.diag(*value) if not isinstance(value, list) else sp.Matrix(value)
        flat = list(I)
        if not self._check(entry, flat, velocities=False, inputs_ok=False, what="the inertia tensor"):
            return None
        if any(e.free_symbols & (self.b.position_symbols() | {S.t}) for e in flat):
            self.p.add(entry, "the inertia tensor must be constant (parameters only)",
                       "give it in the body frame, where it does not change")
            return None
        if not self.known(flat):
            return None  # a value in it is refused where it is given
        problem = inertia_problem(self.values(flat).reshape(3, 3))
        if problem:
            self.p.add(entry, *problem)
            return None
        return sp.ImmutableMatrix(I)

    def _particle(self, name: str, spec: dict) -> Body | None:
        entry = f"particles.{name}"
        if "mass" not in spec:
            self.p.add(f"{entry}.mass", "the mass is missing", 'add mass = "m"')
            return None
        mass = self.constant(f"{entry}.mass", spec["mass"], "the mass")
        position = self.positions.get(name)
        if mass is None or position is None:
            return None
        return Body(name, mass, position, tuple(self.b.der(c, 0) for c in position))  # type: ignore[arg-type]

    def _gravity(self) -> Vector:
        g = self.table("gravity")
        self.b.check_keys("gravity", g, GRAVITY_KEYS)
        if not g:
            return ZERO
        if "vector" not in g:
            self.p.add("gravity.vector", "the gravity vector is missing", 'write vector = "[0, 0, -g]"')
            return ZERO
        v = self.vector("gravity.vector", g["vector"], what="the gravity vector")
        if v is None:
            return ZERO
        if any(c.free_symbols & (self.b.position_symbols() | {S.t}) for c in v):
            self.p.add("gravity.vector", "gravity must be uniform and constant (parameters only)",
                       "write it in N components, e.g. [0, 0, -g]")
            return ZERO
        return v


def merge_bodies(builder, reported: type[Exception], T, V, forces: dict, holonomic: list, nonholonomic: list):
    """The file's T, V, forces and constraints with those of its body tables added; also the
    :class:`Multibody` (None without body tables) and the constraints' entry names (() when all are from
    ``[constraints]``)."""
    if not uses_bodies(builder.data):
        return T, V, forces, holonomic, nonholonomic, None, ()
    before = len(builder.p.problems)
    model = BodyReader(builder, reported).read()
    if model is None or len(builder.p.problems) > before:  # a contact's problem: its constraints are unknown too
        builder.bodies_broken = True  # the contacts' constraints are unknown: no count of them is checked
        return T, V, forces, holonomic, nonholonomic, None, ()
    if T is not None:
        T = model.kinetic + T
        if builder.coords and not (T.free_symbols & builder.velocity_symbols()):
            builder.p.add("bodies", "the kinetic energy of the bodies and [energy] does not depend on any velocity",
                          "declare bodies or particles whose positions depend on the coordinates")
    if V is not None:
        V = model.potential + V
    forces = dict(forces)
    for name, f in model.forces.items():
        forces[name] = forces.get(name, sp.Integer(0)) + f
    labels = ([f"constraints.holonomic[{i + 1}]" for i in range(len(holonomic))]
              + [label for label, _ in model.holonomic]
              + [f"constraints.nonholonomic[{i + 1}]" for i in range(len(nonholonomic))]
              + [label for label, _ in model.nonholonomic])
    generated = ([False] * len(holonomic) + [True] * len(model.holonomic)
                 + [False] * len(nonholonomic) + [True] * len(model.nonholonomic))
    holonomic = list(holonomic) + [e for _, e in model.holonomic]
    nonholonomic = list(nonholonomic) + [e for _, e in model.nonholonomic]
    multibody = model.multibody
    if any(generated) and not any(e.has(sp.nan) for e in holonomic + nonholonomic):
        holonomic, nonholonomic, labels, multibody = _drop_redundant(builder, holonomic, nonholonomic, labels,
                                                                      generated, multibody)
    return T, V, forces, holonomic, nonholonomic, multibody, tuple(labels)


def _drop_redundant(builder, holonomic, nonholonomic, labels, generated, multibody):
    """The constraints without the generated rows that repeat the rows before them identically
    (:mod:`.redundant_rows`), which the multibody keeps as ``dropped_constraints``; a generated row dependent at
    the start state only is reported (a singular configuration)."""
    from dataclasses import replace

    from .redundant_rows import redundant_rows, velocity_rows

    rows = velocity_rows(builder, holonomic, nonholonomic)
    dropped, singular = redundant_rows(builder, rows, generated, holonomic)
    for k in singular:
        builder.p.add(labels[k], "this generated constraint is dependent on the constraints before it at the start "
                      "state but not at other states: the start state is a singular configuration",
                      "change the start values (e.g. turn the body away from the singular pose)")
    if not dropped:
        return holonomic, nonholonomic, labels, multibody
    exprs = holonomic + nonholonomic
    h = len(holonomic)
    keep = [k for k in range(len(exprs)) if k not in dropped]
    multibody = replace(multibody, dropped_constraints=tuple((labels[k], exprs[k]) for k in dropped))
    return ([exprs[k] for k in keep if k < h], [exprs[k] for k in keep if k >= h], [labels[k] for k in keep],
            multibody)
