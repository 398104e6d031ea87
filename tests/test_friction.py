"""Coulomb friction with stick and slip located by events (issue 16 requirement 3, natively).

References: the closed-form limit cycle of the mass on a moving belt, and for two masses an event-driven
integration written here with scipy (its own stick/slip equations, not the bridge's)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import bridge

ROOT = Path(__file__).parent.parent
BELT = ROOT / "examples" / "nonsmooth" / "belt_friction.toml"
M, K, G, VB, MUS, MUK = 1.0, 10.0, 9.81, 0.2, 0.4, 0.3


def closed_form_switches(n: int) -> list[float]:
    """Stick until k x = mu_s m g, slip (harmonic about x_k = mu_k m g/k) until x' = v_b at the mirror point
    2 x_k - x_b, stick again (|k x| <= mu_s m g there since 2 mu_k - mu_s < mu_s), ..."""
    x_b, x_k = MUS * M * G / K, MUK * M * G / K
    w, d = math.sqrt(K / M), x_b - x_k
    slip = (math.pi + 2 * math.atan(VB / (w * d))) / w
    stick = 2 * d / VB
    out, t = [x_b / VB], x_b / VB
    while len(out) < n:
        t += slip
        out.append(t)
        t += stick
        out.append(t)
    return out[:n]


def closed_form_x(t: np.ndarray) -> np.ndarray:
    x_b, x_k = MUS * M * G / K, MUK * M * G / K
    w = math.sqrt(K / M)
    sw = closed_form_switches(40)
    out = np.empty_like(t)
    for i, ti in enumerate(t):
        k = int(np.searchsorted(sw, ti, side="right"))
        if k == 0:
            out[i] = VB * ti
        elif k % 2 == 1:  # slip from x_b at v_b
            tau = ti - sw[k - 1]
            out[i] = x_k + (x_b - x_k) * math.cos(w * tau) + VB / w * math.sin(w * tau)
        else:  # stick from the mirror point
            out[i] = 2 * x_k - x_b + VB * (ti - sw[k - 1])
    return out


@pytest.mark.parametrize("method", ["lagrange", "nielsen"])
def test_belt_limit_cycle_against_closed_form(method):
    system = bridge.load_system(BELT)
    res = bridge.simulate(bridge.derive(system, method), 10.0, interval=0.01, rtol=1e-12, atol=1e-12)
    times = [e.time for e in res.events]
    ref = closed_form_switches(len(times))
    assert len(times) == 7
    assert np.abs(np.array(times) - ref).max() < 1e-8
    assert [e.after for e in res.events[:2]] == ["slip-", "stick"]
    assert np.abs(res["x"] - closed_form_x(res.time)).max() < 1e-8
    # the friction force: k x while sticking (within mu_s m g), mu_k m g while slipping backwards
    stick = np.abs(res["slip_velocity"]) < 1e-9
    assert np.abs(res["belt"][stick] - K * res["x"][stick]).max() < 1e-8
    assert np.abs(res["belt"][~stick] - MUK * M * G).max() < 1e-9
    assert np.abs(res["belt"]).max() <= MUS * M * G + 1e-9


TWO = """
name = "TwoMassBelt"
[coordinates]
x1 = { start = 0.0, velocity = 0.3 }
x2 = { start = 0.05, velocity = 0.0 }
[parameters]
m1 = 1.0
m2 = 0.5
k1 = 8.0
k2 = 5.0
kc = 12.0
g = 9.81
vb = 0.3
[energy]
kinetic = "m1/2*der(x1)^2 + m2/2*der(x2)^2"
potential = "k1/2*x1^2 + kc/2*(x1 - x2)^2 + k2/2*x2^2"
[friction]
belt = { coordinate = "x1", normal = "m1*g", mu_static = 0.5, mu_kinetic = 0.35, relative_velocity = "der(x1) - vb" }
"""
P2 = dict(m1=1.0, m2=0.5, k1=8.0, k2=5.0, kc=12.0, g=9.81, vb=0.3, mus=0.5, muk=0.35)


def two_mass_reference(T: float):
    """Event-driven reference: state (x1, v1, x2, v2); modes 0 stick (v1 = vb), +-1 slip."""
    p = P2
    N = p["m1"] * p["g"]

    def spring1(y):
        return -p["k1"] * y[0] - p["kc"] * (y[0] - y[2])

    def rhs(mode):
        def f(_t, y):
            a2 = (-p["kc"] * (y[2] - y[0]) - p["k2"] * y[2]) / p["m2"]
            a1 = 0.0 if mode == 0 else (spring1(y) - p["muk"] * N * mode) / p["m1"]
            return [y[1], a1, y[3], a2]
        return f

    def ev_slip(_t, y):
        return y[1] - p["vb"]

    def ev_stick(_t, y):
        return abs(spring1(y)) - p["mus"] * N

    y, t, mode, switches = np.array([0.0, 0.3, 0.05, 0.0]), 0.0, 0, []
    while True:
        ev = ev_stick if mode == 0 else ev_slip
        ev.terminal, ev.direction = True, (1 if mode == 0 else -mode)
        sol = solve_ivp(rhs(mode), (t, T), y, method="DOP853", rtol=1e-12, atol=1e-13, events=ev)
        if sol.status != 1:
            return switches
        t, y = sol.t_events[0][0], sol.y_events[0][0].copy()
        if mode == 0:
            mode = 1 if spring1(y) > 0 else -1  # the spring pulls, the mass slips in its direction
        else:
            y[1] = p["vb"]
            mode = 0 if abs(spring1(y)) <= p["mus"] * N else (1 if spring1(y) > 0 else -1)
        switches.append((t, mode))


def test_two_masses_against_event_driven_scipy_reference(derivations):
    res = bridge.simulate(derivations.eom(TWO, "lagrange"), 8.0, interval=0.01,
                          rtol=1e-12, atol=1e-13)
    ref = two_mass_reference(8.0)
    assert len(ref) >= 6 and len(res.events) == len(ref)
    names = {"stick": 0, "slip+": 1, "slip-": -1}
    assert [names[e.after] for e in res.events] == [m for _, m in ref]
    assert np.abs(np.array([e.time for e in res.events]) - np.array([t for t, _ in ref])).max() < 1e-8


def test_regularised_friction_is_a_smooth_force():
    """regularization = v_eps: F = -mu_k N tanh(v_r/v_eps), no events (the static coefficient plays no part);
    against the same law integrated by scipy."""
    eps = 1e-3
    text = BELT.read_text().replace('relative_velocity = "der(x) - v_belt"',
                                    f'relative_velocity = "der(x) - v_belt", regularization = {eps}')
    eom = bridge.derive(bridge.parse_system(text, "belt"), "lagrange")
    assert not eom.efforts
    res = bridge.simulate(eom, 10.0, interval=0.01, rtol=1e-11, atol=1e-12)
    assert not res.events

    def f(_t, y):
        return [y[1], (-K * y[0] - MUK * M * G * math.tanh((y[1] - VB) / eps)) / M]
    ref = solve_ivp(f, (0.0, 10.0), [0.0, VB], method="Radau", t_eval=res.time, rtol=1e-12, atol=1e-14)
    assert np.abs(res["x"] - ref.y[0]).max() < 1e-7 * np.ptp(ref.y[0])


def test_friction_refused_by_reduced_methods():
    """Stick constrains the accelerations, which the reduced methods' independent speeds cannot carry (the
    Modelica export of friction with stick and slip: tests/test_switched_modelica.py)."""
    from bridge.errors import BridgeError

    constrained = TWO.replace("velocity = 0.0 }", "velocity = 0.3 }").replace(
        "[friction]", '[constraints]\nholonomic = ["x2 - x1 - 0.05"]\n[friction]')
    with pytest.raises(BridgeError, match="lagrange or nielsen"):
        bridge.derive(bridge.parse_system(constrained), "maggi")


def test_regularised_friction_goes_through_modelica_and_fmus(tmp_path):
    """The stated regularisation is a smooth force: Rumoca and an FMU (ME and CS) reproduce the native run."""
    fmpy = pytest.importorskip("fmpy")
    from bridge.fmu.build import build_fmu

    text = BELT.read_text().replace('relative_velocity = "der(x) - v_belt"',
                                    'relative_velocity = "der(x) - v_belt", regularization = 0.01')
    eom = bridge.derive(bridge.parse_system(text, "belt"), "lagrange")
    ref = bridge.simulate(eom, 5.0, interval=0.01, rtol=1e-11, atol=1e-12)
    fmu = build_fmu(eom, tmp_path / "belt.fmu", 2)
    for kind in ("ModelExchange", "CoSimulation"):
        kw = dict(solver="CVode") if kind == "ModelExchange" else {}
        out = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=5.0, output_interval=0.01, output=["x"],
                                relative_tolerance=1e-10, **kw)
        x = np.interp(ref.time, out["time"], out["x"])
        assert np.abs(x - ref["x"]).max() < 1e-6 * np.ptp(ref["x"]), kind
    pytest.importorskip("rumoca")
    from bridge.validation.tool_checks import check_rumoca

    report = check_rumoca(eom, stop_time=5.0)
    assert report.balanced and report.max_error < 1e-6, report.summary()


def test_steer_friction_on_the_whipple_bicycle():
    """An engineering-sized system (8 coordinates, 5 constraints): Coulomb friction in the steering head.
    lagrange and nielsen (different derivations) switch at the same times; while sticking the steer rate is 0 and
    the friction torque within mu_s N; while slipping it is mu_k N."""
    import tomllib

    data = tomllib.loads((ROOT / "examples" / "engineering" / "bicycle.toml").read_text())
    data["coordinates"]["phi"]["velocity"] = 0.5
    data["friction"] = {"steer_friction": {"coordinate": "delta", "normal": "1.0", "mu_static": 0.3,
                                           "mu_kinetic": 0.2}}
    system = bridge.build_system(data, "bicycle with steer friction")
    runs = [bridge.simulate(bridge.derive(system, m), 2.0, interval=0.01, rtol=1e-11, atol=1e-12)
            for m in ("lagrange", "nielsen")]
    a, b = ([e.time for e in r.events] for r in runs)
    assert len(a) >= 4 and [e.after for e in runs[0].events] == [e.after for e in runs[1].events]
    assert np.abs(np.array(a) - b).max() < 1e-8
    r = runs[0]
    F, rate = r["steer_friction"], r["der(delta)"]
    stick = np.zeros(r.time.size, dtype=bool)
    for on, off in zip(r.events[::2], r.events[1::2]):
        assert on.after == "stick"
        stick |= (r.time > on.time) & (r.time < off.time)
    assert stick.any() and (~stick).any()
    assert np.abs(rate[stick]).max() < 1e-9 and np.abs(F[stick]).max() <= 0.3 + 1e-9
    assert np.abs(np.abs(F[~stick]) - 0.2).max() < 1e-9
