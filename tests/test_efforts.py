"""Effort constraints and dynamic variables (issue 16, seed eq. 4.4: Gamma(q, f, e, s, t) = 0).

References: a DC motor on an inertia written by hand as an ODE and integrated by scipy (and its closed-form
steady speed); the DC-motor drive against the same machine written without efforts, with the armature charge
as a displacement (the seed's electromechanical coordinates: inductance as inertia, resistance in the
dissipation function, voltage as a generalized force)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

import bridge
from bridge.errors import BridgeError

ROOT = Path(__file__).parent.parent
DRIVE = ROOT / "examples" / "dc_motor_drive.toml"

MOTOR = """
name = "Motor"
[coordinates]
phi = { start = 0.0, velocity = 0.0, unit = "rad" }
[parameters]
J = 0.02
b = 0.01
TL = 0.3
R = 2.0
L = 0.05
kt = 0.5
ke = 0.5
[inputs]
U = { start = 24.0 }
[dynamic]
i = { start = 0.0, rate = "(U - R*i - eb)/L", unit = "A" }
[efforts]
tau = { constraint = "tau - kt*i", unit = "N.m" }
eb = { constraint = "eb - ke*der(phi)", unit = "V" }
[energy]
kinetic = "J/2*der(phi)^2"
[forces]
phi = "tau - b*der(phi) - TL"
[outputs]
w = "der(phi)"
"""
P = dict(J=0.02, b=0.01, TL=0.3, R=2.0, L=0.05, kt=0.5, ke=0.5, U=24.0)


def motor_reference(t):
    """J w' = kt i - b w - TL, L i' = U - R i - ke w, by scipy (LSODA at 1e-12)."""
    def f(_t, y):
        _phi, w, i = y
        return [w, (P["kt"] * i - P["b"] * w - P["TL"]) / P["J"], (P["U"] - P["R"] * i - P["ke"] * w) / P["L"]]
    return solve_ivp(f, (t[0], t[-1]), [0.0, 0.0, 0.0], method="LSODA", t_eval=t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", ["lagrange", "nielsen", "maggi", "appell"])
def test_motor_against_scipy_and_closed_form(method):
    system = bridge.parse_system(MOTOR)
    res = bridge.simulate(bridge.derive(system, method), 3.0, interval=0.01, rtol=1e-12, atol=1e-12)
    ref = motor_reference(res.time)
    assert np.abs(res["phi"] - ref.y[0]).max() < 1e-8 * np.ptp(ref.y[0])
    assert np.abs(res["w"] - ref.y[1]).max() < 1e-8 * np.ptp(ref.y[1])
    assert np.abs(res["i"] - ref.y[2]).max() < 1e-8 * np.ptp(ref.y[2])
    # the efforts are the values their constraints fix: tau = kt*i, eb = ke*w
    assert np.abs(res["tau"] - P["kt"] * ref.y[2]).max() < 1e-8 * np.ptp(ref.y[2])
    assert np.abs(res["eb"] - P["ke"] * ref.y[1]).max() < 1e-8 * np.ptp(ref.y[1])
    # steady speed: kt*i = b*w + TL and U = R*i + ke*w
    w_ss = (P["kt"] * P["U"] - P["R"] * P["TL"]) / (P["R"] * P["b"] + P["ke"] * P["kt"])
    assert abs(res["w"][-1] - w_ss) < 1e-6 * w_ss


CHARGE = {  # the drive without efforts: armature charge qe as a displacement
    "qe": {"start": 0.0, "velocity": 0.0, "unit": "C"},
}


def charge_form():
    """examples/dc_motor_drive.toml rewritten with the armature charge qe as a coordinate (no efforts)."""
    import tomllib

    data = tomllib.loads(DRIVE.read_text())
    data.pop("dynamic"), data.pop("efforts")
    data["coordinates"].update(CHARGE)
    data["energy"]["kinetic"] += " + La/2*der(qe)^2"
    data["energy"]["dissipation"] = "Ra/2*der(qe)^2"
    data["forces"] = {"phi1": "kt*der(qe)", "phi2": data["forces"]["phi2"], "qe": "U - ke*der(phi1)"}
    data["outputs"] = {"ratio": data["outputs"]["ratio"]}
    return bridge.build_system(data, "charge form")


@pytest.mark.parametrize("method", ["lagrange", "nielsen", "maggi"])
def test_drive_against_charge_coordinate(method):
    system = bridge.load_system(DRIVE)
    res = bridge.simulate(bridge.derive(system, method), 2.0, interval=0.01, rtol=1e-12, atol=1e-12)
    ref = bridge.simulate(bridge.derive(charge_form(), "lagrange"), 2.0, interval=0.01, rtol=1e-12, atol=1e-12)
    for name in ("phi1", "phi2", "x"):
        assert np.abs(res[name] - ref[name]).max() < 1e-8 * np.ptp(ref[name]), name
    assert np.abs(res["i"] - ref["der(qe)"]).max() < 1e-8 * np.ptp(ref["der(qe)"])
    assert np.abs(res["tau"] - 0.4 * ref["der(qe)"]).max() < 1e-8 * np.ptp(ref["der(qe)"])
    assert np.abs(res["eb"] - 0.4 * ref["der(phi1)"]).max() < 1e-8 * np.ptp(ref["der(phi1)"])


def test_equations_keep_the_efforts_algebraic():
    """The efforts are unknowns after the multipliers; their rows are dGamma/de*e = -Gamma(e=0) (no solve)."""
    eom = bridge.derive(bridge.load_system(DRIVE), "lagrange")
    names = [str(s) for s in eom.unknowns]
    assert names[-2:] == ["tau", "eb"] and names[-3] == "lambda[1]"
    assert eom.mass_matrix.shape == (7, 7)
    from bridge.derivation.render import to_text

    text = to_text(eom)
    assert "tau: tau - kt*der(i_integral) = 0" in text and "eb: eb - ke*der(phi1) = 0" in text
    assert "der(i) =" in text


def test_modelica_text_keeps_gamma():
    from bridge.modelica.export import model_source

    text = model_source(bridge.derive(bridge.load_system(DRIVE), "lagrange"))
    assert 'Real tau(unit="N.m")' in text and "-der_i_integral*kt + tau = 0;" in text


def test_fmu_me_and_cs_carry_efforts(tmp_path):
    fmpy = pytest.importorskip("fmpy")
    from bridge.fmu.build import build_fmu

    eom = bridge.derive(bridge.parse_system(MOTOR), "lagrange")
    ref = motor_reference(np.linspace(0.0, 1.0, 101))
    for version in (2, 3):
        fmu = build_fmu(eom, tmp_path / f"m{version}.fmu", version)
        for kind in ("ModelExchange", "CoSimulation"):
            kw = dict(solver="CVode") if kind == "ModelExchange" else {}
            out = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=1.0, output_interval=0.01,
                                    output=["phi", "i", "tau", "eb"], relative_tolerance=1e-10, **kw)
            tau = np.interp(ref.t, out["time"], out["tau"])
            eb = np.interp(ref.t, out["time"], out["eb"])
            assert np.abs(tau - P["kt"] * ref.y[2]).max() < 1e-6 * np.ptp(P["kt"] * ref.y[2]), (version, kind)
            assert np.abs(eb - P["ke"] * ref.y[1]).max() < 1e-6 * np.ptp(P["ke"] * ref.y[1]), (version, kind)


def test_singular_effort_constraint_is_named():
    bad = MOTOR.replace('eb = { constraint = "eb - ke*der(phi)", unit = "V" }',
                        'eb = { constraint = "tau - ke*der(phi)", unit = "V" }')
    with pytest.raises(BridgeError) as info:
        bridge.parse_system(bad)
    assert "efforts.eb.constraint" in str(info.value) and "does not determine" in str(info.value)


def test_cosim_of_motor_and_drive_converges_to_the_monolithic_model(tmp_path):
    """examples/cosim/dc_motor_drive.toml (the motor's effort constraint on an input, the drive with the torque as
    an input) against examples/dc_motor_drive.toml natively: first order in the communication step, within 0.1 %
    of each signal's range at 0.5 ms."""
    pytest.importorskip("fmpy")
    from bridge.cosim import prepare

    ref = bridge.simulate(bridge.derive(bridge.load_system(DRIVE), "lagrange"), 1.0, interval=0.01,
                          rtol=1e-10).columns()
    pairs = [("drive.phi1", "phi1"), ("drive.w1", "der(phi1)"), ("drive.x", "x"), ("motor.current", "i"),
             ("motor.tau", "tau")]
    errs = []
    with prepare(ROOT / "examples" / "cosim" / "dc_motor_drive.toml", tmp_path / "build") as cs:
        for h in (0.001, 0.0005):
            r = cs.run(step=h, stop_time=1.0)
            every = round(0.01 / h)
            errs.append({s: float(np.max(np.abs(r[s][::every] - ref[c])) / np.ptp(ref[c])) for s, c in pairs})
    for s, _ in pairs:
        assert errs[1][s] < 1e-3, (s, errs)
        assert errs[0][s] / errs[1][s] == pytest.approx(2.0, rel=0.15), (s, errs)  # zero-order hold: first order


# About 7 s of CPU: the engineering-sized system is the subject (two derivations of the bicycle and 0.5 s runs).
def test_dc_motor_on_the_whipple_bicycle_lagrange_and_maggi_agree():
    """An engineering-sized system: the Whipple bicycle (8 coordinates, 5 constraints, [method] independent) with
    a DC motor on the rear wheel (current a dynamic variable, torque and back-emf effort constraints). The
    multiplier form and the reduced form (the efforts carried along) agree."""
    import tomllib

    data = tomllib.loads((ROOT / "examples" / "engineering" / "bicycle.toml").read_text())
    data["parameters"].update({"Ra": 0.5, "La": 0.002, "kt": 0.8, "ke": 0.8, "U": 24.0})
    data["dynamic"] = {"i": {"start": 0.0, "rate": "(U - Ra*i - eb)/La", "unit": "A"}}
    data["efforts"] = {"tau": {"constraint": "tau - kt*i"}, "eb": {"constraint": "eb + ke*der(theta_R)"}}
    data.setdefault("forces", {})["theta_R"] = "-tau"
    system = bridge.build_system(data, "bicycle with a motor")
    runs = [bridge.simulate(bridge.derive(system, m), 0.5, interval=0.01, rtol=1e-11, atol=1e-12)
            for m in ("lagrange", "maggi")]
    for name in ("x", "der(theta_R)", "i", "tau", "eb"):
        span = np.ptp(runs[0][name])
        assert span > 0 and np.abs(runs[0][name] - runs[1][name]).max() < 1e-7 * span, name


def test_set_a_dynamic_variable_start_value():
    """--set i=2.5 sets the dynamic variable's start (the start flow of its integral); the effort follows it."""
    system = bridge.load_system(DRIVE, overrides={"i": 2.5})
    res = bridge.simulate(bridge.derive(system, "lagrange"), 0.01, interval=0.001)
    assert res["i"][0] == 2.5 and res["tau"][0] == pytest.approx(0.4 * 2.5, rel=1e-12)


def test_outputs_may_contain_efforts(tmp_path):
    """An output with an effort (the motor's shaft power tau*der(phi1)) is evaluated from the efforts solved at
    the same state: natively by lagrange and maggi, in the FMU (ME and CS, its declared dependencies all states
    and inputs) and in the Modelica model (Rumoca); against the effort columns of the native run."""
    from bridge.cli import main
    from bridge.fmu.build import build_fmu

    text = DRIVE.read_text().replace("[outputs]\n", '[outputs]\nshaft_power = { expr = "tau*der(phi1)", unit = "W" }\n')
    system = bridge.parse_system(text, "dc_power.toml")
    eom = bridge.derive(system, "lagrange")
    native = bridge.simulate(eom, 0.5, interval=0.01)
    assert np.abs(native["shaft_power"] - native["tau"] * native["der(phi1)"]).max() < 1e-12 * np.ptp(
        native["shaft_power"])
    reduced = bridge.simulate(bridge.derive(system, "maggi"), 0.5, interval=0.01)
    assert np.abs(reduced["shaft_power"] - native["shaft_power"]).max() < 1e-6 * np.ptp(native["shaft_power"])
    fmpy = pytest.importorskip("fmpy")
    fmu = build_fmu(eom, tmp_path / "power.fmu", 3)
    md = fmpy.read_model_description(str(fmu))
    out = next(u for u in md.outputs if u.variable.name == "shaft_power")
    assert {d.name for d in out.dependencies} == {v.name for v in md.modelVariables
                                                  if v.causality == "input" or v.name in
                                                  [c.name for c in system.coordinates]
                                                  or v.name in [f"der({c.name})" for c in system.coordinates]}
    for kind in ("ModelExchange", "CoSimulation"):
        res = fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=0.5, output_interval=0.01,
                                output=["shaft_power"], relative_tolerance=1e-10)
        assert np.abs(res["shaft_power"] - native["shaft_power"]).max() < 1e-6 * np.ptp(native["shaft_power"]), kind
    pytest.importorskip("rumoca")
    (tmp_path / "dc_power.toml").write_text(text)
    assert main(["modelica", str(tmp_path / "dc_power.toml"), "-o", str(tmp_path / "P.mo"), "--check",
                 "rumoca"]) == 0
    assert "shaft_power = der(phi1)*tau;" in (tmp_path / "P.mo").read_text()


def test_linearize_refuses_outputs_with_efforts(tmp_path, capsys):
    """linearize does not differentiate the solved efforts: an output that contains one is named, exit 2."""
    from bridge.cli import main

    path = tmp_path / "dc_power.toml"
    path.write_text(DRIVE.read_text().replace("[outputs]\n", '[outputs]\nshaft_power = "tau*der(phi1)"\n'))
    assert main(["linearize", str(path)]) == 2
    err = capsys.readouterr().err
    assert "outputs.shaft_power" in err and "contain efforts" in err and "Traceback" not in err


def test_a_regularised_friction_element_stands_for_its_smooth_force():
    """With a regularization velocity the element is the smooth force -mu_k N tanh(v_r/eps): its name in an output
    (or a force) stands for that expression, which the run reproduces against the velocities it reports."""
    text = (ROOT / "examples" / "nonsmooth" / "belt_friction.toml").read_text()
    text = text.replace('relative_velocity = "der(x) - v_belt",', 'relative_velocity = "der(x) - v_belt", '
                        'regularization = 0.01,')
    text = text.replace("[outputs]\n", '[outputs]\nfriction_force = { expr = "belt", unit = "N" }\n')
    system = bridge.parse_system(text, "smooth belt")
    res = bridge.simulate(bridge.derive(system, "lagrange"), 2.0, interval=0.01)
    law = -0.3 * 1.0 * 9.81 * np.tanh((res["der(x)"] - 0.2) / 0.01)
    assert not res.events and np.abs(res["friction_force"] - law).max() < 1e-12
