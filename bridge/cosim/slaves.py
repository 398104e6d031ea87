"""One FMU instance behind a single interface for FMI 2.0 (fmpy ``FMU2Slave``) and 3.0 (``FMU3Slave``).

Every FMI call that fails becomes a :class:`CosimRunError` naming the component, the function, the
time and the status, followed by the last messages the FMU logged. :class:`Rollback` saves and restores
an instance for the adaptive step: with ``get/setFMUState`` where the FMU declares it (nhbridge FMUs do), trivially
for a stateless FMU, and for older nhbridge FMUs without FMU states, whose whole state is their continuous state,
by re-initializing at the saved time with the saved states as start values.
"""

from __future__ import annotations

import contextlib
from collections import deque
from collections.abc import Callable, Sequence
from ctypes import c_double, c_uint
from dataclasses import dataclass
from typing import Any

from .components import ModelInfo
from .errors import CosimRunError

STATUS = ["OK", "Warning", "Discard", "Error", "Fatal", "Pending"]
# the foreign calls a Beacon names (bridge.tools.sandbox): the parent reports which one crashed or hung
CALLS = ("loading the binary", "Instantiate", "SetupExperiment", "EnterInitializationMode", "ExitInitializationMode",
         "doStep", "GetReal", "SetReal", "getFMUState", "setFMUState", "Reset", "Terminate/FreeInstance",
         "freeFMUState")
_CODE = {name: k for k, name in enumerate(CALLS)}
_DO_STEP = _CODE["doStep"]


def call_code(what: str) -> int:
    """Return the index in :data:`CALLS` of a call described as ``what`` (e.g. "fmi2DoStep", "doStep(h = 0.1)")."""
    for name, k in _CODE.items():
        if name.split("/")[0].lower() in what.lower():
            return k
    return _CODE["GetReal"] if "get" in what.lower() else _CODE["SetReal"]
# fmpy's FMI 2 logger proxy (a C function that formats the printf-style messages) forwards every message of
# every FMI 2 instance in the process to ONE Python logger held in a C global: the one registered last. So
# one permanent router is registered (before each instantiation, in case fmpy registered another since): it
# sends a co-simulation slave's messages to that slave's log, by instance name, and every other instance's
# to fmpy's own printLogMessage. No freed callback is ever left in the global (that crashed the interpreter),
# and FMUs simulated later in the process by fmpy still print their messages.
_FMI2_LOGS: dict[str, deque[str]] = {}
_ROUTER: list[Any] = []  # [the permanent ctypes logger]
_CALLBACKS: list[Any] = []  # every callback structure handed to an instance stays alive


def _route(component, instance, status, category, message) -> None:
    name = instance.decode("utf-8", "replace") if isinstance(instance, bytes) else str(instance)
    log = _FMI2_LOGS.get(name)
    if log is None:
        from fmpy.fmi2 import printLogMessage

        printLogMessage(component, instance, status, category, message)
    elif isinstance(status, int) and status >= 1:  # warnings and worse
        text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
        log.append(f"[{STATUS[status] if 0 <= status < len(STATUS) else status}] {text}")


def _fmi2_callbacks() -> Any:
    """Return a callback structure whose logger is fmpy's formatting proxy in front of :func:`_route`."""
    from ctypes import byref

    from fmpy import calloc, free
    from fmpy.fmi2 import (
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )

    if not _ROUTER:
        _ROUTER.append(fmi2CallbackLoggerTYPE(_route))
    cb = fmi2CallbackFunctions()
    cb.logger = _ROUTER[0]
    cb.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
    cb.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
    try:
        from fmpy.logging import addLoggerProxy

        addLoggerProxy(byref(cb))  # the global now holds the permanent router; cb.logger is the proxy
    except Exception:  # pragma: no cover - fmpy without its logging library: messages stay unformatted
        pass
    _CALLBACKS.append(cb)
    return cb


class Slave:
    """An instantiated Co-Simulation FMU with its value references resolved."""

    def __init__(self, name: str, info: ModelInfo, unzipdir: str, fmu_tolerance: float, start_time: float,
                 stop_time: float, parameters: Sequence[tuple[str, float]], start: Sequence[tuple[str, float]],
                 label: str = ""):
        self.name, self.info, self.unzipdir = name, info, unzipdir
        self.label = label or info.path.name  # the file the user gave (system file, .mo or .fmu)
        self.index, self.beacon = 0, None  # a bridge.tools.sandbox.Beacon stamped before every foreign call
        self.tolerance, self.start_time, self.stop_time = fmu_tolerance, start_time, stop_time
        self.values = [(info.variables[n].vr, v) for n, v in [*parameters, *start]]
        self.log: deque[str] = deque(maxlen=8)
        self.time = start_time
        self.fmu: Any = None
        self._callbacks: Any = None
        self._do_step2: Any = None  # fmi2DoStep itself, called directly in the stepping loop
        # doStep's noSetFMUStatePriorToCurrentPoint is False while a Rollback may set an earlier FMU state
        self.keep_history = False

    # -- helpers -------------------------------------------------------------------------------------
    def vr(self, variable: str) -> int:
        """Return the value reference of the variable named ``variable``.

        Parameters
        ----------
        variable : str
            A variable name of the FMU's model description.

        Returns
        -------
        int
            Its value reference.
        """
        return self.info.variables[variable].vr

    def _fail(self, what: str, exc: Exception, t: float | None = None) -> CosimRunError:
        status = getattr(exc, "status", None)
        label = f"status {STATUS[status]}" if isinstance(status, int) and 0 <= status < len(STATUS) else str(exc)
        when = f" at t = {self.time if t is None else t:.10g} s"
        messages = f"; the FMU logged: {' | '.join(self.log)}" if self.log else ""
        return CosimRunError(f"component {self.name} ({self.label}): {what}{when} failed with {label}"
                             f"{messages}")

    def _mark(self, code: int, t: float | None = None) -> None:
        if self.beacon is not None:
            self.beacon.mark(self.index, code, self.time if t is None else t)

    def _call(self, what: str, fn, *args, t: float | None = None):
        self._mark(call_code(what), t)
        try:
            return fn(*args)
        except CosimRunError:
            raise
        except Exception as exc:  # fmpy raises FMICallException (with .status) or plain Exception
            raise self._fail(what, exc, t) from exc

    def _logger(self, env, status, category, message) -> None:
        """Record FMI 3 log messages (each instance has its own callback)."""
        if isinstance(status, int) and status >= 1:  # warnings and worse
            text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
            self.log.append(f"[{STATUS[status] if 0 <= status < len(STATUS) else status}] {text}")

    # -- life cycle ----------------------------------------------------------------------------------
    def instantiate(self) -> None:
        """Load the FMU's binary and instantiate it for Co-Simulation (FMI 2 or 3), logging to :attr:`log`.

        Raises
        ------
        CosimRunError
            When the binary cannot be loaded or the instantiation fails.
        """
        kwargs = dict(guid=self.info.guid, unzipDirectory=self.unzipdir, modelIdentifier=self.info.identifier,
                      instanceName=self.name)
        if self.info.fmi_version == 3:
            from fmpy.fmi3 import FMU3Slave

            self.fmu = self._call("loading the binary", lambda: FMU3Slave(**kwargs))
            self._call("fmi3InstantiateCoSimulation", lambda: self.fmu.instantiate(logMessage=self._logger))
        else:

            from fmpy.fmi2 import FMU2Slave

            cb = _fmi2_callbacks()
            self._callbacks = cb
            _FMI2_LOGS[self.name] = self.log
            self.fmu = self._call("loading the binary", lambda: FMU2Slave(**kwargs))
            self._call("fmi2Instantiate", lambda: self.fmu.instantiate(callbacks=cb))
            self._do_step2 = self._raw("fmi2DoStep")

    def enter_initialization(self, t: float) -> None:
        """Set up the experiment at ``t``, apply parameters and start values, enter Initialization Mode."""
        self.time = t
        if self.info.fmi_version == 2:
            self._call("fmi2SetupExperiment", self.fmu.setupExperiment, self.tolerance, t, self.stop_time)
            self.set_start_values()
            self._call("fmi2EnterInitializationMode", self.fmu.enterInitializationMode)
        else:
            self.set_start_values()
            self._call("fmi3EnterInitializationMode", self.fmu.enterInitializationMode, self.tolerance, t,
                       self.stop_time)

    def set_start_values(self, extra: Sequence[tuple[int, float]] = ()) -> None:
        """Set the parameter and start values of the component, then ``extra`` ones.

        Parameters
        ----------
        extra : sequence of (int, float), optional
            Further ``(value reference, value)`` pairs set after the component's own values.
        """
        values = [*self.values, *extra]
        if values:
            self.set([vr for vr, _ in values], [v for _, v in values])

    def exit_initialization(self) -> None:
        """Leave the FMU's initialization mode.

        Raises
        ------
        CosimRunError
            When the FMU refuses.
        """
        self._call("ExitInitializationMode", self.fmu.exitInitializationMode)

    def free(self) -> None:
        """Terminate and free the instance; an instance in the Error state is freed anyway. Idempotent."""
        if self.fmu is None:
            return
        fmu, self.fmu, self._do_step2 = self.fmu, None, None
        self._mark(_CODE["Terminate/FreeInstance"])
        with contextlib.suppress(Exception):  # an instance in the Error state may refuse to terminate; free it anyway
            fmu.terminate()
        with contextlib.suppress(Exception):
            fmu.freeInstance()
        if _FMI2_LOGS.get(self.name) is self.log:
            del _FMI2_LOGS[self.name]

    # -- values and steps ------------------------------------------------------------------------------
    def set(self, vrs: list[int], values: list[float]) -> None:
        """Set real variables of the FMU (``fmi2SetReal`` or ``fmi3SetFloat64``).

        Parameters
        ----------
        vrs : list of int
            Value references.
        values : list of float
            One value per reference.

        Raises
        ------
        CosimRunError
            When the FMU refuses the values.
        """
        if not vrs:
            return
        if self.info.fmi_version == 3:
            self._call("fmi3SetFloat64", self.fmu.setFloat64, vrs, values)
        else:
            self._call("fmi2SetReal", self.fmu.setReal, vrs, values)

    def get(self, vrs: list[int]) -> list[float]:
        """Get real variables of the FMU (``fmi2GetReal`` or ``fmi3GetFloat64``).

        Parameters
        ----------
        vrs : list of int
            Value references.

        Returns
        -------
        list of float
            One value per reference.

        Raises
        ------
        CosimRunError
            When the call fails.
        """
        if not vrs:
            return []
        if self.info.fmi_version == 3:
            return self._call("fmi3GetFloat64", self.fmu.getFloat64, vrs)
        return self._call("fmi2GetReal", self.fmu.getReal, vrs)

    def reader(self, vrs: list[int]) -> Callable[[], list[float]]:
        """Return a function reading ``vrs`` through the FMI function with preallocated arrays (the stepping loop)."""
        if not vrs:
            return list
        raw = self._raw("fmi3GetFloat64" if self.info.fmi_version == 3 else "fmi2GetReal")
        if raw is None:
            return lambda: self.get(vrs)
        n, comp = len(vrs), self.fmu.component
        refs, values = (c_uint * n)(*vrs), (c_double * n)()
        args = (comp, refs, n, values, n) if self.info.fmi_version == 3 else (comp, refs, n, values)

        beacon, who, code = self.beacon, self.index, _CODE["GetReal"]

        def read() -> list[float]:
            if beacon is not None:
                beacon.mark(who, code, self.time)
            status = raw(*args)
            if status > 1:
                raise self._fail("GetReal", _Status(status))
            return values[:]

        return read

    def writer(self, vrs: list[int]) -> Callable[[list[float]], None]:
        """Return a function that sets ``vrs`` through the FMI function with preallocated arrays."""
        if not vrs:
            return lambda values: None
        raw = self._raw("fmi3SetFloat64" if self.info.fmi_version == 3 else "fmi2SetReal")
        if raw is None:
            return lambda values: self.set(vrs, values)
        n, comp = len(vrs), self.fmu.component
        refs, buffer = (c_uint * n)(*vrs), (c_double * n)()
        args = (comp, refs, n, buffer, n) if self.info.fmi_version == 3 else (comp, refs, n, buffer)

        beacon, who, code = self.beacon, self.index, _CODE["SetReal"]

        def write(values: list[float]) -> None:
            buffer[:] = values
            if beacon is not None:
                beacon.mark(who, code, self.time)
            status = raw(*args)
            if status > 1:
                raise self._fail("SetReal", _Status(status))

        return write

    def _raw(self, function: str):
        """Return the C function as fmpy prepared it (argument types set), or None where fmpy's internals differ."""
        functions = getattr(self.fmu, "_functions", None)
        fn = functions.get(function) if isinstance(functions, dict) else None
        return fn if fn is not None and getattr(fn, "argtypes", None) else None

    def do_step(self, t: float, h: float) -> None:
        """Advance from ``t`` to ``t + h``; raise :class:`StepRejected` on Discard, CosimRunError otherwise."""
        if self.beacon is not None:
            self.beacon.mark(self.index, _DO_STEP, t)
        if self._do_step2 is not None:
            status = self._do_step2(self.fmu.component, t, h, 0 if self.keep_history else 1)
            if status > 1:
                error = self._fail(f"doStep(h = {h:.6g})", _Status(status), t)
                raise StepRejected(error) if status == 2 else error
            self.time = t + h
            return
        try:
            result = self.fmu.doStep(t, h, noSetFMUStatePriorToCurrentPoint=not self.keep_history)
        except Exception as exc:
            if getattr(exc, "status", None) == 2:
                raise StepRejected(self._fail(f"doStep(h = {h:.6g})", exc, t)) from exc
            raise self._fail(f"doStep(h = {h:.6g})", exc, t) from exc
        if self.info.fmi_version == 3 and result is not None:
            _event, terminate, early, last = result
            if terminate:
                raise CosimRunError(f"component {self.name} ({self.label}): asked to terminate the "
                                    f"simulation in doStep at t = {t:.10g} s (reached t = {last:.10g} s)")
            if early:
                raise StepRejected(CosimRunError(f"component {self.name}: returned early from doStep at t = "
                                                 f"{last:.10g} s"))
        self.time = t + h


class _Status(Exception):
    def __init__(self, status: int):
        super().__init__(f"status {status}")
        self.status = status


class StepRejected(Exception):
    """A component returned Discard (or returned early); the adaptive master retries with a smaller step."""

    def __init__(self, error: CosimRunError):
        super().__init__(str(error))
        self.error = error


@dataclass
class Saved:
    """A saved instance: its time and, by the rollback method, an FMU state handle or the state values."""

    time: float
    handle: Any = None
    values: list[float] | None = None


class Rollback:
    """Save and restore one instance, by the method :attr:`ModelInfo.rollback` names."""

    def __init__(self, slave: Slave):
        self.slave = slave
        self.method = slave.info.rollback
        slave.keep_history = self.method == "fmu-state"
        info = slave.info
        self.state_vrs = [info.variables[s].vr for s in info.states]

    def save(self) -> Saved:
        """Save the instance for a later :meth:`restore`.

        Returns
        -------
        Saved
            The time and, by method, the FMU state (``fmu-state``) or the continuous states' values (``reinit``).
        """
        s = self.slave
        if self.method == "fmu-state":
            get = s.fmu.getFMUState if s.info.fmi_version == 3 else s.fmu.getFMUstate
            return Saved(s.time, handle=s._call("getFMUState", get))
        if self.method == "reinit":
            return Saved(s.time, values=s.get(self.state_vrs))
        return Saved(s.time)

    def restore(self, saved: Saved) -> None:
        """Put the instance back into the saved state.

        Parameters
        ----------
        saved : Saved
            A state returned by :meth:`save` of this instance.

        Raises
        ------
        CosimRunError
            When the FMU refuses to restore it.
        """
        s = self.slave
        if self.method == "fmu-state":
            put = s.fmu.setFMUState if s.info.fmi_version == 3 else s.fmu.setFMUstate
            s._call("setFMUState", put, saved.handle, t=saved.time)
        elif self.method == "reinit":
            s._call("Reset", s.fmu.reset, t=saved.time)
            s.time = saved.time
            if s.info.fmi_version == 2:
                s._call("fmi2SetupExperiment", s.fmu.setupExperiment, s.tolerance, saved.time, s.stop_time)
                s.set_start_values(list(zip(self.state_vrs, saved.values or [])))
                s._call("fmi2EnterInitializationMode", s.fmu.enterInitializationMode)
            else:
                s.set_start_values(list(zip(self.state_vrs, saved.values or [])))
                s._call("fmi3EnterInitializationMode", s.fmu.enterInitializationMode, s.tolerance, saved.time,
                        s.stop_time)
            s.exit_initialization()
        s.time = saved.time

    def discard(self, saved: Saved) -> None:
        """Free the FMU state held by ``saved`` (nothing to do for the other rollback methods).

        Parameters
        ----------
        saved : Saved
            A state returned by :meth:`save` that is no longer needed.
        """
        if self.method == "fmu-state" and saved.handle is not None and self.slave.fmu is not None:
            s = self.slave
            free = s.fmu.freeFMUState if s.info.fmi_version == 3 else s.fmu.freeFMUstate
            s._mark(_CODE["freeFMUState"])
            with contextlib.suppress(Exception):
                free(saved.handle)
            saved.handle = None
