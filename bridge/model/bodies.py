"""The ``[frames]``, ``[points]``, ``[bodies]``, ``[particles]``, ``[gravity]``, ``[loads]`` and ``[contacts]`` tables.

A :class:`~bridge.model.multibody.Multibody` and what the system takes from it.

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
from typing import Any, NamedTuple

import sympy as sp

from . import symbols as S
from .contacts import read_contacts
from .expressions import ExpressionError
from .frame_table import FrameTable
from .load_table import LoadTable
from .multibody import ZERO, Body, Multibody, Vector
from .names import suggest as _suggest
from .read_context import ReadContext
from .redundant_rows import redundant_rows, velocity_rows
from .trig import tidy_trig
from .values import inertia_problem
from .vectors import parse_matrix

TABLES = ("frames", "points", "bodies", "particles", "gravity", "loads", "contacts")
FRAME_KEYS = {"parent", "axis", "angle", "axes", "angles", "dcm", "description"}
POINT_KEYS = {"position", "description"}
BODY_KEYS = {"mass", "frame", "com", "inertia", "description", "shape"}  # shape: bridge.animation draws it
PARTICLE_KEYS = {"mass", "position", "description"}
GRAVITY_KEYS = {"vector"}


def uses_bodies(data: Mapping[str, Any]) -> bool:
    """Return whether a system file describes (part of) its system by bodies."""
    return any(key in data for key in TABLES)




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
    """Reads the tables with the system file's builder (names, scalar parser, problems).

    The vector expressions' :class:`~bridge.model.vectors.Context`.
    """

    def read(self) -> BodyModel | None:
        """Read the body tables into a multibody model; problems are recorded, not raised.

        Returns
        -------
        BodyModel or None
            The multibody and what the system takes from it, or None when a table has a problem.
        """
        before = len(self.p.problems)
        self.tables.declare("frames", "N", "frame (the inertial frame N)")
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
                entry, _key, _text = self.located[name]
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
        mb = Multibody(tuple(b for b in made if b is not None), tuple(loads), gravity, tuple(self.rotation_watch))
        # each body's energy and each force with sin^2 + cos^2 cancelled (a wheel's spin angle in its yaw inertia)
        kinetic = sum((tidy_trig(b.kinetic_energy()) for b in mb.bodies), sp.Integer(0))
        model = BodyModel(mb, kinetic, mb.potential_energy(), {})
        Q = mb.generalized_forces([c.velocity_symbol for c in self.symbols.coordinates])
        model.forces = {c.name: tidy_trig(f) for c, f in zip(self.symbols.coordinates, Q) if f != 0}
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
        velocity = tuple(self.symbols.der(c, 0) for c in position)
        return Body(name, mass, position, velocity, frame.rotation, frame.omega, inertia)

    def _inertia(self, entry: str, spec: dict) -> sp.ImmutableMatrix | None:
        """Read principal moments ``[a, b, c]`` or a full symmetric tensor, positive definite.

        About the centre of mass in the body frame; each principal moment at most the sum of the other two (a real
        body's).
        """
        if "inertia" not in spec:
            self.p.add(entry, "the inertia tensor is missing",
                       'add inertia = "[Ixx, Iyy, Izz]" (principal) or "[[Ixx, Ixy, Ixz], [..], [..]]"')
            return None
        value = self.parse_entry(entry, spec["inertia"], parse_matrix, "the inertia tensor")
        if value is None:
            return None
        I = sp.diag(*value) if not isinstance(value, list) else sp.Matrix(value)
        flat = list(I)
        if not self.check_entry(entry, flat, velocities=False, inputs_ok=False, what="the inertia tensor"):
            return None
        if any(e.free_symbols & (self.symbols.position_symbols() | {S.t}) for e in flat):
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
        return Body(name, mass, position, tuple(self.symbols.der(c, 0) for c in position))

    def _gravity(self) -> Vector:
        g = self.table("gravity")
        self.tables.check_keys("gravity", g, GRAVITY_KEYS)
        if not g:
            return ZERO
        if "vector" not in g:
            self.p.add("gravity.vector", "the gravity vector is missing", 'write vector = "[0, 0, -g]"')
            return ZERO
        v = self.vector("gravity.vector", g["vector"], what="the gravity vector")
        if v is None:
            return ZERO
        if any(c.free_symbols & (self.symbols.position_symbols() | {S.t}) for c in v):
            self.p.add("gravity.vector", "gravity must be uniform and constant (parameters only)",
                       "write it in N components, e.g. [0, 0, -g]")
            return ZERO
        return v


class MergedEquations(NamedTuple):
    """Return the file's T, V, forces and constraints with those of its body tables added.

    Also the :class:`Multibody` (None without body tables) and the constraints' entry names (() when all are from
    ``[constraints]``).
    """

    kinetic: sp.Expr | None
    potential: sp.Expr | None
    forces: dict[str, sp.Expr]
    holonomic: list[sp.Expr]
    nonholonomic: list[sp.Expr]
    multibody: Multibody | None  # None without body tables (or with a problem in them)
    labels: tuple[str, ...]  # the constraints' entry names; () when all are from [constraints]
    broken: bool  # a problem in the body tables: the number of their constraints is unknown


def merge_bodies(ctx: ReadContext, T: sp.Expr | None, V: sp.Expr | None, forces: dict[str, sp.Expr],
                 holonomic: list[sp.Expr], nonholonomic: list[sp.Expr]) -> MergedEquations:
    """Add the body tables' T, V, forces and constraints to those of the file.

    Returns
    -------
    MergedEquations
        The merged T, V, forces and constraints; also the :class:`Multibody` (None without body tables) and
        the constraints' entry names (() when all are from ``[constraints]``).
    """
    if not uses_bodies(ctx.tables.data):
        return MergedEquations(T, V, forces, holonomic, nonholonomic, None, (), False)
    before = ctx.tables.count()
    model = BodyReader(ctx).read()
    if model is None or ctx.tables.count() > before:  # a contact's problem: its constraints are unknown too
        return MergedEquations(T, V, forces, holonomic, nonholonomic, None, (), True)
    if T is not None:
        T = model.kinetic + T
        if ctx.symbols.coordinates and not (T.free_symbols & ctx.symbols.velocity_symbols()):
            ctx.tables.add("bodies", "the kinetic energy of the bodies and [energy] does not depend on any velocity",
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
        holonomic, nonholonomic, labels, multibody = _drop_redundant(ctx, holonomic, nonholonomic, labels,
                                                                      generated, multibody)
    return MergedEquations(T, V, forces, holonomic, nonholonomic, multibody, tuple(labels), False)


def _drop_redundant(ctx: ReadContext, holonomic: list[sp.Expr], nonholonomic: list[sp.Expr], labels: list[str],
                    generated: list[bool], multibody: Multibody
                    ) -> tuple[list[sp.Expr], list[sp.Expr], list[str], Multibody]:
    """Return the constraints without the generated rows that repeat the rows before them identically.

    See :mod:`.redundant_rows`; the multibody keeps them as ``dropped_constraints``. A generated row dependent at the
    start state only is reported (a singular configuration).
    """
    rows = velocity_rows(ctx.symbols, holonomic, nonholonomic)
    dropped, singular = redundant_rows(ctx.symbols, rows, generated, holonomic)
    for k in singular:
        ctx.tables.add(labels[k], "this generated constraint is dependent on the constraints before it at the start "
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
