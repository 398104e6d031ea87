"""Native simulation of systems with Coulomb friction: stick and slip switched by located events.

Each friction element (:class:`bridge.model.efforts.Friction`) has a mode: stick (0) or slip with the
sign of its relative velocity (+1, -1). In a mode the equations are smooth (the element's row of the
dynamic system is ``dv_r/dt = 0`` in stick, ``F = -mu_k N sign`` in slip; :func:`~bridge.derivation.
efforts.with_modes`), integrated by ``solve_ivp`` until the first event:

* slip s:  ``v_r`` reaches 0 (from the side s);
* stick:   ``|F| - mu_s N`` reaches 0 from below (the static limit).

At an event (located by scipy's root finder on the dense output, to ~1e-14 s on the interpolant) the new
mode is chosen by the stick test: the element sticks if the force that keeps ``v_r = 0`` there is
within ``mu_s N``, else it slips opposite to that force. Entering stick, the velocities are projected
onto ``v_r = 0`` (least change along ``dv_r/dq'``). More than ``ZENO_EVENTS`` events within
``ZENO_WINDOW`` (relative to the stop time) is reported as chattering (a Zeno sequence) with its time;
the stated alternative is the element's ``regularization`` velocity (a smooth tanh law, no events).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
from scipy.integrate import solve_ivp

from ..derivation.efforts import SLIP_NEG, SLIP_POS, STICK, event_friction, with_modes
from ..derivation.eom import EquationsOfMotion
from ..derivation.numeric_model import NumericModel
from ..errors import SimulationError
from ..model import symbols as S
from ..model.numeric import compile_exprs

ZENO_EVENTS = 50
ZENO_WINDOW = 1e-9
MODE_NAMES = {STICK: "stick", SLIP_POS: "slip+", SLIP_NEG: "slip-"}


@dataclass(frozen=True)
class Event:
    """One switch of a friction element."""

    time: float
    element: str
    before: str
    after: str


class _Modes:
    """The compiled model of each mode combination (compiled once, on first use)."""

    def __init__(self, eom: EquationsOfMotion, parameters: Mapping[str, float] | None):
        self.eom = eom
        self.parameters = parameters
        self.models: dict[tuple[int, ...], NumericModel] = {}
        system = eom.system
        self.friction = event_friction(system)
        args = [S.t, *system.q, *system.qd, *[p.symbol for p in system.parameters],
                *[u.symbol for u in system.inputs]]
        self._vr = compile_exprs(args, [f.relative_velocity for f in self.friction])
        self._normal = compile_exprs(args, [f.normal for f in self.friction])
        self._grad = compile_exprs(args, [f.relative_velocity.diff(v) for f in self.friction for v in system.qd])
        self.ne = len(system.efforts)

    def model(self, modes: tuple[int, ...]) -> NumericModel:
        if modes not in self.models:
            self.models[modes] = NumericModel(with_modes(self.eom, modes), self.parameters)
        return self.models[modes]

    def _args(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        n = num.n
        qd = num.kinematics(t, x[:n], x[n:])
        return np.concatenate([[t], x[:n], qd, num.params, num.inputs])

    def relative_velocity(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        return np.asarray(self._vr(self._args(num, t, x)), dtype=float).ravel()

    def normal(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        return np.asarray(self._normal(self._args(num, t, x)), dtype=float).ravel()

    def forces(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        """The friction forces (the unknowns after the ordinary efforts)."""
        return num.efforts(t, x[:num.n], x[num.n:])[self.ne:]

    def project(self, num: NumericModel, t: float, x: np.ndarray, k: int) -> np.ndarray:
        """The state with the velocities moved (least change along dv_r/dq') so that element k's v_r = 0."""
        n = num.n
        g = np.asarray(self._grad(self._args(num, t, x)), dtype=float).reshape(len(self.friction), n)[k]
        vr = self.relative_velocity(num, t, x)[k]
        out = x.copy()
        out[n:] -= vr * g / float(g @ g)
        return out

    def decide(self, t: float, x: np.ndarray, modes: tuple[int, ...], k: int) -> int:
        """Element k's mode at a state where its v_r = 0: stick if the sticking force is within mu_s N."""
        trial = modes[:k] + (STICK,) + modes[k + 1:]
        num = self.model(trial)
        F = self.forces(num, t, x)[k]
        limit = self.friction[k].mu_static * self.normal(num, t, x)[k]
        if abs(F) <= limit:
            return STICK
        return SLIP_NEG if F > 0 else SLIP_POS


def initial_modes(modes: _Modes, x: np.ndarray) -> tuple[int, ...]:
    """Slip with the sign of v_r where it is not zero, else the stick test."""
    base = tuple(STICK for _ in modes.friction)
    vr = modes.relative_velocity(modes.model(base), 0.0, x)
    out = list(base)
    for k, v in enumerate(vr):
        out[k] = SLIP_POS if v > 0 else SLIP_NEG if v < 0 else STICK
    for k, v in enumerate(vr):
        if v == 0:
            out[k] = modes.decide(0.0, x, tuple(out), k)
    return tuple(out)


def _event_functions(modes: _Modes, num: NumericModel, current: tuple[int, ...]) -> list:
    out = []
    for k, mode in enumerate(current):
        if mode == STICK:
            def limit(t, x, k=k):
                return abs(modes.forces(num, t, x)[k]) - modes.friction[k].mu_static * modes.normal(num, t, x)[k]
            limit.terminal, limit.direction = True, 1
            out.append(limit)
        else:
            def crossing(t, x, k=k):
                return modes.relative_velocity(num, t, x)[k]
            crossing.terminal, crossing.direction = True, -mode
            out.append(crossing)
    return out


def simulate_events(eom: EquationsOfMotion, grid: np.ndarray, rtol: float, atol: float, method: str = "DOP853",
                    parameters: Mapping[str, float] | None = None):
    """(times, states with their model per segment, events): the trajectory on ``grid`` across the switches."""
    modes = _Modes(eom, parameters)
    system = eom.system
    T = float(grid[-1])
    x = np.concatenate([[c.start for c in system.coordinates], [c.velocity for c in system.coordinates]])
    current = initial_modes(modes, x)
    t0 = 0.0
    times, states, events = [], [], []
    recent: list[float] = []
    while True:
        num = modes.model(current)
        if STICK in current:
            for k, mode in enumerate(current):
                if mode == STICK:
                    x = modes.project(num, t0, x, k)
        t_eval = grid[(grid >= t0) & (grid <= T)]
        if times and t_eval.size and t_eval[0] == t0:
            t_eval = t_eval[1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            sol = solve_ivp(num.rhs, (t0, T), x, method=method, rtol=rtol, atol=atol,
                            t_eval=t_eval if t_eval.size else None, events=_event_functions(modes, num, current))
        if sol.status == -1:
            raise SimulationError(f"integration failed at t = {sol.t[-1] if sol.t.size else t0:.9g}: {sol.message}")
        keep = sol.t <= T if t_eval.size else np.zeros(sol.t.size, dtype=bool)
        times.append(sol.t[keep])
        states.append((num, sol.y[:, keep].T))
        if sol.status != 1:
            break
        k = min((i for i, te in enumerate(sol.t_events) if te.size), key=lambda i: sol.t_events[i][0])
        te, x = float(sol.t_events[k][0]), sol.y_events[k][0].copy()
        before = current[k]
        after = modes.decide(te, x, current, k) if before != STICK else (
            SLIP_NEG if modes.forces(num, te, x)[k] > 0 else SLIP_POS)
        events.append(Event(te, modes.friction[k].name, MODE_NAMES[before], MODE_NAMES[after]))
        recent = [s for s in recent if s > te - ZENO_WINDOW * T] + [te]
        if len(recent) > ZENO_EVENTS:
            raise SimulationError(
                f"friction element {modes.friction[k].name} chatters: {len(recent)} stick/slip switches within "
                f"{ZENO_WINDOW * T:.3g} s at t = {te:.12g} (a Zeno sequence); give it a regularization velocity "
                "(regularization = 1e-4 in its [friction] entry) to use the smooth law instead of events")
        current = current[:k] + (after,) + current[k + 1:]
        t0 = te
    return times, states, events


def friction_result(eom: EquationsOfMotion, times, states, events, settings: Mapping[str, float]):
    """A :class:`~bridge.simulation.simulate.SimulationResult` of the segments, with the events attached."""
    from .simulate import SimulationResult

    q_rows, qd_rows, out_rows, res_rows, eff_rows = [], [], [], [], []
    for ts, (num, ys) in zip(times, states):
        for t, row in zip(ts, ys):
            q, u = row[: num.n], row[num.n:]
            qd = num.kinematics(t, q, u)
            q_rows.append(q)
            qd_rows.append(qd)
            out_rows.append(num.outputs(t, q, qd))
            res_rows.append(num.constraint_residuals(t, q, qd))
            eff_rows.append(num.solve(t, q, u)[num.p:])
    N = len(q_rows)
    system = eom.system
    sol = np.array(eff_rows).reshape(N, -1)
    m = len(eom.multipliers)
    return replace(SimulationResult(
        eom=eom, time=np.concatenate(times) if times else np.zeros(0), q=np.array(q_rows), qd=np.array(qd_rows),
        outputs=np.array(out_rows).reshape(N, len(system.outputs)), multipliers=sol[:, :m],
        residuals=np.array(res_rows).reshape(N, -1), settings=settings, efforts=sol[:, m:]), events=tuple(events))
