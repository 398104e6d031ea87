"""The ``[contacts]`` table: constraints generated from the bodies' geometry.

With C the body's mass centre (the wheel's or sphere's centre), w its angular velocity (N components),
k the unit normal of the plane (a coordinate plane of N through its origin, pointing to the side where C is
at the start) and e1, e2 the plane's axes:

* ``rolling-disk`` (thin wheel of radius R, axle a = a body axis, default y): the contact point is
  ``P = C - R n``, ``n = (k - (k.a) a) / sqrt(1 - (k.a)^2)`` (in the wheel plane, towards k); no slip along the
  wheel's heading ``k x a`` and its axle ``a - (k.a) k`` (2 nonholonomic: ``v_P . (k x a) = 0``, ``v_P . (a -
  (k.a) k) = 0``, so that two wheels on one axle repeat the axle row for every state); on the plane: ``k.P = 0``
  (holonomic), left out when it holds identically (the height already eliminated by the coordinates);
* ``rolling-sphere``: ``P = C - R k``, the same two no-slip rows, ``k.C - R = 0`` where not identical;
* ``knife-edge``: a point P of the body (default C) has no velocity along a body axis: ``dP/dt . b = 0``;
* ``velocity``: a given expression (vector operations allowed) linear in the velocities, ``= 0``.

"Holds identically" is decided numerically: zero (to 1e-10 R) at the start state and four random states
near it.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import sympy as sp

from .body_entries import BodyEntries
from .frames import AXES
from .multibody import Body
from .names import suggest as _suggest
from .vectors import cross, dot

KINDS = {
    "rolling-disk": {"kind", "body", "radius", "plane", "axis", "description"},
    "rolling-sphere": {"kind", "body", "radius", "plane", "description"},
    "knife-edge": {"kind", "body", "point", "axis", "description"},
    "velocity": {"kind", "expr", "description"},
}
_PLANE = re.compile(r"N\.([xyz])([xyz])\Z")


def read_contacts(reader: BodyEntries, bodies: dict[str, Body], model) -> None:
    """Append each contact's constraints (labelled by entry) to ``model.holonomic``/``model.nonholonomic``."""
    for name, spec in reader.table("contacts").items():
        entry = f"contacts.{name}"
        if not isinstance(spec, dict):
            reader.p.add(entry, "expected an inline table", f'write {name} = {{ kind = "rolling-disk", ... }}')
            continue
        kind = spec.get("kind")
        if not isinstance(kind, str) or kind not in KINDS:
            reader.p.add(f"{entry}.kind", f"unknown contact kind {kind!r}" if kind is not None else
                         "the contact kind is missing", (_suggest(str(kind), KINDS) + " " if kind else "")
                         + "kinds: " + ", ".join(KINDS))
            continue
        reader.tables.check_keys(entry, spec, KINDS[kind])
        if kind == "velocity":
            _velocity(reader, entry, spec, model)
            continue
        body = _body(reader, entry, name, spec, bodies)
        if body is None:
            continue
        if kind == "knife-edge":
            _knife_edge(reader, entry, spec, body, model)
        else:
            _rolling(reader, entry, kind, spec, body, model)


def _body(reader: BodyEntries, entry: str, name: str, spec: dict, bodies: dict[str, Body]) -> Body | None:
    """Return the contact's body (default: the body of the contact's name); it needs a frame."""
    bname = spec.get("body", name)
    key = f"{entry}.body" if "body" in spec else entry
    if not isinstance(bname, str) or bname not in bodies:
        message, hint = reader.not_a_body(bname, "a body")
        reader.p.add(key, message, hint + ("" if "body" in spec else
                                           "; without body = ..., the contact's own name is the body's"))
        return None
    body = bodies[bname]
    if body.is_particle:
        reader.p.add(key, f"{bname!r} is a particle, which has no frame: a {spec['kind']} contact needs the body's "
                     "orientation", "declare it under [bodies] with a frame and an inertia tensor")
        return None
    return body


def _axis(reader: BodyEntries, entry: str, spec: dict, body: Body, default: str) -> tuple[sp.Expr, ...] | None:
    axis = spec.get("axis", default)
    if not isinstance(axis, str) or axis not in AXES:
        reader.p.add(f"{entry}.axis", f"bad axis {axis!r}", 'a body axis is "x", "y" or "z"')
        return None
    if body.rotation is None:  # a particle, refused as the contact's body already
        return None
    return tuple(body.rotation[:, AXES[axis]])


def _radius(reader: BodyEntries, entry: str, spec: dict) -> sp.Expr | None:
    if "radius" not in spec:
        reader.p.add(f"{entry}.radius", "the radius is missing", 'add radius = "R"')
        return None
    return reader.constant(f"{entry}.radius", spec["radius"], "the radius")


def _plane(reader: BodyEntries, entry: str, spec: dict, centre, side: bool = True) -> tuple[int, int, int, int] | None:
    """Return the plane's axes, normal axis and sign: ``(e1, e2, normal axis, sign)``.

    The normal points to the centre's side at the start (not evaluated without ``side``: the syntax checked only).
    """
    plane = spec.get("plane", "N.xy")
    m = _PLANE.match(plane) if isinstance(plane, str) else None
    if m is None or m.group(1) == m.group(2):
        reader.p.add(f"{entry}.plane", f"bad plane {plane!r}",
                     'write a coordinate plane of the inertial frame through its origin: "N.xy", "N.yz" or "N.zx"')
        return None
    e1, e2 = AXES[m.group(1)], AXES[m.group(2)]
    normal = 3 - e1 - e2
    if not side or not reader.known([centre[normal]]):
        return None
    height = float(reader.values([centre[normal]])[0])
    if not abs(height) > 1e-12:
        reader.p.add(f"{entry}.plane", f"the centre lies in the plane {plane} at the start state (or its height "
                     "cannot be evaluated)", "give start values with the body above the plane")
        return None
    return e1, e2, normal, 1 if height > 0 else -1


def _identically_zero(reader: BodyEntries, expr: sp.Expr, scale: sp.Expr) -> bool:
    rng = np.random.default_rng(1)
    n = len(reader.symbols.coordinates)
    size = abs(float(reader.values([scale])[0]))
    for k in range(5):
        value = reader.values([expr], None if k == 0 else rng.uniform(-0.2, 0.2, n))[0]
        if not abs(value) <= 1e-10 * max(size, 1e-300):
            return False
    return True


def _rolling(reader: BodyEntries, entry: str, kind: str, spec: dict, body: Body, model) -> None:
    R = _radius(reader, entry, spec)
    a = _axis(reader, entry, spec, body, "y") if kind == "rolling-disk" else ()
    plane = _plane(reader, entry, spec, body.position, side=R is not None)  # no side from a broken radius
    if R is None or a is None or plane is None:
        return
    e1, e2, normal, sign = plane
    k = tuple(sp.Integer(sign if i == normal else 0) for i in range(3))
    if kind == "rolling-disk":
        ka = dot(k, a)
        s = sp.sqrt(1 - ka**2)
        r = tuple(-R * (k[i] - ka * a[i]) / s for i in range(3))   # P - C
        height = sign * body.position[normal] - R * s
    else:
        r = tuple(-R * k[i] for i in range(3))
        height = sign * body.position[normal] - R
    omega = tuple(body.rotation * sp.Matrix(body.angular_velocity))
    omega_n = _omega_n(reader, body, omega)
    v = cross(omega_n, r)
    slip = tuple(body.velocity[i] + v[i] for i in range(3))  # velocity of the contact point of the body
    if kind == "rolling-disk":  # along the wheel's heading k x a and its axle a - (k.a) k (both of length s)
        heading = cross(k, a)
        axle = tuple(a[i] - ka * k[i] for i in range(3))
        model.nonholonomic.append((f"{entry} (no slip along its heading)", dot(slip, heading)))
        model.nonholonomic.append((f"{entry} (no slip along its axle)", dot(slip, axle)))
    else:
        names = "xyz"
        for i in (e1, e2):
            model.nonholonomic.append((f"{entry} (no slip along N.{names[i]})", slip[i]))
    if not _identically_zero(reader, height, R):
        model.holonomic.append((f"{entry} (on the plane)", height))


def _omega_n(reader: BodyEntries, body: Body, fallback):
    """Return the body's angular velocity in N components, from its frame (free of the frame's own angle)."""
    name = reader.body_frame.get(body.name)
    frame = reader.frames.get(name) if name else None
    return frame.omega_n if frame is not None else fallback


def _knife_edge(reader: BodyEntries, entry: str, spec: dict, body: Body, model) -> None:
    b = _axis(reader, entry, spec, body, "y")
    point = reader.vector(f"{entry}.point", spec["point"], what="the edge point") if "point" in spec \
        else body.position
    if b is None or point is None:
        return
    velocity = (reader.symbols.der(point[0], 0), reader.symbols.der(point[1], 0), reader.symbols.der(point[2], 0))
    model.nonholonomic.append((f"{entry} (no velocity along the body's {spec.get('axis', 'y')} axis)",
                               dot(velocity, b)))


def _velocity(reader: BodyEntries, entry: str, spec: dict[str, Any], model) -> None:
    if "expr" not in spec:
        reader.p.add(f"{entry}.expr", "the expression is missing", 'add expr = "dot(der(P), N.x)"')
        return
    e = reader.scalar_entry(f"{entry}.expr", spec["expr"], velocities=True, what="a velocity constraint")
    if e is None:
        return
    before = len(reader.p.problems)
    reader.symbols.check_velocity_form(f"{entry}.expr", e)
    if len(reader.p.problems) == before:
        model.nonholonomic.append((entry, e))


def describe_constraints(system) -> str:
    """Return the constraints of ``system``, holonomic first.

    Each with the entry that gave it (``nhbridge derive --constraints``).
    """
    hol, non = len(system.holonomic), len(system.nonholonomic)
    lines = [f"{system.name}: {hol} holonomic + {non} nonholonomic constraints, {system.dof} degrees of freedom"]
    for k, (name, expr) in enumerate(system.constraints):
        kind = "holonomic" if k < hol else "nonholonomic"
        lines.append(f"{name} [{kind}]:")
        lines.append(f"  0 = {sp.sstr(expr)}")
    dropped = system.multibody.dropped_constraints if system.multibody is not None else ()
    if dropped:
        lines.append(f"dropped ({len(dropped)}): generated rows that repeat the constraints above for every state")
        for name, expr in dropped:
            lines.append(f"{name} [dropped]:")
            lines.append(f"  0 = {sp.sstr(expr)}")
    return "\n".join(lines) + "\n"
