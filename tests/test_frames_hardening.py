"""Hostile and borderline inputs of the rigid-body tables ([frames], [bodies], [contacts]): name hints, deep frame
chains, direction cosines that stop being a rotation, the Chaplygin structure on simplified terms, redundant contact
rows and units."""

from __future__ import annotations

from pathlib import Path

import pytest

from bridge.cli import main

BAD = Path(__file__).parent / "bad_inputs"


def _check(path, capsys) -> tuple[int, str]:
    code = main(["check", str(path)])
    return code, capsys.readouterr().err


def test_frame_typo_suggests_the_frame_and_does_not_deny_the_body(capsys):
    code, err = _check(BAD / "body_frame_case_typo.toml", capsys)
    assert code == 2 and "Traceback" not in err
    assert "unknown frame 'wl'. Did you mean 'wL'?" in err
    assert "loads.motorL.torque: 'wl' is not a frame" in err and err.count("Did you mean 'wL'?") == 2
    assert "loads.motorL.body: 'wheelL' has errors above (bodies.wheelL)" in err
    assert "is not a rigid body" not in err and "wheelR" not in err


def _chain(n: int, angle) -> str:
    lines = ['name = "Chain"', "[coordinates]", "q = { start = 0.1, velocity = 0.5 }", "[parameters]", "m = 1.0",
             "[frames]"]
    prev = "N"
    for i in range(n):
        lines.append(f'f{i} = {{ parent = "{prev}", axis = "{"xyz"[i % 3]}", angle = "{angle(i)}" }}')
        prev = f"f{i}"
    lines += ["[bodies]", f'b = {{ mass = "m", frame = "{prev}", com = "[0, 0, 0]", inertia = "[1, 2, 2.5]" }}']
    return "\n".join(lines) + "\n"


def test_a_chain_of_1000_frames_is_refused_naming_the_depth_limit(tmp_path, capsys):
    path = tmp_path / "chain.toml"
    path.write_text(_chain(1000, lambda i: "q"))
    code, err = _check(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert "frames.f200.parent: the chain of parents N -> f0 -> f1 -> ... -> f199 -> f200 is 201 frames deep" in err
    assert "limit of 200 frames" in err


def test_a_chain_that_grows_too_large_is_refused_while_composing(tmp_path, capsys):
    path = tmp_path / "chain.toml"
    path.write_text(_chain(60, lambda i: "q"))
    code, err = _check(path, capsys)
    assert code == 2 and "Traceback" not in err
    assert "is too large (more than 5000 operations" in err
    assert err.count("too large") == 1  # the frames below the first one too large are not composed


def test_a_deep_chain_of_constant_rotations_loads(tmp_path):
    import numpy as np

    from bridge.model.loader import load_system

    def angle(i):
        return "q" if i == 149 else f"{0.01 * (i % 7)}"

    path = tmp_path / "chain.toml"
    path.write_text(_chain(150, angle))
    system = load_system(path)
    R = np.eye(3)
    for i in range(150):
        a = 0.1 if i == 149 else 0.01 * (i % 7)
        c, s = np.cos(a), np.sin(a)
        R = R @ {"x": [[1, 0, 0], [0, c, -s], [0, s, c]], "y": [[c, 0, s], [0, 1, 0], [-s, 0, c]],
                 "z": [[c, -s, 0], [s, c, 0], [0, 0, 1]]}["xyz"[i % 3]]
    body = system.multibody.bodies[0]
    q = system.coordinates[0].symbol
    got = np.array(body.rotation.subs(q, 0.1).evalf(), dtype=float)
    assert np.abs(got - R).max() < 1e-12
    # the last rotation (about z, 149 % 3 == 2) spins the body about its own z axis: T = 1/2 * 2.5 * q'^2
    T = system.kinetic.subs({q: 0.1, system.coordinates[0].velocity_symbol: 0.5})
    assert abs(float(T) - 0.5 * 2.5 * 0.25) < 1e-12


SPINNER = """
name = "Spinner"
[coordinates]
q = {{ start = 0.0, velocity = 1.0 }}
[parameters]
w = 2.0
[frames]
spin = {{ parent = "N", dcm = "{dcm}" }}
top = {{ parent = "spin", axis = "x", angle = "{angle}" }}
[bodies]
rotor = {{ mass = "1", frame = "top", com = "[0, 0, 0]", inertia = "[1, 1, 1.5]" }}
[simulation]
stop_time = 2.0
"""


def test_dcm_of_t_proven_a_rotation_is_accepted(tmp_path):
    from bridge.model.loader import load_system

    path = tmp_path / "spin.toml"
    path.write_text(SPINNER.format(dcm="[[cos(w*t), -sin(w*t), 0], [sin(w*t), cos(w*t), 0], [0, 0, 1]]", angle="q"))
    system = load_system(path)
    assert system.multibody.rotation_watch == ()


def test_dcm_that_stops_being_a_rotation_stops_the_native_run(tmp_path, capsys):
    import re

    path = tmp_path / "spin.toml"
    # orthonormal for q <= 1 (the start state and the states checked near it), stretched beyond
    dcm = "[[cos(q), -sin(q), 0], [sin(q), cos(q), 0], [0, 0, 1 + max(0, q - 1)]]"
    path.write_text(SPINNER.format(dcm=dcm, angle="0"))
    assert main(["check", str(path)]) == 0
    out = tmp_path / "run.csv"
    code = main(["simulate", str(path), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and not out.exists()
    m = re.search(r"frames\.spin\.dcm: the direction cosines are no longer a rotation at t = ([0-9.]+)", err)
    assert m, err
    assert 1.0 < float(m.group(1)) < 1.01  # q = t (free rotation at 1 rad/s) passes 1 there


def test_dcm_orthonormal_identically_decides_sines_and_cosines():
    import sympy as sp

    from bridge.model.frames import elementary, orthonormal_identically

    a, b = sp.symbols("a b")
    assert orthonormal_identically(elementary("x", a) * elementary("z", b + a))
    assert not orthonormal_identically(sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0],
                                                  [0, 0, 1 + a**2]]))


MODELS = Path(__file__).parent / "models"


def test_chaplygin_structure_is_decided_on_simplified_terms(capsys):
    """``Iwd*sin(phiR)^2 + Iwd*cos(phiR)^2`` in T and ``sin(phiR)^2*tauL + cos(phiR)^2*tauL`` in a force do not
    contain phiR: the robot is a Chaplygin system with phiR dependent; its q'' equals maggi's and lagrange's, and
    derive prints the terms tidied."""
    import numpy as np

    import bridge
    from bridge.model.loader import load_system

    system = load_system(MODELS / "diff_drive_unsimplified.toml")
    chap = bridge.derive(system, "chaplygin").numeric
    refs = [bridge.derive(system, m).numeric for m in ("maggi", "lagrange")]
    rng = np.random.default_rng(3)
    R, b = 0.05, 0.15
    for _ in range(4):
        q = rng.uniform(-2, 2, 5)
        psi_d, phiL_d = rng.uniform(-3, 3, 2)
        phiR_d = phiL_d + 2 * b / R * psi_d
        x_d, y_d = R / 2 * np.cos(q[2]) * (phiL_d + phiR_d), R / 2 * np.sin(q[2]) * (phiL_d + phiR_d)
        qd = np.array([x_d, y_d, psi_d, phiL_d, phiR_d])
        a = chap.accelerations(0.0, q, qd)
        for ref in refs:
            np.testing.assert_allclose(a, ref.accelerations(0.0, q, qd), rtol=0, atol=1e-10)
    assert main(["derive", str(MODELS / "diff_drive_unsimplified.toml"), "--method", "chaplygin"]) == 0
    out = capsys.readouterr().out
    assert "Ic + 2*Iwd" in out and "sin(phi" not in out and "cos(phi" not in out


def test_depends_on_and_tidy_trig():
    import sympy as sp

    from bridge.model.trig import depends_on, tidy_trig

    a, b, c = sp.symbols("a b c")
    assert not depends_on(c * sp.sin(a) ** 2 + c * sp.cos(a) ** 2, a)
    assert depends_on(c * sp.sin(a) ** 2 + b * sp.cos(a) ** 2, a)
    assert depends_on(sp.sin(a) ** 3 + sp.cos(a) ** 2, a)
    assert tidy_trig(sp.sin(b) ** 2 * c + sp.cos(b) ** 2 * c) == c
    assert tidy_trig(c * sp.sin(a) ** 2) == c * sp.sin(a) ** 2  # not smaller: left as written


EXAMPLES = Path(__file__).parent.parent / "examples"
ROBOT = EXAMPLES / "differential_drive.toml"
R_, B_, MC, IC, MW, IWA, IWD = 0.05, 0.15, 4.0, 0.05, 0.3, 0.0004, 0.0002  # the example's values


def test_differential_drive_drops_the_repeated_lateral_row(capsys):
    from bridge.model.loader import load_system

    system = load_system(ROBOT)
    assert system.m == 3 and system.dof == 2
    dropped = system.multibody.dropped_constraints
    assert [name for name, _ in dropped] == ["contacts.wheelR (no slip along its axle)"]
    assert main(["derive", "--constraints", str(ROBOT)]) == 0
    out = capsys.readouterr().out
    assert "contacts.wheelR (no slip along its axle) [dropped]:" in out and "3 nonholonomic" in out


def test_differential_drive_lagrange_and_maggi_agree():
    import numpy as np

    import bridge
    from bridge.model.loader import load_system

    system = load_system(ROBOT)
    lag, mag = (bridge.derive(system, m).numeric for m in ("lagrange", "maggi"))
    rng = np.random.default_rng(11)
    for _ in range(4):
        q = rng.uniform(-2, 2, 5)
        psi_d, v = rng.uniform(-2, 2), rng.uniform(-1, 1)
        qd = np.array([v * np.cos(q[2]), v * np.sin(q[2]), psi_d, (v - B_ * psi_d) / R_, (v + B_ * psi_d) / R_])
        assert np.abs(lag.constraint_residuals(0.0, q, qd)).max() < 1e-12
        a = lag.accelerations(0.0, q, qd)
        np.testing.assert_allclose(mag.accelerations(0.0, q, qd), a, rtol=0, atol=1e-10 * max(1, np.abs(a).max()))


@pytest.mark.parametrize("method", ["lagrange", "maggi"])
def test_differential_drive_closed_forms(method):
    """Equal torques drive straight ahead at a = 2 tau / R / (mc + 2 mw + 2 Iwa/R^2); opposite ones turn it in place
    (mass centre on the axle) at psi'' = 2 tau b / R / (Ic + 2 mw b^2 + 2 Iwd + 2 Iwa b^2 / R^2)."""
    import numpy as np

    import bridge
    from bridge.model.loader import load_system

    tau, T = 0.02, 1.0
    straight = load_system(ROBOT, {"tauL": tau, "tauR": tau})
    run = bridge.simulate(bridge.derive(straight, method), T)
    a = 2 * tau / R_ / (MC + 2 * MW + 2 * IWA / R_**2)
    assert abs(run["x"][-1] - a * T**2 / 2) < 1e-8 * a
    assert np.abs(run["psi"]).max() < 1e-12 and np.abs(run["y"]).max() < 1e-12
    turning = load_system(ROBOT, {"tauL": -tau, "tauR": tau, "d": 0.0})
    run = bridge.simulate(bridge.derive(turning, method), T)
    alpha = 2 * tau * B_ / R_ / (IC + 2 * MW * B_**2 + 2 * IWD + 2 * IWA * B_**2 / R_**2)
    assert abs(run["psi"][-1] - alpha * T**2 / 2) < 1e-8 * alpha
    assert np.abs(run["x"]).max() < 1e-12 and np.abs(run["y"]).max() < 1e-12


CART = """
name = "Cart"
[coordinates]
x = {{ start = 1.0, unit = "m" }}
theta = {{ start = 0.1, unit = "rad" }}
[parameters]
m = {{ value = 2.0, unit = "kg" }}
J = {{ value = 0.1, unit = "kg.m2" }}
k = {{ value = 5.0, unit = "{k_unit}" }}
c = {{ value = 0.5 }}
[energy]
kinetic = "m/2*der(x)^2 + J/2*der(theta)^2"
potential = "k/2*x^2"
[forces]
theta = "{torque}"
[outputs]
power = {{ expr = "k*x*der(x)", unit = "{power_unit}" }}
"""


def _cart(**kw) -> str:
    return CART.format(**({"k_unit": "N/m", "torque": "-c*der(theta)", "power_unit": "W"} | kw))


def test_consistent_units_with_numbers_and_unitless_names_pass():
    from bridge.model.loader import parse_system

    parse_system(_cart())  # c has no unit: its term is not judged
    parse_system(_cart().replace('[outputs]', '[constraints]\nholonomic = ["x^2 + 0*theta - 1 - x + x"]\n[outputs]'))


@pytest.mark.parametrize(("change", "entry", "words"), [
    ({"k_unit": "N"}, "energy.potential", ["the potential energy is in n.m2", "an energy is in j"]),
    ({"torque": "-m*der(theta) + J*der(theta)"}, "forces.theta", ["do not match", "is in kg/s", "is in kg.m2/s"]),
    ({"torque": "m*der(x)"}, "forces.theta", ["is in kg.m/s", "(j/rad) is in j"]),
    ({"power_unit": "J"}, "outputs.power", ["the output is in w", "declared unit j is in j"]),
])
def test_inconsistent_units_are_reported_with_both_sides(change, entry, words):
    from bridge.errors import SystemFileError
    from bridge.model.loader import parse_system

    with pytest.raises(SystemFileError) as info:
        parse_system(_cart(**change), "cart.toml")
    text = [p for p in str(info.value).splitlines() if f": {entry}:" in p]
    assert text, str(info.value)
    for w in words:
        assert w in text[0].lower(), text[0]


def test_dimension_algebra_is_shared_with_the_modelica_export():
    import bridge
    from bridge.model import dimensions as model_dimensions
    from bridge.modelica import dimensions as modelica_dimensions

    assert modelica_dimensions.unit_text is model_dimensions.unit_text
    eom = bridge.derive(bridge.load_system(EXAMPLES / "rolling_wheel.toml"), "lagrange")
    dims = modelica_dimensions.Dimensions(eom)
    assert dims.text(eom.system.kinetic) == "N.m"  # J in the MSL's spelling
    assert dims.multipliers() == ["N", "N"]  # no-slip rows in m/s on coordinates in m: forces
