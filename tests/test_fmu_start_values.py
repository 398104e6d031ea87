"""Consistent start values in the native FMU (FMI 2 and 3, ME and CS).

A changed start value or parameter is made consistent at ExitInitializationMode with the split chosen at
build time (``bridge.fmu.layout.start_split``): the dependent velocities (and, for holonomic constraints,
positions) are computed from the given ones. The reference is independent of the FMU's C code: the loader
makes the same changed system file consistent with ``[method] independent`` (numpy), and the native
simulation (scipy) integrates it.
"""

from __future__ import annotations

import functools
import math
import tomllib
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.fmu.layout import start_split
from bridge.model.loader import build_system

fmpy = pytest.importorskip("fmpy")
from fmpy.fmi1 import FMICallException  # noqa: E402

ROOT = Path(__file__).parent.parent
STOP = 1.0
KINDS = ["ModelExchange", "CoSimulation"]

# A vertical disk rolling without slipping: heading theta, rolling angle phi, contact point (x, y); the start
# velocities of x and y satisfy the constraints at R = 0.3, theta = 0.2, der(phi) = 2.
DISK = f"""
name = "VerticalDisk"
[coordinates]
x = {{ start = 0.0, velocity = {0.6 * math.cos(0.2)!r}, unit = "m" }}
y = {{ start = 0.0, velocity = {0.6 * math.sin(0.2)!r}, unit = "m" }}
theta = {{ start = 0.2, velocity = 0.5, unit = "rad" }}
phi = {{ start = 0.0, velocity = 2.0, unit = "rad" }}
[parameters]
m = {{ value = 1.0, unit = "kg" }}
R = {{ value = 0.3, unit = "m" }}
k = {{ value = 0.4, unit = "N.m.s/rad" }}
[energy]
kinetic = "m/2*(der(x)^2 + der(y)^2) + m*R^2/8*der(theta)^2 + m*R^2/4*der(phi)^2"
dissipation = "k/2*der(phi)^2"
[constraints]
nonholonomic = ["der(x) - R*cos(theta)*der(phi)", "der(y) - R*sin(theta)*der(phi)"]
"""


def _data(source: str) -> dict:
    text = (ROOT / "examples" / f"{source}.toml").read_text() if source != "disk" else DISK
    return tomllib.loads(text)


def consistent(source: str, independent: list[str], coordinates=None, parameters=None):
    """The system with changed start values / parameters, made consistent by the loader (``[method] independent``)."""
    data = _data(source)
    for (name, key), value in (coordinates or {}).items():
        data["coordinates"][name][key] = value
    for name, value in (parameters or {}).items():
        data["parameters"][name]["value"] = value
    data.setdefault("method", {})["independent"] = independent
    return build_system(data, f"<{source} changed>")


@functools.cache
def _derived(source: str, method: str):
    """(eom, independent coordinate names) of the unchanged system."""
    eom = bridge.derive(build_system(_data(source), source), method)
    dep = start_split(eom)
    return eom, [c.name for i, c in enumerate(eom.system.coordinates) if i not in dep]


def fmu(built_fmu, source: str, method: str, version: int):
    """(eom, FMU path, independent names) of the unchanged system; the FMU built once per run (``built_fmu``)."""
    eom, independent = _derived(source, method)
    path = built_fmu.build(DISK if source == "disk" else ROOT / "examples" / f"{source}.toml", method, version)
    return eom, path, independent


def run(path: Path, kind: str, names: list[str], start_values: dict, log: list | None = None):
    kw = dict(fmi_type=kind, stop_time=STOP, output_interval=0.01, output=names, start_values=start_values,
              relative_tolerance=1e-10)
    if log is not None:
        kw["logger"] = lambda *args: log.append(args[-1].decode() if isinstance(args[-1], bytes) else str(args[-1]))
    if kind == "ModelExchange":
        kw["solver"] = "CVode"
    return fmpy.simulate_fmu(str(path), **kw)


def compare(result, system, method: str, signals: list[str]) -> float:
    """Largest deviation of the FMU's signals from the native simulation, relative to each signal's range."""
    ref = bridge.simulate(bridge.derive(system, method), STOP, interval=0.01).columns()
    worst = 0.0
    for name in signals:
        sig = np.interp(ref["time"], result["time"], result[name])
        # a (nearly) constant signal is measured against 1e-3 of its size (at least 1)
        span = max(float(np.ptp(ref[name])), 1e-3 * max(1.0, float(np.abs(ref[name]).max())))
        worst = max(worst, float(np.abs(sig - ref[name]).max()) / span)
    return worst


def velocities(system) -> list[str]:
    return [f"der({c.name})" for c in system.coordinates]


def check_start(result, system, names: list[str]) -> None:
    """The FMU's state at t = 0 equals the loader's consistent start state."""
    start = {c.name: c.start for c in system.coordinates} | {f"der({c.name})": c.velocity for c in system.coordinates}
    for name in names:
        assert result[name][0] == pytest.approx(start[name], rel=1e-12, abs=1e-13), name


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
def test_changed_start_velocity(built_fmu, version, kind):
    """(a) der(phi) of the rolling disk changed: der(x), der(y) follow, the residuals stay ~0 (were 0.6 before)."""
    _eom, path, independent = fmu(built_fmu, "disk", "lagrange", version)
    assert independent == ["theta", "phi"]
    ref = consistent("disk", independent, {("phi", "velocity"): 4.0})
    names = [*[c.name for c in ref.coordinates], *velocities(ref), "residual[1]", "residual[2]"]
    result = run(path, kind, names, {"der(phi)": 4.0})
    check_start(result, ref, names[:-2])
    assert result["der(x)"][0] == pytest.approx(0.3 * 4.0 * np.cos(0.2), rel=1e-14)
    assert np.abs(result["residual[1]"]).max() < 1e-6 and np.abs(result["residual[2]"]).max() < 1e-6
    assert compare(result, ref, "lagrange", names[:-2]) < 1e-6


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
def test_changed_parameter(built_fmu, version, kind):
    """(b) the disk's radius changed: the dependent start velocities follow the new R."""
    _eom, path, independent = fmu(built_fmu, "disk", "lagrange", version)
    ref = consistent("disk", independent, parameters={"R": 0.5})
    names = [*[c.name for c in ref.coordinates], *velocities(ref), "residual[1]", "residual[2]"]
    result = run(path, kind, names, {"R": 0.5})
    check_start(result, ref, names[:-2])
    assert result["der(y)"][0] == pytest.approx(0.5 * 2.0 * np.sin(0.2), rel=1e-14)
    assert np.abs(result["residual[1]"]).max() < 1e-6 and np.abs(result["residual[2]"]).max() < 1e-6
    assert compare(result, ref, "lagrange", names[:-2]) < 1e-6


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("method", ["lagrange", "maggi"])
def test_holonomic_start_position(built_fmu, method, version, kind):
    """(c) the Cartesian pendulum's x changed: Newton puts y back on the circle, der(y) follows (lagrange)."""
    _eom, path, independent = fmu(built_fmu, "cartesian_pendulum", method, version)
    assert independent == ["x"]
    ref = consistent("cartesian_pendulum", independent, {("x", "start"): 0.5})
    names = ["x", "y", "der(x)", "der(y)", "residual[1]"]
    result = run(path, kind, names, {"x": 0.5})
    check_start(result, ref, names[:-1])
    assert result["y"][0] == pytest.approx(-np.sqrt(0.8**2 - 0.5**2), rel=1e-14)  # closed form
    assert np.abs(result["residual[1]"]).max() < 1e-6
    assert compare(result, ref, method, names[:-1]) < 1e-6


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("version", [2, 3])
def test_impossible_start_is_an_error(built_fmu, version, kind):
    """(d) x beyond the rod's length (no solution: Newton fails) and the horizontal rod (singular in der(y))."""
    _eom, path, _ = fmu(built_fmu, "cartesian_pendulum", "lagrange", version)
    log: list[str] = []
    with pytest.raises(FMICallException, match="ExitInitializationMode"):
        run(path, kind, ["x"], {"x": 1.0}, log)
    text = " ".join(log)
    assert "constraints.holonomic[1] (residual 0.852897)" in text  # 1 + y0^2 - l^2 at the given start
    assert "Newton" in text and "positions of x count as given" in text
    log.clear()
    with pytest.raises(FMICallException, match="ExitInitializationMode"):
        run(path, kind, ["x"], {"x": 0.8, "y": 0.0}, log)
    text = " ".join(log)
    # the velocity residual 2 x der(x) + 2 y der(y) at the given velocities
    assert f"constraints.holonomic[1] (residual {2 * 0.8 * 0.21061981485368947:.6g})" in text
    assert "singular" in text and "dependent velocities (y)" in text


# per constrained example a change that reaches the dependent velocities (the split is start_split's)
CHANGES = {
    "car": {"der(phi)": 0.8},
    "cartesian_pendulum": {"der(x)": 0.4},
    "chaplygin_sleigh": {"der(theta)": 1.5},
    "constant_speed_drive": {"der(phi2)": 40.0},
    "hydropulsator": {"der(phi)": 25.0},
    "rolling_sphere": {"der(phi)": 3.0},
    "skate": {"w": 1.5},  # phi = theta - w t: der(theta) = w
}


def loader_changes(system, start_values: dict) -> tuple[dict, dict]:
    """fmpy start values as the loader's coordinate and parameter changes."""
    coordinates, parameters = {}, {}
    names = [c.name for c in system.coordinates]
    for name, value in start_values.items():
        if name.startswith("der("):
            coordinates[name[4:-1], "velocity"] = value
        elif name in names:
            coordinates[name, "start"] = value
        else:
            parameters[name] = value
    return coordinates, parameters


@pytest.mark.parametrize("example", sorted(CHANGES))
def test_every_example(built_fmu, example):
    """Every constrained example (lagrange, FMI 2 CS): a changed start value is made consistent."""
    eom, path, independent = fmu(built_fmu, example, "lagrange", 2)
    system = eom.system
    ref = consistent(example, independent, *loader_changes(system, CHANGES[example]))
    residuals = [f"residual[{k + 1}]" for k in range(system.m)]
    names = [*[c.name for c in ref.coordinates], *velocities(ref), *residuals]
    result = run(path, "CoSimulation", names, CHANGES[example])
    check_start(result, ref, names[:-system.m])
    dependent = [f"der({system.coordinates[i].name})" for i in start_split(eom)]
    assert any(abs(result[n][0] - system.coordinate(n[4:-1]).velocity) > 1e-6 for n in dependent)
    for r in residuals:
        assert abs(result[r][0]) < 1e-10
    assert compare(result, ref, "lagrange", names[:-system.m]) < 1e-6


@pytest.mark.parametrize("version", [2, 3])
def test_reduced_method_is_consistent_by_construction(built_fmu, version):
    """Chaplygin's equations carry the independent speeds only: a changed der(theta) gives consistent der(y)."""
    _eom, path, independent = fmu(built_fmu, "chaplygin_sleigh", "chaplygin", version)
    ref = consistent("chaplygin_sleigh", independent, {("theta", "velocity"): 1.5})
    names = ["x", "y", "theta", *velocities(ref), "residual[1]"]
    result = run(path, "ModelExchange", names, {"der(theta)": 1.5})
    check_start(result, ref, names[:-1])
    assert abs(result["residual[1]"][0]) < 1e-14
    assert compare(result, ref, "chaplygin", names[:-1]) < 1e-6


@pytest.mark.parametrize("kind", KINDS)
def test_rheonomic_constraint_at_the_start_time(built_fmu, kind):
    """The skate's blade angle is prescribed, theta - w t = 0: started at t0 = 0.5 the FMU puts theta at w t0."""
    _eom, path, independent = fmu(built_fmu, "skate", "lagrange", 2)
    assert independent == ["x"]
    result = fmpy.simulate_fmu(str(path), fmi_type=kind, start_time=0.5, stop_time=0.6, output_interval=0.05,
                               start_values={"w": 1.5}, output=["theta", "der(theta)", "residual[1]"])
    assert result["theta"][0] == pytest.approx(1.5 * 0.5, rel=1e-14)
    assert result["der(theta)"][0] == pytest.approx(1.5, rel=1e-14)
    assert abs(result["residual[1]"][0]) < 1e-14
