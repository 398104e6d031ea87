"""What the animation draws: the shapes of the bodies and the points, read from the system file.

A body in ``[bodies]`` may carry a ``shape`` (dimensions are expressions in the parameters)::

    [bodies]
    wheel = { mass = "m", frame = "wheel", com = "[x, y, R*cos(theta)]", inertia = "[I_long, I_axis, I_long]",
              shape = { kind = "cylinder", radius = "R", length = "0.04", axis = "y", color = "#3b75af" } }

Kinds and their dimensions: ``cylinder`` (``radius``, ``length``), ``disk`` (``radius``; ``length`` default
radius/10), ``box`` (``size`` = three lengths along the body's x, y, z), ``sphere`` (``radius``), ``cone``
(``radius``, ``height``). ``axis`` (x, y or z of the body frame; default y for cylinders, disks and cones) is the
symmetry axis, ``offset`` a list of three expressions (the shape's centre from the centre of mass, body frame),
``color`` a ``#rrggbb`` colour. A body without ``shape`` whose entry is a ``rolling-disk`` or ``rolling-sphere``
contact is drawn as its wheel or ball; any other body as a small box.

Points to draw, with or without bodies, go in an ``[animation]`` table; ``trace = true`` draws the path::

    [animation]
    points = { tail = { position = ["x", "y", "0"] }, head = { position = ["x + L*cos(th)", "y + L*sin(th)", "0"],
               trace = true, color = "#d62728" } }
    lines = [["tail", "head"]]  # polylines through points, redrawn at every frame
    trace_contacts = true       # the rolling contacts' tracks on the ground (default true)

Examples
--------
>>> from bridge.animation.shapes import KINDS
>>> sorted(KINDS)
['box', 'cone', 'cylinder', 'disk', 'sphere']
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..errors import ProblemCollector, SystemFileError
from ..model.expressions import ExpressionError, parse_expression

#: shape kinds and their dimension keys (required, optional)
KINDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "cylinder": (("radius", "length"), ()),
    "disk": (("radius",), ("length",)),
    "box": (("size",), ()),
    "sphere": (("radius",), ()),
    "cone": (("radius", "height"), ()),
}
SHAPE_KEYS = {"kind", "radius", "length", "size", "height", "axis", "offset", "color"}
POINT_KEYS = {"position", "trace", "color"}
ANIMATION_KEYS = {"points", "lines", "trace_contacts"}
_COLOR = re.compile(r"#[0-9a-fA-F]{6}\Z")
PALETTE = ("#3b75af", "#ef8636", "#519e3e", "#c53a32", "#8d69b8", "#84584e", "#d57dbf", "#7f7f7f")
MAX_POINTS = 64


@dataclass(frozen=True)
class Shape:
    """A body's shape: ``kind``, its dimensions in metres, centre ``offset`` and symmetry ``axis`` (body frame)."""

    kind: str
    dimensions: tuple[float, ...]
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    axis: str = "y"
    color: str = PALETTE[0]


@dataclass(frozen=True)
class PointSpec:
    """A point to draw: its position (three expressions in N), whether to trace its path, its colour."""

    name: str
    position: tuple[sp.Expr, sp.Expr, sp.Expr]
    trace: bool = False
    color: str = PALETTE[3]


class _Reader:
    """Reads shape and point entries, collecting every problem."""

    def __init__(self, system, source: str):
        self.system, self.source = system, source
        self.problems = ProblemCollector(source)
        self.values = {p.name: p.value for p in system.parameters}
        names: dict[str, sp.Expr] = {p.name: p.symbol for p in system.parameters}
        names |= {c.name: c.symbol for c in system.coordinates}
        names |= {u.name: u.symbol for u in system.inputs}
        names["t"] = sp.Symbol("t")
        self.names = names

    def resolve(self, allowed: Mapping[str, sp.Expr]) -> Callable[[str, int], sp.Expr]:
        def look(name: str, pos: int) -> sp.Expr:
            if name in allowed:
                return allowed[name]
            close = difflib.get_close_matches(name, list(allowed), n=1)
            raise ExpressionError(f"unknown name {name!r}", pos, f"did you mean {close[0]!r}?" if close else
                                  "use parameters" + (", coordinates, inputs and t" if len(allowed) > len(
                                      self.values) else ""))
        return look

    def expression(self, entry: str, text: Any, allowed: Mapping[str, sp.Expr]) -> sp.Expr | None:
        def no_der(expr: sp.Expr, pos: int) -> sp.Expr:
            raise ExpressionError("der(...) is not allowed here", pos, "write positions, not velocities")

        try:
            return parse_expression(text if isinstance(text, str) else repr(text), self.resolve(allowed), no_der)
        except ExpressionError as exc:
            self.problems.add(entry, exc.message, exc.hint)
            return None

    def length(self, entry: str, text: Any) -> float | None:
        params = {p.name: p.symbol for p in self.system.parameters}
        expr = self.expression(entry, text, params)
        if expr is None:
            return None
        value = float(expr.subs({p.symbol: p.value for p in self.system.parameters}))
        if not value > 0 or value != value or value == float("inf"):
            self.problems.add(entry, f"a size must be positive, got {value:g}",
                              "write a positive length in metres (an expression in the parameters)")
            return None
        return value

    def keys(self, entry: str, spec: Mapping, allowed: set[str]) -> None:
        for key in spec:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                self.problems.add(f"{entry}.{key}", "unknown key",
                                  f"did you mean {close[0]!r}?" if close else "allowed: " + ", ".join(sorted(allowed)))

    def color(self, entry: str, spec: Mapping, default: str) -> str:
        color = spec.get("color", default)
        if not isinstance(color, str) or not _COLOR.match(color):
            self.problems.add(f"{entry}.color", f"expected a colour #rrggbb, got {color!r}", 'write e.g. "#3b75af"')
            return default
        return color

    def shape(self, entry: str, spec: Any, default_color: str) -> Shape | None:
        if not isinstance(spec, Mapping):
            self.problems.add(entry, "expected a table", 'write shape = { kind = "cylinder", radius = "R", ... }')
            return None
        self.keys(entry, spec, SHAPE_KEYS)
        kind = spec.get("kind")
        if kind not in KINDS:
            close = difflib.get_close_matches(str(kind), list(KINDS), n=1)
            self.problems.add(f"{entry}.kind", f"unknown shape kind {kind!r}",
                              f"did you mean {close[0]!r}?" if close else "kinds: " + ", ".join(KINDS))
            return None
        required, optional = KINDS[kind]
        dims: list[float | None] = []
        for key in required:
            if key not in spec:
                self.problems.add(entry, f"a {kind} needs {key!r}", f"add {key} = ... (metres)")
                dims.append(None)
            elif key == "size":
                size = spec["size"]
                if not isinstance(size, list) or len(size) != 3:
                    self.problems.add(f"{entry}.size", "expected three lengths", 'write size = ["a", "b", "c"]')
                    dims.append(None)
                else:
                    dims.extend(self.length(f"{entry}.size[{k}]", s) for k, s in enumerate(size))
            else:
                dims.append(self.length(f"{entry}.{key}", spec[key]))
        for key in optional:
            if key in spec:
                dims.append(self.length(f"{entry}.{key}", spec[key]))
            elif kind == "disk" and dims[0] is not None:
                dims.append(dims[0] / 10)
        axis = spec.get("axis", "y")
        if axis not in ("x", "y", "z"):
            self.problems.add(f"{entry}.axis", f"expected x, y or z, got {axis!r}", "the body frame's axis")
            axis = "y"
        offset = (0.0, 0.0, 0.0)
        if "offset" in spec:
            raw = spec["offset"]
            if not isinstance(raw, list) or len(raw) != 3:
                self.problems.add(f"{entry}.offset", "expected three expressions", 'write offset = ["0", "0", "a"]')
            else:
                params = {p.name: p.symbol for p in self.system.parameters}
                parts = [self.expression(f"{entry}.offset[{k}]", s, params) for k, s in enumerate(raw)]
                if all(p is not None for p in parts):
                    subs = {p.symbol: p.value for p in self.system.parameters}
                    offset = tuple(float(p.subs(subs)) for p in parts)  # type: ignore[union-attr,assignment]
        color = self.color(entry, spec, default_color)
        if any(d is None for d in dims):
            return None
        return Shape(kind, tuple(dims), offset, axis, color)  # type: ignore[arg-type]

    def point(self, entry: str, name: str, spec: Any, k: int) -> PointSpec | None:
        if not isinstance(spec, Mapping):
            self.problems.add(entry, "expected a table", 'write P = { position = ["x", "y", "0"], trace = true }')
            return None
        self.keys(entry, spec, POINT_KEYS)
        raw = spec.get("position")
        if not isinstance(raw, list) or len(raw) != 3:
            self.problems.add(f"{entry}.position", "expected three expressions (x, y, z in the inertial frame)",
                              'write position = ["x", "y", "0"]')
            return None
        parts = [self.expression(f"{entry}.position[{i}]", s, self.names) for i, s in enumerate(raw)]
        trace = spec.get("trace", False)
        if not isinstance(trace, bool):
            self.problems.add(f"{entry}.trace", f"expected true or false, got {trace!r}", "write trace = true")
        color = self.color(entry, spec, PALETTE[(3 + k) % len(PALETTE)])
        if any(p is None for p in parts):
            return None
        return PointSpec(name, tuple(parts), bool(trace), color)  # type: ignore[arg-type]


@dataclass(frozen=True)
class DrawingSpec:
    """Everything the animation draws besides the bodies' motion: shapes per body, points, contact tracks."""

    shapes: Mapping[str, Shape]
    points: tuple[PointSpec, ...]
    contact_tracks: tuple[PointSpec, ...]
    lines: tuple[tuple[str, ...], ...] = ()


def read_drawing(system, tables: Mapping[str, Any] | None, source: str | None = None) -> DrawingSpec:
    """Return the checked shapes and points of a system, from its file's tables.

    Parameters
    ----------
    system : bridge.System
        The loaded system (its parameters' values size the shapes; its bodies are drawn).
    tables : mapping or None
        The system file's top-level tables (``tomllib.load``); None: defaults only.
    source : str, optional
        The file's name in messages.

    Returns
    -------
    DrawingSpec

    Raises
    ------
    SystemFileError
        Every problem of the shapes and points at once: unknown kinds or keys, sizes that are not positive,
        points or bodies that do not exist.
    """
    tables = tables or {}
    reader = _Reader(system, source or system.source)
    bodies = {b.name: b for b in (system.multibody.bodies if system.multibody else ())}
    raw_bodies = tables.get("bodies", {}) if isinstance(tables.get("bodies"), Mapping) else {}
    raw_contacts = tables.get("contacts", {}) if isinstance(tables.get("contacts"), Mapping) else {}
    params = {p.name: p.symbol for p in system.parameters}
    shapes: dict[str, Shape] = {}
    for k, (name, body) in enumerate(bodies.items()):
        color = PALETTE[k % len(PALETTE)]
        spec = raw_bodies.get(name, {})
        if isinstance(spec, Mapping) and "shape" in spec:
            shape = reader.shape(f"bodies.{name}.shape", spec["shape"], color)
            if shape is not None:
                shapes[name] = shape
            continue
        contact = next((c for cname, c in raw_contacts.items() if isinstance(c, Mapping)
                        and c.get("body", cname) == name and c.get("kind") in ("rolling-disk", "rolling-sphere")), None)
        if contact is not None and body.rotation is not None:
            radius = reader.length(f"contacts.{name}.radius", contact.get("radius", "1"))
            if radius is not None:
                if contact["kind"] == "rolling-sphere":
                    shapes[name] = Shape("sphere", (radius,), color=color)
                else:
                    shapes[name] = Shape("disk", (radius, radius / 10), axis=str(contact.get("axis", "y")),
                                         color=color)
        elif body.rotation is not None:
            size = 0.1 * _scale(system)
            shapes[name] = Shape("box", (size, size, size), color=color)
        else:
            shapes[name] = Shape("sphere", (0.03 * _scale(system),), color=color)
    for name, spec in raw_bodies.items():
        if name not in bodies and isinstance(spec, Mapping) and "shape" in spec:
            reader.problems.add(f"bodies.{name}.shape", "no such body", "shapes belong to bodies of [bodies]")
    animation = tables.get("animation", {})
    points: list[PointSpec] = []
    lines: tuple[tuple[str, ...], ...] = ()
    trace_contacts = True
    if animation and not isinstance(animation, Mapping):
        reader.problems.add("animation", "expected a table", "write [animation] with points = { ... }")
    elif animation:
        reader.keys("animation", animation, ANIMATION_KEYS)
        trace_contacts = bool(animation.get("trace_contacts", True))
        raw_points = animation.get("points", {})
        if not isinstance(raw_points, Mapping):
            reader.problems.add("animation.points", "expected a table of points",
                                'write points = { P = { position = ["x", "y", "0"] } }')
        elif len(raw_points) > MAX_POINTS:
            reader.problems.add("animation.points", f"{len(raw_points)} points, at most {MAX_POINTS}",
                                "draw fewer points")
        else:
            for k, (name, spec) in enumerate(raw_points.items()):
                point = reader.point(f"animation.points.{name}", name, spec, k)
                if point is not None:
                    points.append(point)
        lines = _lines(reader, animation.get("lines", []), list(raw_points) if isinstance(raw_points, Mapping)
                       else [])
    tracks: list[PointSpec] = []
    if trace_contacts:
        for cname, c in raw_contacts.items():
            body = bodies.get(c.get("body", cname)) if isinstance(c, Mapping) else None
            if body is None or c.get("kind") not in ("rolling-disk", "rolling-sphere") or body.rotation is None:
                continue
            radius = reader.expression(f"contacts.{cname}.radius", c.get("radius", "1"), params)
            if radius is None:
                continue
            # the lowest point of the wheel or ball: the centre minus the radius along the ground normal's
            # projection on the wheel plane (a sphere: straight down)
            tracks.append(PointSpec(f"{cname} contact", _contact_point(body, radius, c, _side(system, body)), True,
                                    PALETTE[3]))
    reader.problems.raise_if_any(SystemFileError)
    return DrawingSpec(shapes, tuple(points), tuple(tracks), lines)


def _lines(reader: _Reader, raw: Any, names: list[str]) -> tuple[tuple[str, ...], ...]:
    """Return the checked ``lines``: lists of at least two names of ``[animation]`` points."""
    if not isinstance(raw, list) or not all(isinstance(line, list) for line in raw):
        reader.problems.add("animation.lines", "expected a list of lists of point names",
                            'write lines = [["tail", "joint", "head"]]')
        return ()
    out = []
    for k, line in enumerate(raw):
        if len(line) < 2:
            reader.problems.add(f"animation.lines[{k}]", "a line needs at least two points", 'write ["a", "b"]')
            continue
        unknown = [n for n in line if n not in names]
        for n in unknown:
            close = difflib.get_close_matches(str(n), names, n=1)
            reader.problems.add(f"animation.lines[{k}]", f"no point named {n!r}",
                                f"did you mean {close[0]!r}?" if close else "name points of [animation] points")
        if not unknown:
            out.append(tuple(line))
    return tuple(out)


def _side(system, body) -> int:
    """+1 when the body's centre starts above the plane z = 0, -1 below (the ground normal points to the body)."""
    values = {p.symbol: p.value for p in system.parameters} | {c.symbol: c.start for c in system.coordinates}
    try:
        z = float(sp.sympify(body.position[2]).subs(values))
    except (TypeError, ValueError):
        return 1
    return -1 if z < 0 else 1


def _contact_point(body, radius: sp.Expr, contact: Mapping, side: int = 1) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """Return the contact point of a rolling disk or sphere, in N components.

    ``C - R n`` for a disk (``n``: the unit vector in the wheel plane nearest the ground normal ``k``, which points
    from the plane ``N.xy`` to the body), ``C - R k`` for a sphere.
    """
    centre = sp.Matrix(body.position)
    k = sp.Matrix([0, 0, side])
    if contact.get("kind") == "rolling-sphere":
        point = centre - radius * k
    else:
        axis = {"x": 0, "y": 1, "z": 2}.get(str(contact.get("axis", "y")), 1)
        a = sp.Matrix(body.rotation)[:, axis]
        n = k - (k.dot(a)) * a
        point = centre - radius * n / sp.sqrt(n.dot(n))
    return (point[0], point[1], point[2])


def _scale(system) -> float:
    """Return a length to size default shapes: the largest positive length parameter, else 1 m."""
    lengths = [p.value for p in system.parameters if getattr(p, "unit", "") == "m" and p.value > 0]
    return max(lengths, default=1.0)


__all__ = ["ANIMATION_KEYS", "KINDS", "SHAPE_KEYS", "DrawingSpec", "PointSpec", "Shape", "read_drawing"]
