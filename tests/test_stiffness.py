"""Stiffness detected during a native run (:mod:`bridge.simulation.stiffness`): the explicit DOP853 hands a
stiff segment to LSODA (implicit BDF where stiff) and says so.

References: the closed form of the fuzz-found diode circuit (piecewise linear first-order ODEs with sinusoidal
forcing, switched where ``i - G_off V_f`` crosses 0), the closed-form oscillator beside it, and scalar test
equations whose stiffness is known."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

from bridge.cli import main
from bridge.simulation.stiffness import STIFF_METHOD, StiffnessLog, StiffnessSwitch, solve_watched, watching

DIODE_FILE = Path(__file__).parent / "fuzz_found" / "diode_off_conductance_simulate_hang.toml"
# the file's values: source U0 sin(w t) in series with La, Ra and the diode (V_f, R_on, G_off); i(0) = 0.1 A
U0, W, LA, RA, VF, RON, GOFF, I0 = 24.0, 100.0, 0.01, 1.5, 0.7, 0.01, 1e-6, 0.1


def _linear(a: float, b: float, c: float, t0: float, i0: float):
    """The solution of i' + a i = b sin(w t) + c with i(t0) = i0."""
    def particular(t):
        return c / a + b * (a * np.sin(W * t) - W * np.cos(W * t)) / (a * a + W * W)
    return lambda t: (i0 - particular(t0)) * np.exp(-a * np.maximum(t - t0, 0.0)) + particular(t)


def diode_current(times: np.ndarray) -> tuple[np.ndarray, float]:
    """The closed-form current and the extinction time: conducting La i' = U - (Ra + R_on) i - V_f (1 - R_on G_off)
    until i - G_off V_f falls to 0, then blocking La i' = U - (Ra + 1/G_off) i (the source stays below the knee
    voltage to the end of the file's 0.05 s)."""
    on = _linear((RA + RON) / LA, U0 / LA, -VF * (1 - RON * GOFF) / LA, 0.0, I0)
    grid = np.linspace(0.0, 0.05, 5001)
    k = int(np.argmax(on(grid) - GOFF * VF < 0))
    t_off = brentq(lambda t: on(t) - GOFF * VF, grid[k - 1], grid[k], xtol=1e-16, rtol=1e-15)
    off = _linear((RA + 1 / GOFF) / LA, U0 / LA, 0.0, t_off, GOFF * VF)
    return np.where(times <= t_off, on(times), off(times)), t_off


@pytest.fixture(scope="module")
def diode_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("stiff") / "diode.csv"
    import contextlib
    import io

    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["simulate", str(DIODE_FILE), "-o", str(out)])
    data = np.genfromtxt(out, delimiter=",", names=True)
    return code, err.getvalue(), data


def test_the_stiff_diode_file_finishes_against_the_closed_form(diode_run):
    code, err, data = diode_run
    assert code == 0, err
    t = data["time"]
    assert t[-1] == pytest.approx(0.05)
    current, t_off = diode_current(t)
    assert 0.01 < t_off < 0.05  # the diode blocks within the run: the stiff mode is reached
    # conducting: amperes; blocking: the leakage U0 sin(w t) / (Ra + 1/G_off), tens of microamperes
    conducting = t < t_off - 1e-4
    blocking = t > t_off + 1e-6
    assert np.abs(data["derqe"][conducting] - current[conducting]).max() < 1e-9
    assert np.abs(data["derqe"][blocking] - current[blocking]).max() < 1e-12
    assert np.abs(current[blocking]).max() > 1e-6  # a leakage current to compare, not zeros
    # the mechanical coordinates beside it: x an undamped oscillator, phi at rest
    w0 = math.sqrt(10.0 / 1.0)
    assert np.abs(data["x"] - 0.2 / w0 * np.sin(w0 * t)).max() < 1e-9
    assert np.abs(data["phi"]).max() == 0.0


def test_the_switch_is_reported_with_its_reason(diode_run):
    _code, err, _ = diode_run
    note = [line for line in err.splitlines() if line.startswith("nhbridge: note:")]
    assert len(note) == 1, err
    assert STIFF_METHOD in note[0] and "DOP853" in note[0] and "stiff" in note[0]
    rate = float(note[0].split("|lambda| ~ ")[1].split()[0])
    assert rate == pytest.approx((RA + 1 / GOFF) / LA, rel=0.05)  # the blocking mode's decay rate


def test_a_stiff_scalar_equation_switches_and_a_mild_one_does_not():
    """y' = -k (y - cos t): stiff for k = 1e6 (DOP853 would need ~k/6 steps per second), not for k = 1."""
    def exact(k, t):  # y(0) = 0
        c = k / (k * k + 1)
        return k * c * np.cos(t) + c * np.sin(t) - k * c * np.exp(-k * t)

    for k, stiff in ((1e6, True), (1.0, False)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with watching(2.0) as log:
                sol = solve_watched(lambda t, y, k=k: -k * (y - np.cos(t)), (0.0, 2.0), np.zeros(1), "DOP853",
                                    rtol=1e-9, atol=1e-12, t_eval=np.linspace(0, 2, 21))
        assert isinstance(log, StiffnessLog) and bool(log.found) is stiff
        assert [w.category for w in caught] == ([StiffnessSwitch] if stiff else [])
        assert np.abs(sol.y[0] - exact(k, sol.t)).max() < 1e-7
        assert sol.nfev < 20_000  # DOP853 alone: about 12 * 2e6 / 6 evaluations for k = 1e6
        if not stiff:  # unswitched: exactly scipy's DOP853
            plain = solve_ivp(lambda t, y: -(y - np.cos(t)), (0.0, 2.0), np.zeros(1), method="DOP853", rtol=1e-9,
                              atol=1e-12, t_eval=np.linspace(0, 2, 21))
            assert np.array_equal(plain.y, sol.y) and plain.nfev == sol.nfev


def test_another_integrator_is_not_switched():
    with watching(1.0) as log:
        sol = solve_watched(lambda t, y: -1e5 * y, (0.0, 1.0), np.ones(1), "RK45", rtol=1e-6, atol=1e-9)
    assert sol.success and not log.found and log.segments == 1


def test_a_motor_at_steady_state_switches_and_keeps_its_closed_form():
    """examples/cosim/dc_motor.toml: L di/dt = U - ke w - R i, |lambda| = R/L = 100 1/s over 10 s. Once the current
    settles, DOP853's step grows to its stability limit (h ~ 0.06 s): the run switches to LSODA and still follows
    the closed form i = (U - ke w)/R (1 - exp(-R t/L)) to the tolerances (DOP853 alone: 5.3e-8 A at t = 0.8 s)."""
    import bridge

    eom = bridge.derive(bridge.load_system(Path(__file__).parent.parent / "examples" / "cosim" / "dc_motor.toml"),
                        "lagrange")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = bridge.simulate(eom)
    assert [w.category for w in caught if w.category is StiffnessSwitch] == [StiffnessSwitch]
    exact = (12.0 - 0.4 * 5.0) / 1.0 * (1 - np.exp(-100.0 * res.time))
    assert np.abs(res["der(qe)"] - exact).max() < 2e-9
