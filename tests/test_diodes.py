"""Diodes switched by events (issue 16 requirement 3, natively).

References: the closed-form current of a half-wave rectifier with an RL load (conduction from the knee
voltage, extinction where the closed-form current returns to zero), and for the rectifier feeding a DC motor
an event-driven integration written here with scipy (its own conducting/blocking equations)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

import bridge
from bridge.cli import main

ROOT = Path(__file__).parent.parent
RECTIFIER = ROOT / "examples" / "nonsmooth" / "rectifier_motor.toml"

RL = """
name = "HalfWaveRL"
[coordinates]
qe = { start = 0.0, velocity = 0.0, unit = "C" }
[parameters]
U0 = 10.0
w = 100.0
L = 0.05
R = 4.0
[diodes]
d = { flow = "der(qe)", forward_voltage = 0.6 }
[energy]
kinetic = "L/2*der(qe)^2"
dissipation = "R/2*der(qe)^2"
[forces]
qe = "U0*sin(w*t)"
"""
U0, W, L, R, VF = 10.0, 100.0, 0.05, 4.0, 0.6


def rl_switches(periods: int) -> list[float]:
    """On at U0 sin(w t) = V_f (rising), off where i(t) = (U0/Z) sin(w t - th) - V_f/R + C exp(-(t - t_on)/tau)
    returns to 0 (i(t_on) = 0); the blocking voltage U0 sin(w t) reaches V_f again one period later."""
    Z, th, tau = math.hypot(R, W * L), math.atan2(W * L, R), L / R
    t_on = math.asin(VF / U0) / W
    C = -(U0 / Z) * math.sin(W * t_on - th) + VF / R

    def i(t):
        return (U0 / Z) * math.sin(W * t - th) - VF / R + C * math.exp(-(t - t_on) / tau)
    t_off = brentq(i, t_on + 0.5 * math.pi / W, t_on + 2 * math.pi / W - 1e-9, xtol=1e-15, rtol=1e-15)
    period = 2 * math.pi / W
    return [t + k * period for k in range(periods) for t in (t_on, t_off)]


@pytest.mark.parametrize("method", ["lagrange", "nielsen"])
def test_half_wave_rl_against_closed_form(method, derivations):
    res = bridge.simulate(derivations.eom(RL, method), 0.3, interval=1e-4, rtol=1e-12,
                          atol=1e-14)
    times = np.array([e.time for e in res.events])
    ref = rl_switches(5)[: len(times)]
    assert len(times) == 10  # 4.8 periods of 62.8 ms: 5 turn-ons, 5 extinctions
    assert [e.after for e in res.events[:2]] == ["conducting", "blocking"]
    assert np.abs(times - ref).max() < 1e-8
    # blocking: no current, the diode holds the source voltage; conducting: the knee voltage
    off = res["der(qe)"] == 0
    assert np.abs(res["d"][off] - U0 * np.sin(W * res.time[off])).max() < 1e-9
    assert np.abs(res["d"][~off] - VF).max() < 1e-9


P = dict(U0=24.0, w=314.159, La=0.01, Ra=1.5, kt=0.1, ke=0.1, J=0.001, b=0.0005, Vf=0.7)


def rectifier_reference(T: float):
    """Event-driven reference: state (i, omega); conducting La i' = U - Ra i - ke w - Vf, blocking i = 0."""
    p = P

    def rhs(on):
        def f(t, y):
            i, om = y
            di = (p["U0"] * math.sin(p["w"] * t) - p["Ra"] * i - p["ke"] * om - p["Vf"]) / p["La"] if on else 0.0
            return [di, (p["kt"] * i - p["b"] * om) / p["J"]]
        return f

    def falls(_t, y):
        return y[0]

    def rises(t, y):
        return p["U0"] * math.sin(p["w"] * t) - p["ke"] * y[1] - p["Vf"]

    falls.terminal, falls.direction, rises.terminal, rises.direction = True, -1, True, 1
    y, t, on, switches = np.array([0.0, 0.0]), 0.0, False, []
    while True:
        sol = solve_ivp(rhs(on), (t, T), y, method="DOP853", rtol=1e-12, atol=1e-13, max_step=1e-4,
                        events=falls if on else rises, dense_output=True)
        if sol.status != 1:
            return switches, sol
        t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
        on = not on
        if not on:
            y[0] = 0.0
        switches.append((t, on))


def test_rectifier_motor_against_event_driven_scipy_reference(derivations):
    res = bridge.simulate(derivations.eom(RECTIFIER, "lagrange"), 0.2, interval=1e-4,
                          rtol=1e-12, atol=1e-13)
    switches, last = rectifier_reference(0.2)
    assert len(switches) >= 15 and len(res.events) == len(switches)
    assert [e.after == "conducting" for e in res.events] == [on for _, on in switches]
    assert np.abs(np.array([e.time for e in res.events]) - np.array([t for t, _ in switches])).max() < 1e-8
    assert abs(res["speed"][-1] - last.y[1, -1]) < 1e-7 * abs(last.y[1, -1])
    # the motor's efforts follow their constraints at every sample
    assert np.abs(res["tau"] - P["kt"] * res["current"]).max() < 1e-12
    assert np.abs(res["eb"] - P["ke"] * res["speed"]).max() < 1e-12


def test_diode_on_a_non_flow_is_bad_input():
    from bridge.errors import SystemFileError

    with pytest.raises(SystemFileError, match="is not a flow"):
        bridge.parse_system(RL.replace('flow = "der(qe)"', 'flow = "qe"'))


def test_input_table_drives_a_switched_system():
    """The source as an input following a table (U0 sin(w t) sampled every 0.1 ms, interpolated linearly): the
    switching times stay within the interpolation's reach (~1e-7 s) of the closed form."""
    from bridge.simulation.inputs import InputTable

    system = bridge.parse_system(RL.replace('qe = "U0*sin(w*t)"', 'qe = "Us"').replace(
        "[diodes]", "[inputs]\nUs = { start = 0.0 }\n[diodes]"))
    time = np.arange(0.0, 0.1300001, 1e-4)
    table = InputTable(("Us",), time, (U0 * np.sin(W * time))[:, None])
    res = bridge.simulate(bridge.derive(system, "lagrange"), 0.13, interval=1e-4, rtol=1e-12, atol=1e-14,
                          inputs=table)
    times = np.array([e.time for e in res.events])
    assert len(times) == 5 and np.abs(times - rl_switches(3)[:5]).max() < 1e-6


def test_diode_in_modelica_as_the_msl_ideal_diode(derivations):
    """A diode with on-resistance and off-conductance (the MSL's defaults) is written as the MSL's IdealDiode (a
    curve parameter and a Boolean blocking state): Rumoca's event handling reproduces the native event-driven run
    (Radau: the blocking branch is stiff) within 1e-6 of the range (the ideal diode, off_conductance 0:
    tests/test_switched_modelica.py)."""
    pytest.importorskip("rumoca")
    from bridge.backends.rumoca import simulate_rumoca
    from bridge.modelica.export import model_source

    text = RL.replace("forward_voltage = 0.6 }",
                      "forward_voltage = 0.6, on_resistance = 1e-5, off_conductance = 1e-5 }")
    eom = derivations.eom(text, "lagrange")
    source = model_source(eom)
    assert "nhb_d_off = nhb_d_s < 0;" in source and "Boolean nhb_d_off" in source
    native = bridge.simulate(eom, 0.3, interval=1e-4, rtol=1e-10, atol=1e-12, integrator="Radau")
    assert len(native.events) == 10
    run = simulate_rumoca(eom, "index1", 0.3, 1e-4, 1e-10).result
    for ours, theirs in (("qe", "qe"), ("der(qe)", "der_qe")):
        sig = np.interp(native.time, np.asarray(run.time), np.asarray(run[theirs]))
        assert np.abs(sig - native[ours]).max() < 1e-6 * np.ptp(native[ours]), ours


def test_duplicate_diode_exits_2_without_a_linalg_warning(capsys):
    """Two identical diodes on one current made the blocking rows dependent: simulate exited 1 with scipy's
    LinAlgWarning on stderr. It is bad input now (exit 2) naming the duplicate, before anything is solved; a diode
    on a rotation (unit rad) is refused too, and one on a charge in A.s is accepted."""
    bad = Path(__file__).parent / "bad_inputs"
    assert main(["simulate", str(bad / "diode_duplicate.toml"), "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert "diodes.d2.flow" in err and "duplicates the diode d1" in err
    assert "LinAlgWarning" not in err and "Warning" not in err and "Traceback" not in err
    assert main(["simulate", str(bad / "diode_on_rotation.toml"), "-o", "-"]) == 2
    assert "must be a current" in capsys.readouterr().err
    system = bridge.parse_system(RL.replace('unit = "C"', 'unit = "A.s"'))
    assert [d.coordinate for d in system.diodes] == ["qe"]
