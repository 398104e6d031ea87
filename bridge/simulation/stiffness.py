"""Stiffness detected during a native run, and the switch to an implicit method.

The default integrator, the explicit Dormand-Prince 8(5,3) method (``DOP853``), is stable only while ``h |lambda|``
stays within its stability region (about 6.1 along the negative real axis) for the equations' fastest eigenvalue
``lambda``. A fast decaying mode (a blocking diode's ``L di/dt = -i/G_off``, a stiff spring with damping) bounds
its step far below what accuracy needs, and a run of milliseconds then takes millions of evaluations.

Hairer's test (``dop853.f``, Hairer, Norsett & Wanner, *Solving ODEs I*, IV.2) watches the accepted steps (every
``TEST_EVERY``-th, and every one once a step was found at the boundary):
the two derivatives the method evaluates at ``t + h``, ``f(y_new)`` and the last stage's ``f(y_12)``, estimate
``|lambda| ~ |f(y_new) - f(y_12)| / |y_new - y_12|``; ``h |lambda| > 6.1`` in ``STIFF_STEPS`` accepted steps, with
fewer than ``CLEAR_STEPS`` steps below it in between, means the step is bounded by stability, not accuracy. The
segment is then integrated again from its start with ``LSODA`` (ODEPACK: implicit BDF formulas of orders 1-5 where
stiff, Adams where not, its Jacobian by finite differences of the equations), with the same tolerances, output
times and events; ``Radau`` is not used because its dense output between steps (the order-3 collocation
polynomial) falls far short of the default tolerances at the output times. The run's evaluation budget
(:mod:`bridge.simulation.budget`) counts both attempts. Each run that switched says so once, as a
:class:`StiffnessSwitch` warning naming the time, the step and the estimated eigenvalue (the command line prints it
on standard error). Only the default ``integrator="DOP853"`` switches; any other integrator (or the class
``scipy.integrate.DOP853`` itself) runs as given.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TextIO

import numpy as np
from scipy.integrate import DOP853, solve_ivp

#: DOP853's stability boundary on the negative real axis (Hairer's dop853.f)
STABILITY_LIMIT = 6.1
#: accepted steps at the stability boundary that mean stiffness
STIFF_STEPS = 15
#: accepted steps below the boundary that clear the count
CLEAR_STEPS = 6
#: the test runs on every TEST_EVERY-th accepted step, and on every step while the count is above 0
TEST_EVERY = 10
#: the implicit method a stiff segment is integrated with
STIFF_METHOD = "LSODA"


class StiffnessSwitch(UserWarning):
    """A native run found its equations stiff and integrated (part of) it with an implicit method."""


class StiffnessDetected(Exception):
    """Raised inside ``solve_ivp`` by :class:`WatchedDOP853` (caught by :func:`solve_watched`)."""

    def __init__(self, t: float, step: float, rate: float):
        super().__init__(f"stiff at t = {t:g}")
        self.t, self.step, self.rate = t, step, rate


class WatchedDOP853(DOP853):
    """scipy's DOP853 with Hairer's stiffness test after every accepted step."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._stiff_steps = 0
        self._clear_steps = 0
        self._accepted = 0

    def _step_impl(self):
        success, message = super()._step_impl()
        if success:
            self._accepted += 1
            if self._stiff_steps or self._accepted % TEST_EVERY == 0:
                self._test()
        return success, message

    def _test(self) -> None:
        h = self.h_previous
        s = self.n_stages - 1  # the last stage, at c = 1: (y_12, f(y_12)) beside (y_new, f(y_new)) at t + h
        y_stage = self.y_old + h * (self.K[:s].T @ self.A[s, :s])
        den = float(np.sum((self.y - y_stage) ** 2))
        num = float(np.sum((self.K[-1] - self.K[s]) ** 2))
        if not (den > 0 and np.isfinite(num)):
            return
        rate = float(np.sqrt(num / den))
        if abs(h) * rate > STABILITY_LIMIT:
            self._clear_steps = 0
            self._stiff_steps += 1
            if self._stiff_steps >= STIFF_STEPS:
                raise StiffnessDetected(self.t, abs(h), rate)
        else:
            self._clear_steps += 1
            if self._clear_steps >= CLEAR_STEPS:
                self._stiff_steps = 0


@dataclass
class StiffnessLog:
    """The segments of one run that were integrated with the implicit method."""

    stop_time: float
    found: list[StiffnessDetected] = field(default_factory=list)
    segments: int = 0

    def message(self) -> str:
        """Return the note that tells the user where the run switched to the implicit method, and why."""
        first = self.found[0]
        return (f"the equations are stiff: at t = {first.t:.6g} s the explicit DOP853's step was bounded by "
                f"stability to {first.step:.3g} s (h*|lambda| > {STABILITY_LIMIT} in {STIFF_STEPS} steps, "
                f"|lambda| ~ {first.rate:.3g} 1/s), so {len(self.found)} of {self.segments} integration "
                f"segment(s) up to {self.stop_time:g} s ran with the implicit {STIFF_METHOD} method "
                "(integrator='DOP853' switches automatically; pass another integrator to choose one)")


_LOG: ContextVar[StiffnessLog | None] = ContextVar("stiffness_log", default=None)


@contextlib.contextmanager
def watching(stop_time: float) -> Iterator[StiffnessLog]:
    """Log the segments integrated inside the ``with`` block; a run that switched warns once at its end."""
    log = StiffnessLog(stop_time)
    token = _LOG.set(log)
    try:
        yield log
    finally:
        _LOG.reset(token)
    if log.found:
        warnings.warn(log.message(), StiffnessSwitch, stacklevel=4)  # the caller of simulate


def solve_watched(fun: Callable[[float, np.ndarray], np.ndarray], t_span: tuple[float, float], y0: np.ndarray,
                  method: str, **options):
    """Integrate like ``solve_ivp(fun, t_span, y0, method=method, **options)``, switching on stiffness.

    With ``method="DOP853"`` the explicit method is watched for stiffness and, where found, the segment is
    integrated again with :data:`STIFF_METHOD`.
    """
    log = _LOG.get()
    if log is not None:
        log.segments += 1
    if not (isinstance(method, str) and method == "DOP853"):
        return solve_ivp(fun, t_span, y0, method=method, **options)
    try:
        return solve_ivp(fun, t_span, y0, method=WatchedDOP853, **options)
    except StiffnessDetected as found:
        if log is not None:
            log.found.append(found)
        return solve_ivp(fun, t_span, y0, method=STIFF_METHOD, **options)


@contextlib.contextmanager
def notices_on(stream: TextIO | None = None) -> Iterator[None]:
    """Print the :class:`StiffnessSwitch` warnings of the block as ``nhbridge: note: ...`` lines.

    They go to ``stream`` (standard error by default) instead of Python's warning format.
    """
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StiffnessSwitch)
            yield
    finally:
        for w in caught:
            if issubclass(w.category, StiffnessSwitch):
                print(f"nhbridge: note: {w.message}", file=stream or sys.stderr, flush=True)
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
