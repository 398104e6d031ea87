"""The fixed FMI runtime on its own: hand-written pendulum FMUs (FMI 2/3, ME/CS), C unit tests under sanitizers."""

from __future__ import annotations

import subprocess
import sys
from ctypes import c_double
from pathlib import Path

import pytest

pytest.importorskip("fmpy")
ROOT = Path(__file__).parent.parent


# Slow (about 30 s of CPU, marked by tests/durations.json): it compiles the runtime's C unit tests under
# AddressSanitizer/UBSan (each runtime source once, linked into every test program) and runs the hand-written
# pendulum FMUs, FMI 2 and 3, ME and CS, against scipy; no other test covers the runtime without the code generator.
@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """fmu/tests/check_runtime.py run once; its pendulum FMUs (``<out>/fmi2|fmi3/Pendulum.fmu``) are kept."""
    out = tmp_path_factory.mktemp("runtime")
    proc = subprocess.run([sys.executable, str(ROOT / "fmu" / "tests" / "check_runtime.py"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    return proc, out


def test_runtime_harness(harness):
    proc, _out = harness
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "0 failure(s)" in proc.stdout


LEAK_CHILD = r"""
import sys
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

growth = []
for version, path in ((2, sys.argv[1]), (3, sys.argv[2])):
    unzipdir = extract(path)
    md = read_model_description(unzipdir)
    fmu = (FMU2Slave if version == 2 else FMU3Slave)(guid=md.guid, unzipDirectory=unzipdir,
                                                     modelIdentifier=md.coSimulation.modelIdentifier)
    free = fmu.fmi2FreeInstance if version == 2 else fmu.fmi3FreeInstance
    for cycles in (500, 5000):  # warm-up, then the measurement
        before = rss()
        for _ in range(cycles):
            fmu.instantiate()
            fmu.getFMUState()
            fmu.getFMUState()
            free(fmu.component)  # the states were never freed by the importer
        growth.append(rss() - before)
print(growth[1], growth[3])
"""


def test_free_instance_frees_the_states_it_handed_out(harness):
    """5,000 instantiations, each leaving two FMU states to FreeInstance (states left unfreed would add about 7 MB); the
    pendulum FMUs the harness built (fmu/tests/build_test_fmu.sh)."""
    built, out = harness
    assert "ok    build_test_fmu.sh" in built.stdout, built.stdout[-3000:] + built.stderr[-3000:]
    proc = subprocess.run([sys.executable, "-c", LEAK_CHILD, str(out / "fmi2" / "Pendulum.fmu"),
                           str(out / "fmi3" / "Pendulum.fmu")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    growth2, growth3 = map(int, proc.stdout.split())
    # two states of ~700 bytes per cycle would be ~7 MB; allow 1 MB of allocator noise
    assert growth2 < 1_000_000 and growth3 < 1_000_000, (growth2, growth3)



def _model_exchange(version: int, unzipdir: str, md, messages: list[str]):
    """An ME instance of the unzipped FMU in Continuous-Time Mode at t = 0.25, logging into messages."""
    from fmpy import calloc, free
    from fmpy.fmi2 import (
        FMU2Model,
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )
    from fmpy.fmi3 import FMU3Model

    def log(*args):
        messages.append(args[-1].decode())

    model = (FMU2Model if version == 2 else FMU3Model)(guid=md.guid, unzipDirectory=unzipdir,
                                                       modelIdentifier=md.modelExchange.modelIdentifier)
    if version == 2:
        # The FMI 2 message is a printf format; the runtime passes no arguments and doubles '%', so the test's
        # logger reads it as it is. Not through fmpy.logging.addLoggerProxy: that keeps ONE Python logger for the
        # whole process in a C global, which would point at this test's logger after the test has freed it, and
        # crash the next FMI 2 instance in the process that logs (through fmpy's default callbacks).
        model.callbacks_ = callbacks = fmi2CallbackFunctions()
        callbacks.logger = fmi2CallbackLoggerTYPE(log)
        callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
        callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
        model.instantiate(callbacks=callbacks)
        model.setupExperiment(startTime=0.0)
        model.enterInitializationMode()
    else:
        model.instantiate(logMessage=log)
        model.enterInitializationMode(startTime=0.0)
    model.exitInitializationMode()
    model.enterContinuousTimeMode()
    model.setTime(0.25)
    return model


def test_non_finite_states_are_named_in_a_generated_fmu(tmp_path, built_fmu):
    """SetContinuousStates with NaN/infinity: Error, the message names the state (name and value reference) and
    the time, and the instance keeps its states (FMI 2 and 3, Model Exchange, generated SimplePendulum)."""
    from fmpy import extract, read_model_description
    from fmpy.fmi1 import FMICallException

    for version in (2, 3):
        fmu = built_fmu.build(ROOT / "examples" / "simple_pendulum.toml", "lagrange", version)
        unzipdir = extract(str(fmu), unzipdir=str(tmp_path / f"u{version}"))
        md = read_model_description(unzipdir)
        vr = {v.name: v.valueReference for v in md.modelVariables}
        messages: list[str] = []
        model = _model_exchange(version, unzipdir, md, messages)
        for bad, name in (([float("nan"), 0.0], "theta"), ([0.1, float("inf")], "der(theta)")):
            with pytest.raises(FMICallException):
                model.setContinuousStates((c_double * 2)(*bad), 2)
            assert f"({name}, value reference {vr[name]})" in messages[-1], messages[-1]
            assert "t = 0.25" in messages[-1], messages[-1]
        x = (c_double * 2)()
        model.getContinuousStates(x, 2)
        assert list(x) == [0.5, 0.3]  # the start values of simple_pendulum.toml, unchanged
        model.terminate()
        model.freeInstance()
