"""Native simulation of systems with switched elements (Coulomb friction, diodes), switched by located events.

Each friction element (:class:`bridge.model.efforts.Friction`) has a mode: stick (0) or slip with the
sign of its relative velocity (+1, -1). In a mode the equations are smooth (the element's row of the
dynamic system is ``dv_r/dt = 0`` in stick, ``F = -mu_k N sign`` in slip; :func:`~bridge.derivation.
efforts.with_modes`), integrated by ``solve_ivp`` until the first event:

* slip s:  ``v_r`` reaches 0 (from the side s);
* stick:   ``|F| - mu_s N`` reaches 0 from below (the static limit).

Diodes (:class:`bridge.model.efforts.Diode`, as the MSL's IdealDiode) conduct until ``i - G_off V_f`` falls
to 0 and block until their voltage rises to V_f.

Each switch is a terminal event of the element's indicator (positive while its mode holds) falling below 0;
an indicator that only touches 0 switches nothing (with a stick limit ``mu_s N`` of 0, sticking holds only while
the holding force is 0 itself, and an element whose normal force is 0 for a moment passes through it). The
normal force of each friction element is watched the same way: falling below 0 stops the run with a
:class:`~bridge.errors.SimulationError` naming the element, the time and the value (Coulomb friction needs
N >= 0; a contact that lifts off is a different model).

At an event (located by scipy's root finder on the dense output, to ~1e-14 s on the interpolant) the new
mode is chosen by the stick test: the element sticks if the force that keeps ``v_r = 0`` there is
within ``mu_s N``, else it slips opposite to that force. Entering stick, the velocities are projected
onto ``v_r = 0`` (least change along ``dv_r/dq'``). More than ``ZENO_EVENTS`` events within
``ZENO_WINDOW`` (relative to the stop time) is reported as chattering (a Zeno sequence) with its time;
the stated alternative is the element's ``regularization`` velocity (a smooth tanh law, no events).

The switching functions are sampled at every step, and a step is at most one output interval long (in a mode
where the state hardly moves, e.g. a blocking diode, the integrator would otherwise step over a whole period
of the source): two switches of one element within one output interval can go unseen, so the interval must
resolve the fastest switching.
"""

from __future__ import annotations

import warnings
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np

from ..derivation.efforts import OFF, ON, SLIP_NEG, SLIP_POS, STICK, switched, switching_velocity, with_modes
from ..derivation.eom import EquationsOfMotion
from ..derivation.numeric_model import NumericModel
from ..errors import SimulationError
from ..kept import kept
from ..model import symbols as S
from ..model.efforts import NEGATIVE_NORMAL_HINT, Diode
from ..model.numeric import compile_exprs
from .budget import EvaluationBudget
from .driven import DrivenModel
from .normal_watch import RegularizedNormals
from .result import SimulationResult
from .stiffness import solve_watched


class _SwitchFunctions:
    """The compiled switching velocities, normal forces and their gradients of one set of equations.

    Kept per equations object with the equations of each mode combination, so a later run of the same equations
    compiles none of them again.
    """

    def __init__(self, eom: EquationsOfMotion):
        system = eom.system
        elements = switched(system)
        args = [S.t, *system.q, *system.qd, *[p.symbol for p in system.parameters],
                *[u.symbol for u in system.inputs]]
        w = [switching_velocity(el) for el in elements]
        self.functions = (compile_exprs(args, w),
                          compile_exprs(args, [0 if isinstance(el, Diode) else el.normal for el in elements]),
                          compile_exprs(args, [e.diff(v) for e in w for v in system.qd]))
        self._eom = weakref.ref(eom)
        self._modes: dict[tuple[int, ...], EquationsOfMotion] = {}

    def equations(self, modes: tuple[int, ...]) -> EquationsOfMotion:
        """Return the equations of a mode combination (derived once; their numeric models compiled once)."""
        if modes not in self._modes:
            self._modes[modes] = with_modes(self._eom(), modes)
        return self._modes[modes]


def _switch_functions(eom: EquationsOfMotion) -> _SwitchFunctions:
    return kept(eom, "switch_functions", lambda: _SwitchFunctions(eom))


ZENO_EVENTS = 50
ZENO_WINDOW = 1e-9
FRICTION_MODES = {STICK: "stick", SLIP_POS: "slip+", SLIP_NEG: "slip-"}
DIODE_MODES = {ON: "conducting", OFF: "blocking"}


@dataclass(frozen=True)
class Event:
    """One switch of an element (friction or diode).

    Attributes
    ----------
    time : float
        The located event time.
    element : str
        The element's name.
    before, after : str
        Its modes' names (``FRICTION_MODES`` or ``DIODE_MODES``) before and after the switch.
    """

    time: float
    element: str
    before: str
    after: str


class SwitchedModels:
    """The compiled model of each mode combination (compiled once, on first use) and the switching functions.

    The switching functions also measure a Modelica tool's switching times
    (:mod:`bridge.validation.switched_times`). Per element, w is its switching velocity: the relative
    velocity v_r of friction, ``i - G_off V_f`` of a diode; the element's unknown (``unknown``) is the
    friction force F or the diode voltage v.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations of a system with switched elements.
    parameters : mapping of str to float, optional
        Parameter values that replace the system's.
    table : InputTable, optional
        The inputs follow it (:mod:`bridge.simulation.inputs`); without it they are held at their start values.
    """

    def __init__(self, eom: EquationsOfMotion, parameters: Mapping[str, float] | None, table=None):
        self.eom = eom
        self.parameters = parameters
        self.table = table  # an InputTable: the inputs follow it (bridge.simulation.inputs)
        self.models: dict[tuple[int, ...], NumericModel] = {}
        system = eom.system
        self.elements = switched(system)
        self._kept = _switch_functions(eom)
        self._w, self._normal, self._grad = self._kept.functions
        self.ne = len(system.efforts)

    def names(self, k: int) -> dict[int, str]:
        """Return the names of element k's modes, keyed by mode (``DIODE_MODES`` or ``FRICTION_MODES``)."""
        return DIODE_MODES if isinstance(self.elements[k], Diode) else FRICTION_MODES

    def model(self, modes: tuple[int, ...]) -> NumericModel:
        """Return the compiled model of the mode combination ``modes`` (one mode per element)."""
        if modes not in self.models:
            num = NumericModel(self._kept.equations(modes), self.parameters)
            if self.table is not None:
                num = DrivenModel(num, self.table)
            self.models[modes] = num
        return self.models[modes]

    def _args(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        n = num.n
        qd = num.kinematics(t, x[:n], x[n:])
        return np.concatenate([[t], x[:n], qd, num.params, num.inputs])

    def velocity(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        """Return each element's switching velocity w at ``(t, x)`` (``v_r``, or ``i - G_off V_f`` of a diode)."""
        return np.asarray(self._w(self._args(num, t, x)), dtype=float).ravel()

    def normal(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        """Return each element's normal force N at ``(t, x)`` (0 for a diode)."""
        return np.asarray(self._normal(self._args(num, t, x)), dtype=float).ravel()

    def unknown(self, num: NumericModel, t: float, x: np.ndarray) -> np.ndarray:
        """Return the elements' unknowns (friction forces, diode voltages), which follow the ordinary efforts."""
        return num.efforts(t, x[:num.n], x[num.n:])[self.ne:]

    def project(self, num: NumericModel, t: float, x: np.ndarray, k: int) -> np.ndarray:
        """Project the velocities so that element k's w = 0, by the least change along ``g = dw_k/dq'``.

        The velocity part of the state becomes ``u - w_k g / (g . g)``; the coordinates are unchanged.
        """
        n = num.n
        g = np.asarray(self._grad(self._args(num, t, x)), dtype=float).reshape(len(self.elements), n)[k]
        out = x.copy()
        out[n:] -= self.velocity(num, t, x)[k] * g / float(g @ g)
        return out

    def holds(self, k: int, mode: int) -> bool:
        """Whether entering ``mode`` holds element k's w at 0 (stick, ideal blocking)."""
        el = self.elements[k]
        return mode == STICK if not isinstance(el, Diode) else mode == OFF and el.off_conductance == 0

    def decide(self, t: float, x: np.ndarray, modes: tuple[int, ...], k: int) -> int:
        """Decide element k's mode where its w = 0.

        Friction sticks if the force that keeps it sticking satisfies ``|F| <= mu_s N``, else it slips against
        that force; a diode blocks unless the blocking voltage would exceed V_f.
        """
        el = self.elements[k]
        if isinstance(el, Diode):
            num = self.model(modes[:k] + (OFF,) + modes[k + 1:])
            return ON if self.unknown(num, t, x)[k] > el.forward_voltage else OFF
        num = self.model(modes[:k] + (STICK,) + modes[k + 1:])
        F = self.unknown(num, t, x)[k]
        if abs(F) <= el.mu_static * self.normal(num, t, x)[k]:
            return STICK
        return SLIP_NEG if F > 0 else SLIP_POS

    def after(self, t: float, x: np.ndarray, modes: tuple[int, ...], k: int) -> int:
        """Return the mode after element k's event."""
        el, mode = self.elements[k], modes[k]
        if isinstance(el, Diode):  # with G_off > 0 both branches meet at the switch (v = V_f, i = G_off V_f)
            return ON if mode == OFF else OFF if el.off_conductance > 0 else self.decide(t, x, modes, k)
        if mode == STICK:
            return SLIP_NEG if self.unknown(self.model(modes), t, x)[k] > 0 else SLIP_POS
        return self.decide(t, x, modes, k)


def initial_modes(modes: SwitchedModels, x: np.ndarray) -> tuple[int, ...]:
    """Choose the start mode of each element at the start state ``x`` (time 0).

    Friction slips with the sign of v_r where it is not zero, else the stick test decides; a diode conducts
    where ``i - G_off V_f > 0``, else its blocking voltage decides.
    """
    out = [ON if isinstance(el, Diode) else STICK for el in modes.elements]
    w = modes.velocity(modes.model(tuple(out)), 0.0, x)
    for k, el in enumerate(modes.elements):
        if not isinstance(el, Diode):
            out[k] = SLIP_POS if w[k] > 0 else SLIP_NEG if w[k] < 0 else STICK
    for k, el in enumerate(modes.elements):
        if (isinstance(el, Diode) and not w[k] > 0) or (not isinstance(el, Diode) and w[k] == 0):
            out[k] = modes.decide(0.0, x, tuple(out), k)
    return tuple(out)


_TINY = float(np.finfo(float).tiny)


def _holding(z: float) -> float:
    """Map an indicator value to an event function falling through 0, with exactly 0 counting as holding.

    0 becomes a tiny positive value, so an indicator that touches 0 or stays at 0 (a stick limit
    ``mu_s N - |F|`` of 0 - 0 while nothing pushes an element whose normal force is 0) switches nothing;
    only a fall below 0 is an event.
    """
    return z if z != 0 else _TINY


def _event_functions(modes: SwitchedModels, num: NumericModel, current: tuple[int, ...]) -> list:
    """Build the terminal events of the mode combination ``current``.

    Per element its indicator, positive while its mode holds, falling through 0 (slip s: ``s v_r``; stick:
    ``mu_s N - |F|``; conducting: ``i - G_off V_f``; blocking: ``V_f - v``); then per friction element its
    normal force N (:func:`_normal_events`).
    """
    out = []
    for k, mode in enumerate(current):
        el = modes.elements[k]
        if isinstance(el, Diode) and mode == OFF:
            def indicator(t, x, k=k, vf=el.forward_voltage):
                return _holding(vf - modes.unknown(num, t, x)[k])
        elif not isinstance(el, Diode) and mode == STICK:
            def indicator(t, x, k=k, mu=el.mu_static):
                return _holding(mu * modes.normal(num, t, x)[k] - abs(modes.unknown(num, t, x)[k]))
        else:  # slip (back through v_r = 0) or conducting (i - G_off V_f down to 0)
            sign = 1 if isinstance(el, Diode) else mode

            def indicator(t, x, k=k, sign=sign):
                return _holding(sign * modes.velocity(num, t, x)[k])
        indicator.terminal, indicator.direction = True, -1
        out.append(indicator)
    return out + _normal_events(modes, num)


def _normal_events(modes: SwitchedModels, num: NumericModel) -> list:
    """Per friction element its normal force N as a terminal event falling below 0 (0 itself is allowed)."""
    out = []
    for k, el in enumerate(modes.elements):
        if isinstance(el, Diode):
            continue

        def normal(t, x, k=k):
            return _holding(modes.normal(num, t, x)[k])
        normal.terminal, normal.direction = True, -1
        out.append(normal)
    return out


def _negative_normal(modes: SwitchedModels, num: NumericModel, t: float, x: np.ndarray,
                     crossing: bool) -> SimulationError | None:
    """Return the error of the first friction element whose normal force is negative at (t, x), or None.

    With ``crossing`` (the located event of a normal force falling through 0) the element whose normal force
    is nearest 0 there is named.
    """
    N = modes.normal(num, t, x)
    friction = [k for k, el in enumerate(modes.elements) if not isinstance(el, Diode)]
    bad = [k for k in friction if N[k] < 0] or ([min(friction, key=lambda k: abs(N[k]))] if crossing else [])
    if not bad:
        return None
    k = bad[0]
    where = "at the located crossing" if crossing else "there"
    return SimulationError(f"the normal force of the friction element {modes.elements[k].name} turns negative at "
                           f"t = {t:.12g} (N = {N[k]:.6g} {where}); {NEGATIVE_NORMAL_HINT}")


def simulate_events(eom: EquationsOfMotion, grid: np.ndarray, rtol: float, atol: float, method: str = "DOP853",
                    parameters: Mapping[str, float] | None = None, table=None, budget: EvaluationBudget | None = None):
    """Integrate across the switches, sampling on ``grid``.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations of a system with switched elements.
    grid : numpy.ndarray
        The output times, from 0 to the stop time.
    rtol, atol : float
        The integrator's tolerances.
    method : str
        A ``scipy.integrate.solve_ivp`` method.
    parameters : mapping of str to float, optional
        Parameter values that replace the system's.
    table : InputTable, optional
        The inputs to follow.
    budget : EvaluationBudget, optional
        Bounds the evaluations of the equations (:mod:`bridge.simulation.budget`).

    Returns
    -------
    times : list of numpy.ndarray
        The sampled times per segment.
    states : list of (NumericModel, numpy.ndarray)
        Per segment its mode's model and the sampled states (one row per time).
    events : list of Event
        The switches, in order.
    nfev : int
        The evaluations of the equations.

    Raises
    ------
    SimulationError
        A normal force below 0, chattering (more than ``ZENO_EVENTS`` switches within ``ZENO_WINDOW`` of the
        stop time), or a failed integration.
    """
    modes = SwitchedModels(eom, parameters, table)
    regularized = RegularizedNormals(eom)  # their N watched like the switched elements' (normal_watch)
    system = eom.system
    T = float(grid[-1])
    x = np.concatenate([[c.start for c in system.coordinates], [c.velocity for c in system.coordinates]])
    first = modes.model(tuple(ON if isinstance(el, Diode) else STICK for el in modes.elements))
    error = _negative_normal(modes, first, 0.0, x, crossing=False)
    if error is not None:
        raise error
    current = initial_modes(modes, x)
    max_step = float(grid[1] - grid[0]) if grid.size > 1 else np.inf  # every switching function sampled per interval
    t0 = 0.0
    times, states, events = [], [], []
    nfev = 0
    recent: list[float] = []
    while True:
        num = modes.model(current)
        for k, mode in enumerate(current):
            if modes.holds(k, mode):
                x = modes.project(num, t0, x, k)
        t_eval = grid[(grid >= t0) & (grid <= T)]
        if times and t_eval.size and t_eval[0] == t0:
            t_eval = t_eval[1:]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            rhs = budget.counted(num.rhs) if budget is not None else num.rhs
            own = _event_functions(modes, num, current)
            sol = solve_watched(rhs, (t0, T), x, method=method, rtol=rtol, atol=atol, max_step=max_step,
                                t_eval=t_eval if t_eval.size else None, events=own + regularized.events(num))
        nfev += sol.nfev
        if sol.status == -1:
            raise SimulationError(f"integration failed at t = {sol.t[-1] if sol.t.size else t0:.9g}: {sol.message}")
        # scipy leaves t and y as empty lists when an event comes before the first sample of the segment
        st, sy = np.asarray(sol.t, dtype=float), np.asarray(sol.y, dtype=float).reshape(len(x), -1)
        keep = st <= T if t_eval.size else np.zeros(st.size, dtype=bool)
        times.append(st[keep])
        states.append((num, sy[:, keep].T))
        if sol.status != 1:
            break
        k = min((i for i, te in enumerate(sol.t_events) if te.size), key=lambda i: sol.t_events[i][0])
        te, x = float(sol.t_events[k][0]), sol.y_events[k][0].copy()
        if k >= len(own):  # a regularised friction element's normal force falls below 0
            raise regularized.error(num, k - len(own), te, x)
        if k >= len(current):  # a normal force falls below 0
            raise _negative_normal(modes, num, te, x, crossing=True)
        before, after = current[k], modes.after(te, x, current, k)
        names = modes.names(k)
        events.append(Event(te, modes.elements[k].name, names[before], names[after]))
        recent = [s for s in recent if s > te - ZENO_WINDOW * T] + [te]
        if len(recent) > ZENO_EVENTS:
            raise SimulationError(
                f"{modes.elements[k].name} chatters: {len(recent)} switches within {ZENO_WINDOW * T:.3g} s at "
                f"t = {te:.12g} (a Zeno sequence); give friction elements a regularization velocity "
                "(regularization = 1e-4 in the [friction] entry) to use the smooth law instead of events, and "
                "diodes a positive on_resistance and off_conductance")
        current = current[:k] + (after,) + current[k + 1:]
        t0 = te
    return times, states, events, nfev


def friction_result(eom: EquationsOfMotion, times, states, events, settings: Mapping[str, float], nfev: int = 0):
    """Assemble a :class:`~bridge.simulation.result.SimulationResult` of the segments, with the events attached.

    ``times``, ``states`` and ``events`` are :func:`simulate_events`'s; ``settings`` are the run's
    (stop time, tolerances, interval) and ``nfev`` its evaluations.
    """
    q_rows, qd_rows, out_rows, res_rows, eff_rows = [], [], [], [], []
    for ts, (num, ys) in zip(times, states):
        for t, row in zip(ts, ys):
            q, u = row[: num.n], row[num.n:]
            qd = num.kinematics(t, q, u)
            q_rows.append(q)
            qd_rows.append(qd)
            out_rows.append(num.outputs(t, q, qd))
            res_rows.append(num.constraint_residuals(t, q, qd))
            lam = num.multipliers(t, q, u) if num.m else np.zeros(0)  # (inputs at t when they follow a table)
            eff_rows.append(np.concatenate([lam, num.efforts(t, q, u)]))
    N = len(q_rows)
    system = eom.system
    sol = np.array(eff_rows).reshape(N, -1)
    m = len(eom.multipliers)
    return replace(SimulationResult(
        eom=eom, time=np.concatenate(times) if times else np.zeros(0), q=np.array(q_rows), qd=np.array(qd_rows),
        outputs=np.array(out_rows).reshape(N, len(system.outputs)), multipliers=sol[:, :m],
        residuals=np.array(res_rows).reshape(N, -1), settings=settings, efforts=sol[:, m:], nfev=nfev),
        events=tuple(events))
