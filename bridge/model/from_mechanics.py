"""Systems from sympy.physics.mechanics.

``KanesMethod``, ``LagrangesMethod`` and ``System`` objects (and PyDy's ``System``, which wraps a KanesMethod with its
constants, initial conditions and specifieds).

The result is a :class:`~bridge.model.system.System` built by :func:`~bridge.model.loader.build_system` (every
check of a system file runs) with its bodies attached (``System.multibody``), so every method, ``kane`` included,
and every exporter applies. The conversion:

* coordinates ``q_i(t)`` become symbols named after them (sanitised to identifiers), ``q_i'`` their velocities;
* generalized speeds: the kinematic differential equations ``K_u u + K_q' q' + f(q, t) = 0`` (linear, as sympy
  requires) are solved for the speeds in them, ``u = -K_u^-1 (K_q' q' + f)`` (a small symbolic solve); a speed
  without a kinematic equation (a wheel's spin whose angle is ignorable) gets a coordinate of its own,
  ``int_<u>`` with ``u = der(int_<u>)``; auxiliary speeds (for constraint forces) are zero;
* bodies: mass-centre velocity (N components), angular velocity and central inertia in the frame the inertia
  dyadic is given in, that frame's rate and direction cosines; loads: a force at a point (with the point's
  velocity) or a torque on a frame (with its angular velocity); ``T = sum 1/2 m v.v + 1/2 w.I w``;
* gravity: one load ``m_b g`` at every mass centre with the same constant ``g`` becomes uniform gravity,
  ``V = -sum m_b g . r_b`` (positions from a common point), when ``g . (dr_b/dt - v_b) = 0`` (checked at random
  states: the point may move, but not along g); otherwise the loads stay loads, ``Q_i = sum F . dv_P/dq'_i``;
* constraints: configuration constraints are holonomic; velocity constraints (in u, as sympy holds them) that are
  time derivatives of holonomic ones are dropped, the others are nonholonomic constraints in q';
* ``LagrangesMethod``: ``T = L - L|q'=0``, ``V = -L|q'=0``; its bodies (if given) and loads are kept;
* start values: coordinates and speeds; dependent positions and velocities are computed from the constraints as
  the loader does with ``[method] independent`` (the independent speeds' coordinates); a value given for a dependent
  one must be the computed one (within :data:`DEPENDENT_START_TOL`);
* the bodies' masses and inertia tensors go through the checks of a system file's (:mod:`bridge.model.values`).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sympy as sp

from ..errors import Problem, SystemFileError
from . import symbols as S
from .multibody import ZERO, Body, Load, Multibody
from .numeric import evaluate_once
from .system import System, finite, total_derivative
from .values import check_values

__all__ = ["from_mechanics"]

SOURCE = "<from_mechanics>"


def _fail(entry: str, message: str, hint: str) -> SystemFileError:
    return SystemFileError(Problem(entry, message, hint, SOURCE))


@dataclass
class _Spec:
    """What the sympy object holds, in its own (dynamicsymbols) terms."""

    kind: str
    frame: Any
    q: list
    u: list = field(default_factory=list)
    kdes: list | None = None
    u_ind: list = field(default_factory=list)
    u_aux: list = field(default_factory=list)
    holonomic: list = field(default_factory=list)
    velocity: list = field(default_factory=list)      # in u (Kane, System) or q' (Lagrange)
    bodies: list = field(default_factory=list)
    loads: list = field(default_factory=list)
    lagrangian: Any = None
    fixed_point: Any = None


def _spec(obj: Any) -> _Spec:
    from sympy.physics.mechanics import KanesMethod, LagrangesMethod
    from sympy.physics.mechanics import System as MechanicsSystem

    if isinstance(obj, KanesMethod):
        if obj._bodylist is None:
            raise _fail("bodies", "the KanesMethod has no bodies", "call kanes_equations(bodies, loads) first, or "
                        "pass bodies=... and forcelist=... to KanesMethod")
        if obj._qdot_u_map is None:
            raise _fail("kdes", "the KanesMethod has no kinematic differential equations",
                        "pass kd_eqs=[q1.diff() - u1, ...] to KanesMethod")
        u = list(obj.u)
        kdes = list(obj._k_ku_implicit * obj.u + obj._k_kqdot_implicit * obj._qdot + obj._f_k_implicit)
        vel = list(obj._k_nh * obj.u + obj._f_nh) if len(obj._udep) else []
        return _Spec("KanesMethod", obj._inertial, list(obj.q), u, kdes, u[: len(u) - len(obj._udep)],
                     list(obj._uaux), list(obj._f_h), vel, list(obj._bodylist), list(obj._forcelist or []))
    if isinstance(obj, MechanicsSystem):
        loads = list(obj.loads) + [ld for act in obj.actuators for ld in act.to_loads()]
        if not obj.bodies:
            raise _fail("bodies", "the System has no bodies", "add them with system.add_bodies(...)")
        return _Spec("System", obj.frame, list(obj.q), list(obj.u), list(obj.kdes), list(obj.u_ind),
                     list(obj.u_aux), list(obj.holonomic_constraints), list(obj.velocity_constraints),
                     list(obj.bodies), loads, fixed_point=obj.fixed_point)
    if isinstance(obj, LagrangesMethod):
        hol = list(obj._hol_coneqs)
        return _Spec("LagrangesMethod", obj.inertial, list(obj.q), holonomic=hol,
                     velocity=list(obj.coneqs)[len(hol):], bodies=list(obj._bodies or []),
                     loads=list(obj._forcelist or []), lagrangian=obj._L[0])
    raise _fail("object", f"cannot import a {type(obj).__name__}",
                "pass a sympy.physics.mechanics KanesMethod, LagrangesMethod or System, or a PyDy System")


# -- names ---------------------------------------------------------------------------------------------------------
def _identifier(name: str, used: set[str]) -> str:
    """Return a valid, unused system-file name for a sympy name (Greek letters spelled out, others replaced by _)."""
    from .reserved_names import IDENTIFIER, MAX_NAME_LENGTH, RESERVED, RESERVED_PREFIXES

    chars = []
    for ch in name:
        if ch.isascii():
            chars.append(ch if ch.isalnum() or ch == "_" else "_")
        else:
            words = unicodedata.name(ch, "_").split()
            chars.append(words[-1].lower() if words[-1].isalpha() else "_")
    s = "".join(chars).strip("_") or "x"
    if not s[0].isalpha():
        s = "x" + s
    if s.startswith(RESERVED_PREFIXES):
        s = "x" + s
    if s in RESERVED:
        s += "_"
    s = s[:MAX_NAME_LENGTH]
    base, k = s, 2
    while s in used or not IDENTIFIER.match(s):
        s = f"{base[:MAX_NAME_LENGTH - 4]}_{k}"
        k += 1
    used.add(s)
    return s


def _function_name(f: sp.Basic) -> str | None:
    """Return the name of a dynamicsymbol ``x(t)``, None for anything else."""
    from sympy.core.function import AppliedUndef
    from sympy.physics.mechanics import dynamicsymbols

    if isinstance(f, AppliedUndef) and f.args == (dynamicsymbols._t,):
        return type(f).__name__
    return None


def _input_function(f: Any, taken: set) -> tuple[Any, str]:
    """Return an ``inputs`` key: a dynamicsymbol that is not a coordinate or speed."""
    name = _function_name(f)
    if name is None:
        raise _fail("inputs", f"the input {f} is not a dynamicsymbol (a function of t)",
                    "give specified quantities as dynamicsymbols('T'), mapped to their start values")
    if f in taken:
        raise _fail("inputs", f"{f} is a coordinate or speed of the object, not an input",
                    "give only specified quantities (external signals) as inputs")
    return f, name


# -- the conversion ------------------------------------------------------------------------------------------------
class _Converter:
    """Replaces q(t), q'(t), u(t), auxiliary speeds and parameter symbols by the system's symbols in one pass."""

    def __init__(self, spec: _Spec, name: str, inputs: Mapping | None = None):
        from sympy.physics.mechanics import dynamicsymbols

        t = dynamicsymbols._t
        self.used: set[str] = {name}
        self.names: dict = {}       # dynamicsymbol -> coordinate name
        for q in spec.q:
            nm = _function_name(q)
            if nm is None:
                raise _fail("coordinates", f"the coordinate {q} is not a dynamicsymbol (a function of t)",
                            "declare coordinates with dynamicsymbols('q1 q2')")
            self.names[q] = _identifier(nm, self.used)
        for u in spec.u:
            if _function_name(u) is None:
                raise _fail("speeds", f"the generalized speed {u} is not a dynamicsymbol (a function of t)",
                            "declare speeds with dynamicsymbols('u1 u2')")
        self.map: dict = {}
        for q, nm in self.names.items():
            self.map[q.diff(t)] = S.qd(nm)
            self.map[q] = S.q(nm)
        for ua in spec.u_aux:
            self.map[ua] = sp.Integer(0)
        self.params: dict = {}      # user symbol -> system symbol
        self.inputs: dict = {}      # specified function of t -> input symbol
        taken = set(spec.q) | set(spec.u) | set(spec.u_aux)
        for f in inputs or {}:
            f, fname = _input_function(f, taken)
            self.inputs[f] = self.map[f] = sp.Symbol(_identifier(fname, self.used))

    def add_coordinate(self, label: str) -> str:
        nm = _identifier(label, self.used)
        return nm

    def parameter(self, sym: sp.Symbol) -> sp.Symbol:
        if sym not in self.params:
            self.params[sym] = sp.Symbol(_identifier(sym.name, self.used))
            self.map[sym] = self.params[sym]
        return self.params[sym]

    def __call__(self, expr: Any) -> sp.Expr:
        from sympy.physics.mechanics import dynamicsymbols

        expr = sp.sympify(expr)
        for s in expr.free_symbols:
            if s != dynamicsymbols._t and s not in self.map:
                self.parameter(s)
        out = expr.xreplace(self.map)
        left = [f for f in out.atoms(sp.Function, sp.Derivative) if isinstance(f, sp.Derivative)
                or _function_name(f) is not None]
        if left:
            raise _fail("object", f"{left[0]} is neither a coordinate, a coordinate's derivative, a generalized "
                        "speed nor an input of the object", "declare specified quantities (e.g. a driving torque "
                        f"T(t)) as inputs with their start values, inputs={{{left[0]}: 0.0}}, or make them constant "
                        "symbols (parameters)")
        return out

    def vector(self, vec: Any, frame: Any) -> tuple:
        return tuple(self(x) for x in vec.to_matrix(frame))


def _solve_kinematics(spec: _Spec, conv: _Converter) -> tuple[list, list]:
    """Return (coordinate names, speeds map u -> expression in q'), with extra coordinates for speeds without a kde."""
    from sympy.physics.mechanics import dynamicsymbols

    t = dynamicsymbols._t
    coords = [conv.names[q] for q in spec.q]
    if spec.kdes is None:
        return coords, []
    kde = sp.Matrix(spec.kdes)
    if kde.shape[0] != len(spec.q):
        raise _fail("kdes", f"{kde.shape[0]} kinematic differential equations for {len(spec.q)} coordinates",
                    "give one kinematic differential equation per coordinate")
    qdot = [q.diff(t) for q in spec.q]
    in_kde = [u for u in spec.u if any(e.has(u) for e in kde)]
    if len(in_kde) != len(spec.q):
        raise _fail("kdes", f"the kinematic differential equations contain {len(in_kde)} generalized speeds "
                    f"({', '.join(map(str, in_kde))}) for {len(spec.q)} coordinates, so they cannot be solved for "
                    "the speeds", "write one kinematic differential equation per coordinate, each speed appearing "
                    "in them defined by them")
    Ku, Kq = kde.jacobian(in_kde), kde.jacobian(qdot)
    f = kde.xreplace({**{u: 0 for u in spec.u}, **{qd: 0 for qd in qdot}})
    rhs = -(Kq * sp.Matrix(qdot) + f)
    sol = (sp.Matrix([rhs[i] / Ku[i, i] for i in range(len(in_kde))]) if Ku.is_diagonal()
           else Ku.LUsolve(rhs))
    umap = []
    for u, e in zip(in_kde, sol):
        umap.append((u, conv(e)))
    for u in spec.u:
        if u not in in_kde:  # a speed without a kinematic equation: the rate of a coordinate of its own
            nm = conv.add_coordinate(f"int_{_function_name(u)}")
            coords.append(nm)
            umap.append((u, S.qd(nm)))
    for u, e in umap:
        conv.map[u] = e
    return coords, umap


def _points(point: Any) -> list:
    """Return every point connected to ``point`` by positions, breadth first."""
    seen, queue = [point], [point]
    while queue:
        p = queue.pop(0)
        for other in p._pos_dict:
            if other not in seen:
                seen.append(other)
                queue.append(other)
    return seen


def _reference_point(spec: _Spec, centres: list) -> Any:
    """Return a point every mass centre is located from: the fixed point, else one with zero velocity in N."""
    if spec.fixed_point is not None:
        return spec.fixed_point
    if not centres:
        return None
    connected = _points(centres[0])
    if not all(c in connected for c in centres):
        return None
    for p in connected:
        v = p._vel_dict.get(spec.frame)
        if v is not None and v == 0:
            return p
    return connected[0]


def _inertia_frame(body: Any) -> Any:
    """Return the frame the central inertia dyadic is written in (the body frame when it mixes frames)."""
    frames: set[Any] = set()
    for _c, v1, v2 in body.central_inertia.args:
        for v in (v1, v2):
            frames.update(fr for _m, fr in v.args)
    return frames.pop() if len(frames) == 1 else body.frame


def _bodies(spec: _Spec, conv: _Converter) -> tuple[list[Body], list, Any]:
    """Return the bodies and their sympy mass centres."""
    from sympy.physics.mechanics import Particle

    N = spec.frame
    centres = [b.masscenter for b in spec.bodies]
    ref = _reference_point(spec, centres)
    out = []
    for b in spec.bodies:
        try:
            vel = conv.vector(b.masscenter.vel(N), N)
        except ValueError as exc:
            raise _fail(f"bodies.{b.name}", f"the velocity of its mass centre is not defined ({exc})",
                        "set it with set_vel or v2pt_theory") from exc
        pos: Any = None  # no common point: refused by _true_velocities, which needs the positions
        if ref is not None:
            try:
                pos = conv.vector(b.masscenter.pos_from(ref), N)
            except ValueError:
                pos = None
        if isinstance(b, Particle):
            out.append(Body(b.name, conv(b.mass), pos, vel))
            continue
        F = _inertia_frame(b)
        try:
            w = conv.vector(b.frame.ang_vel_in(N), F)
            rate = None if b.frame == F else conv.vector(F.ang_vel_in(N), F)
            rotation = sp.ImmutableMatrix(N.dcm(F).applyfunc(conv))
        except ValueError as exc:
            raise _fail(f"bodies.{b.name}", f"the orientation of frame {F} relative to {N} is not defined ({exc})",
                        "orient it with orient_axis (or orientnew) or give its inertia in an oriented frame") from exc
        inertia = sp.ImmutableMatrix(b.central_inertia.to_matrix(F).applyfunc(conv))
        out.append(Body(b.name, conv(b.mass), pos, vel, rotation, w, inertia, rate))
    return out, centres, ref


def _true_velocities(bodies: list, ref: Any, conv: _Converter, coords: list, pvals: Mapping) -> tuple[list, list]:
    """Return the bodies whose velocities are the time derivatives of their positions, and constraints to add.

    sympy's velocities may embed nonholonomic constraints (a rolling disc built from a contact point of zero
    velocity): they are the true velocities on the constrained motion but not ``dr/dt`` in the coordinates, so
    ``T`` formed from them is wrong for the energy methods. Then the reference point gets coordinates
    ``x_P, y_P, z_P`` (its position in N; only along the axes where the gap ``v - dr/dt`` does not vanish
    identically), every body ``r = X + r_rel``, ``v = X' + dr_rel/dt``, and the constraints ``X' = v_0 - dr_0/dt``
    (from the body where that is shortest) are added; the other bodies' sympy velocities must then agree (checked at
    random states). Without an embedded constraint the bodies are returned as they are.
    """
    if not bodies:
        return bodies, []
    lost = [b.name for b in bodies if b.position is None]
    if lost:
        raise _fail(f"bodies.{lost[0]}", f"the position of {lost[0]}'s mass centre relative to "
                    f"{getattr(ref, 'name', 'the other bodies')} is not defined",
                    "locate every mass centre from one point with locatenew / set_pos")
    q_syms = [S.q(c) for c in coords]
    qd = [S.qd(c) for c in coords]
    qdd = [S.qdd(c) for c in coords]
    rdot = [[total_derivative(x, q_syms, qd, qdd) for x in b.position] for b in bodies]
    gap = [[v - r for v, r in zip(b.velocity, rd)] for b, rd in zip(bodies, rdot)]
    if _vanish([x for g in gap for x in g], [abs(x) for b in bodies for x in b.velocity], q_syms + qd, pvals):
        return bodies, []
    scales = [abs(x) for b in bodies for x in b.velocity]
    moving = [k for k in range(3) if not _vanish([g[k] for g in gap], scales, q_syms + qd, pvals)]
    X = [conv.add_coordinate(f"{'xyz'[k]}_{ref.name}") for k in moving]  # the point moves along these axes only
    coords.extend(X)
    Xs, Xd = [sp.Integer(0)] * 3, [sp.Integer(0)] * 3
    for k, x in zip(moving, X):
        Xs[k], Xd[k] = S.q(x), S.qd(x)
    from .expressions import tree_size

    base = min(range(len(bodies)), key=lambda b: sum(tree_size(x) for x in gap[b]))  # the smallest X' formula
    rel = [[g - gap[base][k] for k, g in enumerate(gb)] for gb in gap]
    if not _vanish([x for r in rel for x in r], [abs(x) for b in bodies for x in b.velocity],
                   q_syms + qd, pvals):
        raise _fail("bodies", "the velocities of the bodies do not follow from their positions and one common "
                    "velocity of the reference point", "define velocities with v2pt_theory / v1pt_theory from "
                    "located points, or give the positions of every point")
    constraints = [Xd[k] - gap[base][k] for k in moving]
    out = [replace(b, position=tuple(x + r for x, r in zip(Xs, b.position)),
                   velocity=tuple(x + r for x, r in zip(Xd, rd))) for b, rd in zip(bodies, rdot)]
    return out, constraints


def _lagrange_bodies(bodies: list, lag: sp.Expr, q_syms: list, qd_syms: list, pvals: Mapping) -> list:
    """Return a LagrangesMethod's bodies when Kane's method may use them, else none.

    Their velocities must be the time derivatives of their positions (a Lagrangian formed from velocities with embedded
    constraints describes another motion than Kane's method would find from the same bodies) and their kinetic energy
    the velocity part of L.
    """
    if not bodies or any(b.position is None for b in bodies):
        return []
    qdd = [S.qdd(S.base_name(s)) for s in q_syms]
    gap = [v - total_derivative(r, q_syms, qd_syms, qdd) for b in bodies for v, r in zip(b.velocity, b.position)]
    scales = [abs(v) for b in bodies for v in b.velocity]
    if not _vanish(gap, scales, q_syms + qd_syms, pvals):
        return []
    T = Multibody(tuple(bodies)).kinetic_energy()
    L0 = lag.xreplace({v: 0 for v in qd_syms})
    if not _vanish([T - (lag - L0)], [abs(T)], q_syms + qd_syms, pvals):
        return []
    return bodies


def _vanish(exprs: list, scales: list, syms: list, pvals: Mapping) -> bool:
    """Return whether every expression is zero (relative to the scale expressions) at three random states."""
    rng = np.random.default_rng(5)
    for _ in range(3):
        args, values = _state_values(syms, rng, pvals)
        res = evaluate_once(args, exprs, values)
        scale = max(1.0, float(np.nansum(evaluate_once(args, scales, values))))
        if not np.all(np.abs(res) <= 1e-9 * scale):
            return False
    return True


def _loads(spec: _Spec, conv: _Converter) -> list[tuple[Any, Load]]:
    from sympy.physics.mechanics import Point
    from sympy.physics.mechanics.loads import _parse_load

    N = spec.frame
    out = []
    for k, raw in enumerate(spec.loads):
        try:
            load = _parse_load(raw)
        except (TypeError, ValueError) as exc:
            raise _fail(f"loads[{k + 1}]", str(exc), "give loads as Force, Torque or (Point|Frame, Vector)") from exc
        where = load.location
        point = isinstance(where, Point)
        vel = conv.vector(where.vel(N), N) if point else conv.vector(where.ang_vel_in(N), where)
        if all(v == 0 for v in vel):  # no power in any motion (e.g. a constraint force on auxiliary speeds)
            continue
        vector = conv.vector(load.vector, N if point else where)
        out.append((where, Load(f"{'force' if point else 'torque'} on {where.name}", "force" if point else "torque",
                                vel, vector)))
    return out


def _state_values(system_syms: list, rng: np.random.Generator, params: Mapping) -> tuple[list, np.ndarray]:
    args = [S.t, *system_syms, *params]
    values = np.concatenate([[rng.uniform(0, 1)], rng.uniform(-1, 1, len(system_syms)), list(params.values())])
    return args, values


def _gravity(bodies: list[Body], centres: list, loads: list, q_syms: list) -> tuple:
    """Return (gravity vector, remaining loads): uniform gravity when every mass centre carries one load m g."""
    if not bodies:
        return ZERO, [ld for _w, ld in loads]
    state = set(q_syms) | {S.t}
    g, used = None, []
    for body, centre in zip(bodies, centres):
        found = None
        for k, (where, ld) in enumerate(loads):
            if k in used or where != centre or ld.kind != "force":
                continue
            cand = tuple(sp.cancel(x / body.mass) for x in ld.vector)
            if any(c.free_symbols & state for c in cand) or all(c == 0 for c in cand):
                continue
            if g is None or all(sp.cancel(a - b) == 0 for a, b in zip(cand, g)):
                found, g = k, cand
                break
        if found is None:
            return ZERO, [ld for _w, ld in loads]
        used.append(found)
    return g, [ld for k, (_w, ld) in enumerate(loads) if k not in used]


def _select_nonholonomic(hol: list, vel: list, q_syms: list, params: Mapping) -> list:
    """Return the velocity constraints that are not (generically) combinations of the holonomic ones' derivatives."""
    if not hol or not vel:
        return list(vel)
    qd = [S.qd(S.base_name(s)) for s in q_syms]
    qdd = [S.qdd(S.base_name(s)) for s in q_syms]
    rows = [total_derivative(e, q_syms, qd, qdd) for e in hol] + list(vel)
    zero = {v: 0 for v in qd}
    flat = [sp.diff(r, v) for r in rows for v in qd] + [r.xreplace(zero) for r in rows]
    args, values = _state_values(q_syms, np.random.default_rng(9), params)
    nums = evaluate_once(args, flat, values)
    n, m = len(qd), len(rows)
    M = np.column_stack([nums[: m * n].reshape(m, n), nums[m * n:]])
    M = M / np.where(np.linalg.norm(M, axis=1) > 0, np.linalg.norm(M, axis=1), 1.0)[:, None]
    kept, basis = [], list(M[: len(hol)])
    rank = np.linalg.matrix_rank(np.array(basis), tol=1e-9)
    for k, e in enumerate(vel):
        trial = np.array([*basis, M[len(hol) + k]])
        r = np.linalg.matrix_rank(trial, tol=1e-9)
        if r > rank:
            kept.append(e)
            basis.append(M[len(hol) + k])
            rank = r
    return kept


def _value(entry: str, key: Any, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        x = float("nan")
    if not finite(x):
        raise _fail(entry, f"the value {value!r} given for {key} is not a finite number", "give a number")
    return x


def _lookup(table: Mapping, what: str, known: dict) -> dict:
    """Map user keys (sympy objects or their names) to values, keyed by the known objects (object -> kind)."""
    by_name = {str(k): k for k in known}
    names = {k: _function_name(k) for k in known}
    by_name.update({n: k for k, n in names.items() if n})
    out = {}
    for key, value in (table or {}).items():
        obj = key if key in known else by_name.get(key) if isinstance(key, str) else None
        if obj is None:
            kinds = " or ".join(dict.fromkeys(known.values())) or "symbol"
            raise _fail(what, f"{key} is not a {kinds} of the object",
                        f"{what} accepts: {', '.join(sorted(by_name)[:30]) or 'nothing'}")
        out[obj] = _value(f"{what}[{key}]", key, value)
    return out


def from_mechanics(obj: Any, parameters: Mapping | None = None, start: Mapping | None = None, name: str = "Model",
                   description: str = "", stop_time: float = 10.0, inputs: Mapping | None = None) -> System:
    """Return a :class:`System` from a sympy.physics.mechanics ``KanesMethod``, ``LagrangesMethod`` or ``System``.

    The kinetic energy, the potential and applied forces, the constraints and the bodies (for kane) are read from
    the object; the result goes through the same checks as a system file.

    Parameters
    ----------
    obj : KanesMethod, LagrangesMethod, sympy.physics.mechanics.System or pydy.system.System
        The formulated model (``kanes_equations`` or ``form_lagranges_equations`` called, or a ``System`` with
        its bodies, loads and constraints).
    parameters : mapping, optional
        Every constant symbol of the object (or its name) -> value.
    start : mapping, optional
        Coordinates and generalized speeds (``LagrangesMethod``: coordinates and their derivatives) -> start values
        (default 0); dependent ones are computed from the constraints (a value given for one must agree with them).
    name : str, optional
        The model name.
    description : str, optional
        Free text.
    stop_time : float, optional
        The default stop time.
    inputs : mapping, optional
        Specified quantities (dynamicsymbols in the loads, e.g. a driving torque) -> start values; they become the
        system's inputs.

    Returns
    -------
    System
        The system, described by bodies where the object has them.

    Raises
    ------
    SystemFileError
        When a constant has no value, a value is not allowed, or the object holds something nhbridge cannot express.

    Examples
    --------
    A mass on a spring formulated with Kane's method:

    >>> import sympy as sp
    >>> import sympy.physics.mechanics as me
    >>> import bridge
    >>> x, u = me.dynamicsymbols("x u")
    >>> m, k = sp.symbols("m k")
    >>> N = me.ReferenceFrame("N")
    >>> O = me.Point("O")
    >>> O.set_vel(N, 0)
    >>> P = O.locatenew("P", x * N.x)
    >>> P.set_vel(N, u * N.x)
    >>> kane = me.KanesMethod(N, q_ind=[x], u_ind=[u], kd_eqs=[x.diff() - u])
    >>> _ = kane.kanes_equations([me.Particle("mass", P, m)], [(P, -k * x * N.x)])
    >>> system = bridge.from_mechanics(kane, parameters={m: 2.0, k: 8.0}, start={x: 0.1}, name="Oscillator")
    >>> system.q, system.kinetic, system.forces["x"]
    ((x,), der(x)**2*m/2, -k*x)
    >>> system.coordinate("x").start
    0.1
    """
    from sympy.physics.mechanics import dynamicsymbols

    t = dynamicsymbols._t
    obj, parameters, start, inputs = _unwrap_pydy(obj, parameters, start, inputs)
    spec = _spec(obj)
    input_values = {k: _value(f"inputs[{k}]", k, v) for k, v in (inputs or {}).items()}
    conv = _Converter(spec, name, input_values)
    coords, umap = _solve_kinematics(spec, conv)
    q_syms = [S.q(c) for c in coords]
    qd_syms = [S.qd(c) for c in coords]
    bodies, centres, ref = _bodies(spec, conv)
    loads = _loads(spec, conv)
    hol = [conv(e) for e in spec.holonomic]
    vel = [conv(e) for e in spec.velocity]
    lag = conv(spec.lagrangian) if spec.lagrangian is not None else None
    # parameters: every symbol met during the conversion needs a value
    known = {user: user for user in conv.params}
    values = _lookup(parameters or {}, "parameters", {k: "parameter" for k in known})
    missing = [str(s) for s in conv.params if s not in values]
    if missing:
        raise _fail("parameters", f"the object contains symbols without values: {', '.join(sorted(missing))}",
                    "give every constant a value, e.g. parameters={" + ", ".join(f"{m}: 1.0" for m in
                                                                          sorted(missing)[:3]) + "}")
    pvals = {conv.params[s]: v for s, v in values.items()}
    if spec.kind == "LagrangesMethod":  # L holds T and V; its bodies are kept for kane if they describe the same T
        bodies = _lagrange_bodies(bodies, lag, q_syms, qd_syms, pvals)
        gravity, rest = ZERO, [ld for _w, ld in loads]
    else:
        bodies, embedded = _true_velocities(bodies, ref, conv, coords, pvals)
        vel = embedded + vel
        q_syms = [S.q(c) for c in coords]
        qd_syms = [S.qd(c) for c in coords]
        gravity, rest = _gravity(bodies, centres, loads, q_syms)
    mb = Multibody(tuple(bodies), tuple(rest), gravity) if bodies else None
    if lag is not None:
        L0 = lag.xreplace({v: 0 for v in qd_syms})
        kinetic, potential = lag - L0, -L0
    elif mb is None:
        raise _fail("bodies", f"the {spec.kind} has no bodies or particles, so nothing has mass or inertia (its "
                    "kinetic energy is zero)", "pass the bodies and particles to kanes_equations(bodies, loads), "
                    "or give the System its bodies (System.add_bodies)")
    else:
        kinetic, potential = mb.kinetic_energy(), mb.potential_energy()
    forces = {}
    if mb is not None and mb.loads:
        for c, Q in zip(coords, mb.generalized_forces(qd_syms)):
            if Q != 0:
                forces[c] = Q
    nonhol = _select_nonholonomic(hol, vel, q_syms, pvals)
    # start values
    speeds = {u: "speed" for u in spec.u}
    qs = {q: "coordinate" for q in spec.q}
    derivs = {q.diff(t): "coordinate derivative" for q in spec.q} if spec.kind == "LagrangesMethod" else {}
    given = _lookup(start or {}, "start", {**qs, **speeds, **derivs})
    q0 = {conv.names[q]: given.get(q, 0.0) for q in spec.q}
    data: dict[str, Any] = {
        "name": name, "description": description,
        "coordinates": {c: {"start": q0.get(c, 0.0), "velocity": 0.0} for c in coords},
        "parameters": {p.name: {"value": v} for p, v in pvals.items()},
        "inputs": {sym.name: {"start": input_values[f]} for f, sym in conv.inputs.items()},
        "energy": {"kinetic": kinetic, "potential": potential},
        "forces": forces,
        "constraints": {"holonomic": hol, "nonholonomic": nonhol},
        "simulation": {"stop_time": stop_time},
    }
    velocities = _start_velocities(spec, conv, coords, given, q0, pvals, t)
    independent = _independent(spec, conv, coords, given, pvals) if hol or nonhol else None
    from .loader import build_system

    if independent is not None:
        data["method"] = {"independent": independent}
        system = build_system(data, SOURCE, mb)
        set_values = {f"der({c})": velocities(system)[c] for c in independent}
        system = system.with_values(set_values) if any(set_values.values()) else system
    else:
        data["coordinates"] = {c: {"start": q0.get(c, 0.0), "velocity": 0.0} for c in coords}
        system = build_system(data, SOURCE, mb)
        vels = velocities(system)
        if any(vels.values()):
            system = system.with_values({f"der({c})": v for c, v in vels.items()})
    _check_given_dependent(spec, conv, umap, given, system)
    system = replace(system, multibody=mb, source=SOURCE)
    check_values(system)  # the bodies' masses and inertias, as a system file's
    return system


def _unwrap_pydy(obj: Any, parameters: Mapping | None, start: Mapping | None, inputs: Mapping | None) -> tuple:
    """Unwrap a PyDy ``pydy.system.System`` into its KanesMethod and defaults.

    Its constants, initial conditions (independent ones: dependent speeds are computed) and constant specifieds become
    defaults under the values given here.
    """
    if type(obj).__module__ != "pydy.system" or not hasattr(obj, "eom_method"):
        return obj, parameters, start, inputs
    km = obj.eom_method
    dependent = set(getattr(km, "_udep", []))
    initial = {k: v for k, v in dict(obj.initial_conditions or {}).items() if k not in dependent}
    specified = {}
    for k, v in dict(obj.specifieds or {}).items():
        if isinstance(k, tuple) or callable(v) or not finite(float(v) if isinstance(v, (int, float)) else None):
            raise _fail("specifieds", f"the PyDy specified {k} is given as a function or array",
                        "give its start value with inputs={symbol: value} (it becomes an input of the system)")
        specified[k] = v
    return (km, {**dict(obj.constants or {}), **dict(parameters or {})}, {**initial, **dict(start or {})},
            {**specified, **dict(inputs or {})})


def _independent(spec: _Spec, conv: _Converter, coords: list, given: Mapping, pvals: Mapping) -> list[str] | None:
    """Return the coordinates whose velocities the independent speeds alone determine.

    ``q' = -K_q'^-1 (K_u u + f)``, read at a random state; the coordinates are returned when there are as many as
    independent speeds, else None.
    """
    from sympy.physics.mechanics import dynamicsymbols

    if spec.kdes is None:
        return None
    t = dynamicsymbols._t
    kde = sp.Matrix(spec.kdes)
    qdot = [q.diff(t) for q in spec.q]
    in_kde = [u for u in spec.u if any(e.has(u) for e in kde)]
    nq, nu = len(qdot), len(in_kde)
    q_syms = [S.q(c) for c in coords]
    args, values = _state_values(q_syms, np.random.default_rng(13), pvals)
    Kq = evaluate_once(args, [conv(x) for x in kde.jacobian(qdot)], values).reshape(nq, nq)
    Ku = evaluate_once(args, [conv(x) for x in kde.jacobian(in_kde)], values).reshape(nq, nu)
    W = np.linalg.solve(Kq, -Ku)
    out = []
    for i, q in enumerate(spec.q):
        cols = [in_kde[j] for j in range(nu) if abs(W[i, j]) > 1e-12 * max(1.0, np.abs(W).max())]
        if cols and all(u in spec.u_ind for u in cols):
            out.append(conv.names[q])
    for u in spec.u_ind:
        e = conv.map.get(u)
        if u not in in_kde and e is not None:
            out.append(S.base_name(e))
    return [c for c in coords if c in out] if len(out) == len(spec.u_ind) else None


#: a start value given for a dependent speed or coordinate is accepted when it differs from the value the
#: constraints give by at most this, relative to the largest speed (or coordinate) of the start state, at least 1
DEPENDENT_START_TOL = 1e-9


def _check_given_dependent(spec: _Spec, conv: _Converter, umap: list, given: Mapping, system: System) -> None:
    """Check that given start values of dependent speeds and coordinates are those the constraints give.

    The system's start state is computed from the independent ones (the system's own start values); a value that differs
    by more than :data:`DEPENDENT_START_TOL` is a SystemFileError naming each with its residual.
    """
    from .mechanics import state_args

    args = state_args(system)
    values = [0.0, *[c.start for c in system.coordinates], *[c.velocity for c in system.coordinates],
              *[p.value for p in system.parameters], *[u.start for u in system.inputs]]
    rows = []
    if umap:
        computed = dict(zip([u for u, _e in umap], evaluate_once(args, [e for _u, e in umap], values)))
        scale = max([1.0, *[abs(v) for v in computed.values() if np.isfinite(v)]])
        rows += [(u, "speed", computed[u], scale) for u in spec.u if u in given and u in computed]
    q_scale = max([1.0, *[abs(c.start) for c in system.coordinates]])
    rows += [(q, "coordinate", system.coordinate(conv.names[q]).start, q_scale) for q in spec.q if q in given]
    problems = []
    for obj, kind, value, scale in rows:
        residual = float(given[obj]) - float(value)
        if not abs(residual) <= DEPENDENT_START_TOL * scale:
            problems.append(Problem(
                f"start[{obj}]", f"the start value {float(given[obj]):.10g} of the {kind} {obj} does not "
                f"satisfy the constraints: they give {float(value):.10g} from the independent start values "
                f"(residual {residual:.3g}, tolerance {DEPENDENT_START_TOL:g} x {scale:.3g})",
                f"give the value the constraints give, or leave {obj} out to have it computed", SOURCE))
    if problems:
        raise SystemFileError(problems)


def _start_velocities(spec: _Spec, conv: _Converter, coords: list, given: Mapping, q0: Mapping, pvals: Mapping,
                      t: sp.Symbol):
    """Return a function of the built system giving each coordinate's start velocity from the given speeds (missing: 0).

    Evaluated at the system's (consistent) start positions.
    """

    def at(system: System) -> dict[str, float]:
        point = {S.t: 0.0, **{c.symbol: c.start for c in system.coordinates}, **pvals}
        if spec.kdes is None:  # Lagrange: q' given directly
            return {conv.names[q]: float(given.get(q.diff(t), 0.0)) for q in spec.q}
        qdot = [q.diff(t) for q in spec.q]
        kde = sp.Matrix(spec.kdes)
        Kq = kde.jacobian(qdot)
        rest = kde.xreplace({qd: 0 for qd in qdot}).xreplace({u: given.get(u, 0.0) for u in spec.u})
        args = list(point)
        vals = list(point.values())
        nq = len(spec.q)
        A = evaluate_once(args, [conv(x) for x in Kq], vals).reshape(nq, nq)
        b = evaluate_once(args, [conv(x) for x in rest], vals)
        v = np.linalg.solve(A, -b) if nq else np.zeros(0)
        out = {conv.names[q]: float(x) for q, x in zip(spec.q, v)}
        for u in spec.u:
            e = conv.map.get(u)
            if e is not None and e.is_Symbol:
                base = S.base_name(e)
                if base in coords[nq:]:
                    out[base] = float(given.get(u, 0.0))
        return out

    return at
