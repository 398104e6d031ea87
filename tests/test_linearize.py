"""bridge.linearize and nhbridge linearize: the minimal linear model about steady motions, checked against
published numbers (the Whipple bicycle benchmark, Meijaard et al. 2007), closed forms (the upright rolling disk,
a pendulum with an input), finite differences of the nonlinear equations, and across every applicable method."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.cli import main
from bridge.linearization.linearize import Linearizer
from bridge.linearization.point import LinearizationError, operating_point
from bridge.linearization.sweep import Sweep, parse_sweep

from .test_bicycle import BICYCLE_FILE, CAPSIZE_SPEED, TABLE2, WEAVE_SPEED, bicycle

ROOT = Path(__file__).resolve().parents[1]
DISK_FILE = ROOT / "examples" / "rolling_disk.toml"
R_R = 0.3  # rear wheel radius of the benchmark: der(theta_R) = -v / r_R


def _applicable(system) -> list[str]:
    return [name for name, m in bridge.METHODS.items() if m.applicable(system) is None]


# The Whipple bicycle by every applicable method (derived once per run: the ``derivations`` cache of conftest.py);
# the tests below compare the methods with each other and with the published benchmark, so none can be left out.
@pytest.fixture(scope="module")
def bike(derivations):
    system = bridge.load_system(BICYCLE_FILE)
    return system, {name: Linearizer(derivations.eom(BICYCLE_FILE, name)) for name in _applicable(system)}


@pytest.fixture(scope="module")
def disk(derivations):
    system = bridge.load_system(DISK_FILE)
    return system, {name: Linearizer(derivations.eom(DISK_FILE, name)) for name in _applicable(system)}


def _same_spectrum(got, ref, tol: float, what: str = "") -> None:
    """Every eigenvalue matched one to one (greedy by distance) within ``tol``."""
    got, ref = list(np.asarray(got, dtype=complex)), list(np.asarray(ref, dtype=complex))
    assert len(got) == len(ref), what
    for r in ref:
        k = int(np.argmin([abs(g - r) for g in got]))
        assert abs(got[k] - r) <= tol, (what, got, ref)
        got.pop(k)


def _at(lin: Linearizer, system, values: dict):
    return lin.at(operating_point(system.with_values(values)))


def _at_every(lins: dict, system, values: dict) -> dict:
    """Every method's linear model at one operating point (the point is the system's, found once for all)."""
    point = operating_point(system.with_values(values))
    return {name: lin.at(point) for name, lin in lins.items()}


# -- the bicycle ---------------------------------------------------------------------------------------------
def test_bicycle_minimal_state(bike, derivations):
    """x, y, yaw and both wheel angles are cyclic, the forward speed is conserved: the roll-steer state remains."""
    system, _lins = bike
    assert set(_applicable(system)) >= {"lagrange", "nielsen", "maggi", "appell"}
    lin = bridge.linearize(derivations.eom(BICYCLE_FILE, "lagrange"))
    assert lin.states == ("phi", "delta", "der(phi)", "der(delta)")
    assert set(lin.dropped) == {"x", "y", "psi", "theta_R", "theta_F"}
    assert lin.conserved == ("der(theta_R)",)
    assert lin.A.shape == (4, 4) and lin.C.shape == (3, 4) and lin.B.shape == (4, 0)
    np.testing.assert_array_equal(lin.A[:2], [[0, 0, 1, 0], [0, 0, 0, 1]])
    assert lin.outputs == ("speed", "roll", "steer")
    np.testing.assert_allclose(lin.C[1:], [[1, 0, 0, 0], [0, 1, 0, 0]], atol=1e-14)


# Each speed is a row of the benchmark's Table 2 (a distinct reference). The four speeds evaluate each method's
# Jacobians by substitution (about 0.2 s per point and method); the tests below that need more points compile them.
@pytest.mark.parametrize("speed", sorted(TABLE2))
def test_bicycle_table2_every_method(bike, speed):
    """Table 2 of the benchmark to 1e-8 by every method, and the methods agree with each other to 1e-10."""
    system, lins = bike
    ref = TABLE2[speed]
    models = _at_every(lins, system, {"der(theta_R)": -speed / R_R})
    first = models["lagrange"]
    for name, lin in models.items():
        _same_spectrum(lin.eigenvalues(), ref, 1e-8, name)
        assert lin.states == first.states
        for M in ("A", "B", "C", "D"):
            a, b = getattr(lin, M), getattr(first, M)
            assert np.abs(a - b).max(initial=0.0) <= 1e-10 * max(1.0, np.abs(b).max(initial=0.0)), (name, M)


def test_bicycle_against_finite_differences(bike):
    """The symbolic Jacobian agrees with central differences of the nonlinear accelerations (the independent
    reference of tests/test_bicycle.py) from 0 to 10 m/s."""
    system, lins = bike
    lin = lins["lagrange"]
    num = lin.eom.numeric
    for v in np.linspace(0.0, 10.0, 11):
        A = _at(lin, system, {"der(theta_R)": -v / R_R}).A
        J = bicycle.roll_steer_jacobian(num, v)
        np.testing.assert_allclose(A, J, rtol=0, atol=2e-7)


def test_bicycle_weave_and_capsize_speeds(bike):
    """The self-stable range from the sweep's root finding: weave and capsize speeds of Table 2 to 1e-8."""
    system, lins = bike
    for name in ("lagrange", "maggi"):
        sweep = Sweep(lins[name], system, parse_sweep("der(theta_R)=0:-33.3:38", system))
        values, models = sweep.run()
        assert all(m.states == ("phi", "delta", "der(phi)", "der(delta)") for m in models)
        stab = sweep.stability(values, models)
        kinds = {c["kind"].split()[0]: -R_R * c["value"] for c in stab["crossings"]}
        assert abs(kinds["oscillatory"] - WEAVE_SPEED) < 1e-8, name
        assert abs(kinds["real"] - CAPSIZE_SPEED) < 1e-8, name
        (a, b), = stab["stable"]
        assert abs(-R_R * b - WEAVE_SPEED) < 1e-8 and abs(-R_R * a - CAPSIZE_SPEED) < 1e-8


# -- the upright rolling disk ---------------------------------------------------------------------------------
def _disk_lean(spin: float, g: float = 9.81, r: float = 0.3) -> float:
    """Closed form for a thin disk (I_d = m r^2/4 about a diameter, I_a = m r^2/2 about the axle), rolling upright
    at spin rate W: (I_d + m r^2) theta'' = m g r theta - (I_a + m r^2) W psi', I_d psi'' = I_a W theta', so
    lambda^2 = (m g r - I_a (I_a + m r^2) W^2 / I_d) / (I_d + m r^2) = 4/5 (g/r - 3 W^2)."""
    return 0.8 * (g / r - 3.0 * spin**2)


@pytest.mark.parametrize("spin", [0.5, 2.0, 3.0, 4.0, 8.0])
def test_disk_lean_eigenvalues_every_method(disk, spin):
    system, lins = disk
    assert set(lins) >= {"lagrange", "nielsen", "maggi", "appell", "chaplygin"}
    lam2 = _disk_lean(spin)
    ref = [0.0, np.sqrt(complex(lam2)), -np.sqrt(complex(lam2))]
    models = _at_every(lins, system, {"der(phi)": spin})
    first = models["lagrange"]
    assert first.states == ("theta", "der(psi)", "der(theta)")
    assert set(first.dropped) == {"x", "y", "psi", "phi"} and first.conserved == ("der(phi)",)
    for name, lin in models.items():
        _same_spectrum(lin.eigenvalues(), ref, 1e-10, name)
        for M in ("A", "B", "C", "D"):
            a, b = getattr(lin, M), getattr(first, M)
            assert np.abs(a - b).max(initial=0.0) <= 1e-10 * max(1.0, np.abs(b).max(initial=0.0)), (name, M)


def test_disk_critical_spin(disk):
    """The lean pair reaches the imaginary axis at the critical spin sqrt(g/(3 r)) (Routh), found to 1e-10."""
    system, lins = disk
    sweep = Sweep(lins["maggi"], system, parse_sweep("der(phi)=0.5:8:16", system))
    values, models = sweep.run()
    stab = sweep.stability(values, models)
    (crossing,) = stab["crossings"]
    assert crossing["from"] == "unstable" and crossing["to"] == "marginal"
    assert abs(crossing["value"] - math.sqrt(9.81 / (3 * 0.3))) < 1e-10
    assert not stab["stable"] and stab["marginal"] == [[crossing["value"], 8.0]]


def test_report_classifies_the_disk_as_the_sweep_does(disk):
    """Above the critical spin the lean pair is neutral (eigenvalues +-i sqrt(-lam2), real parts round-off): the
    report says marginally stable and prints damping 0; below it, unstable; as the sweep's classes."""
    from bridge.linearization.outputs import text_report

    system, lins = disk
    above = text_report(_at(lins["lagrange"], system, {"der(phi)": 4.0}))
    assert "the point is marginally stable" in above and "zero within round-off" in above
    damping_column = [line.split()[-2] for line in above.splitlines() if line.strip().startswith(("+0.", "-0."))]
    assert damping_column and all(d in ("0", "-") for d in damping_column)
    assert f"{math.sqrt(-_disk_lean(4.0)):.10f}i" in above
    below = text_report(_at(lins["lagrange"], system, {"der(phi)": 1.0}))
    assert "the point is unstable" in below and "round-off" not in below


# -- inputs, outputs and a closed form ------------------------------------------------------------------------
PENDULUM = """
name = "DrivenPendulum"
description = "pendulum with a torque input"
[coordinates]
theta = { start = 0.0, velocity = 0.0, unit = "rad" }
[parameters]
m = { value = 0.5, unit = "kg" }
l = { value = 0.8, unit = "m" }
g = { value = 9.81, unit = "m/s2" }
k_tip = { value = 100.0, unit = "N", description = "torque per tip offset (the output's feedthrough)" }
[inputs]
tau = { unit = "N.m" %s}
[energy]
kinetic = "1/2*m*l^2*der(theta)^2"
potential = "m*g*l*(1 - cos(theta))"
[forces]
theta = "tau"
[outputs]
tip_x = { expr = "l*sin(theta) + tau/k_tip", unit = "m" }
"""


def test_inputs_need_values_and_give_B_D(tmp_path, capsys):
    path = tmp_path / "pendulum.toml"
    path.write_text(PENDULUM % "")
    assert main(["linearize", str(path)]) == 2
    assert "inputs without values at the operating point: tau" in capsys.readouterr().err
    out = tmp_path / "lin.json"
    assert main(["linearize", str(path), "--set", "tau=0", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    m, l, g = 0.5, 0.8, 9.81
    assert data["states"] == ["theta", "der(theta)"] and data["inputs"] == ["tau"]
    np.testing.assert_allclose(data["A"], [[0, 1], [-g / l, 0]], atol=1e-14)
    np.testing.assert_allclose(data["B"], [[0], [1 / (m * l**2)]], atol=1e-14)
    np.testing.assert_allclose(data["C"], [[l, 0]], atol=1e-14)
    np.testing.assert_allclose(data["D"], [[0.01]], atol=1e-14)
    w = math.sqrt(g / l)
    np.testing.assert_allclose(sorted(data["eigenvalues"]), [[0.0, -w], [0.0, w]], rtol=0, atol=1e-12)
    # a start value in the file is the operating point's input; a torque makes the upright state not steady
    path.write_text(PENDULUM % ", start = 0.2")
    assert main(["linearize", str(path)]) == 2
    err = capsys.readouterr().err
    assert "not steady" in err and "der(der(theta)) = 0.625" in err  # tau/(m l^2)


# -- bad input --------------------------------------------------------------------------------------------------
def test_not_steady_reports_residuals(capsys, derivations):
    assert main(["linearize", str(DISK_FILE), "--set", "theta=0.2"]) == 2
    err = capsys.readouterr().err
    assert "not steady" in err and "der(der(theta))" in err and "Traceback" not in err
    with pytest.raises(LinearizationError, match="der\\(phi\\) = 0.1"):
        bridge.linearize(derivations.eom(BICYCLE_FILE, "lagrange"), at={"der(phi)": 0.1})


@pytest.mark.parametrize("sweep, message", [
    ("speed=0:1:3", "'speed' is not a parameter, coordinate"),
    ("der(phi)=0:x:3", "START and STOP must be numbers"),
    ("der(phi)=0:1:many", "NUM must be a whole number"),
    ("der(phi)=0:1:1", "need 2 to"),
    ("der(phi)=0:1", "expected START:STOP:NUM"),
])
def test_bad_sweeps(sweep, message, capsys, tmp_path):
    out = tmp_path / "eig.csv"
    assert main(["linearize", str(DISK_FILE), "--sweep", sweep, "--csv", str(out)]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


KNIFE = """
name = "KnifeEdge"
description = "knife edge on a level plane, split x, theta: y is dependent, singular at theta = pi/2"
[coordinates]
x = { start = 0.0, velocity = 1.0, unit = "m" }
y = { start = 0.0, velocity = 0.0, unit = "m" }
theta = { start = 0.0, velocity = 0.0, unit = "rad" }
[parameters]
m = { value = 1.0, unit = "kg" }
J = { value = 0.1, unit = "kg.m2" }
[energy]
kinetic = "m/2*(der(x)^2 + der(y)^2) + J/2*der(theta)^2"
[constraints]
nonholonomic = ["sin(theta)*der(x) - cos(theta)*der(y)"]
[method]
independent = ["x", "theta"]
"""


def test_singular_split(tmp_path, capsys):
    path = tmp_path / "knife.toml"
    path.write_text(KNIFE)
    assert main(["linearize", str(path), "--set", "theta=pi/2", "--set", "der(x)=0", "--set", "der(y)=1"]) == 2
    assert "the velocity split (dependent y) is singular at the operating point" in capsys.readouterr().err
    assert main(["linearize", str(path), "--sweep", "theta=0:3:31", "--json", str(tmp_path / "l.json")]) == 2
    err = capsys.readouterr().err
    assert "crosses a singular split at theta = 1.5707963267" in err
    assert not (tmp_path / "l.json").exists()


def test_named_cyclic_must_be_ignorable(capsys):
    assert main(["linearize", str(DISK_FILE), "--cyclic", "theta"]) == 2
    assert "'theta' is not cyclic at this point" in capsys.readouterr().err
    assert main(["linearize", str(DISK_FILE), "--cyclic", "x,y,psi,phi"]) == 0


# -- outputs ----------------------------------------------------------------------------------------------------
def test_sweep_outputs(tmp_path):
    js, cs, png = tmp_path / "lin.json", tmp_path / "eig.csv", tmp_path / "eig.png"
    assert main(["linearize", str(DISK_FILE), "--sweep", "der(phi)=1:5:9", "--json", str(js), "--csv", str(cs),
                 "--plot", str(png)]) == 0
    data = json.loads(js.read_text())
    for key in ("states", "A", "B", "C", "D", "eigenvalues", "points", "stability"):
        assert key in data
    assert len(data["points"]) == 9
    for p in data["points"]:
        lam2 = _disk_lean(p["value"])
        assert p["der(phi)"] == p["value"]
        top = max(e[0] for e in p["eigenvalues"])
        assert top == pytest.approx(math.sqrt(max(lam2, 0.0)), abs=1e-9)
        assert all(len(e) == 2 for e in p["eigenvalues"])
    rows = list(csv.DictReader(cs.open()))
    assert len(rows) == 9 and float(rows[0]["der(phi)"]) == 1.0
    assert float(rows[0]["max_real"]) == pytest.approx(math.sqrt(_disk_lean(1.0)), abs=1e-9)
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_symbolic_matches_closed_form(capsys):
    """--symbolic: A(p) of the disk at W = 8 in the parameters, as the closed form of _disk_lean gives it:
    theta'' = 4 g/(5 r) theta + 6/5 W psi', psi'' = -2 W theta'."""
    for method in ("maggi", "lagrange"):
        assert main(["linearize", str(DISK_FILE), "--symbolic", "-m", method]) == 0
        out = capsys.readouterr().out
        assert "A[der(theta), theta] = 4*g/(5*r)" in out, out
        assert "A[der(theta), der(psi)] = 48/5" in out and "A[der(psi), der(theta)] = -16" in out


def test_linear_exports_wired(tmp_path):
    """--modelica and --fmu hand the linear model to the linear exporters."""
    import zipfile

    mo, fmu = tmp_path / "LinDisk.mo", tmp_path / "LinDisk.fmu"
    assert main(["linearize", str(DISK_FILE), "--set", "der(phi)=4", "--modelica", str(mo), "--fmu", str(fmu)]) == 0
    text = mo.read_text()
    assert "parameter Real A[3, 3]" in text and "26.15999" in text  # 4 g/(5 r) = 26.16
    with zipfile.ZipFile(fmu) as z:
        assert "modelDescription.xml" in z.namelist()


def test_parameter_sweep_critical_radius(disk):
    """A parameter sweep (the radius enters the inertias and the rolling constraints, so the dependent velocities
    follow it): at spin W the upright disk is stable above r_c = g/(3 W^2)."""
    system, lins = disk
    sweep = Sweep(lins["lagrange"], system, parse_sweep("r=0.02:0.2:10", system))
    values, models = sweep.run()
    for v, m in zip(values, models):
        assert m.point["der(x)"] == pytest.approx(v * 8.0, rel=1e-14)  # der(x) = r W at psi = 0
        _same_spectrum(m.eigenvalues(), [0.0, *(s * np.sqrt(complex(_disk_lean(8.0, r=v))) for s in (1, -1))], 1e-9)
    (crossing,) = sweep.stability(values, models)["crossings"]
    assert abs(crossing["value"] - 9.81 / (3 * 64.0)) < 1e-12


def test_named_cyclic_not_in_state(bike):
    system, lins = bike
    with pytest.raises(LinearizationError, match="'pitch' cannot be dropped: it is a dependent coordinate"):
        lins["lagrange"].at(operating_point(system), cyclic=["x", "pitch"])


def test_two_sweeps_are_refused_naming_both(capsys, tmp_path):
    """One sweep axis: a second --sweep is refused (exit 2), not silently dropped."""
    out = tmp_path / "eig.csv"
    assert main(["linearize", str(DISK_FILE), "--sweep", "der(phi)=1:5:3", "--sweep", "R=0.1:0.3:3",
                 "--csv", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--sweep is given 2 times ('der(phi)', 'R')" in err and "--set" in err and "Traceback" not in err
    assert not out.exists()


def _numbers(line: str) -> list[str]:
    return re.findall(r"[-+]?\d+(?:\.\d*)?(?:e[-+]?\d+)?", line)


def test_rounding_noise_prints_as_zero_everywhere_in_the_report():
    """A neutral mode whose eigenvalue is rounding noise (1e-44) and a point value -0.0: every printed number of
    them is 0 (no '-0', no natural frequency 1e-44), with the tolerance of the stability verdict."""
    from bridge.linearization.model import LinearModel
    from bridge.linearization.outputs import TOL, damping, round_off, stability_class, text_report

    A = np.array([[0.0, 1.0, 0.0], [-4.0, 0.0, 0.0], [0.0, 0.0, 1.2282e-44]])
    lin = LinearModel("Noise", "lagrange", ("a", "der(a)", "b"), ("rad", "rad/s", "rad"), (), (), (), (),
                      A, np.zeros((3, 0)), np.zeros((0, 3)), np.zeros((0, 0)), np.zeros(3), np.zeros(0),
                      np.zeros(0), point={"a": 0.0, "der(a)": 0.0, "der(b)": -0.0, "der(c)": -3e-17, "der(d)": 2.0},
                      independent=("a",))
    text = text_report(lin)
    assert "-0 " not in text and "-0," not in text and not text.rstrip().endswith("-0")
    assert "der(b) = 0," in text and "der(c) = 0," in text and "der(d) = 2" in text
    modes = text[text.index("eigenvalues"):].splitlines()[1:4]
    zero = [m for m in modes if "+2.0000000000i" not in m and "-2.0000000000i" not in m]
    assert len(zero) == 1 and [float(x) for x in _numbers(zero[0])] == [0.0, 0.0, 0.0], zero
    w = np.linalg.eigvals(A)
    assert damping(np.array([1.2282e-44 + 0j]))[0] is None
    assert round_off(w) == pytest.approx(TOL * 2.0) and stability_class(w) == "marginally stable (a neutral mode)"


def test_the_rolling_disk_report_prints_no_negative_zero(capsys):
    assert main(["linearize", str(DISK_FILE), "-q"]) == 0
    out = capsys.readouterr().out
    assert "der(y) = 0," in out
    assert not re.search(r"(?<![\w.])-0(?![.\d])", out), out
