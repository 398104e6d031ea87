"""The bounds of the friction law, natively: a normal force that is negative (refused at load) or turns negative
during a run (the run stops naming the element, the time and the value), friction that can exert no force (it
runs as a zero force), a stick limit that is 0 only for a moment (no chattering), and stick/slip through such a
moment against an event-driven scipy reference written here.

The FMU side of the same cases: tests/test_fmu_friction_bounds.py."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import bridge
from bridge.cli import main
from bridge.errors import SimulationError, SystemFileError
from bridge.simulation.inputs import InputTable

ROOT = Path(__file__).parent.parent
BELT = ROOT / "examples" / "nonsmooth" / "belt_friction.toml"
M, K, G, VB, MUS, MUK = 1.0, 10.0, 9.81, 0.2, 0.4, 0.3


def belt(normal: str = '"m*g"', mu: str = "mu_static = 0.4, mu_kinetic = 0.3", extra: str = "") -> str:
    """The stick-slip oscillator of examples/nonsmooth/belt_friction.toml with another normal force or coefficients
    (``extra``: more parameter lines, e.g. an input table)."""
    text = BELT.read_text(encoding="utf-8")
    text = text.replace('normal = "m*g"', f"normal = {normal}").replace("mu_static = 0.4, mu_kinetic = 0.3", mu)
    return text.replace("[energy]", f"{extra}\n[energy]")


# A block pushed by F0 over a floor whose normal force falls along x (a ramp that lifts the block off at x = L):
# it slips forward from the start, and N = m g (1 - x/L) reaches 0 where x = L.
PUSH = """
name = "PushedBlock"
[coordinates]
x = { start = 0.0, velocity = 0.1, unit = "m" }
[parameters]
m = { value = 1.0, unit = "kg" }
g = { value = 9.81, unit = "m/s2" }
F0 = { value = 5.0, unit = "N" }
L = { value = 0.5, unit = "m" }
[energy]
kinetic = "m/2*der(x)^2"
[forces]
x = "F0"
[friction]
ground = { coordinate = "x", normal = "m*g*(1 - x/L)", mu_static = 0.4, mu_kinetic = 0.3 }
"""


def push_lift_off_time() -> float:
    """Where x = L, integrated by scipy from x'' = (F0 - mu_k m g (1 - x/L))/m (slip forward all along)."""
    def f(_t, y):
        return [y[1], 5.0 - 0.3 * 9.81 * (1 - y[0] / 0.5)]

    def lift(_t, y):
        return y[0] - 0.5
    lift.terminal = True
    sol = solve_ivp(f, (0.0, 10.0), [0.0, 0.1], method="DOP853", rtol=1e-12, atol=1e-14, events=lift)
    return float(sol.t_events[0][0])


def stopped_at(exc: BaseException, element: str) -> tuple[float, float]:
    """(time, value) of the stop message of a normal force that turned negative."""
    found = re.search(rf"normal force of the friction element {element} turns negative at t = ([-+0-9.e]+) "
                      r"\((?:N|its stick limit mu_static\*N) = ([-+0-9.e]+)", str(exc))
    assert found, str(exc)
    return float(found.group(1)), float(found.group(2))


# -- a negative normal force ----------------------------------------------------------------------------------------

def test_negative_normal_force_refused_at_load(capsys, tmp_path):
    """``normal = "-m*g"`` fed energy in (0.02 J -> 175.8 J in 10 s): refused at load, exit 2, naming the entry and
    the value (tests/bad_inputs/friction_negative_normal.toml is the same file in the bad-input suite)."""
    path = tmp_path / "negative.toml"
    path.write_text(belt('"-m*g"'), encoding="utf-8")
    assert main(["simulate", str(path), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "friction.belt.normal" in err and "negative" in err and "-9.81" in err and "Traceback" not in err
    assert not (tmp_path / "out.csv").exists()


def test_normal_force_negative_through_an_override_stops_at_the_start():
    """A parameter override that makes N negative at the start stops the run at t = 0 with its value."""
    system = bridge.parse_system(belt('"N0"', extra="N0 = 9.81"), "belt")
    eom = bridge.derive(system, "lagrange")
    with pytest.raises(SimulationError) as info:
        bridge.simulate(eom, 1.0, parameters={"N0": -2.5})
    assert stopped_at(info.value, "belt") == (0.0, -2.5)


def test_normal_force_turning_negative_in_time_stops_the_run():
    """N = m g cos(t) turns negative at pi/2 (while the block sticks on the belt): the run stops there."""
    eom = bridge.derive(bridge.parse_system(belt('"m*g*cos(t)"'), "belt"), "lagrange")
    with pytest.raises(SimulationError, match="Coulomb friction needs a normal force N >= 0") as info:
        bridge.simulate(eom, 3.0, interval=0.01)
    t, value = stopped_at(info.value, "belt")
    assert abs(t - math.pi / 2) < 1e-9 and abs(value) < 1e-9


@pytest.mark.parametrize("method", ["lagrange", "nielsen"])
def test_normal_force_turning_negative_with_a_coordinate_stops_the_run(method):
    """N = m g (1 - x/L) of the pushed block reaches 0 at x = L: the run stops at the scipy reference's time."""
    eom = bridge.derive(bridge.parse_system(PUSH, "push"), method)
    with pytest.raises(SimulationError) as info:
        bridge.simulate(eom, 5.0, interval=0.01, rtol=1e-12, atol=1e-13)
    t, _ = stopped_at(info.value, "ground")
    assert abs(t - push_lift_off_time()) < 1e-8


def test_normal_force_turning_negative_with_an_input_stops_the_run():
    """N an input that falls linearly from m g to -m g over 2 s: the run stops at t = 1, where it crosses 0."""
    system = bridge.parse_system(belt('"Nin"', extra='[inputs]\nNin = { start = 9.81, unit = "N" }'), "belt")
    table = InputTable(("Nin",), np.array([0.0, 2.0]), np.array([[9.81], [-9.81]]))
    with pytest.raises(SimulationError) as info:
        bridge.simulate(bridge.derive(system, "lagrange"), 3.0, interval=0.01, inputs=table)
    t, _ = stopped_at(info.value, "belt")
    assert abs(t - 1.0) < 1e-9


def test_cli_reports_the_stop_with_exit_1(tmp_path, capsys):
    """On the command line a run stopped by a negative normal force is a failed run (exit 1) with the message."""
    path = tmp_path / "cos.toml"
    path.write_text(belt('"m*g*cos(t)"'), encoding="utf-8")
    assert main(["simulate", str(path), "--stop-time", "3", "-o", str(tmp_path / "out.csv")]) == 1
    err = capsys.readouterr().err
    assert "belt turns negative at t = 1.5707963" in err and "Traceback" not in err


# -- friction without force -----------------------------------------------------------------------------------------

def free_oscillator(t: np.ndarray) -> np.ndarray:
    """x(t) of the block without friction: x(0) = 0, x'(0) = v_belt."""
    w = math.sqrt(K / M)
    return VB / w * np.sin(w * t)


@pytest.mark.parametrize("normal, mu", [
    ('"m*g"', "mu_static = 0, mu_kinetic = 0"),
    ('"0"', "mu_static = 0.4, mu_kinetic = 0.3"),
    ('"m*g - g*m"', "mu_static = 0.4, mu_kinetic = 0.3"),
], ids=["mu-zero", "normal-zero", "normal-cancels"])
def test_friction_without_force_runs_as_a_zero_force(normal, mu, capsys, tmp_path):
    """Zero coefficients or a normal force that is identically 0 were reported as chattering ('51 switches ... a
    Zeno sequence'): such an element exerts no force in any mode, so it is a zero force without modes or events
    (derive says so); the block oscillates freely (closed form)."""
    system = bridge.parse_system(belt(normal, mu), "belt")
    eom = bridge.derive(system, "lagrange")
    assert not eom.efforts
    res = bridge.simulate(eom, 10.0, interval=0.01, rtol=1e-12, atol=1e-13)
    assert not res.events
    assert np.abs(res["x"] - free_oscillator(res.time)).max() < 1e-10
    path = tmp_path / "free.toml"
    path.write_text(belt(normal, mu), encoding="utf-8")
    assert main(["derive", str(path)]) == 0
    assert "friction elements without force" in capsys.readouterr().out


def test_normal_force_zero_by_its_parameter_runs_free():
    """N = N0 with N0 = 0: the stick limit is 0 all along (not known at load). The block starts sticking with a
    holding force of 0 (within the bound 0), leaves stick at once and then slides freely: an indicator that
    touches 0 (v_r = v_belt (cos(w t) - 1) at each turning point) is no switch."""
    system = bridge.parse_system(belt('"N0"', extra="N0 = 0.0"), "belt")
    res = bridge.simulate(bridge.derive(system, "lagrange"), 4.0, interval=0.01, rtol=1e-12, atol=1e-13)
    assert len(res.events) <= 2 and all(e.time < 1e-6 for e in res.events)
    assert np.abs(res["x"] - free_oscillator(res.time)).max() < 1e-10


def touch_reference(T: float) -> list[tuple[float, int]]:
    """Event-driven scipy reference of the belt with N(t) = m g (1 + cos t), 0 at t = pi, 3 pi: stick (v = v_b)
    while |k x| <= mu_s N(t), else slip (+-1) with F = -mu_k N(t) sign until v = v_b again, where the stick test
    decides."""
    def N(t):
        return M * G * (1 + math.cos(t))

    def rhs(mode):
        def f(t, y):
            return [y[1], 0.0 if mode == 0 else (-K * y[0] - MUK * N(t) * mode) / M]
        return f

    def ev_slip(_t, y):
        return y[1] - VB

    def ev_stick(t, y):
        return abs(K * y[0]) - MUS * N(t)

    y, t, mode, out = np.array([0.0, VB]), 0.0, 0, []
    while True:
        ev = ev_stick if mode == 0 else ev_slip
        ev.terminal, ev.direction = True, (1 if mode == 0 else -mode)
        sol = solve_ivp(rhs(mode), (t, T), y, method="DOP853", rtol=1e-12, atol=1e-13, events=ev)
        if sol.status != 1:
            return out
        t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
        if mode == 0:
            mode = 1 if -K * y[0] > 0 else -1  # the spring pulls, the block slips its way
        else:
            y[1] = VB
            mode = 0 if abs(K * y[0]) <= MUS * N(t) else (1 if -K * y[0] > 0 else -1)
        out.append((t, mode))


def test_stick_and_slip_through_a_momentary_zero_normal_force():
    """N = m g (1 + cos t) is 0 at t = pi only: not chattering, and the switches (the block breaks away as the
    bound shrinks, slips through the instant of zero friction and reverses) agree with the scipy reference."""
    system = bridge.parse_system(belt('"m*g*(1 + cos(t))"'), "belt")
    res = bridge.simulate(bridge.derive(system, "lagrange"), 5.0, interval=0.01, rtol=1e-12, atol=1e-13)
    ref = touch_reference(5.0)
    names = {"stick": 0, "slip+": 1, "slip-": -1}
    assert len(ref) >= 4 and [names[e.after] for e in res.events] == [m for _, m in ref]
    assert np.abs(np.array([e.time for e in res.events]) - [t for t, _ in ref]).max() < 1e-8
    assert any(abs(e.time - math.pi) < 0.05 for e in res.events)  # a switch right by the zero of N


def test_negative_normal_force_check_runs_at_load_for_a_system_file(tmp_path):
    """bridge.load_system raises the same SystemFileError as the command line reports."""
    path = tmp_path / "negative.toml"
    path.write_text(belt('"-m*g"', "mu_static = 0, mu_kinetic = 0"), encoding="utf-8")
    with pytest.raises(SystemFileError, match=r"friction\.belt\.normal: the normal force of belt is negative"):
        bridge.load_system(path)


# -- a regularization too small to resolve --------------------------------------------------------------------------

def test_regularization_below_the_floor_is_refused(capsys, tmp_path):
    """regularization = 1e-300 hung simulate; below the stated floor it is bad input (exit 2) whose message gives
    the floor and why (tests/bad_inputs/friction_regularization_below_floor.toml in the bad-input suite)."""
    from bridge.model.efforts import REGULARIZATION_FLOOR

    path = tmp_path / "tiny.toml"
    for eps, code in ((1e-300, 2), (REGULARIZATION_FLOOR / 2, 2)):
        path.write_text(belt(mu=f"mu_static = 0.4, mu_kinetic = 0.3, regularization = {eps!r}"), encoding="utf-8")
        assert main(["check", str(path)]) == code
        err = capsys.readouterr().err
        assert f"below the floor {REGULARIZATION_FLOOR:g}" in err and "resolve" in err, err
    path.write_text(belt(mu=f"mu_static = 0.4, mu_kinetic = 0.3, regularization = {REGULARIZATION_FLOOR!r}"),
                    encoding="utf-8")
    assert main(["check", str(path)]) == 0


@pytest.mark.parametrize("text, integrator", [
    # smooth and stiff: tiny steps of an explicit method that is not switched to a stiff one (bridge.simulation.
    # stiffness switches the default DOP853)
    (belt(mu="mu_static = 0.4, mu_kinetic = 0.3, regularization = 1e-7"), "RK45"),
    (belt(), "DOP853"),  # stick and slip by events
], ids=["stiff-regularized", "events"])
def test_evaluations_are_bounded_with_a_message(text, integrator):
    """A run that needs more evaluations of the equations than its bound stops, saying how far it got and what to
    do (the bound of the command line, 1e6, lifted by --yes; here 3000 so that it is reached at once)."""
    eom = bridge.derive(bridge.parse_system(text, "belt"), "lagrange")
    with pytest.raises(SimulationError, match=r"more than 3e\+03 evaluations .* reached only t = [0-9.e-]+ s of "
                                              r"10 s.*--yes \(max_evaluations=None"):
        bridge.simulate(eom, 10.0, max_evaluations=3000, integrator=integrator)


# -- regularised friction: its normal force is watched like Coulomb friction's -------------------------------------

REGULARIZED = "mu_static = 0.4, mu_kinetic = 0.3, regularization = 1e-3"


def test_regularized_normal_force_turning_negative_in_time_stops_the_run():
    """N = m g cos(t) of a regularised belt (a smooth force, no events of its own) turns negative at pi/2."""
    eom = bridge.derive(bridge.parse_system(belt('"m*g*cos(t)"', mu=REGULARIZED), "belt"), "lagrange")
    with pytest.raises(SimulationError, match="Coulomb friction needs a normal force N >= 0") as info:
        bridge.simulate(eom, 3.0, interval=0.01)
    t, value = stopped_at(info.value, "belt")
    assert abs(t - math.pi / 2) < 1e-9 and abs(value) < 1e-9


@pytest.mark.parametrize("method", ["lagrange", "nielsen"])
def test_regularized_normal_force_turning_negative_with_a_coordinate_stops_the_run(method):
    """The pushed block with a regularised ground: it slips forward at v >= 0.1 >> v_eps = 1e-6 (tanh(v/v_eps) is 1
    in double precision), so the scipy reference of Coulomb slip holds, and N = m g (1 - x/L) reaches 0 at x = L."""
    text = PUSH.replace("mu_kinetic = 0.3 }", "mu_kinetic = 0.3, regularization = 1e-6 }")
    eom = bridge.derive(bridge.parse_system(text, "push"), method)
    with pytest.raises(SimulationError) as info:
        bridge.simulate(eom, 5.0, interval=0.01, rtol=1e-12, atol=1e-13)
    t, _ = stopped_at(info.value, "ground")
    assert abs(t - push_lift_off_time()) < 1e-8


def test_regularized_normal_force_beside_coulomb_friction_stops_the_run(tmp_path, capsys):
    """A regularised pad (N = 2 cos(t)) beside the Coulomb belt (events): the run of switched segments stops at pi/2
    naming the pad; on the command line exit 1."""
    pad = ('pad = { coordinate = "x", normal = "2*cos(t)", mu_static = 0.1, mu_kinetic = 0.1, '
           'relative_velocity = "der(x)", regularization = 1e-3 }')
    text = belt().replace("[outputs]", f"{pad}\n[outputs]")
    eom = bridge.derive(bridge.parse_system(text, "belt"), "lagrange")
    with pytest.raises(SimulationError) as info:
        bridge.simulate(eom, 3.0, interval=0.01)
    t, value = stopped_at(info.value, "pad")
    assert abs(t - math.pi / 2) < 1e-9 and abs(value) < 1e-9
    path = tmp_path / "pad.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["simulate", str(path), "--stop-time", "3", "-o", str(tmp_path / "out.csv")]) == 1
    err = capsys.readouterr().err
    assert "friction element pad turns negative at t = 1.5707963" in err and "Traceback" not in err


def test_regularized_normal_force_that_stays_positive_runs_unchanged():
    """The watch adds events, not steps: a regularised belt whose N = m g (2 + cos t) stays positive gives the same
    samples as the same law written as a force without a [friction] entry."""
    text = belt('"m*g*(2 + cos(t))"', mu=REGULARIZED)
    watched = bridge.simulate(bridge.derive(bridge.parse_system(text, "belt"), "lagrange"), 2.0, interval=0.01)
    plain = text.split("[friction]")[0] + (
        '[forces]\nx = "-0.3*m*g*(2 + cos(t))*tanh((der(x) - v_belt)/1e-3)"\n')
    free = bridge.simulate(bridge.derive(bridge.parse_system(plain, "plain"), "lagrange"), 2.0, interval=0.01)
    assert np.abs(watched["x"] - free["x"]).max() < 1e-9 and np.ptp(free["x"]) > 1e-3


# -- two friction elements on one coordinate ------------------------------------------------------------------------

def test_two_friction_elements_on_one_coordinate_name_the_real_cause(capsys):
    """Two belts at different speeds under one block (``der(x) - v_belt``, ``der(x) - 1.5*v_belt``) were refused as
    'no inertia resists the accelerations b0, b1': b0, b1 are friction forces. The message says why: both stick
    conditions constrain x'', so the forces are not determined while both stick; with one of them regularised the
    system runs."""
    path = ROOT / "tests" / "bad_inputs" / "friction_two_on_one_coordinate.toml"
    assert main(["simulate", str(path), "-o", "-"]) == 2
    err = capsys.readouterr().err
    assert "friction.b1" in err and "friction forces b0, b1 are not determined" in err
    assert "accelerations b0" not in err and "no inertia" not in err
    text = path.read_text(encoding="utf-8").replace('1.5*v_belt" }', '1.5*v_belt", regularization = 1e-2 }')
    res = bridge.simulate(bridge.derive(bridge.parse_system(text, "two"), "lagrange"), 1.0)
    # b0 sticks (the block rides at v_belt) and holds the spring against b1's smooth force mu_k N tanh(0.1/0.01)
    assert not res.events and np.abs(res["der(x)"] - VB).max() < 1e-12
    assert np.abs(res["b0"] - (K * res["x"] - MUK * M * 9.81 * math.tanh(10.0))).max() < 1e-9
