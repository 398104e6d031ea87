"""The animated scene: where every body is and how it is turned at every frame, from a simulation's samples.

For each frame (a sample of the result: frames are never interpolated, so a frame shows exactly what the result
holds at its time) and each body, the centre of mass ``r(q, t)`` and the orientation ``R(q, t)`` (``v_N = R v_B``,
as a unit quaternion ``(x, y, z, w)``) are evaluated from the body's expressions; each point's position likewise.

Examples
--------
>>> import numpy as np
>>> from bridge.animation.scene import frame_indices
>>> frame_indices(np.linspace(0.0, 1.0, 1001), fps=100).size   # 1000 samples per second, 100 frames per second
101
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

from ..errors import Problem, SystemFileError
from .shapes import DrawingSpec, Shape

#: the most frames an animation holds (a 10 s run at 100 frames per second is 1,001)
MAX_FRAMES = 20_000


@dataclass(frozen=True)
class BodyTrack:
    """One body's shape and its motion: ``positions`` (frames x 3) and ``quaternions`` (frames x 4, x y z w)."""

    name: str
    shape: Shape
    positions: np.ndarray
    quaternions: np.ndarray


@dataclass(frozen=True)
class PointTrack:
    """One point's positions (frames x 3), whether its path is drawn, its colour."""

    name: str
    positions: np.ndarray
    trace: bool
    color: str


@dataclass(frozen=True)
class Scene:
    """Everything an animation shows, as numbers: the frame times, the bodies and the points."""

    name: str
    times: np.ndarray
    bodies: tuple[BodyTrack, ...]
    points: tuple[PointTrack, ...]
    lines: tuple[tuple[int, ...], ...] = ()  # polylines through points (indices into ``points``)
    size: float = 1.0  # the size of the moving system (camera distance), m
    up: tuple[float, float, float] = (0.0, 0.0, 1.0)  # against gravity where there is gravity, else +z

    def centres(self) -> np.ndarray:
        """Where the camera looks at each frame: the mean position of the bodies (else of the points)."""
        parts = [b.positions for b in self.bodies] or [p.positions for p in self.points]
        if not parts:
            return np.zeros((self.times.size, 3))
        return np.nan_to_num(np.mean(np.stack(parts), axis=0))

    @property
    def extent(self) -> float:
        """The half-width of the region the motion covers (for the camera and the grid), at least 1 m."""
        parts = [b.positions for b in self.bodies] + [p.positions for p in self.points]
        if not parts:
            return 1.0
        allpos = np.concatenate(parts)
        finite = allpos[np.isfinite(allpos).all(axis=1)]
        if finite.size == 0:
            return 1.0
        return float(max(1.0, np.abs(finite).max()))


def _error(source: str, entry: str, message: str, hint: str) -> SystemFileError:
    return SystemFileError(Problem(entry, message, hint, source))


def frame_indices(time: np.ndarray, fps: float) -> np.ndarray:
    """Return the samples shown as frames: at most ``fps`` per second of simulated time (the first and last always)."""
    time = np.asarray(time, dtype=float)
    if time.size == 0:
        return np.zeros(0, dtype=int)
    keep = [0]
    step = 1.0 / fps
    for k in range(1, time.size):
        if time[k] - time[keep[-1]] >= step * (1 - 1e-9):
            keep.append(k)
    if keep[-1] != time.size - 1:
        keep.append(time.size - 1)
    return np.asarray(keep, dtype=int)


def quaternions(R: np.ndarray) -> np.ndarray:
    """Return the unit quaternions ``(x, y, z, w)`` of rotation matrices ``R`` (frames x 3 x 3)."""
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_quat()


def _evaluate(exprs: Sequence[sp.Expr], symbols: Sequence[sp.Symbol], columns: Sequence[np.ndarray],
              values: Mapping[sp.Symbol, float]) -> np.ndarray:
    """Evaluate expressions along the samples: one row per sample, one column per expression.

    The parameters are arguments with their values in every row (compiled once by :func:`compile_exprs`, no
    symbolic substitution: substituting them into a bicycle's rotation matrices took sympy seconds per body).
    """
    from ..model.numeric import compile_exprs

    n = len(columns[0]) if columns else 1
    args = [*symbols, *values]
    table = np.column_stack([*(np.asarray(c, dtype=float) for c in columns),
                             *(np.full(n, float(v)) for v in values.values())]) if args else np.zeros((n, 0))
    f = compile_exprs(args, [sp.sympify(e) for e in exprs])
    return np.asarray(f(table), dtype=float).reshape(n, len(exprs))


def require_something(system, drawing: DrawingSpec) -> None:
    """Refuse a system with neither bodies nor points to draw."""
    if not (system.multibody and system.multibody.bodies) and not drawing.points:
        raise _error(system.source, "animation", "nothing to draw: the system has no [bodies] and no [animation] "
                     "points", 'describe the system by bodies, or name points to draw: [animation] points = '
                     '{ P = { position = ["x", "y", "0"], trace = true } }')


def build_scene(system, drawing: DrawingSpec, time: np.ndarray, signals: Mapping[str, np.ndarray],
                fps: float = 100.0) -> Scene:
    """Return the scene of ``system`` moving along ``signals`` (coordinate columns by name).

    Parameters
    ----------
    system : bridge.System
        Its bodies (``system.multibody``) give the positions and orientations.
    drawing : DrawingSpec
        Shapes and points (:func:`bridge.animation.shapes.read_drawing`).
    time : numpy.ndarray
        Sample times.
    signals : mapping
        One column per coordinate (and per input the points use), same length as ``time``.
    fps : float
        Frames per second of simulated time.

    Returns
    -------
    Scene

    Raises
    ------
    SystemFileError
        A coordinate or input the drawing needs is missing from ``signals``, or there is nothing to draw.
    """
    bodies = system.multibody.bodies if system.multibody else ()
    require_something(system, drawing)
    idx = frame_indices(time, fps)
    if idx.size > MAX_FRAMES:
        raise _error(system.source, "animation", f"{idx.size} frames, at most {MAX_FRAMES}",
                                     "lower the frame rate (--fps) or the stop time")
    t = sp.Symbol("t")
    symbols = [t] + [c.symbol for c in system.coordinates] + [u.symbol for u in system.inputs]
    missing = [c.name for c in system.coordinates if c.name not in signals]
    if missing:
        raise _error(system.source, "animation", "the result has no column for "
                                     + ", ".join(missing), "animate a result of this system (its CSV has a "
                                     "column per coordinate)")
    columns = [np.asarray(time, dtype=float)[idx]]
    columns += [np.asarray(signals[c.name], dtype=float)[idx] for c in system.coordinates]
    columns += [np.asarray(signals[u.name], dtype=float)[idx] if u.name in signals else np.full(idx.size, u.start)
                for u in system.inputs]
    values = {p.symbol: p.value for p in system.parameters}
    tracks = []
    for body in bodies:
        shape = drawing.shapes[body.name]
        exprs = list(body.position) + (list(sp.Matrix(body.rotation)) if body.rotation is not None else [])
        data = _evaluate(exprs, symbols, columns, values)
        positions = data[:, :3]
        if body.rotation is not None:
            quats = quaternions(data[:, 3:12].reshape(-1, 3, 3))
        else:
            quats = np.tile([0.0, 0.0, 0.0, 1.0], (idx.size, 1))
        tracks.append(BodyTrack(body.name, shape, positions, quats))
    points = [PointTrack(p.name, _evaluate(p.position, symbols, columns, values), p.trace, p.color)
              for p in (*drawing.points, *drawing.contact_tracks)]
    names = [p.name for p in points]
    lines = tuple(tuple(names.index(n) for n in line) for line in drawing.lines)
    return Scene(system.name, columns[0], tuple(tracks), tuple(points), lines, _size(tracks, points),
                 _up(system, values))


def _up(system, values: Mapping[sp.Symbol, float]) -> tuple[float, float, float]:
    """Return the unit vector against gravity (``[gravity] vector``), or +z without gravity."""
    if system.multibody is None:
        return (0.0, 0.0, 1.0)
    try:
        g = np.array([float(sp.sympify(c).subs(values)) for c in system.multibody.gravity])
    except (TypeError, ValueError):
        return (0.0, 0.0, 1.0)
    norm = float(np.linalg.norm(g))
    if not norm > 0 or not np.isfinite(norm):
        return (0.0, 0.0, 1.0)
    return tuple(float(v) for v in -g / norm)  # type: ignore[return-value]


def _size(bodies: list[BodyTrack], points: list[PointTrack]) -> float:
    """Return the size of the system at its first frame: the spread of its bodies and points and its shapes."""
    first = [b.positions[0] for b in bodies] + [p.positions[0] for p in points]
    first = [f for f in first if np.all(np.isfinite(f))]
    spread = float(np.ptp(np.array(first), axis=0).max()) if len(first) > 1 else 0.0
    shape = max((max(b.shape.dimensions) for b in bodies), default=0.0)
    return max(spread + 2 * shape, 0.2)
