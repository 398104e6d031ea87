"""The master algorithm: initialization, fixed-step Jacobi and Gauss-Seidel, adaptive step by step doubling.

Notation: component i has state x_i, inputs u_i and outputs y_i = g_i(x_i, u_i); a connection sets
``u_j = gain * y_i + offset``. Inputs are held constant over a communication step [t, t + h]
(zero-order hold), which makes both schemes first-order accurate in h.

**Initialization.** Each FMU is instantiated, its parameters and start values are set, and it enters
Initialization Mode at the start time. The connected inputs are then resolved in the topological order
of the feedthrough graph (an output is read only after every input it depends on directly has been set),
so the initial values are consistent, e.g. a motor's torque M(w(t0)). The FMUs then leave Initialization
Mode and the exchange is repeated.

**Jacobi** (parallel): every component steps from t to t + h with the inputs set at t; then all outputs
are read and all inputs set. A feedthrough output is read with the input held over the step:
``y_j(t+h) = g_j(x_j(t+h), u_j(t))``.

**Gauss-Seidel** (sequential): the components step one after the other in the order of
:func:`.checks.gauss_seidel_order`; each sets its inputs from the newest outputs just before its step,
so a component after its sources sees ``y_i(t+h)``.

**Adaptive step** (``adaptive = true``): step doubling. From the saved state at t, one step of size H gives
y_H, then two steps of H/2 give y_{H/2}. For a first-order scheme the local errors are about C H² and
C H²/2, so ``e = |y_{H/2} - y_H|`` estimates the error of the kept two-half-step result. The error is
controlled per unit step: a step is accepted when ``err = max_k e_k / (tol H (1 + |y_k|)) <= 1`` over the
coupling signals y_k that are not direct feedthrough (see :meth:`Master._error_signals`). The local errors
then add up to about ``tol (1 + |y|) (t_stop - t_start)`` where they are not amplified, i.e. the global
error is proportional to tol (local control ``e <= tol`` would give sqrt(tol) for a first-order scheme).
Since e/H ~ H, the next step is ``H * min(4, max(0.2, 0.9 / err))``. A rejected step (or an FMU returning
Discard) is undone and retried with a smaller H; below ``min_step`` the run stops with an error.
With an adaptive step the exchange after every step (also the half steps) resolves the feedthrough as at
initialization, for both orderings. Under plain Jacobi a feedthrough output keeps the input of the step
before: the two half steps would then feed the same stale value as the big step, and the estimate would
miss the coupling error (or see the lag of a previous step of another length, which does not shrink with H).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .checks import Plan
from .errors import CosimRunError
from .results import CosimResult, Progress
from .scenario import MasterSettings, split_signal
from .slaves import Rollback, Slave, StepRejected


@dataclass(frozen=True)
class Link:
    """``slaves[dst].input(dst_vr) = gain * slaves[src].output(src_vr) + offset``."""

    src: int
    src_vr: int
    dst: int
    dst_vr: int
    gain: float
    offset: float


class Master:
    """Runs one co-simulation of a checked scenario (instances live for one :meth:`run`)."""

    def __init__(self, plan: Plan, unzipdirs: dict[str, str], settings: MasterSettings, progress: Any = False,
                 beacon: Any = None, stop: Callable[[], bool] | None = None):
        """Prepare a run of ``slaves`` connected as ``plan`` says.

        ``progress``: show it (bool) or report it to an object with ``update(t, steps)`` and ``finish(t, steps)``;
        ``beacon``: a :class:`bridge.tools.sandbox.Beacon` every slave stamps before a foreign call; ``stop``: polled
        once per communication step, True ends the run early with the steps finished so far.
        """
        self.plan, self.settings, self.progress_on = plan, settings, progress
        self.stop_requested = stop or (lambda: False)
        scenario = plan.scenario
        self.names = [c.name for c in scenario.components]
        index = {n: i for i, n in enumerate(self.names)}
        self.slaves = [Slave(c.name, plan.infos[c.name], unzipdirs[c.name], settings.fmu_tolerance,
                             settings.start_time, settings.stop_time, c.parameters, c.start, c.source.name)
                       for c in scenario.components]
        for i, slave in enumerate(self.slaves):
            slave.index, slave.beacon = i, beacon
        self.links = []
        for c in scenario.connections:
            si, di = index[c.source], index[c.target]
            self.links.append(Link(si, self.slaves[si].vr(c.output), di, self.slaves[di].vr(c.input), c.gain,
                                   c.offset))
        n = len(self.slaves)
        self.in_links = [[lk for lk in self.links if lk.dst == i] for i in range(n)]
        self.in_vrs = [[lk.dst_vr for lk in self.in_links[i]] for i in range(n)]
        self.out_vrs = [sorted({lk.src_vr for lk in self.links if lk.src == i}) for i in range(n)]
        self.out_keys = [[(i, vr) for vr in self.out_vrs[i]] for i in range(n)]
        self.y: dict[tuple[int, int], float] = {}
        self.order = [index[name] for name in plan.order]
        groups: dict[int, tuple[list[int], list[int]]] = {}  # component -> (value references, columns)
        for col, signal in enumerate(plan.record):
            comp, var = split_signal(signal)
            i = index[comp]
            groups.setdefault(i, ([], []))
            groups[i][0].append(self.slaves[i].vr(var))
            groups[i][1].append(col)
        self.record_groups = [(i, vrs, cols) for i, (vrs, cols) in sorted(groups.items())]
        self.macro_steps = 0
        self.link_of = {(lk.dst, lk.dst_vr): lk for lk in self.links}
        self.resolution = self._resolution_order()

    # -- exchange ----------------------------------------------------------------------------------------
    def _ports(self) -> None:
        """Prepare the readers and writers with preallocated arrays, once the instances exist."""
        self.readers = [s.reader(self.out_vrs[i]) for i, s in enumerate(self.slaves)]
        self.writers = [s.writer(self.in_vrs[i]) for i, s in enumerate(self.slaves)]
        self.recorders = [(self.slaves[i].reader(vrs), cols) for i, vrs, cols in self.record_groups]

    def _read(self, i: int) -> None:
        if self.out_vrs[i]:
            self.y.update(zip(self.out_keys[i], self.readers[i]()))

    def _write(self, i: int) -> None:
        links = self.in_links[i]
        if links:
            y = self.y
            self.writers[i]([lk.gain * y[(lk.src, lk.src_vr)] + lk.offset for lk in links])

    def _resolution_order(self) -> list[tuple[str, int, int]]:
        """Return the connected outputs ("y") and inputs ("u") in the topological order of the feedthrough graph."""
        nodes: dict[tuple[str, int, int], set[tuple[str, int, int]]] = {}  # node -> predecessors
        for lk in self.links:
            out, inp = ("y", lk.src, lk.src_vr), ("u", lk.dst, lk.dst_vr)
            nodes.setdefault(out, set())
            nodes.setdefault(inp, set()).add(out)
        for kind, i, vr in list(nodes):
            if kind == "y":
                slave = self.slaves[i]
                for inp_name in slave.info.feedthrough.get(self._name(i, vr), ()):
                    key = ("u", i, slave.vr(inp_name))
                    if key in nodes:
                        nodes[("y", i, vr)].add(key)
        order: list[tuple[str, int, int]] = []
        done: set[tuple[str, int, int]] = set()
        while len(done) < len(nodes):
            ready = [k for k, pred in nodes.items() if k not in done and pred <= done]
            if not ready:  # cannot happen after the loop check; guard against an inconsistent plan
                raise CosimRunError("the connections form an algebraic loop; the values cannot be initialized")
            order += ready
            done.update(ready)
        return order

    def _name(self, i: int, vr: int) -> str:
        return next(v.name for v in self.slaves[i].info.variables.values() if v.vr == vr)

    def _resolve(self) -> None:
        """Read outputs and set inputs in the topological order of the feedthrough graph: consistent values."""
        for kind, i, vr in self.resolution:
            if kind == "y":
                self.y[(i, vr)] = self.slaves[i].get([vr])[0]
            else:
                lk = self.link_of[(i, vr)]
                self.slaves[i].set([vr], [lk.gain * self.y[(lk.src, lk.src_vr)] + lk.offset])

    # -- one communication step ------------------------------------------------------------------------
    def _step(self, t: float, h: float) -> None:
        slaves = self.slaves
        if self.settings.algorithm == "gauss-seidel":
            for i in self.order:
                self._write(i)
                slaves[i].do_step(t, h)
                self._read(i)
        else:
            for s in slaves:
                s.do_step(t, h)
            for i in range(len(slaves)):
                self._read(i)
        if self.settings.adaptive:
            self._resolve()
        else:
            for i in range(len(slaves)):
                self._write(i)
        self.macro_steps += 1

    def _record(self, row: np.ndarray) -> None:
        for read, cols in self.recorders:
            row[cols] = read()

    # -- runs ----------------------------------------------------------------------------------------
    def run(self) -> CosimResult:
        """Run the co-simulation from the start time to the stop time of the settings.

        Instantiates and initializes every component, exchanges the connections at every communication point
        (fixed steps, or step-doubling when adaptive) and frees the instances at the end, also on failure.

        Returns
        -------
        CosimResult
            The recorded signals at every accepted communication point, with the run statistics.

        Raises
        ------
        CosimRunError
            When a component fails (the message names the component and the FMI call).
        """
        s = self.settings
        started = time.perf_counter()
        progress = self.progress_on if isinstance(self.progress_on, Progress) or hasattr(self.progress_on, "update") \
            else Progress(bool(self.progress_on), s.start_time, s.stop_time)
        try:
            for slave in self.slaves:
                slave.instantiate()
            self._ports()
            for slave in self.slaves:
                slave.enter_initialization(s.start_time)
            self._resolve()
            for slave in self.slaves:
                slave.exit_initialization()
            self._resolve()
            init_seconds = time.perf_counter() - started
            loop_start = time.perf_counter()
            if s.adaptive:
                times, rows, extra = self._run_adaptive(progress)
            else:
                times, rows, extra = self._run_fixed(progress)
            loop_seconds = time.perf_counter() - loop_start
        finally:
            for slave in self.slaves:
                slave.free()
        steps = len(times) - 1
        progress.finish(times[-1], steps)
        stats = {"algorithm": s.algorithm, "adaptive": int(s.adaptive), "steps": steps,
                 "interrupted": int(times[-1] < s.stop_time),
                 "macro_steps": self.macro_steps, "initialization_seconds": init_seconds,
                 "loop_seconds": loop_seconds, "seconds": time.perf_counter() - started,
                 "steps_per_second": steps / loop_seconds if loop_seconds > 0 else math.inf, **extra}
        return CosimResult(np.asarray(times), tuple(self.plan.record), np.asarray(rows), stats)

    def _new_row(self) -> np.ndarray:
        row = np.empty(len(self.plan.record))
        self._record(row)
        return row

    def _run_fixed(self, progress: Progress):
        s = self.settings
        span = s.stop_time - s.start_time
        n = max(1, round(span / s.step))
        if abs(n * s.step - span) > 1e-9 * span:
            n = math.ceil(span / s.step - 1e-9)
        times = np.empty(n + 1)
        rows = np.empty((n + 1, len(self.plan.record)))
        times[0] = s.start_time
        self._record(rows[0])
        done = n
        t = s.start_time
        for k in range(n):
            if self.stop_requested():
                done = k
                break
            t_next = s.start_time + (k + 1) * s.step if k + 1 < n else s.stop_time
            try:
                self._step(t, t_next - t)
            except StepRejected as rej:
                raise rej.error from None
            times[k + 1] = t_next
            self._record(rows[k + 1])
            progress.update(t_next, k + 1)
            t = t_next
        return times[:done + 1], rows[:done + 1], {"step": s.step}

    def _run_adaptive(self, progress: Progress):
        s = self.settings
        span = s.stop_time - s.start_time
        h_min = s.min_step or span * 1e-7
        h_max = s.max_step or span / 10
        h = min(s.step, h_max)
        rollbacks = [Rollback(slave) for slave in self.slaves]
        keys = self._error_signals()
        t = s.start_time
        times, rows = [t], [self._new_row()]
        rejected, used = 0, []
        while s.stop_time - t > 1e-12 * max(1.0, abs(s.stop_time)) and not self.stop_requested():
            h = min(h, h_max)
            if t + h >= s.stop_time or s.stop_time - (t + h) < 0.05 * h:
                h = s.stop_time - t
            saved = [rb.save() for rb in rollbacks]
            cache = dict(self.y)
            err = math.inf
            try:
                self._step(t, h)
                big = np.array([self.y[k] for k in keys])
                self._restore(rollbacks, saved, cache)
                self._step(t, h / 2)
                self._step(t + h / 2, h / 2)
                small = np.array([self.y[k] for k in keys])
                scale = s.tolerance * h * (1.0 + np.abs(small))  # error per unit step: the errors add up to ~tol*T
                err = float(np.max(np.abs(small - big) / scale)) if keys else 0.0
            except StepRejected:
                err = math.inf
            if err <= 1.0:
                for rb, sv in zip(rollbacks, saved):
                    rb.discard(sv)
                t = t + h
                used.append(h)
                times.append(t)
                rows.append(self._new_row())
                progress.update(t, len(times) - 1)
                h *= 4.0 if err == 0 else min(4.0, max(0.2, 0.9 / err))
                continue
            rejected += 1
            self._restore(rollbacks, saved, cache)
            for rb, sv in zip(rollbacks, saved):
                rb.discard(sv)
            h *= max(0.2, 0.9 / err) if math.isfinite(err) else 0.25
            if h < h_min:
                what = "a component rejected the step" if not math.isfinite(err) else \
                    f"the error estimate is {err:.3g} times the tolerance"
                raise CosimRunError(f"adaptive step: the communication step fell below min_step = {h_min:.3g} s at "
                                    f"t = {t:.10g} s ({what}); loosen master.tolerance or lower master.min_step")
        return times, rows, {"rejected": rejected, "step": s.step, "smallest_step": min(used, default=0.0),
                             "largest_step": max(used, default=0.0)}

    def _error_signals(self) -> list[tuple[int, int]]:
        """Return the coupling signals the step-doubling estimate compares.

        Connected outputs without direct feedthrough from a connected input (they carry the components' states; a
        feedthrough output's error follows from its inputs, and under Jacobi it lags by a step, which would make its
        difference first order in H).
        """
        connected = {(lk.dst, lk.dst_vr) for lk in self.links}
        keys = []
        for i, vr in sorted(self.y):
            slave = self.slaves[i]
            name = self._name(i, vr)
            if not any((i, slave.vr(u)) in connected for u in slave.info.feedthrough.get(name, ())):
                keys.append((i, vr))
        return keys or sorted(self.y)

    def _restore(self, rollbacks: list[Rollback], saved, cache: dict[tuple[int, int], float]) -> None:
        for rb, sv in zip(rollbacks, saved):
            rb.restore(sv)
        self.y = dict(cache)
        for i in range(len(self.slaves)):
            self._write(i)
