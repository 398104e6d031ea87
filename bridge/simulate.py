"""Native simulation of equations of motion with scipy.

The state is ``x = (q, u)``; an adaptive Dormand-Prince 8(5,3) integrator (``DOP853``) runs at
tight default tolerances. For reduced methods the independent/dependent split is watched
(Hadamard ratio of the dependent-velocity block); where it becomes singular the split is
re-chosen by column-pivoted QR and the equations re-derived for it, or — when the user fixed
the split, or the method admits no other split — the run stops with an error naming the time.
"""

from __future__ import annotations

import csv
import io
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

from .atomic import write_text
from .eom import EquationsOfMotion
from .errors import BridgeError, SimulationError, SplitLimitError
from .mechanics import choose_independent
from .numeric_model import NumericModel

DEFAULT_RTOL = 1e-10
DEFAULT_ATOL = 1e-12
SPLIT_THRESHOLD = 1e-3


@dataclass(frozen=True)
class SimulationResult:
    """Trajectories on the output grid."""

    eom: EquationsOfMotion
    time: np.ndarray
    q: np.ndarray                 # (N, n)
    qd: np.ndarray                # (N, n)
    outputs: np.ndarray           # (N, number of outputs)
    multipliers: np.ndarray       # (N, m) (empty for reduced methods)
    residuals: np.ndarray         # (N, number of constraints): [phi; A q' + a0]
    repartitions: tuple[tuple[float, tuple[str, ...]], ...] = ()
    nfev: int = 0
    settings: Mapping[str, float] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.eom.system.coordinates]

    @property
    def max_residual(self) -> float:
        return float(np.abs(self.residuals).max()) if self.residuals.size else 0.0

    def columns(self) -> dict[str, np.ndarray]:
        cols = {"time": self.time}
        for i, nm in enumerate(self.names):
            cols[nm] = self.q[:, i]
        for i, nm in enumerate(self.names):
            cols[f"der({nm})"] = self.qd[:, i]
        for i, nm in enumerate(self.eom.outputs):
            cols[nm] = self.outputs[:, i]
        for i in range(self.multipliers.shape[1]):
            cols[f"lambda[{i + 1}]"] = self.multipliers[:, i]
        return cols

    def to_csv(self) -> str:
        cols = self.columns()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(list(cols))
        data = np.column_stack(list(cols.values()))
        for row in data:
            w.writerow([repr(float(v)) for v in row])
        return buf.getvalue()

    def write_csv(self, path: str | Path) -> Path:
        return write_text(path, self.to_csv())


def simulate(eom: EquationsOfMotion, stop_time: float | None = None, *, rtol: float = DEFAULT_RTOL,
             atol: float = DEFAULT_ATOL, interval: float | None = None,
             parameters: Mapping[str, float] | None = None, integrator: str = "DOP853") -> SimulationResult:
    """Integrate from the system's start state to ``stop_time`` and sample on a uniform grid."""
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    if not T > 0:
        raise SimulationError(f"stop time must be positive, got {T}")
    if not (rtol > 0 and atol > 0):
        raise SimulationError("tolerances must be positive")
    if interval is None:
        interval = T / 1000
    npts = max(2, int(round(T / interval)) + 1)
    grid = np.linspace(0.0, T, npts)
    q0 = np.array([c.start for c in system.coordinates], dtype=float)
    v0 = np.array([c.velocity for c in system.coordinates], dtype=float)

    models: dict[tuple[str, ...], EquationsOfMotion] = {eom.independent: eom}
    compiled: dict[tuple[str, ...], NumericModel] = {}

    def numeric(model: EquationsOfMotion) -> NumericModel:
        """The compiled model, with the parameter overrides applied (compiled once per split)."""
        if model.independent not in compiled:
            compiled[model.independent] = NumericModel(model, parameters) if parameters else model.numeric
        return compiled[model.independent]

    current = eom
    num = numeric(current)
    x = num.state(q0, v0)
    t0 = 0.0
    times: list[np.ndarray] = []
    states: list[tuple[EquationsOfMotion, np.ndarray]] = []
    repartitions: list[tuple[float, tuple[str, ...]]] = []
    nfev = 0
    n = system.n
    while True:

        def split_event(t, xx, num=num):
            qd = num.kinematics(t, xx[:n], xx[n:])
            return num.split_health(t, xx[:n], qd) - SPLIT_THRESHOLD

        split_event.terminal = True
        split_event.direction = -1
        events = [split_event] if current.is_reduced and current.dependent else None
        t_eval = grid[(grid >= t0) & (grid <= T)]
        if times and t_eval.size and t_eval[0] == t0:
            t_eval = t_eval[1:]  # the event time was already sampled by the previous segment
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                sol = solve_ivp(num.rhs, (t0, T), x, method=integrator, rtol=rtol, atol=atol,
                                t_eval=t_eval if t_eval.size else None, events=events)
        except BridgeError:
            raise
        except (ValueError, ArithmeticError) as exc:
            raise SimulationError(f"integration failed near t = {t0:.9g}: {exc}") from exc
        nfev += sol.nfev
        if sol.status == -1:
            raise SimulationError(f"integration failed at t = {sol.t[-1] if sol.t.size else t0:.9g}: {sol.message}")
        if t_eval.size:
            times.append(sol.t)
            states.append((current, sol.y.T))
        if sol.status != 1:  # reached the stop time
            break
        te = float(sol.t_events[0][0])
        xe = sol.y_events[0][0]
        qe = xe[:n]
        qde = num.kinematics(te, qe, xe[n:])
        if system.independent is not None:
            raise SplitLimitError(
                f"at t = {te:.9g} the split with independent velocities {', '.join(current.independent)} "
                f"(method {current.method}) becomes singular: the constraints can no longer be solved for "
                f"{', '.join(current.dependent)}. Remove [method] independent to let nhbridge re-partition, "
                "or use lagrange")
        from .methods import METHODS

        method = METHODS.get_method(current.method)
        ref = np.concatenate([[te], qe, qde, num.params, num.inputs])
        new_idx = choose_independent(system, current.constraint_jacobian.tolist(), ref,
                                     accept=lambda c, method=method: method.accepts_split(system, c),
                                     exclude=tuple(int(i) for i in num.independent_index))
        if new_idx is None:
            raise SplitLimitError(
                f"at t = {te:.9g} the split with independent {', '.join(current.independent)} becomes singular "
                f"and method {current.method} has no other usable split; use maggi or lagrange")
        new_names = tuple(system.coordinates[i].name for i in new_idx)
        if new_names not in models:
            try:
                models[new_names] = method.derive(system, new_names, reference=ref)
            except BridgeError as exc:
                raise SplitLimitError(
                    f"at t = {te:.9g} the split with independent {', '.join(current.independent)} becomes "
                    f"singular and method {current.method} cannot use another split ({exc}); use maggi or "
                    "lagrange") from exc
        current = models[new_names]
        num = numeric(current)
        x = num.state(qe, qde)
        t0 = te
        repartitions.append((te, new_names))

    t_all = np.concatenate(times) if times else np.zeros(0)
    q_rows, qd_rows, out_rows, lam_rows, res_rows = [], [], [], [], []
    k = 0
    for model, ys in states:
        nm = numeric(model)
        for row in ys:
            t = t_all[k]
            k += 1
            q, u = row[: system.n], row[system.n:]
            qd = nm.kinematics(t, q, u)
            q_rows.append(q)
            qd_rows.append(qd)
            out_rows.append(nm.outputs(t, q, qd))
            lam_rows.append(nm.multipliers(t, q, u) if nm.m else np.zeros(0))
            res_rows.append(nm.constraint_residuals(t, q, qd))
    m = len(eom.multipliers)
    return SimulationResult(
        eom=eom, time=t_all, q=np.array(q_rows), qd=np.array(qd_rows),
        outputs=np.array(out_rows).reshape(len(t_all), len(system.outputs)),
        multipliers=np.array(lam_rows).reshape(len(t_all), m),
        residuals=np.array(res_rows).reshape(len(t_all), -1),
        repartitions=tuple(repartitions), nfev=nfev,
        settings={"stop_time": T, "rtol": rtol, "atol": atol, "interval": interval},
    )


__all__ = ["SimulationResult", "simulate"]
