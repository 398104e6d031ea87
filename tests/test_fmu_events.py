"""Switched elements in FMUs (issue 16 requirement 3): event indicators and Event Mode in Model Exchange (FMI 2 and 3),
events located inside doStep in Co-Simulation, FMI 3's early return with Event Mode, chattering, the modes in the
FMU state.

References, all independent of the FMU: the belt's closed-form stick-slip limit cycle (tests/test_friction.py), the
rectifier's event-driven scipy integration (tests/test_diodes.py), the relay-friction block's closed-form arrival at
v = 0 (where it chatters), and the momentum of a block on a free cart, which internal friction cannot change."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.errors import SimulationError
from bridge.fmu.build import build_fmu

from .test_diodes import RECTIFIER, rectifier_reference
from .test_friction import BELT, closed_form_switches, closed_form_x

fmpy = pytest.importorskip("fmpy")

ROOT = Path(__file__).parent.parent
RELAY = ROOT / "tests" / "chattering" / "relay_friction.toml"  # apart from tests/models: no tool can run it
RELAY_STOP = 1.0 / (9.81 * (1.0 + 0.3 - 0.5))  # v0 m / (F0 + mu_k m g - F1): where v reaches 0 and it chatters
CART = """
name = "BlockOnCart"
[coordinates]
x1 = { start = 0.4, velocity = 0.0, unit = "m" }
x2 = { start = 0.0, velocity = 0.0, unit = "m" }
[parameters]
m = { value = 1.0, unit = "kg" }
M = { value = 3.0, unit = "kg" }
k = { value = 40.0, unit = "N/m" }
g = { value = 9.81, unit = "m/s2" }
[energy]
kinetic = "m/2*der(x1)^2 + M/2*der(x2)^2"
potential = "k/2*(x1 - x2)^2"
[forces]
x2 = "-slide"
[friction]
slide = { coordinate = "x1", normal = "m*g", mu_static = 0.5, mu_kinetic = 0.3, relative_velocity = "der(x1)-der(x2)" }
[outputs]
momentum = { expr = "m*der(x1) + M*der(x2)", unit = "N.s" }
reaction = { expr = "-slide", unit = "N" }
"""


@pytest.fixture(scope="module")
def fmus(tmp_path_factory, derivations):
    out = {}
    work = tmp_path_factory.mktemp("events")
    for key, source in (("belt", BELT), ("rectifier", RECTIFIER), ("relay", RELAY)):
        eom = derivations.eom(source, "lagrange")  # derived once per run, shared with the sanitizer test below
        for version in (2, 3):
            out[key, version] = build_fmu(eom, work / f"{key}{version}.fmu", version)
    return out


def switches(result, mode: str) -> np.ndarray:
    """The times at which the recorded mode variable changes (fmpy records both sides of an event)."""
    t, m = result["time"], result[mode]
    return np.array([t[i] for i in range(1, len(t)) if m[i] != m[i - 1]])


def unique(result, name: str) -> tuple[np.ndarray, np.ndarray]:
    t, idx = np.unique(result["time"], return_index=True)
    return t, result[name][idx]


@pytest.mark.parametrize("version", [2, 3])
def test_model_description_declares_the_events(fmus, version):
    from fmpy import read_model_description
    from fmpy.validation import validate_fmu

    md = read_model_description(str(fmus["belt", version]))
    assert validate_fmu(str(fmus["belt", version])) == []
    assert md.numberOfEventIndicators == 1
    names = {v.name: v for v in md.modelVariables}
    assert names["belt.mode"].variability == "discrete" and names["belt.indicator"].causality == "local"
    if version == 3:
        assert md.coSimulation.hasEventMode and md.coSimulation.mightReturnEarlyFromDoStep
        assert [u.variable.name for u in md.eventIndicators] == ["belt.indicator"]


@pytest.mark.parametrize("version", [2, 3])
def test_belt_model_exchange_locates_stick_and_slip(fmus, version):
    """fmpy's CVode finds the indicators' roots and the FMU switches in Event Mode: the 7 switches of the limit
    cycle within 1e-6 s of the closed form (measured 9e-8 s), x(t) within 1e-6 m."""
    res = fmpy.simulate_fmu(str(fmus["belt", version]), fmi_type="ModelExchange", stop_time=10.0,
                            output_interval=0.01, output=["x", "belt.mode", "belt"], relative_tolerance=1e-10)
    times = switches(res, "belt.mode")
    assert len(times) == 7
    assert np.abs(times - closed_form_switches(7)).max() < 1e-6
    t, x = unique(res, "x")
    assert np.abs(x - closed_form_x(t)).max() < 1e-6
    # stick: the friction force holds the spring (k x), within the static limit mu_s m g
    stick = unique(res, "belt.mode")[1] == 0
    assert np.abs(unique(res, "belt")[1][stick] - 10.0 * x[stick]).max() < 1e-6
    assert np.abs(unique(res, "belt")[1]).max() <= 0.4 * 9.81 + 1e-9


@pytest.mark.parametrize("version", [2, 3])
def test_belt_co_simulation_locates_the_events_inside_do_step(fmus, version):
    """Events inside the communication steps (0.01 s, none on a switch) are located on the step's dense output: x
    at the communication points within 1e-8 m of the closed form (measured 1.3e-11)."""
    res = fmpy.simulate_fmu(str(fmus["belt", version]), fmi_type="CoSimulation", stop_time=10.0,
                            output_interval=0.01, output=["x"], relative_tolerance=1e-10)
    assert np.abs(res["x"] - closed_form_x(res["time"])).max() < 1e-8


def test_fmi3_co_simulation_returns_early_at_each_event(fmus):
    """With eventModeUsed and earlyReturnAllowed, doStep stops at each event (lastSuccessfulTime) and the importer's
    Event Mode switches: the switching times within 1e-8 s of the closed form (measured 4e-11 s)."""
    res = fmpy.simulate_fmu(str(fmus["belt", 3]), fmi_type="CoSimulation", stop_time=10.0, output_interval=0.01,
                            output=["x", "belt.mode"], relative_tolerance=1e-10, use_event_mode=True,
                            early_return_allowed=True)
    times = switches(res, "belt.mode")
    assert len(times) == 7
    assert np.abs(times - closed_form_switches(7)).max() < 1e-8


def test_fmi2_co_simulation_switch_time_by_bisection_of_the_communication_step(fmus, tmp_path):
    """Black-box: with get/set FMU state, bisect the communication step until the mode is known to change within
    1e-10 s; the event location inside doStep puts it within 1e-8 s of the closed form (first stick -> slip and
    slip -> stick)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave

    unzip = extract(str(fmus["belt", 2]), unzipdir=str(tmp_path / "belt"))
    md = read_model_description(unzip)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzip, modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName="belt")
    fmu.instantiate()
    fmu.setupExperiment(tolerance=1e-10, startTime=0.0, stopTime=10.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()

    def mode() -> float:
        return fmu.getReal([vr["belt.mode"]])[0]

    found, t, h = [], 0.0, 0.1
    while len(found) < 2:
        state, before = fmu.getFMUstate(), mode()
        fmu.doStep(currentCommunicationPoint=t, communicationStepSize=h)
        if mode() == before:
            t += h
            fmu.freeFMUstate(state)
            continue
        lo, hi = t, t + h  # the mode changes in (lo, hi]: bisect by restarting from the state at lo
        while hi - lo > 1e-10:
            mid = 0.5 * (lo + hi)
            fmu.setFMUstate(state)
            fmu.doStep(currentCommunicationPoint=lo, communicationStepSize=mid - lo)
            if mode() == before:
                fmu.freeFMUstate(state)
                state, lo = fmu.getFMUstate(), mid
            else:
                hi = mid
        found.append(hi)
        fmu.setFMUstate(state)
        fmu.doStep(currentCommunicationPoint=lo, communicationStepSize=hi - lo)
        fmu.freeFMUstate(state)
        t = hi
    fmu.terminate()
    fmu.freeInstance()
    assert np.abs(np.array(found) - closed_form_switches(2)).max() < 1e-8


@pytest.mark.parametrize("version", [2, 3])
def test_rectifier_diode_switches_against_the_scipy_reference(fmus, version):
    """The ideal diode with a knee voltage (blocking holds the current at 0: a projection at each extinction): the
    20 switches within 1e-6 s of the event-driven scipy reference in Model Exchange (and FMI 3 Co-Simulation with
    early return), the motor speed within 1e-6 of its range in Co-Simulation."""
    ref, last = rectifier_reference(0.2)
    ref_times = np.array([t for t, _ in ref])
    runs = [("ModelExchange", {})] + ([("CoSimulation", dict(use_event_mode=True, early_return_allowed=True))]
                                      if version == 3 else [])
    for kind, kw in runs:
        res = fmpy.simulate_fmu(str(fmus["rectifier", version]), fmi_type=kind, stop_time=0.2, output_interval=1e-4,
                                output=["d1.mode", "speed"], relative_tolerance=1e-10, **kw)
        times = switches(res, "d1.mode")
        assert len(times) == len(ref_times) >= 15, kind
        assert np.abs(times - ref_times).max() < 1e-6, kind
    res = fmpy.simulate_fmu(str(fmus["rectifier", version]), fmi_type="CoSimulation", stop_time=0.2,
                            output_interval=1e-4, output=["speed"], relative_tolerance=1e-10)
    assert abs(res["speed"][-1] - last.y[1, -1]) < 1e-6 * abs(last.y[1, -1])


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_chattering_is_reported_with_its_time(fmus, version, kind):
    """The relay-friction block slides into a Filippov sliding mode at v = 0: the FMU stops with an error that names
    the element and the time (within 1e-6 s of the closed form), as the native simulation does."""
    from bridge.validation.runs import SimulationFailed, simulate_isolated

    # in a child process (fmpy keeps a logger callback process-wide): the FMU's error message comes back
    with pytest.raises(SimulationFailed) as info:
        simulate_isolated(str(fmus["relay", version]), fmi_type=kind, stop_time=1.0, output_interval=0.001,
                          relative_tolerance=1e-10)
    text = str(info.value)
    found = re.search(r"ground chatters at t = ([0-9.]+)", text)
    assert found and "Zeno" in text and "regularization" in text, text
    assert abs(float(found.group(1)) - RELAY_STOP) < 1e-6


def test_chattering_natively():
    """The native simulation reports the same chattering: 51 switches at one instant, at the closed-form time."""
    system = bridge.load_system(RELAY)
    with pytest.raises(SimulationError, match=r"ground chatters: 51 switches .* at t = 0\.12742"):
        bridge.simulate(bridge.derive(system, "lagrange"), 1.0, interval=0.001)


@pytest.fixture(scope="module")
def cart(tmp_path_factory):
    """The block on the cart: its native run and its FMI 3 FMU (one for both interfaces)."""
    eom = bridge.derive(bridge.parse_system(CART, "cart"), "lagrange")
    return bridge.simulate(eom, 3.0, interval=0.001), build_fmu(eom, tmp_path_factory.mktemp("cart") / "cart.fmu", 3)


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_reaction_of_a_friction_force_keeps_the_momentum(kind, cart):
    """A friction element's name stands for its force elsewhere: the block's friction acts back on the cart
    (``x2 = "-slide"``). Internal forces cannot change the total momentum, through slip-, slip+ and stick: it stays
    constant to 1e-12 natively and in the FMU; the output ``reaction`` is the friction force's opposite."""
    native, fmu = cart
    assert [e.after for e in native.events] == ["slip+", "stick"]
    assert np.ptp(native["momentum"]) < 1e-12
    assert np.abs(native["reaction"] + native["slide"]).max() == 0.0
    res = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=3.0, output_interval=0.001,
                            output=["momentum", "reaction", "slide", "x1"], relative_tolerance=1e-10)
    assert np.ptp(res["momentum"]) < 1e-12
    assert np.abs(res["reaction"] + res["slide"]).max() == 0.0
    assert np.abs(res["x1"][-1] - native["x1"][-1]) < 1e-6


@pytest.mark.parametrize("version", [2, 3])
def test_fmu_state_carries_the_modes(fmus, version, tmp_path):
    """Get the state while sticking, run through the switch to slip, set the state back: the mode is stick again
    and the rerun repeats the trajectory bit for bit; a serialized state whose mode is out of range is rejected."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    unzip = extract(str(fmus["belt", version]), unzipdir=str(tmp_path / "belt"))
    md = read_model_description(unzip)
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmu = (FMU2Slave if version == 2 else FMU3Slave)(guid=md.guid, unzipDirectory=unzip,
                                                      modelIdentifier=md.coSimulation.modelIdentifier,
                                                      instanceName="belt")
    fmu.instantiate()
    if version == 2:
        fmu.setupExperiment(tolerance=1e-10, startTime=0.0, stopTime=10.0)
        fmu.enterInitializationMode()
    else:
        fmu.enterInitializationMode(tolerance=1e-10, startTime=0.0, stopTime=10.0)
    fmu.exitInitializationMode()
    get = fmu.getReal if version == 2 else fmu.getFloat64
    name = (lambda n: n.replace("FMUState", "FMUstate").replace("deserialize", "deSerialize")) if version == 2 \
        else (lambda n: n)
    refs = [vr["x"], vr["der(x)"], vr["belt.mode"], vr["belt"]]

    def run(t0: float, n: int) -> list:
        out = []
        for k in range(n):
            fmu.doStep(currentCommunicationPoint=t0 + 0.05 * k, communicationStepSize=0.05)
            out.append(get(refs))
        return out

    run(0.0, 30)  # to t = 1.5: sticking
    assert get([vr["belt.mode"]]) == [0.0]
    state = getattr(fmu, name("getFMUState"))()
    first = run(1.5, 20)  # through the switch at 1.962 s
    assert get([vr["belt.mode"]]) == [-1.0]
    getattr(fmu, name("setFMUState"))(state)
    assert get([vr["belt.mode"]]) == [0.0]
    assert run(1.5, 20) == first
    blob = bytearray(getattr(fmu, name("serializeFMUState"))(state))
    # the layout's tail: the modes (int64), the switch count (int64), the times of the last 50 switches (double)
    offset = len(blob) - 8 * (50 + 1 + 1)
    assert int.from_bytes(blob[offset:offset + 8], "little", signed=True) == 0
    blob[offset:offset + 8] = (5).to_bytes(8, "little", signed=True)
    blob[24:32] = _fnv1a(bytes(blob[:24]) + bytes(blob[32:])).to_bytes(8, "little")  # a valid checksum
    with pytest.raises(Exception, match="status 3"):
        getattr(fmu, name("deserializeFMUState"))(bytes(blob))
    fmu.terminate()
    fmu.freeInstance()


def _fnv1a(data: bytes) -> int:
    h = 14695981039346656037
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


SANITIZED_DRIVER = r"""
import json, sys
import fmpy
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave

runs = 0
for path, stop, dt, mode in json.loads(sys.argv[1]):
    for kind in ("ModelExchange", "CoSimulation"):
        fmpy.simulate_fmu(path, fmi_type=kind, stop_time=stop, output_interval=dt, relative_tolerance=1e-10)
        runs += 1
    if path.endswith("3.fmu"):
        fmpy.simulate_fmu(path, fmi_type="CoSimulation", stop_time=stop, output_interval=dt, use_event_mode=True,
                          early_return_allowed=True, relative_tolerance=1e-10)
        runs += 1
    else:  # FMU states across a switch, serialized and restored
        unzip = extract(path)
        md = read_model_description(unzip)
        fmu = FMU2Slave(guid=md.guid, unzipDirectory=unzip, modelIdentifier=md.coSimulation.modelIdentifier,
                        instanceName="s")
        fmu.instantiate()
        fmu.setupExperiment(startTime=0.0)
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        for k in range(20):
            state = fmu.getFMUstate()
            blob = fmu.serializeFMUstate(state)
            fmu.doStep(currentCommunicationPoint=k * stop / 20, communicationStepSize=stop / 20)
            restored = fmu.deSerializeFMUstate(blob)
            fmu.setFMUstate(restored)
            fmu.doStep(currentCommunicationPoint=k * stop / 20, communicationStepSize=stop / 20)
            fmu.freeFMUstate(state)
            fmu.freeFMUstate(restored)
        fmu.terminate()
        fmu.freeInstance()
        runs += 1
print(json.dumps({"runs": runs}))
"""


# Slow (about 23 s of CPU, marked by tests/durations.json): three event FMUs, FMI 2 and 3, compiled with
# -fsanitize=address,undefined (no shared objects: other flags) and run under ASan; the instrumentation is the point.
def test_event_fmus_under_the_sanitizers(tmp_path, monkeypatch, derivations):
    """The event code of the runtime (indicators, location on the dense output, Event Mode, early return, the
    modes in the FMU state) built with -fsanitize=address,undefined and driven by fmpy: no report."""
    import json
    import os
    import subprocess
    import sys
    import zipfile

    from .test_fmu_sanitizers import SANITIZE, _libasan

    libasan = _libasan()
    monkeypatch.setenv("CC", f"gcc {SANITIZE}")
    runs = []
    for key, source, stop, dt in (("belt", BELT, 10.0, 0.01), ("rectifier", RECTIFIER, 0.1, 1e-4)):
        eom = derivations.eom(source, "lagrange")
        for version in (2, 3):
            runs.append([str(build_fmu(eom, tmp_path / f"{key}{version}.fmu", version)), stop, dt, key])
    env = {**os.environ, "LD_PRELOAD": libasan, "ASAN_OPTIONS": "detect_leaks=0",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
    proc = subprocess.run([sys.executable, "-c", SANITIZED_DRIVER, json.dumps(runs)], capture_output=True, text=True,
                          env=env, timeout=900, cwd=tmp_path)
    detail = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, detail
    assert "AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, detail
    assert json.loads(proc.stdout.strip().splitlines()[-1])["runs"] == 12  # 4 FMUs: ME, CS, early return/states
    with zipfile.ZipFile(runs[0][0]) as z:  # the binary is instrumented
        binary = next(n for n in z.namelist() if n.endswith(".so"))
        assert b"__asan_report" in z.read(binary) and b"__ubsan_handle" in z.read(binary)


@pytest.mark.parametrize("scenario, monolithic, pairs, steps, bound", [
    ("rectifier_motor", "rectifier_motor", [("rotor.speed", "speed"), ("rotor.phi", "phi")], (2e-4, 1e-4), 1e-3),
    ("belt_drive", "belt_drive", [("mechanics.x", "x"), ("mechanics.w", "der(theta)")], (5e-4, 2.5e-4), 1.2e-2),
])
def test_cosim_with_switched_components_converges_to_the_monolithic_model(scenario, monolithic, pairs, steps, bound,
                                                                          tmp_path):
    """Co-simulation of FMUs whose switches (a diode; friction with its reaction on the drum) are located inside
    the communication steps, against the monolithic system natively: first order in the communication step (the
    inputs are held), within ``bound`` of each signal's range at the smaller step (measured: rectifier 8.4e-4 of
    the speed, belt 5.1e-3 of the drum speed); the switches of the belt's friction force within 3 steps."""
    from bridge.cosim import prepare

    stop = 0.2 if scenario == "rectifier_motor" else 5.0
    every = 1e-3 if scenario == "rectifier_motor" else 0.01
    native = bridge.simulate(bridge.derive(bridge.load_system(ROOT / "examples" / "nonsmooth" / f"{monolithic}.toml"),
                                           "lagrange"), stop, interval=every, rtol=1e-11, atol=1e-12)
    errs = []
    with prepare(ROOT / "examples" / "cosim" / f"{scenario}.toml", tmp_path / "build") as cs:
        for h in steps:
            res = cs.run(step=h, stop_time=stop)
            k = round(every / h)
            errs.append({s: float(np.abs(res[s][::k] - native[c]).max() / np.ptp(native[c])) for s, c in pairs})
            if scenario == "belt_drive":
                force = res["mechanics.force"]
                jumps = res.time[1:][np.abs(np.diff(force)) > 0.5]
                late = jumps[jumps > 0.01]  # the motor's start-up (current from 0) makes a first short slip
                ref = [e.time for e in native.events if e.time > 0.01]
                assert len(late) == len(ref) and np.abs(late - ref).max() < 3 * h, (late, ref)
    for s, _ in pairs:
        assert errs[-1][s] < bound, (s, errs)
        assert errs[0][s] / errs[-1][s] == pytest.approx(2.0, rel=0.2), (s, errs)  # zero-order hold: first order
