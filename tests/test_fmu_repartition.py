"""FMUs of the reduced methods re-partition the velocities where their split turns singular (fmu/nhb_split.c).

Every system turns its split singular at least twice within the run: a knife edge on an incline turning through
heading pi/2 (closed form), the skate of examples/ (closed form), a Chaplygin sleigh in the coordinates of its
contact point (against the native lagrange run), a two-wheeled cart turning nearly in place (closed form) and a
Cartesian double pendulum swinging through x_i = 0 (native lagrange). FMI 2 and 3, Model Exchange (fmpy's CVode
with the split's event indicator) and Co-Simulation (the runtime's located crossing); FMU states saved before a
split change and restored after it; a real singularity of the constraints stops the FMU and the native run with
the same message.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.errors import SimulationError

from .repartition_cases import SOURCES, reference, system

fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description  # noqa: E402
from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.fmi2 import FMU2Slave  # noqa: E402
from fmpy.fmi3 import FMU3Slave  # noqa: E402

ROOT = Path(__file__).parent.parent
MODELS = ROOT / "tests" / "models" / "repartition"
KINDS = ["ModelExchange", "CoSimulation"]
RTOL = 1e-10
CASES = [(s, m) for s, (_, _, methods) in SOURCES.items() for m in methods]


def fmu(built_fmu, source: str, method: str, version: int) -> Path:
    """The FMU of ``source`` by ``method``, built once per run (``built_fmu``)."""
    return built_fmu.build(SOURCES[source][0], method, version)


def deviation(result, ref: dict[str, np.ndarray]) -> float:
    """Largest deviation of the FMU's signals from the reference, relative to each signal's range."""
    worst = 0.0
    for name, values in ref.items():
        if name == "time":
            continue
        sig = np.interp(ref["time"], result["time"], result[name])
        span = max(float(np.ptp(values)), 1e-3 * max(1.0, float(np.abs(values).max())))
        worst = max(worst, float(np.abs(sig - values).max()) / span)
    return worst


def simulate(path: Path, kind: str, stop: float, names: list[str], log: list[str]):
    kw = dict(fmi_type=kind, stop_time=stop, output_interval=stop / 400, output=names, relative_tolerance=RTOL,
              debug_logging=True,
              logger=lambda *args: log.append(args[-1].decode() if isinstance(args[-1], bytes) else str(args[-1])))
    if kind == "ModelExchange":
        kw["solver"] = "CVode"
    return fmpy.simulate_fmu(str(path), **kw)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("source,method", CASES)
def test_follows_the_motion_through_split_changes(built_fmu, source, method, version, kind):
    """The FMU goes through at least two split changes and stays within 1e-6 of the range of the reference."""
    path = fmu(built_fmu, source, method, version)
    ref = reference(source)
    log: list[str] = []
    names = [n for n in ref if n != "time"]
    result = simulate(path, kind, SOURCES[source][1], names, log)
    changes = [m for m in log if "is re-partitioned" in m]
    assert len(changes) >= 2, log[-5:]
    assert result["time"][-1] == pytest.approx(SOURCES[source][1])
    assert deviation(result, ref) < 1e-6


def test_every_velocity_keeps_its_name(built_fmu):
    """der(q) of every coordinate is a variable of its own (the dependent ones from the constraints), and the
    states are the coordinates and the independent-speed slots."""
    path = fmu(built_fmu, "knife_edge", "maggi", 2)
    md = read_model_description(str(path))
    names = {v.name for v in md.modelVariables}
    assert {"der(x)", "der(y)", "der(theta)", "split.u[1]", "split.u[2]", "split.health"} <= names
    assert [d.variable.derivative.name for d in md.derivatives] == ["x", "y", "theta", "split.u[1]", "split.u[2]"]
    assert md.numberOfEventIndicators == 1
    log: list[str] = []
    res = simulate(path, "CoSimulation", 4.0, ["der(x)", "der(y)", "theta", "residual[1]"], log)
    values = {p.name: p.value for p in system("knife_edge").parameters}
    g, alpha, w = values["g"], values["alpha"], values["w"]
    t = res["time"]
    span = g * np.sin(alpha) / w
    assert np.abs(res["der(x)"] - g * np.sin(alpha) / (2 * w) * np.sin(2 * w * t)).max() < 1e-6 * span
    assert np.abs(res["der(y)"] - g * np.sin(alpha) / w * np.sin(w * t) ** 2).max() < 1e-6 * span
    assert np.abs(res["residual[1]"]).max() < 1e-9 * span


class Slave:
    """A Co-Simulation instance stepping on a fixed grid."""

    def __init__(self, path: Path, version: int, name: str):
        md = read_model_description(str(path))
        self.dir = extract(str(path))
        self.v3 = version == 3
        cls = FMU3Slave if self.v3 else FMU2Slave
        self.fmu = cls(guid=md.guid, unzipDirectory=self.dir, modelIdentifier=md.coSimulation.modelIdentifier,
                       instanceName=name)
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.log: list[str] = []
        self.fmu.instantiate()
        if self.v3:
            self.fmu.enterInitializationMode(tolerance=RTOL, startTime=0.0)
        else:
            self.fmu.setupExperiment(tolerance=RTOL, startTime=0.0)
            self.fmu.enterInitializationMode()
        self.fmu.exitInitializationMode()
        self.t = 0.0

    def get(self, names) -> list[float]:
        vrs = [self.vr[n] for n in names]
        return list(self.fmu.getFloat64(vrs) if self.v3 else self.fmu.getReal(vrs))

    def run(self, stop: float, h: float, names) -> np.ndarray:
        rows = []
        while self.t < stop - 1e-12:
            self.fmu.doStep(self.t, h)
            self.t += h
            rows.append(self.get(names))
        return np.array(rows)

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.mark.parametrize("version", [2, 3])
def test_state_restored_after_split_changes(built_fmu, version):
    """An FMU state taken before the first split change (t = 1.0; changes at 1.21 and 2.42), restored after two
    changes, and its serialized copy in a new instance, give the same trajectory bit for bit."""
    path = fmu(built_fmu, "knife_edge", "maggi", version)
    names = ["x", "y", "theta", "der(x)", "der(y)", "split.u[1]"]
    a = Slave(path, version, "a")
    try:
        a.run(1.0, 0.05, names)
        state, t_saved = a.fmu.getFMUState(), a.t
        blob = a.fmu.serializeFMUState(state)
        first = a.run(3.0, 0.05, names)
        a.fmu.setFMUState(state)
        a.t = t_saved
        again = a.run(3.0, 0.05, names)
        assert np.array_equal(first, again)
        b = Slave(path, version, "b")
        try:
            b.fmu.setFMUState(b.fmu.deserializeFMUState(blob))
            b.t = t_saved
            assert np.array_equal(b.run(3.0, 0.05, names), first)
        finally:
            b.close()
        ref = reference("knife_edge")
        t = t_saved + 0.05 * np.arange(1, len(first) + 1)
        for k, name in enumerate(names[:3]):
            assert np.abs(first[:, k] - np.interp(t, ref["time"], ref[name])).max() < 1e-6 * np.ptp(ref[name])
    finally:
        a.close()


def _normalized(message: str) -> str:
    """The message without its numbers of time (the FMU and the native run locate the event each their way)."""
    return re.sub(r"t = [-+0-9.e]+", "t = T", message).rstrip(".")


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
def test_real_singularity_stops_with_the_native_message(built_fmu, version, kind):
    """Two constraints that become dependent (z = pi): no split is regular. The native run and the FMU stop
    there with the same message, naming the time and both constraint rows."""
    sysm = bridge.load_system(MODELS / "singular_constraints.toml")
    eom = bridge.derive(sysm, "maggi")
    with pytest.raises(SimulationError) as native:
        bridge.simulate(eom, 4.0)
    text = str(native.value)
    assert "no split of the velocities is regular" in text
    assert "constraints.nonholonomic[1], constraints.nonholonomic[2] are dependent" in text
    t_native = float(re.search(r"at t = ([0-9.e+-]+)", text).group(1))
    z = 1.0 + t_native  # z = 1 + t: the health sigma_min(A_dep) / sigma_max(A) is 1e-3 there, just before z = pi
    A = np.array([[1.0, 0.0, 0.0], [np.cos(z), np.sin(z), 0.0]])
    health = np.linalg.svd(A[:, :2], compute_uv=False)[-1] / np.linalg.norm(A, 2)
    assert z < np.pi and health == pytest.approx(1e-3, rel=1e-5)
    log: list[str] = []
    with pytest.raises(FMICallException):
        simulate(built_fmu.build(MODELS / "singular_constraints.toml", "maggi", version), kind, 4.0, ["x", "z"], log)
    errors = [m for m in log if "no split of the velocities is regular" in m]
    assert errors, log[-5:]
    fmu_message = errors[0][errors[0].rindex("at t = "):]  # after the FMI function's own prefix
    assert _normalized(fmu_message) == _normalized(text[text.index("at t = "):])
    t_fmu = float(re.search(r"at t = ([0-9.e+-]+)", fmu_message).group(1))
    assert t_fmu == pytest.approx(t_native, abs=1e-6)
