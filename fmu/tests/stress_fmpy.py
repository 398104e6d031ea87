"""Hostile use of the nhbridge FMU runtime through fmpy, meant for a sanitizer build of the test FMUs.

    LD_PRELOAD=$(gcc -print-file-name=libasan.so) ASAN_OPTIONS=detect_leaks=0 \\
        python3 fmu/tests/stress_fmpy.py FMI2.fmu FMI3.fmu [--instantiations N] [--states N] [--calls N]

The pendulum FMUs of build_test_fmu.sh (built with NHB_EXTRA_CFLAGS="-fsanitize=address,undefined ...")
are driven, for FMI 2 and 3, Model Exchange and Co-Simulation, through:

1. instantiations: instantiate, take FMU states (half of them left for FreeInstance to free), sometimes
   initialize and step, free; every 100th with a wrong token or an empty name (must fail);
2. wrong call orders: every function of a menu in every mode (Instantiated, Initialization, Event,
   Continuous-Time, Step, Terminated, Error), on a fresh instance each: the result must be OK where
   the FMI state machine allows the call and Error elsewhere;
3. bad steps, NaN/huge inputs and parameters, invalid value references, with the expected status;
4. corrupted serialized states: bit flips, truncation and extension, a changed GUID or header (all
   must be rejected), hostile values in any field with a recomputed checksum (rejected, or accepted
   and then used: only OK/Warning/Error may come back); the instance's own state is unchanged;
5. random call sequences with hostile arguments (NaN, infinities, 1e308, denormals, unknown value
   references, wrong array lengths), each status OK/Warning/Error, invalid references always Error;
   after Reset the instance must reproduce a clean run bit for bit.

Prints one JSON line of counts; the exit code is the number of failed expectations (listed first). The
process itself must not crash; the sanitizers' silence is checked by the caller
(tests/test_fmu_sanitizers.py).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import struct
import sys
from ctypes import byref, c_double

from fmpy import calloc, extract, free, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import (
    FMU2Model,
    FMU2Slave,
    fmi2CallbackAllocateMemoryTYPE,
    fmi2CallbackFreeMemoryTYPE,
    fmi2CallbackFunctions,
    fmi2CallbackLoggerTYPE,
)
from fmpy.fmi3 import FMU3Model, FMU3Slave
from fmpy.logging import addLoggerProxy

OK, WARNING, DISCARD, ERROR = 0, 1, 2, 3
HOSTILE = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 0.0, 1e-300, 1.0, 0.5, -3.0, 1e10]
FNV_OFFSET, FNV_PRIME, MASK = 14695981039346656037, 1099511628211, (1 << 64) - 1

failures: list[str] = []
counts: dict[str, int] = {"calls": 0, "instantiations": 0, "failed_instantiations": 0, "wrong_order_checks": 0,
                          "corrupted_states": 0, "corrupted_rejected": 0, "corrupted_accepted_and_used": 0,
                          "random_calls": 0, "random_errors": 0, "messages": 0}


def expect(ok: bool, what: str) -> None:
    if not ok and len(failures) < 200:
        failures.append(what)


def fnv1a(data: bytes) -> int:
    h = FNV_OFFSET
    for b in data:
        h = ((h ^ b) * FNV_PRIME) & MASK
    return h


def with_checksum(buf: bytearray) -> bytearray:
    """The state with its checksum recomputed (64-bit FNV-1a of all bytes but [24, 32), nhb_state.c)."""
    buf[24:32] = struct.pack("=Q", fnv1a(bytes(buf[:24]) + bytes(buf[32:])))
    return buf


class Target:
    """One FMU (FMI version, interface) with a logger that counts messages, and status-returning calls."""

    def __init__(self, path: str, version: int, interface: str):
        self.version, self.me = version, interface == "ME"
        self.tag = f"FMI{version}-{interface}"
        self.unzipdir = extract(path)
        self.md = read_model_description(self.unzipdir)
        vr = {v.name: v.valueReference for v in self.md.modelVariables}
        self.theta, self.omega, self.m, self.l, self.tau, self.energy = (
            vr["theta"], vr["omega"], vr["m"], vr["l"], vr["tau"], vr["energy"])
        self.valid_vrs = sorted(vr.values())
        self.invalid_vrs = [max(self.valid_vrs) + 1, 100, 2**31, 2**32 - 1]
        ident = (self.md.modelExchange if self.me else self.md.coSimulation).modelIdentifier
        kwargs = dict(guid=self.md.guid, unzipDirectory=self.unzipdir, modelIdentifier=ident, instanceName="stress")
        if version == 2:
            self.fmu = (FMU2Model if self.me else FMU2Slave)(**kwargs)
            self.callbacks = fmi2CallbackFunctions()
            self.callbacks.logger = fmi2CallbackLoggerTYPE(self._log)
            self.callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
            self.callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
            addLoggerProxy(byref(self.callbacks))
        else:
            self.fmu = (FMU3Model if self.me else FMU3Slave)(**kwargs)
        self.time = 0.0
        self.states: list = []  # FMU states of the current instance

    def _log(self, *args) -> None:
        counts["messages"] += 1

    # -- calls ---------------------------------------------------------------------------------- #

    def call(self, fn, *args) -> int:
        """Status of fn(*args) (fmpy raises for Error and Fatal)."""
        counts["calls"] += 1
        try:
            fn(*args)
            return OK
        except FMICallException as exc:
            return exc.status

    def instantiate(self, token: str | None = None, name: str = "stress") -> bool:
        counts["instantiations"] += 1
        self.states, self.time = [], 0.0
        if token is not None or not name:
            self.fmu.guid, self.fmu.instanceName = token or self.md.guid, name
        try:
            if self.version == 2:
                self.fmu.instantiate(callbacks=self.callbacks)
            else:
                self.fmu.instantiate(logMessage=self._log)
            ok = bool(self.fmu.component)
        except Exception:  # fmpy raises a plain Exception when instantiate returns NULL
            ok = False
        self.fmu.guid, self.fmu.instanceName = self.md.guid, "stress"
        return ok

    def free(self) -> None:
        counts["calls"] += 1
        (self.fmu.fmi2FreeInstance if self.version == 2 else self.fmu.fmi3FreeInstance)(self.fmu.component)
        self.fmu.component, self.states = None, []

    def setup(self, tol=1e-8, start=0.0, stop=None) -> int:
        if self.version == 2:
            return self.call(self.fmu.setupExperiment, tol, start, stop)
        return self.call(self.fmu.enterInitializationMode, tol, start, stop)

    def enter_init(self) -> int:
        if self.version == 2:
            return self.call(self.fmu.enterInitializationMode)
        return self.call(self.fmu.enterInitializationMode, 1e-8, 0.0, None)

    def exit_init(self) -> int:
        return self.call(self.fmu.exitInitializationMode)

    def enter_event(self) -> int:
        return self.call(self.fmu.enterEventMode)

    def current_time(self) -> float:
        """The FMU's time: FMI 3 value reference 0, FMI 2 Co-Simulation's last successful time."""
        try:
            counts["calls"] += 1
            return self.fmu.getFloat64([0])[0] if self.version == 3 else self.fmu.getRealStatus(2)
        except FMICallException:
            return math.nan

    def enter_cont(self) -> int:
        return self.call(self.fmu.enterContinuousTimeMode)

    def set_time(self, t: float) -> int:
        return self.call(self.fmu.setTime, t)

    def _array(self, values):
        return (c_double * max(len(values), 1))(*values)

    def set_states(self, values, n=None) -> int:
        arr = self._array(values)
        n = len(values) if n is None else n
        fn = self.fmu.fmi2SetContinuousStates if self.version == 2 else self.fmu.fmi3SetContinuousStates
        return self.call(fn, self.fmu.component, arr, n)

    def get_derivatives(self, n=2) -> tuple[int, list[float]]:
        arr = (c_double * max(n, 2))()
        fn = self.fmu.fmi2GetDerivatives if self.version == 2 else self.fmu.fmi3GetContinuousStateDerivatives
        return self.call(fn, self.fmu.component, arr, n), list(arr)

    def do_step(self, t: float, h: float) -> int:
        status = self.call(self.fmu.doStep, t, h)
        if status == OK:
            self.time = t + h
        return status

    def get(self, vrs, n_values=None) -> tuple[int, list[float]]:
        out: list[float] = []

        def run():
            out.extend(self.fmu.getReal(vrs) if self.version == 2 else self.fmu.getFloat64(vrs, n_values))
        return self.call(run), out

    def set(self, vrs, values) -> int:
        if self.version == 2:
            return self.call(self.fmu.setReal, vrs, values)
        return self.call(self.fmu.setFloat64, vrs, values)

    def terminate(self) -> int:
        return self.call(self.fmu.terminate)

    def reset(self) -> int:
        self.time = 0.0
        return self.call(self.fmu.reset)

    def get_state(self):
        try:
            state = self.fmu.getFMUState()
        except FMICallException:
            return None
        finally:
            counts["calls"] += 1
        self.states.append(state)
        return state

    def serialize(self, state) -> bytes:
        counts["calls"] += 2
        return self.fmu.serializeFMUState(state)

    def deserialize(self, data: bytes) -> tuple[int, object]:
        holder: list = []

        def run():
            holder.append(self.fmu.deserializeFMUState(data))
        status = self.call(run)
        return status, (holder[0] if holder else None)

    def to_run_mode(self, tol=1e-8) -> None:
        """Instantiated -> Event Mode (ME) or Step Mode (CS)."""
        if self.version == 2:
            expect(self.setup(tol) == OK and self.enter_init() == OK, f"{self.tag}: initialization")
        else:
            expect(self.setup(tol) == OK, f"{self.tag}: initialization")
        expect(self.exit_init() == OK, f"{self.tag}: exitInitializationMode")

    def reference_run(self) -> list[float]:
        """From Instantiated: a short clean run; its result (bits) must not depend on what came before."""
        self.to_run_mode()
        if self.me:
            expect(self.enter_cont() == OK, f"{self.tag}: enterContinuousTimeMode")
            x, t = [1.0, 0.0], 0.0
            for _ in range(20):  # explicit Euler with the FMU's derivatives
                status, dx = self.get_derivatives()
                expect(status == OK, f"{self.tag}: getDerivatives in the reference run")
                x, t = [x[0] + 0.01 * dx[0], x[1] + 0.01 * dx[1]], t + 0.01
                expect(self.set_time(t) == OK and self.set_states(x) == OK, f"{self.tag}: reference ME step")
            return x
        for i in range(5):
            expect(self.do_step(0.1 * i, 0.1) == OK, f"{self.tag}: doStep in the reference run")
        return self.get([self.theta, self.omega, self.energy])[1]


# ---------------------------------------------------------------------------------------------- #
# 1. instantiations
# ---------------------------------------------------------------------------------------------- #

def instantiations(target: Target, n: int) -> None:
    for i in range(n):
        if i % 100 == 50:
            expect(not target.instantiate(token="{wrong-token}"), f"{target.tag}: wrong token accepted")
            expect(not target.instantiate(name=""), f"{target.tag}: empty instance name accepted")
            counts["failed_instantiations"] += 2
            continue
        expect(target.instantiate(), f"{target.tag}: instantiation {i} failed")
        if i % 10 == 0:
            target.to_run_mode()
            if not target.me:
                expect(target.do_step(0.0, 0.05) == OK, f"{target.tag}: doStep after instantiation {i}")
        s1, s2 = target.get_state(), target.get_state()
        expect(s1 is not None and s2 is not None, f"{target.tag}: getFMUState")
        if i % 2 == 0:
            expect(target.call(target.fmu.freeFMUState, s1) == OK, f"{target.tag}: freeFMUState")
        target.free()  # frees s2 (and s1 when it was not freed)


# ---------------------------------------------------------------------------------------------- #
# 2. wrong call orders
# ---------------------------------------------------------------------------------------------- #

INST, INIT, EVENT, CONT, STEP, TERM, ERR = "Instantiated", "Init", "Event", "Cont", "Step", "Terminated", "Error"


def drive_to(target: Target, mode: str) -> None:
    """A fresh instance in the given mode."""
    expect(target.instantiate(), f"{target.tag}: instantiate")
    if mode == INST:
        return
    if mode == INIT:
        if target.version == 2:
            expect(target.setup() == OK and target.enter_init() == OK, f"{target.tag}: -> Init")
        else:
            expect(target.setup() == OK, f"{target.tag}: -> Init")
        return
    target.to_run_mode()
    if mode == CONT:
        expect(target.enter_cont() == OK, f"{target.tag}: -> Cont")
    elif mode == TERM:
        expect(target.terminate() == OK, f"{target.tag}: -> Terminated")
    elif mode == ERR:  # l = 0: singular mass matrix
        if target.me:
            expect(target.set([target.l], [0.0]) == OK, f"{target.tag}: set l in Event Mode")
            expect(target.get_derivatives()[0] == ERROR, f"{target.tag}: -> Error")
        else:
            expect(target.set([target.l], [0.0]) == OK, f"{target.tag}: set l in Step Mode")
            expect(target.do_step(0.0, 0.1) == ERROR, f"{target.tag}: -> Error")


def wrong_orders(target: Target) -> None:
    run_mode = EVENT if target.me else STEP
    modes = [INST, INIT, run_mode, TERM, ERR] + ([CONT] if target.me else [])
    ops = {  # name: (call, modes where the FMI state machine allows it; the call must then return OK)
        "enterInitializationMode": (lambda: target.enter_init(), {INST}),
        "exitInitializationMode": (lambda: target.exit_init(), {INIT}),
        "terminate": (lambda: target.terminate(), {EVENT, CONT, STEP}),
        "get theta": (lambda: target.get([target.theta])[0], {INIT, EVENT, CONT, STEP, TERM, ERR}),
        "set tau": (lambda: target.set([target.tau], [0.1]), {INST, INIT, EVENT, CONT, STEP}),
        "set m": (lambda: target.set([target.m], [1.1]), {INST, INIT, EVENT, STEP}),
        "set theta": (lambda: target.set([target.theta], [0.5]), {INST, INIT}),
        "reset": (lambda: target.reset(), {INST, INIT, EVENT, CONT, STEP, TERM, ERR}),
    }
    if target.version == 2:
        ops["setupExperiment"] = (lambda: target.setup(), {INST})
    # (fmpy's classes load only the functions of their interface: the other one's are not called)
    if target.me:
        ops["enterEventMode"] = (lambda: target.enter_event(), {EVENT, CONT})
        ops["enterContinuousTimeMode"] = (lambda: target.enter_cont(), {EVENT})
        ops["setTime"] = (lambda: target.set_time(0.1), {EVENT, CONT})
        ops["setContinuousStates"] = (lambda: target.set_states([0.5, 0.1]), {CONT})
        ops["getDerivatives"] = (lambda: target.get_derivatives()[0], {INIT, EVENT, CONT, TERM})  # Error: fails
    else:
        ops["doStep"] = (lambda: target.do_step(0.0, 0.1), {STEP})
        if target.version == 3:
            ops["enterEventMode"] = (lambda: target.enter_event(), set())  # eventModeUsed = false
    for mode in modes:
        for name, (op, allowed) in ops.items():
            drive_to(target, mode)
            status = op()
            counts["wrong_order_checks"] += 1
            want = OK if mode in allowed else ERROR
            expect(status == want, f"{target.tag}: {name} in {mode}: status {status}, expected {want}")
            target.free()


# ---------------------------------------------------------------------------------------------- #
# 3. bad steps, NaN/huge inputs, invalid value references
# ---------------------------------------------------------------------------------------------- #

def bad_arguments(target: Target) -> None:
    expect(target.instantiate(), f"{target.tag}: instantiate")
    for tol in (1e300, 1.0, -1.0, 0.0, math.nan, math.inf):
        expect(target.setup(tol) == ERROR, f"{target.tag}: tolerance {tol} accepted")
    for vr in target.invalid_vrs:
        expect(target.get([vr])[0] == ERROR, f"{target.tag}: get of unknown value reference {vr}")
        expect(target.set([vr], [1.0]) == ERROR, f"{target.tag}: set of unknown value reference {vr}")
        expect(target.set([target.tau, vr], [1.0, 1.0]) == ERROR, f"{target.tag}: set with unknown {vr}")
    for value in (math.nan, math.inf, -math.inf):
        expect(target.set([target.tau], [value]) == ERROR, f"{target.tag}: tau = {value} accepted")
        expect(target.set([target.m], [value]) == ERROR, f"{target.tag}: m = {value} accepted")
    target.to_run_mode()
    if target.me:
        expect(target.enter_cont() == OK, f"{target.tag}: enterContinuousTimeMode")
        for bad in ([math.nan, 0.0], [0.0, math.inf]):
            expect(target.set_states(bad) == ERROR, f"{target.tag}: states {bad} accepted")
        expect(target.set_states([0.1, 0.2], n=3) == ERROR, f"{target.tag}: 3 states accepted")
        expect(target.set_time(-1.0) == ERROR, f"{target.tag}: time before start accepted")
        expect(target.set_time(math.nan) == ERROR, f"{target.tag}: time NaN accepted")
        expect(target.set([target.tau], [1e308]) == OK, f"{target.tag}: tau = 1e308")
        status, dx = target.get_derivatives()
        expect(status == ERROR or all(map(math.isfinite, dx[:2])), f"{target.tag}: non-finite derivative OK")
        target.free()
        return
    t = 0.0
    for current, h in ((0.0, -1.0), (0.0, math.nan), (0.0, math.inf), (math.nan, 0.1), (math.inf, 0.1),
                       (5.0, 0.1), (0.0, -0.0)):
        status = target.do_step(current, h)
        want = OK if h == 0.0 and current == 0.0 else ERROR
        expect(status == want, f"{target.tag}: doStep({current}, {h}): status {status}, expected {want}")
    for h in (0.0, 5e-324, 1e-300, 1e-9, 0.1):
        expect(target.do_step(t, h) == OK, f"{target.tag}: doStep({t}, {h}) failed")
        t += h
    expect(target.do_step(t, 1e308) == ERROR, f"{target.tag}: doStep of 1e308 accepted")  # the step limit
    expect(target.reset() == OK, f"{target.tag}: reset after the step limit")
    target.to_run_mode()
    expect(target.set([target.tau], [1e308]) == OK, f"{target.tag}: tau = 1e308")
    status = target.do_step(0.0, 1.0)
    theta = target.get([target.theta, target.omega])[1]
    expect(status == ERROR or all(map(math.isfinite, theta)), f"{target.tag}: non-finite result with OK")
    expect(all(map(math.isfinite, theta)), f"{target.tag}: non-finite state after a failed doStep")
    target.free()


# ---------------------------------------------------------------------------------------------- #
# 4. corrupted serialized states
# ---------------------------------------------------------------------------------------------- #

def corrupted_states(target: Target, n: int, rng: random.Random) -> None:
    expect(target.instantiate(), f"{target.tag}: instantiate")
    target.to_run_mode()
    if target.me:
        target.enter_cont()
        target.set_time(0.3)
        target.set_states([0.7, -0.2])
        target.get_derivatives()
    else:
        for i in range(4):
            target.do_step(0.05 * i, 0.05)
    own = target.get_state()
    good = target.serialize(own)
    guid_len = struct.unpack_from("=I", good, 12)[0]
    body = 32 + (guid_len + 7) // 8 * 8
    slots = (len(good) - body) // 8
    status, state = target.deserialize(good)
    expect(status == OK, f"{target.tag}: the good serialized state is rejected")
    for i in range(n):
        buf = bytearray(good)
        kind = i % 5
        if kind == 0:  # bit flips anywhere, checksum not updated
            for _ in range(rng.randint(1, 4)):
                pos = rng.randrange(len(buf))
                buf[pos] ^= 1 << rng.randrange(8)
            if bytes(buf) == good:
                continue
        elif kind == 1:  # truncated or extended
            buf = buf[:rng.randrange(1, len(buf))] if rng.random() < 0.5 else buf + bytes(rng.randrange(1, 64))
        elif kind == 2:  # a hostile value in any field, checksum recomputed
            slot = body + 8 * rng.randrange(slots)
            if rng.random() < 0.5:
                buf[slot:slot + 8] = struct.pack("=d", rng.choice([*HOSTILE, rng.uniform(-1e3, 1e3)]))
            else:
                buf[slot:slot + 8] = struct.pack("=q", rng.choice([-1, 2, 3, 7, 64, 128, -2**63, 2**63 - 1]))
            with_checksum(buf)
        elif kind == 3:  # another model: a GUID byte changed, checksum recomputed
            buf[32 + rng.randrange(guid_len)] ^= 0x01
            with_checksum(buf)
        else:  # header: magic, version, GUID length or size, checksum recomputed
            field = rng.choice([(0, 8), (8, 12), (12, 16), (16, 24)])
            buf[field[0]] ^= 1 << rng.randrange(8)
            with_checksum(buf)
        counts["corrupted_states"] += 1
        status, state = target.deserialize(bytes(buf))
        if status == ERROR:
            counts["corrupted_rejected"] += 1
            continue
        expect(kind == 2, f"{target.tag}: corrupted state (kind {kind}) accepted")
        expect(status == OK, f"{target.tag}: deserialize returned {status}")
        # accepted: a field changed to a value in its range; use it
        counts["corrupted_accepted_and_used"] += 1
        status = target.call(target.fmu.setFMUState, state)
        expect(status in (OK, ERROR), f"{target.tag}: setFMUState returned {status}")
        statuses = [target.get([target.theta, target.energy])[0]]
        if target.me:
            statuses.append(target.get_derivatives()[0])
        elif math.isfinite(target.current_time()):
            statuses.append(target.do_step(target.current_time(), 0.05))
        expect(all(s in (OK, WARNING, ERROR) for s in statuses), f"{target.tag}: statuses {statuses}")
        target.reset()
        target.to_run_mode()
        if target.me:
            target.enter_cont()
        expect(target.call(target.fmu.setFMUState, own) == OK, f"{target.tag}: restoring the own state")
    after = target.serialize(target.get_state())
    expect(after == good, f"{target.tag}: the instance changed through rejected states")
    target.free()


# ---------------------------------------------------------------------------------------------- #
# 5. random call sequences
# ---------------------------------------------------------------------------------------------- #

def random_calls(target: Target, n: int, rng: random.Random) -> None:
    expect(target.instantiate(), f"{target.tag}: instantiate")
    reference = target.reference_run()
    target.reset()

    def value():
        return rng.choice(HOSTILE) if rng.random() < 0.7 else rng.uniform(-10.0, 10.0)

    def vrs():
        pool = target.valid_vrs + target.invalid_vrs
        return [rng.choice(pool) for _ in range(rng.randint(0, 3))]

    def get():
        refs = vrs()
        status = target.get(refs, len(refs) + rng.choice([0, 0, 0, 1]) if target.version == 3 else None)[0]
        if set(refs) & set(target.invalid_vrs):
            expect(status == ERROR, f"{target.tag}: get {refs} returned {status}")
        return status

    def set_():
        refs = vrs()
        status = target.set(refs, [value() for _ in refs])
        if set(refs) & set(target.invalid_vrs):
            expect(status == ERROR, f"{target.tag}: set {refs} returned {status}")
        return status

    def state_op():
        if target.states and rng.random() < 0.5:
            state = rng.choice(target.states)
            if rng.random() < 0.5:
                return target.call(target.fmu.setFMUState, state)
            target.states.remove(state)
            return target.call(target.fmu.freeFMUState, state)
        return OK if target.get_state() is not None else ERROR

    menu = [
        lambda: target.setup(value(), value(), rng.choice([None, value()])),
        target.enter_init, target.exit_init, target.terminate, get, get, set_, set_, state_op,
        lambda: target.reset() if rng.random() < 0.2 else OK,
        lambda: target.call(target.fmu.setDebugLogging, rng.random() < 0.5,
                            rng.choice([[], ["logDebug"], ["nonsense"], ["logStatusError", "logStatusWarning"]])),
    ]
    if hasattr(target.fmu, "enterEventMode"):
        menu.append(target.enter_event)
    if target.me:
        menu += [target.enter_cont, lambda: target.set_time(value()),
                 lambda: target.set_states([value(), value()], n=rng.choice([2, 2, 0, 1])),
                 lambda: target.get_derivatives(rng.choice([2, 2, 0, 1]))[0]]
    else:
        menu += [lambda: target.do_step(target.time if rng.random() < 0.7 else value(),
                                        rng.choice([0.01, 0.1, 1e-12, 0.0, -0.1, math.nan, 50.0])),
                 lambda: target.do_step(target.time, 0.05)]
    for i in range(n):
        status = rng.choice(menu)()
        counts["random_calls"] += 1
        counts["random_errors"] += status == ERROR
        expect(status in (OK, WARNING, ERROR), f"{target.tag}: random call {i} returned {status}")
        if i % 200 == 199:  # after Reset: the clean run again, bit for bit
            expect(target.reset() == OK, f"{target.tag}: reset")
            again = target.reference_run()
            expect(again == reference, f"{target.tag}: after random call {i} and Reset: {again} != {reference}")
            target.reset()
    target.free()


def sanitizer_libraries() -> list[str]:
    """The sanitizer runtimes mapped into this process (libasan, libubsan)."""
    with open("/proc/self/maps") as maps:
        text = maps.read()
    return [lib for lib in ("libasan", "libubsan") if lib in text]


def canary(path: str) -> None:
    """A deliberate use after free (an FMU state freed twice): proves that AddressSanitizer watches."""
    target = Target(path, 3, "CS")
    expect(target.instantiate(), "canary: instantiate")
    state = target.get_state()
    copy = type(state)(state.value)
    target.call(target.fmu.freeFMUState, state)
    target.call(target.fmu.freeFMUState, copy)  # reads the freed node: ASan aborts here
    print("canary: no report")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("fmi2")
    parser.add_argument("fmi3")
    parser.add_argument("--instantiations", type=int, default=10_000, help="in total, over the 4 kinds")
    parser.add_argument("--states", type=int, default=600, help="corrupted states in total, over the 4 kinds")
    parser.add_argument("--calls", type=int, default=8_000, help="random calls in total, over the 4 kinds")
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--canary", action="store_true", help="only the deliberate use after free")
    args = parser.parse_args()
    if args.canary:
        canary(args.fmi3)
        return 0
    rng = random.Random(args.seed)
    targets = [Target(path, version, interface) for version, path in ((2, args.fmi2), (3, args.fmi3))
               for interface in ("ME", "CS")]
    for target in targets:
        instantiations(target, args.instantiations // len(targets))
        wrong_orders(target)
        bad_arguments(target)
        corrupted_states(target, args.states // len(targets), rng)
        random_calls(target, args.calls // len(targets), rng)
    for line in failures:
        print("FAIL " + line)
    print(json.dumps({**counts, "failures": len(failures), "seed": args.seed, "sanitizers": sanitizer_libraries()}))
    return min(len(failures), 100)


if __name__ == "__main__":
    sys.exit(main())
