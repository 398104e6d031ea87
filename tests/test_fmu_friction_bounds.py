"""The bounds of the friction law in FMUs (FMI 2 and 3, Model Exchange and Co-Simulation): a normal force that
turns negative during the run ends it with an Error naming the element, the time and the value (the crossing
located like a switch: by the importer's root finder in Model Exchange, on the dense output inside doStep in
Co-Simulation); friction without force builds without switched elements; a stick limit that is 0 for a moment
switches as natively.

References: the closed-form zero of N = m g cos(t), the scipy lift-off time of the pushed block and the
event-driven scipy reference of the belt through a zero of N, all in tests/test_friction_bounds.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bridge
from bridge.fmu.build import build_fmu

from .test_friction_bounds import PUSH, belt, free_oscillator, push_lift_off_time, stopped_at, touch_reference

fmpy = pytest.importorskip("fmpy")

SOURCES = {
    "cos": belt('"m*g*cos(t)"'),  # N turns negative at pi/2
    "push": PUSH,  # N = m g (1 - x/L) reaches 0 where the block reaches x = L
    "input": belt('"Nin"', extra='[inputs]\nNin = { start = 9.81, unit = "N" }'),
    "touch": belt('"m*g*(1 + cos(t))"'),  # N is 0 at t = pi only
    "free": belt('"m*g"', "mu_static = 0, mu_kinetic = 0"),
}


@pytest.fixture(scope="module")
def fmus(tmp_path_factory):
    work = tmp_path_factory.mktemp("friction_bounds")
    out = {}
    for key, text in SOURCES.items():
        eom = bridge.derive(bridge.parse_system(text, key), "lagrange")
        for version in (2, 3):
            if key == "cos" or version == 3:  # FMI 2 and 3 for one case, FMI 3 for the others
                out[key, version] = build_fmu(eom, work / f"{key}{version}.fmu", version)
    return out


def failed_run(fmu, kind: str, stop: float, rtol: float = 1e-10, **kw) -> str:
    """The FMU's error message of a run that must fail (in a child process: fmpy's logger is process-wide)."""
    from bridge.validation.runs import SimulationFailed, simulate_isolated

    with pytest.raises(SimulationFailed) as info:
        simulate_isolated(str(fmu), fmi_type=kind, stop_time=stop, output_interval=0.01, relative_tolerance=rtol,
                          **kw)
    return str(info.value)


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_normal_force_turning_negative_in_time_ends_the_run(fmus, version, kind):
    """N = m g cos(t): an Error (fmi2Error / fmi3Error) at pi/2 (within 1e-8 s), with the stick limit's value
    there."""
    text = failed_run(fmus["cos", version], kind, 3.0)
    assert f"fmi{version}" in text and "status 3 (error)" in text, text
    t, value = stopped_at(text, "belt")
    assert abs(t - math.pi / 2) < 1e-8 and -1e-6 < value < 0, text


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_normal_force_turning_negative_with_a_coordinate_ends_the_run(fmus, kind):
    """The pushed block's normal force reaches 0 at x = L: the Error's time within 1e-6 s of the scipy
    reference's lift-off."""
    text = failed_run(fmus["push", 3], kind, 5.0)
    t, _ = stopped_at(text, "ground")
    assert abs(t - push_lift_off_time()) < 1e-6, text


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_normal_force_turning_negative_with_an_input_ends_the_run(fmus, kind):
    """N an input that falls from m g to -m g over 2 s (fmpy's input, linear between the points; in Co-Simulation
    held over each communication step): an Error once it is negative, within one output interval of t = 1, with
    a negative value. (rtol 1e-8: at 1e-10 fmpy's CVode stops at t = 0.68 with 'mxstep steps taken' on this input,
    with or without the check.)"""
    signal = np.array([(0.0, 9.81), (2.0, -9.81)], dtype=[("time", np.float64), ("Nin", np.float64)])
    text = failed_run(fmus["input", 3], kind, 3.0, rtol=1e-8, input=signal)
    t, value = stopped_at(text, "belt")
    assert 1.0 - 1e-9 <= t <= 1.0 + 0.0100001 and value <= 0, text


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_negative_normal_force_set_before_initialization_is_an_error(fmus, kind):
    """A start value of the input that makes N negative: the FMU refuses to leave Initialization Mode, naming the
    element, t = 0 and the value (mu_static N = 0.4 * -5)."""
    text = failed_run(fmus["input", 3], kind, 1.0, start_values={"Nin": -5.0})
    assert "ExitInitializationMode" in text, text
    assert stopped_at(text, "belt") == (0.0, -2.0)


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_friction_without_force_builds_without_switched_elements(fmus, kind):
    """mu_static = mu_kinetic = 0: no event indicator, and the block oscillates freely (closed form)."""
    from fmpy import read_model_description

    fmu = fmus["free", 3]
    assert read_model_description(str(fmu)).numberOfEventIndicators == 0
    res = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=3.0, output_interval=0.01, output=["x"],
                            relative_tolerance=1e-10)
    assert np.abs(res["x"] - free_oscillator(res["time"])).max() < 1e-7


@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_stick_and_slip_through_a_momentary_zero_normal_force(fmus, kind):
    """N = m g (1 + cos t), 0 at t = pi only: the run goes through, and the mode changes agree with the scipy
    reference (times within 1e-6 s; Co-Simulation with FMI 3's early return, so that they are recorded)."""
    res = fmpy.simulate_fmu(str(fmus["touch", 3]), fmi_type=kind, stop_time=5.0, output_interval=0.01,
                            output=["belt.mode"], relative_tolerance=1e-10,
                            **({"use_event_mode": True, "early_return_allowed": True} if kind == "CoSimulation"
                               else {}))
    t, mode = res["time"], res["belt.mode"]
    changes = [(t[i], int(mode[i])) for i in range(1, len(t)) if mode[i] != mode[i - 1]]
    ref = touch_reference(5.0)
    assert [m for _, m in changes] == [m for _, m in ref]
    assert np.abs(np.array([c for c, _ in changes]) - [r for r, _ in ref]).max() < 1e-6


# -- regularised friction: a smooth force, its normal force checked in every evaluation ----------------------------

@pytest.fixture(scope="module")
def regularized_fmus(tmp_path_factory):
    from .test_friction_bounds import REGULARIZED

    work = tmp_path_factory.mktemp("regularized_bounds")
    eom = bridge.derive(bridge.parse_system(belt('"m*g*cos(t)"', mu=REGULARIZED), "reg"), "lagrange")
    return {version: build_fmu(eom, work / f"reg{version}.fmu", version) for version in (2, 3)}


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_regularized_normal_force_turning_negative_ends_the_run(regularized_fmus, version, kind):
    """A regularised belt (no event indicators) with N = m g cos(t): an Error once N < 0, naming the element; the
    time is the first evaluation past pi/2 (within one output interval; Co-Simulation's integrator narrows its
    step onto the crossing) and the value small and negative (the time printed to 12 digits)."""
    text = failed_run(regularized_fmus[version], kind, 3.0)
    assert f"fmi{version}" in text and "status 3 (error)" in text, text
    t, value = stopped_at(text, "belt")
    assert math.pi / 2 - 1e-11 <= t < math.pi / 2 + 0.01 and -9.81 * 0.01 < value < 0, text
