"""Native simulation of equations of motion with scipy.

The state is ``x = (q, u)``; an adaptive Dormand-Prince 8(5,3) integrator (``DOP853``) runs at
tight default tolerances. For reduced methods the independent/dependent split is watched
(``sigma_min(A_dep) / sigma_max(A)``); where it falls below ``SPLIT_THRESHOLD`` the healthiest split is
chosen (:mod:`bridge.simulation.split_choice`) and its equations derived once and kept, or — when the user fixed
the split, or the method admits no other split — the run stops with an error naming the time.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from ..derivation.dense import single_threaded_blas
from ..derivation.efforts import switched
from ..derivation.eom import EquationsOfMotion
from ..derivation.numeric_model import NumericModel
from ..derivation.stage_chain import finite
from ..errors import BridgeError, SimulationError, SplitLimitError
from ..kept import kept
from ..model.mechanics import split_health
from ..model.system import System
from .budget import MAX_EVALUATIONS, EvaluationBudget
from .driven import DrivenModel
from .inputs import InputTable, read_inputs
from .normal_watch import RegularizedNormals
from .result import SimulationResult
from .rotations import check_rotations
from .split_choice import choose_new_split
from .split_limits import best_health, no_regular_split
from .stiffness import solve_watched, watching

if TYPE_CHECKING:
    from ..derivation.methods import Method

DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-12
SPLIT_THRESHOLD = 1e-3
#: more output rows than this are refused unless asked for (``max_rows=None``, ``simulate --yes``)
MAX_ROWS = 10**7
#: the smallest output interval relative to the stop time (below it the time grid cannot be resolved)
MIN_INTERVAL = 1e-12


def simulate(eom: EquationsOfMotion, stop_time: float | None = None, *, rtol: float | None = None,
             atol: float | None = None, interval: float | None = None,
             parameters: Mapping[str, float] | None = None, integrator: str = "DOP853",
             inputs: InputTable | str | Path | None = None, max_rows: int | None = MAX_ROWS,
             max_evaluations: int | None = MAX_EVALUATIONS) -> SimulationResult:
    """Integrate from the system's start state to ``stop_time`` and sample on a uniform grid.

    The dynamics ``M(q, u, t) [u'; lambda] = F`` are solved by LU with partial pivoting at every evaluation; a
    reduced method's split of the velocities is re-chosen where it turns singular; friction and diodes switch at
    located events; stiff segments go from DOP853 to LSODA (:mod:`bridge.simulation.stiffness`).

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations, by any method.
    stop_time : float, optional
        The end of the run (default: the file's ``[simulation] stop_time``).
    rtol, atol : float, optional
        Tolerances (default: the file's ``[simulation]`` values, else ``DEFAULT_RTOL``, ``DEFAULT_ATOL``).
    interval : float, optional
        The output grid's step (default: the file's, else ``stop_time / 1000``).
    parameters : mapping of str to float, optional
        Parameter values that replace the system's for this run.
    integrator : str
        A ``scipy.integrate.solve_ivp`` method.
    inputs : InputTable, str or Path, optional
        A CSV file (time column, one column per input; see :mod:`bridge.simulation.inputs`) or an
        :class:`InputTable`, interpolated linearly; without it the inputs are held at their start values.
    max_rows : int, optional
        Refuse grids with more output rows (None: no limit).
    max_evaluations : int, optional
        Stop a run that needs more evaluations of the equations (None: no limit; :mod:`bridge.simulation.budget`).

    Returns
    -------
    SimulationResult

    Raises
    ------
    SimulationError
        A singularity no split avoids, non-finite values, a budget exceeded.
    BridgeError
        Bad settings or an input table of another system.

    Examples
    --------
    A mass on a spring, ``x(t) = 0.1 cos(2 t)``:

    >>> import bridge
    >>> text = '''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... '''
    >>> eom = bridge.derive(bridge.parse_system(text), "lagrange")
    >>> result = bridge.simulate(eom, 1.0, interval=0.5)
    >>> [round(float(v), 8) for v in result["x"]]
    [0.1, 0.05403023, -0.04161468]
    """
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    rtol = float(rtol if rtol is not None else system.rtol or DEFAULT_RTOL)
    atol = float(atol if atol is not None else system.atol or DEFAULT_ATOL)
    _check_settings(T, rtol, atol)
    if interval is None:
        interval = system.interval if system.interval is not None and system.interval <= T else T / 1000
    grid = np.linspace(0.0, T, output_rows(T, float(interval), max_rows))
    table = read_inputs(inputs, eom.system) if isinstance(inputs, (str, Path)) else inputs
    if table is not None and table.names != tuple(u.name for u in eom.system.inputs):
        raise BridgeError(f"the input table has the columns {', '.join(table.names) or 'none'} but "
                          f"{eom.system.name} has the inputs {', '.join(u.name for u in eom.system.inputs) or 'none'}; "
                          "read it for this system with bridge.read_inputs(path, system)")
    budget = EvaluationBudget(max_evaluations, T)
    # DOP853 hands stiff segments to LSODA (bridge.simulation.stiffness); the tiny solves run without BLAS threads
    with watching(T), single_threaded_blas():
        if switched(system):
            result = _with_events(eom, grid, rtol, atol, integrator, parameters, table, interval, budget)
        else:
            splits = _Splits(eom, parameters, table)
            solver = _Solver(T, rtol, atol, integrator, budget, RegularizedNormals(eom))
            trajectory = _integrate(eom, grid, solver, splits)
            result = _result(eom, trajectory, splits,
                             {"stop_time": T, "rtol": rtol, "atol": atol, "interval": interval})
    check_rotations(system, result.time, result.q, parameters)
    return result


def _with_events(eom, grid, rtol, atol, integrator, parameters, table, interval, budget) -> SimulationResult:
    """Coulomb friction: stick/slip by located events (:mod:`bridge.simulation.events`)."""
    from .events import friction_result, simulate_events

    times, states, events, nfev = simulate_events(eom, grid, rtol, atol, integrator, parameters, table, budget)
    settings = {"stop_time": float(grid[-1]), "rtol": rtol, "atol": atol, "interval": interval}
    return friction_result(eom, times, states, events, settings, nfev)


def output_rows(T: float, interval: float, max_rows: int | None = MAX_ROWS) -> int:
    """Count the rows of the output grid ``0, interval, ..., T``, refusing a grid too fine to resolve or hold.

    ``simulate`` calls it before any work, the command line before the derivation.

    Parameters
    ----------
    T : float
        The stop time.
    interval : float
        The output step.
    max_rows : int, optional
        The most rows accepted (None: no limit).

    Returns
    -------
    int
        ``round(T / interval) + 1``, at least 2.

    Raises
    ------
    BridgeError
        The interval is not positive, below ``MIN_INTERVAL * T``, or gives more than ``max_rows`` rows.
    """
    if not (np.isfinite(interval) and interval > 0):
        raise BridgeError(f"the output interval must be a positive number, got {interval:g}")
    if interval < T * MIN_INTERVAL:
        raise BridgeError(f"the output interval {interval:g} s is below {MIN_INTERVAL:g} x the stop time "
                          f"({T * MIN_INTERVAL:g} s): the time grid cannot resolve it. Give an interval of at least "
                          f"{T * MIN_INTERVAL:g} s (typically stop_time/1000 or more)")
    rows = round(T / interval) + 1
    if max_rows is not None and rows > max_rows:
        raise BridgeError(f"the output interval {interval:g} s up to {T:g} s would give {rows:.3g} output rows "
                          f"(more than {max_rows:.0e}). Give a "
                          "larger interval, or confirm with --yes (max_rows=None in Python)")
    return max(2, int(rows))


def _check_settings(T: float, rtol: float, atol: float) -> None:
    """Refuse a stop time or tolerances that are not positive (``SimulationError``)."""
    if not T > 0:
        raise SimulationError(f"stop time must be positive, got {T}")
    if not (rtol > 0 and atol > 0):
        raise SimulationError("tolerances must be positive")


def derived_splits(eom: EquationsOfMotion) -> dict[tuple[str, ...], EquationsOfMotion]:
    """Return the equations of every split derived so far from ``eom`` (itself included), by independent names.

    Runs of the same equations share it: a split is derived (and its numeric model compiled) once per equations
    object, whichever run first changes to it.
    """
    return kept(eom, "derived_splits", lambda: {eom.independent: eom})


class _Splits:
    """The equations of motion per split (keyed by the independent velocities), each derived and compiled once."""

    def __init__(self, eom: EquationsOfMotion, parameters: Mapping[str, float] | None, table: InputTable | None):
        self.system = eom.system
        self.parameters = parameters
        self.table = table
        self.models = derived_splits(eom)
        self.compiled: dict[tuple[str, ...], NumericModel] = {}

    def numeric(self, model: EquationsOfMotion) -> NumericModel:
        """Return the compiled model, with the parameter overrides and input table applied (compiled once per split)."""
        if model.independent not in self.compiled:
            num = NumericModel(model, self.parameters) if self.parameters else model.numeric
            self.compiled[model.independent] = num if self.table is None else DrivenModel(num, self.table)
        return self.compiled[model.independent]

    def inputs(self, num: NumericModel, t: float) -> np.ndarray:
        """Return the input values at ``t``."""
        return num.inputs if self.table is None else self.table(t)


@dataclass(frozen=True)
class _Solver:
    """The integrator settings of a run."""

    stop_time: float
    rtol: float
    atol: float
    method: str
    budget: EvaluationBudget | None = None
    normals: RegularizedNormals | None = None  # regularised friction: N falling below 0 stops the run

    def segment(self, num: NumericModel, x: np.ndarray, t0: float, t_eval: np.ndarray, events: list | None):
        """``solve_ivp`` from (t0, x) to the stop time, sampled at ``t_eval``; ended early by a terminal event."""
        watch = _FiniteWatch(num)
        own = events or []
        events = own + (self.normals.events(num) if self.normals is not None else []) or None
        rhs = self.budget.counted(watch.rhs) if self.budget is not None else watch.rhs
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                sol = solve_watched(rhs, (t0, self.stop_time), x, method=self.method, rtol=self.rtol,
                                atol=self.atol, t_eval=t_eval if t_eval.size else None, events=events)
        except BridgeError:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise SimulationError(f"integration failed near t = {t0:.9g}: {exc}{watch.found}") from exc
        if sol.status == -1:
            raise SimulationError(f"integration failed at t = {sol.t[-1] if len(sol.t) else t0:.9g}: "
                                  f"{sol.message}{watch.found}")
        watch.check_solution(sol)
        if self.normals is not None:
            self.normals.check(sol, num, len(own))
        return sol


class _FiniteWatch:
    """The right-hand side, recording the first NaN or infinity in the state or its derivative.

    The integrator may still recover by a smaller step; a solution that is not finite stops the run.
    """

    def __init__(self, num: NumericModel):
        self.num = num
        self.found = ""
        q = [c.name for c in num.eom.system.coordinates]
        ind = [q[i] for i in num.independent_index]
        self.states = q + [f"der({v})" for v in ind]
        self.derivatives = [f"der({v})" for v in q] + [f"der(der({v}))" for v in ind]

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        dx = self.num.rhs(t, x)
        if not self.found and not (finite(x) and finite(dx)):
            bad_x = [f"{n} = {v}" for n, v in zip(self.states, x) if not np.isfinite(v)]
            bad = bad_x or [f"{n} = {v}" for n, v in zip(self.derivatives, dx) if not np.isfinite(v)]
            self.found = (f" (at t = {t:.9g} {'the state' if bad_x else 'the equations give'} "
                          f"{', '.join(bad[:4])}; check the expressions for a domain error or a singularity there)")
        return dx

    def check_solution(self, sol) -> None:
        bad = ~np.all(np.isfinite(sol.y), axis=0)
        if bad.any():
            k = int(np.argmax(bad))
            names = [n for n, v in zip(self.states, sol.y[:, k]) if not np.isfinite(v)]
            raise SimulationError(f"the state is not finite at t = {sol.t[k]:.9g} ({', '.join(names[:4])})"
                                  f"{self.found}")


@dataclass
class _Trajectory:
    """What the segments produced: the sampled times and states (with their segment's model), the re-partitions."""

    times: list[np.ndarray] = field(default_factory=list)
    states: list[tuple[EquationsOfMotion, np.ndarray]] = field(default_factory=list)
    repartitions: list[tuple[float, tuple[str, ...]]] = field(default_factory=list)
    nfev: int = 0


def _integrate(eom: EquationsOfMotion, grid: np.ndarray, solver: _Solver, splits: _Splits) -> _Trajectory:
    """Integrate segment by segment, re-choosing the split where it becomes singular.

    A segment ends at the stop time or where the split becomes singular; the next one continues from that
    state with a re-chosen split.
    """
    system = eom.system
    n = system.n
    current = eom
    num = splits.numeric(current)
    x = num.state(np.array([c.start for c in system.coordinates], dtype=float),
                  np.array([c.velocity for c in system.coordinates], dtype=float))
    t0 = 0.0
    trajectory = _Trajectory()
    while True:
        t_eval = _segment_times(grid, t0, solver.stop_time, continued=bool(trajectory.times))
        sol = solver.segment(num, x, t0, t_eval, _split_events(current, num, n, t0, x))
        trajectory.nfev += sol.nfev
        if len(sol.t):  # none when the segment ends at an event before its first output time
            trajectory.times.append(sol.t)
            trajectory.states.append((current, sol.y.T))
        if sol.status != 1:  # reached the stop time
            return trajectory
        te, qe, qde = _event_state(sol, num, n)
        new_names = _repartition(splits, current, num, te, qe, qde)
        current = splits.models[new_names]
        num = splits.numeric(current)
        x = num.state(qe, qde)
        t0 = te
        trajectory.repartitions.append((te, new_names))


def _segment_times(grid: np.ndarray, t0: float, stop_time: float, continued: bool) -> np.ndarray:
    """Return the grid times in [t0, stop_time]; after a re-partition without t0, which the previous segment sampled."""
    t_eval = grid[(grid >= t0) & (grid <= stop_time)]
    if continued and t_eval.size and t_eval[0] == t0:
        t_eval = t_eval[1:]  # the event time was already sampled by the previous segment
    return t_eval


def _split_events(model: EquationsOfMotion, num: NumericModel, n: int, t0: float, x0: np.ndarray) -> list | None:
    """Build the terminal split event of a reduced method with dependent velocities (otherwise None).

    The event function is ``health(split) - SPLIT_THRESHOLD``, falling through zero. The health is signed:
    negative once ``det(A_dep)`` has changed its sign since the segment's start (``t0``, ``x0``), so that a
    step over the singular point, where the health only dips to 0, still ends the segment (as
    ``fmu/nhb_split.c``'s indicator).
    """
    if not (model.is_reduced and model.dependent):
        return None
    dep = list(model.dependent_index)

    def constraint_matrix(t, xx) -> np.ndarray:
        return num.constraint_matrix(t, xx[:n], num.kinematics(t, xx[:n], xx[n:]))

    def det_sign(A: np.ndarray) -> float:
        return float(np.sign(np.linalg.det(A[:, dep])))

    start = det_sign(constraint_matrix(t0, x0))

    def split_event(t, xx):
        A = constraint_matrix(t, xx)  # one evaluation serves the health and the sign
        health = split_health(A, dep)
        if start and det_sign(A) != start:
            health = -health
        return health - SPLIT_THRESHOLD

    split_event.terminal = True
    split_event.direction = -1
    return [split_event]


def _event_state(sol, num: NumericModel, n: int) -> tuple[float, np.ndarray, np.ndarray]:
    """(t, q, q') where the split event ended the segment."""
    te = float(sol.t_events[0][0])
    xe = sol.y_events[0][0]
    qe = xe[:n]
    return te, qe, num.kinematics(te, qe, xe[n:])


def _repartition(splits: _Splits, current: EquationsOfMotion, num: NumericModel, te: float, qe: np.ndarray,
                 qde: np.ndarray) -> tuple[str, ...]:
    """Choose the independent velocities of a new split where the current one became singular at ``te``.

    The healthiest split at the event state, with hysteresis (:mod:`bridge.simulation.split_choice`); its
    equations are derived once per equations object and kept (:class:`_Splits`).

    Raises
    ------
    SplitLimitError
        The split is fixed, no regular split exists at ``te``, or the method cannot derive the new split.
    """
    system = splits.system
    if system.fixed_split:
        raise SplitLimitError(
            f"at t = {te:.9g} the split with independent velocities {', '.join(current.independent)} "
            f"(method {current.method}) becomes singular: the constraints can no longer be solved for "
            f"{', '.join(current.dependent)}. Remove [method] fixed_split = true to let nhbridge re-partition, "
            "or use lagrange")
    from ..derivation.methods import METHODS

    method = METHODS.get_method(current.method)
    ref = np.concatenate([[te], qe, qde, num.params, splits.inputs(num, te)])
    new_idx = choose_new_split(system, current.constraint_jacobian.tolist(), ref,
                               accept=lambda c: method.accepts_split(system, c),
                               exclude=tuple(int(i) for i in num.independent_index))
    A = num.constraint_matrix(te, qe, qde)
    if new_idx is None or split_health(A, [i for i in range(system.n) if i not in new_idx]) < SPLIT_THRESHOLD:
        any_healthy = best_health(A, tuple(current.dependent_index)) >= SPLIT_THRESHOLD
        raise SplitLimitError(no_regular_split(te, current.independent, current.method, A,
                                               [entry for entry, _ in system.constraints], SPLIT_THRESHOLD,
                                               any_healthy))
    new_names = tuple(system.coordinates[i].name for i in new_idx)
    if new_names not in splits.models:
        splits.models[new_names] = _derive_split(method, system, new_names, ref, current, te)
    return new_names


def _derive_split(method: Method, system: System, names: tuple[str, ...], ref: np.ndarray,
                  current: EquationsOfMotion, te: float) -> EquationsOfMotion:
    """Derive the equations for the split ``names``; a method that cannot derive them ends the run at ``te``."""
    try:
        return method.derive(system, names, reference=ref)
    except BridgeError as exc:
        raise SplitLimitError(
            f"at t = {te:.9g} the split with independent {', '.join(current.independent)} becomes "
            f"singular and method {current.method} cannot use another split ({exc}); use maggi or "
            "lagrange") from exc


def _result(eom: EquationsOfMotion, trajectory: _Trajectory, splits: _Splits,
            settings: Mapping[str, float]) -> SimulationResult:
    """Evaluate the result at the samples.

    At each sample: ``q``, ``q' = kinematics(t, q, u)``, the outputs ``y(t, q, q')``, the multipliers
    ``lambda(t, q, u)`` (none for reduced methods), the efforts and the constraint residuals
    ``[phi; A q' + a0]``. The dynamics are solved sample by sample (once each); the outputs and residuals of a
    segment's samples by one compiled call.
    """
    system = eom.system
    t_all = np.concatenate(trajectory.times) if trajectory.times else np.zeros(0)
    q_rows, qd_rows, out_rows, lam_rows, res_rows, eff_rows = [], [], [], [], [], []
    for ts, (model, ys) in zip(trajectory.times, trajectory.states):
        nm = splits.numeric(model)
        q = ys[:, : system.n]
        qd = np.empty_like(q)
        lam = np.zeros((len(ts), nm.m))
        eff = np.zeros((len(ts), nm.ne))
        for k, (t, row) in enumerate(zip(ts, ys)):  # the dynamics solved once per sample
            qk, uk = row[: system.n], row[system.n:]
            qd[k] = nm.kinematics(t, qk, uk)
            if nm.m:
                lam[k] = nm.multipliers(t, qk, uk)
            if nm.ne:
                eff[k] = nm.efforts(t, qk, uk)
        q_rows.append(q)
        qd_rows.append(qd)
        lam_rows.append(lam)
        eff_rows.append(eff)
        out_rows.append(nm.outputs_rows(ts, q, qd, eff if nm.ne else None))  # one compiled call per segment
        res_rows.append(nm.constraint_residuals_rows(ts, q, qd))
    N = len(t_all)
    return SimulationResult(
        eom=eom, time=t_all, q=_stacked(q_rows, system.n), qd=_stacked(qd_rows, system.n),
        outputs=_stacked(out_rows, len(system.outputs)),
        multipliers=_stacked(lam_rows, len(eom.multipliers)),
        residuals=_stacked(res_rows, 0).reshape(N, -1),
        repartitions=tuple(trajectory.repartitions), nfev=trajectory.nfev, settings=settings,
        efforts=_stacked(eff_rows, len(eom.efforts)),
    )


def _stacked(blocks: list[np.ndarray], width: int) -> np.ndarray:
    """Return the segments' rows one under the other (no rows: 0 x width)."""
    return np.vstack(blocks) if blocks else np.zeros((0, width))


__all__ = ["SimulationResult", "simulate"]
