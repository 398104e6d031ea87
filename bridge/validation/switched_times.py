"""Switching times of a Modelica tool's run, measured from its trajectory against the native event simulation.

A tool reports its states at the output times only. For every native switch (time ``t_n``, element, modes
before and after; :mod:`bridge.simulation.events`) the tool's state at the output samples around it is carried
to the switching surface with the native equations of one mode (:func:`bridge.derivation.efforts.with_modes`,
integrated by DOP853 at rtol 1e-12):

* into a mode that does not hold ``w = 0`` (slip, conducting, the blocking of a diode with ``G_off > 0``):
  backward from the first sample after the switch, in the mode after, to where ``w`` was zero (where that mode
  began: a tool that applies the switch late is measured late);
* into a holding mode (stick, the blocking of an ideal diode; entering it projects onto ``w = 0``), or where
  ``w`` only touches zero in the mode after (a diode turning on: ``di/dt = 0`` there; friction breaking away with
  ``mu_static = mu_kinetic``), whose root is ill-conditioned: forward from the last
  sample before the switch, in the mode before, to where its exit function crosses zero (``v_r``,
  ``|F| - mu_s N``, ``i - G_off V_f``, ``v - V_f``).

The result is where the tool's trajectory meets the switching surface, accurate to the tool's state error near
the switch divided by the rate of ``w``. Two native switches within one output interval are not measured.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.integrate import solve_ivp

from ..derivation.efforts import OFF, STICK
from ..derivation.numeric_model import NumericModel
from ..model.efforts import Diode
from ..modelica.switched import elements
from ..simulation.events import DIODE_MODES, FRICTION_MODES, SwitchedModels, initial_modes

NAMES = {name: mode for table in (FRICTION_MODES, DIODE_MODES) for mode, name in table.items()}  # as events names


@dataclass(frozen=True)
class Switch:
    """One native switch and the tool's time for it (None where it could not be measured)."""

    element: str
    before: str
    after: str
    native: float
    tool: float | None

    @property
    def difference(self) -> float | None:
        """The tool's time minus the native time (None where the tool's time could not be measured)."""
        return None if self.tool is None else self.tool - self.native


def _crossing(f, t0: float, t1: float, x0: np.ndarray, event, transversal: bool = False) -> float | None:
    """Return the first zero of ``event`` along ``x' = f`` from ``(t0, x0)`` towards ``t1`` (either direction).

    With ``transversal``, only where the function crosses with a slope
    (``|slope| (t0 - root) >= |event(t0)|/2``; a zero it only touches, ``c (t - root)^2``, is ill-conditioned:
    its root moves by ``sqrt(error/c)``).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        try:
            sol = solve_ivp(f, (t0, t1), x0, method="DOP853", rtol=1e-12, atol=1e-14, events=event, dense_output=True)
        except Exception:  # a state the mode cannot carry (e.g. a singular matrix): not measured
            return None
    if sol.status == -1 or not sol.t_events[0].size:
        return None
    root = float(sol.t_events[0][0])
    if transversal:
        h = 1e-3 * abs(t0 - root)
        slope = (event(root + h, sol.sol(root + h)) - event(root - h, sol.sol(root - h))) / (2 * h)
        if not abs(slope) * abs(t0 - root) >= 0.5 * abs(event(t0, x0)):
            return None
    return root


def _exit(surfaces: SwitchedModels, num: NumericModel, modes: tuple[int, ...], t: float, x: np.ndarray,
          k: int) -> float:
    """Element k's exit function in its mode: ``|F| - mu_s N`` (stick), ``v - V_f`` (blocking), else ``w``."""
    el, mode = surfaces.elements[k], modes[k]
    if isinstance(el, Diode) and mode == OFF:
        return float(surfaces.unknown(num, t, x)[k]) - el.forward_voltage
    if not isinstance(el, Diode) and mode == STICK:
        return abs(float(surfaces.unknown(num, t, x)[k])) - el.mu_static * float(surfaces.normal(num, t, x)[k])
    return float(surfaces.velocity(num, t, x)[k])


def _state(num: NumericModel, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    return np.concatenate([q, np.asarray(qd, dtype=float)[num.independent_index]])


def measure(eom, native_events, time: np.ndarray, q: np.ndarray, qd: np.ndarray,
            initial: tuple[int, ...] | None = None) -> list[Switch]:
    """Measure the tool's time of every native switch from its trajectory.

    The trajectory is ``time`` and ``q``, ``qd`` (one row per sample, in the order of the system's
    coordinates); ``initial``: the native modes at the start (default: as the native simulation chooses them
    from the start values, :func:`bridge.simulation.events.initial_modes`).
    """
    surfaces = SwitchedModels(eom, None)
    els = surfaces.elements
    index = {el.name: k for k, el in enumerate(els)}
    system = eom.system
    x = np.array([*(c.start for c in system.coordinates), *(c.velocity for c in system.coordinates)], dtype=float)
    modes = list(initial) if initial is not None else list(initial_modes(surfaces, x))
    times = [ev.time for ev in native_events]
    out = []
    for n, ev in enumerate(native_events):
        k = index[ev.element]
        before = tuple(modes)
        modes[k] = NAMES[ev.after]
        after = tuple(modes)
        i = int(np.searchsorted(time, ev.time, side="right")) - 1  # the last sample at or before the switch
        lo = times[n - 1] if n else -np.inf
        hi = times[n + 1] if n + 1 < len(times) else np.inf
        if i < 0 or i + 1 >= time.size or time[i] <= lo or time[i + 1] >= hi:
            out.append(Switch(ev.element, ev.before, ev.after, ev.time, None))
            continue
        tool = None
        if not surfaces.holds(k, after[k]):  # backward from after the switch, in the mode after, to where w was 0
            num = surfaces.model(after)
            tool = _crossing(num.rhs, time[i + 1], time[i], _state(num, q[i + 1], qd[i + 1]),
                             lambda t, x, num=num, k=k: surfaces.velocity(num, t, x)[k], transversal=True)
        if tool is None:  # forward from before the switch, in the mode before, to where it ends
            num = surfaces.model(before)
            tool = _crossing(num.rhs, time[i], time[i + 1], _state(num, q[i], qd[i]),
                             lambda t, x, num=num, m=before, k=k: _exit(surfaces, num, m, t, x, k))
        out.append(Switch(ev.element, ev.before, ev.after, ev.time, tool))
    return out


def summary(switches: list[Switch]) -> str:
    """``"switching times from the trajectory (n of m): tool - native in [a, b] s"``, or "" without switches."""
    if not switches:
        return ""
    measured = [s.difference for s in switches if s.difference is not None]
    if not measured:
        return f"switching times: none of the {len(switches)} native switches could be measured from the trajectory"
    return (f"switching times from the trajectory ({len(measured)} of {len(switches)} native switches measured): "
            f"tool - native from {min(measured):.3g} to {max(measured):.3g} s")


#: the documented Rumoca defect that makes its switches late (docs/compiler-defects/README.md)
RUMOCA_EVENT_DELAY = ("Rumoca 0.9 applies every state event 1e-6*(1+|t|) s after its zero crossing "
                      "(docs/compiler-defects/SwitchedRumocaEventDelay.mo): where the acceleration jumps at a "
                      "switch (friction with mu_static > mu_kinetic breaking away) the rest of the run is shifted by "
                      "that much")
#: a switch later than this (s) is late (the measurement itself is good to ~1e-11 s on an accurate trajectory)
LATE = 1e-9


def tool_report(eom, tool: str, time: np.ndarray, signal, stop: float, dt: float, rtol: float,
                native=None) -> str:
    """Report the switching times of a tool's run against the native event simulation on the same grid.

    ``signal(name)`` gives the tool's values of ``x`` and ``der_x``; ``native`` is the native simulation (else
    simulated here). For Rumoca the report names the documented defect where its switches are late; "" for a
    system without switched elements.
    """
    from ..simulation.simulate import simulate

    system = eom.system
    if not elements(system):
        return ""
    if native is None:
        native = simulate(eom, stop, interval=dt, rtol=rtol, atol=rtol * 1e-2)
    q = np.column_stack([np.asarray(signal(c.name), dtype=float) for c in system.coordinates])
    qd = np.column_stack([np.asarray(signal(f"der_{c.name}"), dtype=float) for c in system.coordinates])
    switches = measure(eom, native.events, np.asarray(time, dtype=float), q, qd)
    text = summary(switches)
    late = [s.difference for s in switches if s.difference is not None and s.difference > LATE]
    if tool == "rumoca" and late:
        text += f"; {RUMOCA_EVENT_DELAY}"
    return text
