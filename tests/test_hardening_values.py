"""Checks of values after they change: ``--set``, ``System.with_values``, sweep cases and ``from_mechanics`` get the
same checks (and the same messages) as a value written in the system file; no follow-on message computed from a
value already refused; rates and effort constraints evaluated at the start state; multi-line descriptions kept.

The reference of every message is the file itself: the same value written into the file's text, loaded by
``check``; for from_mechanics, sympy's own dependent speeds (``KanesMethod._Ars``); for descriptions, the text
read back from the .mo (compiled by Rumoca) and from modelDescription.xml. The hostile single-defect files of
these checks are in tests/bad_inputs.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.errors import SystemFileError
from bridge.model.loader import load_system

ROOT = Path(__file__).resolve().parents[1]
WHEEL = ROOT / "examples" / "rolling_wheel.toml"

#: a disk whose inertia tensor has two off-diagonal parameters, equal in the file (symmetric)
SKEW_DISK = """name = "Disk"
[coordinates]
x = { start = 0.0 }
y = { start = 0.0 }
psi = { start = 0.0 }
theta = { start = 0.1 }
phi = { start = 0.0, velocity = 1.0 }
[parameters]
m = 2.0
R = 0.3
g = 9.81
c = 0.001
d = 0.001
[frames]
yaw = { parent = "N", axis = "z", angle = "psi" }
lean = { parent = "yaw", axis = "x", angle = "theta" }
wheel = { parent = "lean", axis = "y", angle = "phi" }
[bodies.disk]
mass = "m"
frame = "wheel"
com = "[x, y, R*cos(theta)]"
inertia = "[[0.05, c, 0], [d, 0.09, 0], [0, 0, 0.05]]"
[contacts]
disk = { kind = "rolling-disk", radius = "R", plane = "N.xy" }
[gravity]
vector = "[0, 0, -g]"
[method]
independent = ["psi", "theta", "phi"]
"""


def messages(err: str, path: Path) -> list[str]:
    """The paragraphs of an error output without the file name that starts each."""
    return [line[len(str(path)) + 2:] for line in err.splitlines() if line.strip()]


def written(text: str, name: str, value: str) -> str:
    """The system file's text with the parameter ``name`` given ``value``."""
    out, n = re.subn(rf"^({name}\s*=\s*(\{{\s*value\s*=\s*)?)[-+0-9.e]+", rf"\g<1>{value}", text, flags=re.M)
    assert n == 1, name
    return out


@pytest.mark.parametrize("name, value, fragment", [
    ("I_axis", "-1", "not positive definite"), ("R", "0", "radius must be positive"),
    ("m", "-2", "mass must be positive"), ("m", "1e300", "outside the range"),
    ("I_axis", "1e300", "beyond 1e+100")])
def test_set_gets_the_message_of_the_value_written_in_the_file(name, value, fragment, tmp_path, capsys):
    assert main(["check", str(WHEEL), "--set", f"{name}={value}"]) == 2
    by_set = messages(capsys.readouterr().err, WHEEL)
    path = tmp_path / "wheel.toml"
    path.write_text(written(WHEEL.read_text(), name, value))
    assert main(["check", str(path)]) == 2
    by_file = messages(capsys.readouterr().err, path)
    assert by_set == by_file, (by_set, by_file)
    assert len(by_set) == 1 and fragment in by_set[0]


def test_set_that_makes_an_inertia_tensor_non_symmetric_is_refused(tmp_path, capsys):
    path = tmp_path / "disk.toml"
    path.write_text(SKEW_DISK)
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--set", "c=0.002"]) == 2
    by_set = messages(capsys.readouterr().err, path)
    assert main(["check", str(path), "--set", "c=0.002", "--set", "d=0.002"]) == 0  # symmetric again
    capsys.readouterr()
    path.write_text(written(SKEW_DISK, "c", "0.002"))
    assert main(["check", str(path)]) == 2
    assert by_set == messages(capsys.readouterr().err, path)
    assert "bodies.disk.inertia: the inertia tensor is not symmetric" in by_set[0]


@pytest.mark.parametrize("command", ["simulate", "fmu", "validate", "linearize", "derive"])
def test_every_command_with_set_refuses_before_running(command, tmp_path, capsys):
    out = tmp_path / "out"
    args = {"simulate": ["-o", str(out)], "fmu": ["-o", str(out)], "validate": ["--report", str(out)],
            "linearize": [], "derive": []}[command]
    code = main([command, str(WHEEL), "--set", "I_axis=-1", *args])
    captured = capsys.readouterr()
    text = captured.err + (captured.out if command == "validate" else "")  # validate reports the error in its table
    assert code == 2, text
    assert "bodies.wheel.inertia: the inertia tensor is not positive definite" in text and "Traceback" not in text
    assert command == "validate" or not out.exists()


def test_with_values_runs_the_checks_of_the_file():
    system = load_system(WHEEL)
    with pytest.raises(SystemFileError, match="contacts.wheel.radius: the radius must be positive"):
        system.with_values(R=-0.3)
    with pytest.raises(SystemFileError, match="bodies.wheel.mass: the mass must be positive"):
        system.with_values({"m": 0})
    assert system.with_values(R=0.25).parameter_values[system.parameters[0].symbol] == 0.25


def test_a_sweep_case_with_a_bad_value_fails_with_the_message(tmp_path):
    """The case's values go through the checks of --set on the worker: a failed row with the message, the
    other cases run."""
    from bridge.sweeps.engine import Payload, run_case
    from bridge.sweeps.record import RecordPlan

    system = load_system(WHEEL)
    payload = Payload(fmu=b"", plan=RecordPlan(records=(), series=()), residuals=2, stop_time=1.0,
                      interval=0.1, rtol=1e-6, timeout=10.0, system=system)
    row = run_case(payload, 3, {"I_axis": -1.0})
    assert row["status"] == "failed" and row["index"] == 3
    assert "bodies.wheel.inertia: the inertia tensor is not positive definite" in row["reason"]


def test_the_file_and_set_share_one_check_of_dependent_constraints(tmp_path, capsys):
    """A value that makes two constraints dependent at the start state is refused after --set as in the file."""
    text = """name = "Twin"
[coordinates]
x = { start = 0.0, velocity = 1.0 }
y = { start = 0.0, velocity = 1.0 }
z = { start = 0.0, velocity = -1.0 }
[parameters]
k = 2.0
[energy]
kinetic = "(der(x)^2 + der(y)^2 + der(z)^2)/2"
[constraints]
nonholonomic = ["der(x) - der(y)", "k*der(x) - 2*der(y) + (k - 2)*der(z)"]
"""
    path = tmp_path / "twin.toml"
    path.write_text(text.replace("k = 2.0", "k = 3.0"))
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--set", "k=2"]) == 2
    by_set = messages(capsys.readouterr().err, path)
    path.write_text(text)
    assert main(["check", str(path)]) == 2
    assert by_set == messages(capsys.readouterr().err, path)
    assert len(by_set) == 1 and "constraints.nonholonomic[2]: this constraint is dependent" in by_set[0]


# -- from_mechanics ---------------------------------------------------------------------------------------
def _pendulum(mass: float, bodies: bool = True):
    """A particle pendulum by Kane's method (sympy's documentation's form)."""
    import sympy as sp
    from sympy.physics.mechanics import KanesMethod, Particle, Point, ReferenceFrame, dynamicsymbols

    th, om = dynamicsymbols("th om")
    length, m, g = sp.symbols("l m g")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, om * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", length * A.x)
    P.v2pt_theory(O, N, A)
    km = KanesMethod(N, q_ind=[th], u_ind=[om], kd_eqs=[th.diff() - om])
    km.kanes_equations([Particle("bob", P, m)] if bodies else [], [(P, m * g * N.x)])
    return km, {length: 1.0, m: mass, g: 9.81}


def test_from_mechanics_refuses_a_particle_of_negative_mass():
    import bridge

    km, parameters = _pendulum(-1.0)
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(km, parameters=parameters)
    assert "particles.bob.mass: the mass must be positive, but it is -1" in str(err.value)
    km, parameters = _pendulum(1.0)
    assert bridge.from_mechanics(km, parameters=parameters).multibody.bodies[0].name == "bob"


def test_from_mechanics_without_bodies_is_a_clear_error():
    import bridge

    km, parameters = _pendulum(1.0, bodies=False)
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(km, parameters=parameters)
    text = str(err.value)
    assert "bodies: the KanesMethod has no bodies or particles" in text and "kanes_equations(bodies, loads)" in text
    assert "\n" not in text.strip()


def test_from_mechanics_accepts_a_full_consistent_start_and_refuses_an_inconsistent_one():
    """The dependent speeds from sympy's own u_dep = A_rs u_ind (KanesMethod._Ars) are accepted with every
    coordinate and speed given (the same start state as with the independent ones alone); one off by 0.01 is
    refused naming it and its residual."""
    import sys

    import numpy as np
    import sympy as sp
    from sympy.physics.mechanics import msubs

    import bridge

    sys.path.insert(0, str(Path(__file__).parent))
    import mechanics_models as mm

    d = mm.rolling_disc_nonholonomic()
    q, u = d.q, d.u
    point = {**d.parameters, q[0]: 0.0, q[1]: 0.2, q[2]: 0.0, q[3]: -0.3 * np.cos(0.2), u[0]: 0.0, u[1]: 4.0,
             u[2]: 0.5}
    dependent = [float(msubs(x, point)) for x in d.kane._Ars * sp.Matrix(u[:3])]
    assert abs(dependent[0]) > 0.5  # the centre moves: a check that can fail
    full = {**d.start, q[0]: 0.0, q[2]: 0.0, u[0]: 0.0, **{u[3 + i]: v for i, v in enumerate(dependent)}}
    alone = bridge.from_mechanics(d.kane, parameters=d.parameters, start=d.start)
    given = bridge.from_mechanics(d.kane, parameters=d.parameters, start=full)
    for a, b in zip(alone.coordinates, given.coordinates):
        assert abs(a.velocity - b.velocity) <= 1e-12 and abs(a.start - b.start) <= 1e-12
    full[u[3]] += 0.01
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(d.kane, parameters=d.parameters, start=full)
    text = str(err.value)
    assert "start[u3(t)]" in text and "does not satisfy the constraints" in text and "residual 0.01" in text


# -- values already known bad: no made-up follow-on ------------------------------------------------------
@pytest.mark.parametrize("value, row", [("m=1e300", "der(der(x))"), ("J=1e300", "der(der(theta))")])
def test_a_huge_mass_is_an_ill_conditioned_mass_matrix_not_a_singular_one(value, row, capsys):
    """An energy-only system (no bodies to check): the mass matrix is regular once scaled, so the message names
    the row of the huge value, not a multiplier without inertia."""
    sleigh = ROOT / "examples" / "chaplygin_sleigh.toml"
    assert main(["check", str(sleigh), "--set", value]) == 2
    err = capsys.readouterr().err
    assert "ill-conditioned" in err and f"1e+300 (for {row})" in err and "singular" not in err
    assert main(["check", str(sleigh), "--set", value.replace("300", "3")]) == 0


def test_a_mass_matrix_without_inertia_for_a_velocity_is_still_singular(tmp_path, capsys):
    path = tmp_path / "s.toml"
    path.write_text('name = "S"\n[coordinates]\nx = { start = 0.0 }\ny = { start = 0.0 }\n[parameters]\nm = 1e300\n'
                    '[energy]\nkinetic = "m/2*der(x)^2"\n')
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "the mass matrix is singular" in err and "der(der(y))" in err


# -- multi-line descriptions -------------------------------------------------------------------------------
MULTILINE = '''name = "Swing"
description = """A pendulum
\tdescribed on "several" lines \\\\ with a tab,
a quote and a backslash."""
[coordinates]
theta = { start = 0.4, velocity = 0.0, unit = "rad", description = """the angle
from the vertical""" }
[parameters]
m = { value = 1.0, unit = "kg", description = "bob\\tmass" }
g = { value = 9.81, unit = "m/s2" }
l = { value = 1.0, unit = "m" }
[energy]
kinetic = "m/2*l^2*der(theta)^2"
potential = "-m*g*l*cos(theta)"
[simulation]
stop_time = 1.0
'''
DESCRIPTION = 'A pendulum\n\tdescribed on "several" lines \\ with a tab,\na quote and a backslash.'


@pytest.fixture(scope="module")
def swing():
    import bridge
    from bridge.model.loader import parse_system

    system = parse_system(MULTILINE, "swing.toml")
    return system, bridge.derive(system, "lagrange")


def test_multi_line_descriptions_are_kept(swing):
    system, _ = swing
    assert system.description == DESCRIPTION
    assert system.coordinate("theta").description == "the angle\nfrom the vertical"
    assert system.parameters[0].description == "bob\tmass"


def test_multi_line_descriptions_in_modelica_are_escaped_and_rumoca_accepts_the_model(swing):
    rumoca = pytest.importorskip("rumoca")
    from bridge.modelica.export import model_source
    from bridge.tools.rumoca import load_alone
    from bridge.validation.tool_checks import check_rumoca

    _, eom = swing
    text = model_source(eom)
    head = 'model Swing "A pendulum\\n\\tdescribed on \\"several\\" lines \\\\ with a tab,\\na quote and a backslash."'
    assert head in text.splitlines()
    assert '"the angle\\nfrom the vertical"' in text and '"bob\\tmass"' in text
    assert "\t" not in text  # every tab of the descriptions escaped
    model = load_alone(rumoca, text, "Swing")
    assert model.structure().is_balanced
    report = check_rumoca(eom, stop_time=1.0)
    assert report.max_error < 1e-6, report.summary()


def test_multi_line_descriptions_in_the_fmu_model_description(swing, tmp_path):
    import zipfile

    from lxml import etree

    from bridge.fmu.build import build_fmu

    _, eom = swing
    fmu = build_fmu(eom, tmp_path / "Swing.fmu", 2)
    raw = zipfile.ZipFile(fmu).read("modelDescription.xml")
    assert b"A pendulum&#10;&#9;described on &quot;several&quot; lines" in raw
    root = etree.fromstring(raw, etree.XMLParser(resolve_entities=False))
    assert root.get("description") == DESCRIPTION
    names = {v.get("name"): v.get("description") for v in root.iter("ScalarVariable")}
    assert names["theta"].startswith("the angle\nfrom the vertical") and names["m"] == "bob\tmass"
    fmpy = pytest.importorskip("fmpy")
    result = fmpy.simulate_fmu(str(fmu), stop_time=0.5)  # the C sources compiled and run
    assert abs(result["theta"][0] - 0.4) < 1e-12


@pytest.mark.parametrize("char", ["\\u0001", "\\u000b", "\\u000c", "\\u001b", "\\u007f"])
def test_other_control_characters_in_descriptions_are_still_refused(char, capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(MULTILINE.replace("bob\\tmass", f"bob{char}mass"))
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"parameters.m.description: the text contains the control or non-character U+{char[2:].upper()}" in err


def test_a_line_break_in_a_unit_is_refused(capsys, tmp_path):
    path = tmp_path / "s.toml"
    path.write_text(MULTILINE.replace('unit = "kg"', 'unit = """k\ng"""'))
    assert main(["check", str(path)]) == 2
    assert "parameters.m.unit: the text contains the control or non-character U+000A" in capsys.readouterr().err


# -- rates and effort constraints at the start state ------------------------------------------------------
RATE = """name = "Rate"
[coordinates]
x = { start = 0.1, velocity = 0.0 }
[parameters]
m = 1.0
k = 2.0
a = 1.0
[energy]
kinetic = "m/2*der(x)^2"
potential = "k/2*x^2"
[dynamic]
i = { start = 0.0, rate = "log(x + a) - i" }
[efforts]
tau = { constraint = "tau - sqrt(a + x)*i" }
[forces]
x = "tau"
"""


def test_rates_and_effort_constraints_not_finite_at_the_start_are_refused_after_set(tmp_path, capsys):
    """log(x + a) and sqrt(a + x) at x = 0.1: finite for a = 1, not for a = -0.2; both entries named, in the
    file and after --set alike, and simulate refuses before running."""
    path = tmp_path / "rate.toml"
    path.write_text(RATE)
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--set", "a=-0.2"]) == 2
    by_set = messages(capsys.readouterr().err, path)
    assert [m.split(":")[0] for m in by_set] == ["dynamic.i.rate", "efforts.tau.constraint"], by_set
    assert all("not finite at the start state" in m for m in by_set)
    path.write_text(written(RATE, "a", "-0.2"))
    assert main(["check", str(path)]) == 2
    assert by_set == messages(capsys.readouterr().err, path)
    assert main(["simulate", str(path), "-o", str(tmp_path / "r.csv")]) == 2
    assert not (tmp_path / "r.csv").exists()


# -- the kinetic energy of a system written in the energy form: positive semi-definite ------------------------
SLEIGH = ROOT / "examples" / "chaplygin_sleigh.toml"


@pytest.mark.parametrize("name, value, along", [("m", "-2", "der(x), der(y)"), ("J", "-0.1", "der(theta)")])
def test_a_negative_mass_of_an_energy_form_system_is_refused_after_set_as_in_the_file(name, value, along, tmp_path,
                                                                                       capsys):
    """T = m/2 (x'^2 + y'^2) + J/2 theta'^2: M = diag(m, m, J), so the negative eigenvalue is the negative value
    itself, along the velocities it multiplies; one paragraph (no singular-matrix follow-on), the same for the value
    written in the file."""
    assert main(["check", str(SLEIGH), "--set", f"{name}={value}"]) == 2
    by_set = messages(capsys.readouterr().err, SLEIGH)
    path = tmp_path / "sleigh.toml"
    path.write_text(written(SLEIGH.read_text(), name, value))
    assert main(["check", str(path)]) == 2
    assert by_set == messages(capsys.readouterr().err, path)
    assert len(by_set) == 1, by_set
    assert by_set[0].startswith(
        "energy.kinetic: the kinetic energy is not positive for every velocity at the start state: its mass matrix "
        f"d2T/dq'dq' has the negative eigenvalue {value} (along {along})")
    assert f"negative parameter in it: {name} = {value}" in by_set[0] and "Traceback" not in by_set[0]
    assert main(["simulate", str(SLEIGH), "--set", f"{name}={value}", "-o", str(tmp_path / "s.csv")]) == 2
    assert not (tmp_path / "s.csv").exists()
    with pytest.raises(SystemFileError, match="the kinetic energy is not positive"):
        load_system(SLEIGH).with_values({name: float(value)})


def test_a_zero_mass_is_still_judged_by_the_regularity_of_the_mass_matrix(capsys):
    """m = 0: M = diag(0, 0, J) is semi-definite, so the derivation's check names the acceleration without inertia
    (the knife edge determines y' from x' and theta', not x')."""
    assert main(["check", str(SLEIGH), "--set", "m=0"]) == 2
    err = capsys.readouterr().err
    assert "the mass matrix is singular" in err and "der(der(x))" in err and "not positive for every" not in err


CROSS = """name = "Cross"
[coordinates]
x = { start = 0.0, velocity = 1.0 }
y = { start = 0.0, velocity = 0.0 }
[parameters]
m = 1.0
c = 0.5
[energy]
kinetic = "m/2*(der(x)^2 + der(y)^2) + c*der(x)*der(y)"
"""


def test_an_indefinite_energy_with_positive_parameters_names_no_parameter(tmp_path, capsys):
    """M = [[m, c], [c, m]] has the eigenvalues m - c and m + c (along der(x) - der(y) and der(x) + der(y)): c = 0.5
    is valid, c = 3 gives the eigenvalue -2 with no negative parameter to blame."""
    path = tmp_path / "cross.toml"
    path.write_text(CROSS)
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--set", "c=3"]) == 2
    (paragraph,) = messages(capsys.readouterr().err, path)
    assert "has the negative eigenvalue -2 (along der(x), der(y))" in paragraph
    assert "no parameter in it is negative" in paragraph


def test_a_coordinate_without_inertia_that_a_constraint_determines_still_loads(tmp_path, capsys):
    """y has no inertia of its own (a zero row of M: semi-definite, not definite) but der(y) = der(x) determines it:
    valid, and it moves with x (native simulation: y(t) = x(t) = t). A negative m is still refused, along der(x)."""
    import bridge
    from bridge.simulation.simulate import simulate

    text = ('name = "Follower"\n[coordinates]\nx = { start = 0.0, velocity = 1.0 }\n'
            'y = { start = 0.0, velocity = 1.0 }\n'
            '[parameters]\nm = 2.0\n[energy]\nkinetic = "m/2*der(x)^2"\n'
            '[constraints]\nnonholonomic = ["der(y) - der(x)"]\n')
    path = tmp_path / "follower.toml"
    path.write_text(text)
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    cols = simulate(bridge.derive(load_system(path), "lagrange"), 1.0).columns()
    assert abs(cols["y"][-1] - 1.0) < 1e-6 and abs(cols["x"][-1] - 1.0) < 1e-6
    assert main(["check", str(path), "--set", "m=-2"]) == 2
    assert "negative eigenvalue -2 (along der(x))" in capsys.readouterr().err
    for example in ("dc_motor_drive.toml", "nonsmooth/belt_drive.toml"):  # a massless coordinate each, valid
        assert main(["check", str(ROOT / "examples" / example)]) == 0
    capsys.readouterr()


def test_a_sweep_case_with_a_negative_mass_fails_that_case_only(tmp_path, capsys):
    """Two cases on one worker: m = -2 is a failed row with the message, m = 1.5 runs and matches the native
    simulation of the file's system with m = 1.5 set."""
    pytest.importorskip("distributed")
    pa_parquet = pytest.importorskip("pyarrow.parquet")
    import bridge
    from bridge.simulation.simulate import simulate

    out = tmp_path / "sweep.parquet"
    code = main(["sweep", str(SLEIGH), "--values", "m=-2,1.5", "--record", "final(x)", "--stop-time", "0.5",
                 "--rtol", "1e-10", "--workers", "1", "-o", str(out), "--quiet"])
    assert code == 1, capsys.readouterr()
    table = pa_parquet.read_table(out).to_pydict()
    assert table["m"] == [-2.0, 1.5] and table["status"] == ["failed", "ok"]
    assert "energy.kinetic: the kinetic energy is not positive" in table["reason"][0]
    system = load_system(SLEIGH, {"m": "1.5"})
    ref = simulate(bridge.derive(system, "lagrange"), 0.5, rtol=1e-11, atol=1e-13).columns()["x"][-1]
    assert abs(table["final(x)"][1] - ref) <= 1e-6 * max(1.0, abs(ref))
