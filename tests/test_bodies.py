"""Bodies, frames and contacts in the system file (issue 14): the systems they produce agree with energy-based
files written independently (by hand, or generated from the geometry by benchmarks/bicycle.py) to 1e-10 in q''
at random consistent states, for every applicable method; the bicycle reproduces the benchmark's eigenvalues."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.derivation.methods import METHODS
from bridge.errors import SystemFileError
from bridge.model import parse_system

ROOT = Path(__file__).resolve().parents[1]
WHEEL = ROOT / "examples" / "rolling_wheel.toml"

# The rolling wheel by hand: yaw psi, lean theta, spin phi; in the lean frame w = (theta', psi' sin(theta) + phi',
# psi' cos(theta)); the contact point C - R lean.z has zero velocity; the centre height z = R cos(theta).
WHEEL_BY_HAND = """
name = "RollingWheelByHand"
[coordinates]
x = { start = 0.2 }
y = { start = 0.2 }
psi = { start = 0.0 }
theta = { start = 0.001 }
phi = { start = 0.0 }
[parameters]
R = 0.3
m = 2.0
I_axis = 0.06
I_long = 0.12
g = 9.81
[energy]
kinetic = '''m/2*(der(x)^2 + der(y)^2 + (R*sin(theta)*der(theta))^2)
             + I_long/2*(der(theta)^2 + (der(psi)*cos(theta))^2) + I_axis/2*(der(phi) + der(psi)*sin(theta))^2'''
potential = "m*g*R*cos(theta)"
[constraints]
nonholonomic = ["der(x) - R*(der(psi)*sin(theta) + der(phi))*cos(psi) - R*der(theta)*sin(psi)*cos(theta)",
                "der(y) - R*(der(psi)*sin(theta) + der(phi))*sin(psi) + R*der(theta)*cos(psi)*cos(theta)"]
"""
# the same with the centre height z as a coordinate and the contact on the ground as a holonomic constraint
WHEEL_BY_HAND_Z = (WHEEL_BY_HAND.replace("y = { start = 0.2 }", "y = { start = 0.2 }\nz = { start = 0.3 }")
                   .replace("(R*sin(theta)*der(theta))^2", "der(z)^2").replace("m*g*R*cos(theta)", "m*g*z")
                   .replace("theta = { start = 0.001 }", "theta = { start = 0.0 }")
                   .replace("[constraints]", '[constraints]\nholonomic = ["z - R*cos(theta)"]'))


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _wheel_state(rng, with_z: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """A random state on the wheel's constraints (x, y, [z,] psi, theta, phi)."""
    R = 0.3
    x, y, psi, phi = rng.uniform(-2, 2, 4)
    theta = rng.uniform(-0.8, 0.8)
    dpsi, dtheta, dphi = rng.uniform(-3, 3, 3)
    roll = R * (dpsi * np.sin(theta) + dphi)
    dx = roll * np.cos(psi) + R * dtheta * np.sin(psi) * np.cos(theta)
    dy = roll * np.sin(psi) - R * dtheta * np.cos(psi) * np.cos(theta)
    z = [R * np.cos(theta)] if with_z else []
    dz = [-R * np.sin(theta) * dtheta] if with_z else []
    return np.array([x, y, *z, psi, theta, phi]), np.array([dx, dy, *dz, dpsi, dtheta, dphi])


@pytest.fixture(scope="module")
def wheel():
    return bridge.load_system(WHEEL)


def test_wheel_structure(wheel):
    """Under 40 lines; the contact generated 2 nonholonomic constraints, named by the entry, and no holonomic one
    (the height is R*cos(theta) already)."""
    assert len(WHEEL.read_text().splitlines()) < 40
    names = [name for name, _ in wheel.constraints]
    assert names == ["contacts.wheel (no slip along its heading)", "contacts.wheel (no slip along its axle)"]
    assert wheel.multibody is not None and [b.name for b in wheel.multibody.bodies] == ["wheel"]


@pytest.mark.parametrize("method", list(METHODS))
def test_wheel_matches_hand_derivation(wheel, method):
    """q'' of the body-based wheel equals that of the hand-written energies at random consistent states, by every
    method (the wheel is a Chaplygin system: x, y appear nowhere)."""
    reference = bridge.derive(parse_system(WHEEL_BY_HAND), "lagrange").numeric
    num = bridge.derive(wheel, method).numeric
    rng = np.random.default_rng(7)
    for _ in range(4):
        q, qd = _wheel_state(rng)
        assert np.abs(num.constraint_residuals(0.0, q, qd)).max() < 1e-12
        a, b = reference.accelerations(0.0, q, qd), num.accelerations(0.0, q, qd)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-10 * max(1.0, np.abs(a).max()))


def test_wheel_height_as_coordinate_gives_holonomic_constraint(wheel):
    """With z a coordinate (the MSL's choice) the contact adds the holonomic constraint (height of the contact
    point = 0); the motion equals the hand-written file with z."""
    y_line = 'y = { start = 0.2, velocity = -0.3, unit = "m", description = "wheel centre, y" }'
    text = WHEEL.read_text().replace(y_line, 'y = { start = 0.2, velocity = -0.3 }\nz = { start = 0.3 }')
    text = text.replace("[x, y, R*cos(theta)]", "[x, y, z]").replace("start = 0.001", "start = 0.0")
    bodies = parse_system(text)
    assert next(n for n, _ in bodies.constraints) == "contacts.wheel (on the plane)"
    assert (len(bodies.holonomic), len(bodies.nonholonomic)) == (1, 2)
    rng = np.random.default_rng(8)
    _compare(parse_system(WHEEL_BY_HAND_Z), bodies, [_wheel_state(rng, True) for _ in range(3)], ("lagrange", "kane"))


def test_wheel_energy_conserved(wheel):
    """A native simulation keeps T + V (ideal rolling does no work) and the constraints."""
    from bridge.model.numeric import compile_exprs

    result = bridge.simulate(bridge.derive(wheel, "lagrange"), 1.0)
    f = compile_exprs([*wheel.q, *wheel.qd, *wheel.parameter_values], [wheel.kinetic + wheel.potential])
    par = list(wheel.parameter_values.values())
    energy = np.array([f(np.concatenate([q, qd, par]))[0] for q, qd in zip(result.q, result.qd)])
    assert np.ptp(energy) < 1e-6 * abs(energy).max()
    assert result.max_residual < 1e-6


# -- the bicycle -----------------------------------------------------------------------------------------------
BICYCLE_BODIES = ROOT / "examples" / "engineering" / "bicycle_bodies.toml"
TABLE2 = {  # Meijaard et al. (2007), Table 2 (as in tests/test_bicycle.py)
    0.0: [-5.53094371765393, -3.13164324790656, 3.13164324790656, 5.53094371765393],
    4.0: [-12.15861426576447, -1.42944427361326, 0.41325331521125 - 3.07910818603206j,
          0.41325331521125 + 3.07910818603206j],
    5.0: [-14.07838969279822, -0.32286642900409, -0.77534188219585 - 4.46486771378823j,
          -0.77534188219585 + 4.46486771378823j],
    10.0: [-24.62459635017404, 0.16105338653172, -3.72016840437287 - 10.90681139476287j,
           -3.72016840437287 + 10.90681139476287j],
}


@pytest.fixture(scope="module")
def bicycle():
    return _load("bicycle_benchmark_bodies", ROOT / "benchmarks" / "bicycle.py")


@pytest.fixture(scope="module")
def bicycle_energy(derivations):
    # the run's derivations (conftest.py): the bicycle's and the bodies file's equations are shared with other modules
    return derivations.eom(ROOT / "examples" / "engineering" / "bicycle.toml", "lagrange")


@pytest.fixture(scope="module")
def bicycle_bodies():
    return bridge.load_system(BICYCLE_BODIES)


@pytest.fixture(scope="module")
def bicycle_bodies_lagrange(derivations):
    return derivations.eom(BICYCLE_BODIES, "lagrange")


def test_bicycle_structure(bicycle_bodies, bicycle_energy):
    """Under 120 lines; the same coordinates and parameters as the generated energy file; the rear contact's
    height is eliminated by the coordinates, so only the front contact adds a holonomic constraint."""
    assert len(BICYCLE_BODIES.read_text().splitlines()) < 120
    energy = bicycle_energy.system
    assert [c.name for c in bicycle_bodies.coordinates] == [c.name for c in energy.coordinates]
    assert bicycle_bodies.parameter_values == energy.parameter_values
    assert (len(bicycle_bodies.holonomic), len(bicycle_bodies.nonholonomic)) == (1, 4)
    assert next(n for n, _ in bicycle_bodies.constraints) == "contacts.front_wheel (on the plane)"


@pytest.mark.parametrize("method", ["lagrange", "maggi", "kane"])
def test_bicycle_matches_energy_file(bicycle, bicycle_bodies_lagrange, bicycle_energy, derivations, method):
    """q'' at random consistent states (rolled, steered, yawed, any wheel angles) equal to 1e-10."""
    num = (derivations.eom(BICYCLE_BODIES, method).numeric if method != "lagrange"
           else bicycle_bodies_lagrange.numeric)
    ref = bicycle_energy.numeric
    rng = np.random.default_rng(11)
    for _ in range(4):
        q, qd = bicycle.consistent_state(ref, *rng.uniform(-0.3, 0.3, 4), rng.uniform(1, 6),
                                         yaw=rng.uniform(-1, 1))
        q[[0, 1, 5, 7]] = rng.uniform(-3, 3, 4)  # x, y and the wheel angles do not enter the constraints
        assert np.abs(num.constraint_residuals(0.0, q, qd)).max() < 1e-12
        a, b = ref.accelerations(0.0, q, qd), num.accelerations(0.0, q, qd)
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-10 * max(1.0, np.abs(a).max()))


@pytest.mark.parametrize("speed", sorted(TABLE2))
def test_bicycle_table2_eigenvalues(bicycle, bicycle_bodies_lagrange, speed):
    num = bicycle_bodies_lagrange.numeric
    got = bicycle.eigenvalues(num, speed)
    np.testing.assert_allclose(got, np.sort_complex(np.array(TABLE2[speed], dtype=complex)), rtol=0, atol=1e-8)


# -- the other contacts, loads, particles, direction cosines -------------------------------------------------------
SPHERE_BODIES = (ROOT / "examples" / "bodies" / "rolling_sphere.toml").read_text()

SLEIGH_BODIES = (ROOT / "examples" / "bodies" / "sleigh_knife_edge.toml").read_text()


def _compare(system_a, system_b, states, methods=("lagrange",)):
    ref = bridge.derive(system_a, "lagrange").numeric
    for method in methods:
        num = bridge.derive(system_b, method).numeric
        for q, qd in states:
            a, b = ref.accelerations(0.0, q, qd), num.accelerations(0.0, q, qd)
            np.testing.assert_allclose(b, a, rtol=0, atol=1e-10 * max(1.0, np.abs(a).max()))


def test_rolling_sphere_matches_example():
    """examples/rolling_sphere.toml (Euler angles, energies and constraints by hand) from one body and a contact;
    the centre's height is fixed by the coordinates, so no holonomic constraint is generated."""
    bodies = parse_system(SPHERE_BODIES)
    assert (len(bodies.holonomic), len(bodies.nonholonomic)) == (0, 2)
    rng = np.random.default_rng(5)
    states = []
    for _ in range(4):
        theta, phi, psi, x, y = rng.uniform(-1.5, 1.5, 5)
        dtheta, dphi, dpsi = rng.uniform(-2, 2, 3)
        dx = 0.1 * (np.sin(psi) * dtheta - np.sin(theta) * np.cos(psi) * dphi)
        dy = -0.1 * (np.cos(psi) * dtheta + np.sin(theta) * np.sin(psi) * dphi)
        states.append((np.array([theta, phi, psi, x, y]), np.array([dtheta, dphi, dpsi, dx, dy])))
    _compare(bridge.load_system(ROOT / "examples" / "rolling_sphere.toml"), bodies, states, ("lagrange", "appell"))


def test_knife_edge_matches_sleigh():
    """examples/chaplygin_sleigh.toml from a body and a knife-edge contact behind its centre of mass."""
    bodies = parse_system(SLEIGH_BODIES)
    ref = bridge.load_system(ROOT / "examples" / "chaplygin_sleigh.toml")
    rng = np.random.default_rng(2)
    states = []
    for _ in range(4):
        x, y, th = rng.uniform(-1, 1, 3)
        dx, dth = rng.uniform(-1, 1, 2)
        states.append((np.array([x, y, th]), np.array([dx, (0.2 * dth + np.sin(th) * dx) / np.cos(th), dth])))
    _compare(ref, bodies, states, ("lagrange", "chaplygin"))


PENDULUM_BODIES = """
name = "RodPendulumBodies"
[coordinates]
q = { start = 0.4, velocity = 0.1 }
[parameters]
m = 1.3
m2 = 0.4
l = 0.9
I = 0.05
g = 9.81
c = 0.2
[inputs]
F = { start = 1.5 }
[frames]
rod = { parent = "N", axis = "y", angle = "q" }
[points]
tip = "rod[0, 0, -l]"
[bodies]
rod = { mass = "m", frame = "rod", com = "tip/2", inertia = "[I, I, I/10]" }
[particles]
bob = { mass = "m2", position = "tip" }
[gravity]
vector = "[0, 0, -g]"
[loads]
push = { force = "[F, 0, 0]", point = "tip" }
damper = { torque = "-c*der(q)*rod.y", body = "rod" }
"""

PENDULUM_BY_HAND = """
name = "RodPendulumByHand"
[coordinates]
q = { start = 0.4, velocity = 0.1 }
[parameters]
m = 1.3
m2 = 0.4
l = 0.9
I = 0.05
g = 9.81
c = 0.2
[inputs]
F = { start = 1.5 }
[energy]
kinetic = "(m*l^2/4 + I + m2*l^2)/2*der(q)^2"
potential = "-(m*l/2 + m2*l)*g*cos(q)"
[forces]
q = "-F*l*cos(q) - c*der(q)"
"""


def test_loads_particles_gravity():
    """A rod pendulum with a bob (particle), gravity, a force at the tip and a damping torque: the same equation
    as T, V and Q written by hand."""
    states = [(np.array([q]), np.array([v])) for q, v in ((0.4, 0.1), (-1.2, 2.0), (2.5, -0.7))]
    _compare(parse_system(PENDULUM_BY_HAND), parse_system(PENDULUM_BODIES), states)


def test_direction_cosines_equal_elementary_rotations(wheel):
    """The wheel frame given by its direction cosines (yaw, lean, spin multiplied out) gives the same motion."""
    import sympy as sp

    psi, theta, phi = sp.symbols("psi theta phi")
    Rz = sp.Matrix([[sp.cos(psi), -sp.sin(psi), 0], [sp.sin(psi), sp.cos(psi), 0], [0, 0, 1]])
    Rx = sp.Matrix([[1, 0, 0], [0, sp.cos(theta), -sp.sin(theta)], [0, sp.sin(theta), sp.cos(theta)]])
    Ry = sp.Matrix([[sp.cos(phi), 0, sp.sin(phi)], [0, 1, 0], [-sp.sin(phi), 0, sp.cos(phi)]])
    C = Rz * Rx * Ry
    dcm = "[" + ", ".join("[" + ", ".join(str(C[i, j]) for j in range(3)) + "]" for i in range(3)) + "]"
    text = WHEEL.read_text()
    frames = text[text.index("[frames]"):text.index("[bodies]")]
    text = text.replace(frames, f'[frames]\nwheel = {{ parent = "N", dcm = "{dcm}" }}\n\n')
    rng = np.random.default_rng(4)
    _compare(wheel, parse_system(text), [_wheel_state(rng) for _ in range(3)])


def test_energy_table_adds_to_bodies():
    """[energy] entries add to the bodies' energies: a spring on the bob by hand gives the same as both."""
    spring = '[energy]\npotential = "k/2*q^2"\n'
    by_hand = PENDULUM_BY_HAND.replace('potential = "', 'potential = "k/2*q^2 ').replace("c = 0.2", "c = 0.2\nk = 3.0")
    bodies = PENDULUM_BODIES.replace("c = 0.2", "c = 0.2\nk = 3.0") + spring
    _compare(parse_system(by_hand), parse_system(bodies), [(np.array([0.3]), np.array([0.5]))])


# Slow (about 12 s of CPU, marked by tests/durations.json): one body-based system through every command of the
# pipeline (derive by every method, simulate, Modelica with Rumoca, FMU with fmpy, validate); each stage is checked.
def test_rolling_wheel_every_stage(wheel, tmp_path, capsys):
    """The body-based wheel through the command line: the constraints shown, derived by every method, simulated,
    exported to Modelica and simulated by Rumoca, built as an FMU and run by fmpy, validated against the reference
    (natively by lagrange and chaplygin, pymoca, the native FMUs)."""
    import fmpy

    from bridge.cli import main

    assert main(["derive", "--constraints", str(WHEEL)]) == 0
    out = capsys.readouterr().out
    assert "contacts.wheel (no slip along its heading) [nonholonomic]:" in out and "0 holonomic + 2 nonholonomic" in out
    for method in METHODS:
        assert main(["derive", str(WHEEL), "-m", method, "-o", str(tmp_path / f"{method}.txt")]) == 0
        assert "der(der(psi))" in (tmp_path / f"{method}.txt").read_text()
    ref = bridge.simulate(bridge.derive(wheel, "chaplygin"), 1.0, interval=0.01)
    names = [c.name for c in wheel.coordinates]
    csv = tmp_path / "wheel.csv"
    assert main(["simulate", str(WHEEL), "--stop-time", "1", "--interval", "0.01", "-o", str(csv)]) == 0
    table = np.genfromtxt(csv, delimiter=",", names=True)
    np.testing.assert_allclose([table[n][-1] for n in names], ref.q[-1], rtol=0, atol=1e-7)
    assert main(["modelica", str(WHEEL), "-o", str(tmp_path / "wheel.mo"), "--check", "rumoca"]) == 0
    assert "ok rumoca" in capsys.readouterr().out
    fmu = tmp_path / "wheel.fmu"
    assert main(["fmu", str(WHEEL), "-m", "maggi", "--fmi-version", "3", "-o", str(fmu)]) == 0
    res = fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01, output=names,
                            relative_tolerance=1e-10)
    np.testing.assert_allclose([res[n][-1] for n in names], ref.q[-1], rtol=0, atol=1e-6)
    report = tmp_path / "v.json"
    code = main(["validate", str(WHEEL), "-q", "--stop-time", "1", "--runs", "methods,pymoca,fmu", "--methods",
                 "lagrange,chaplygin", "--fmu-methods", "lagrange", "--fmi-version", "2", "--json", str(report)])
    import json

    runs = {r["id"]: r["status"] for r in json.loads(report.read_text())["systems"][0]["runs"]}
    assert code == 0, runs
    assert {"native-lagrange", "native-chaplygin", "modelica-pymoca", "fmu2-me", "fmu2-cs"} <= set(runs)
    assert all(status in ("passed", "skipped") for status in runs.values()), runs
    assert runs["native-chaplygin"] == "passed"


COUPLED_DISKS = """
name = "CoupledDisks"
[coordinates]
a = { start = 0.1, velocity = 0.5 }
b = { start = -0.4, velocity = 1.0 }
[parameters]
J1 = 0.2
J2 = 0.3
k = 4.0
[frames]
A = { parent = "N", axis = "z", angle = "a" }
B = { parent = "N", axis = "z", angle = "b" }
[bodies]
disk_a = { mass = "1", frame = "A", com = "[0, 0, 0]", inertia = "[J1, J1, J1]" }
disk_b = { mass = "1", frame = "B", com = "[1, 0, 0]", inertia = "[J2, J2, J2]" }
[loads]
shaft = { torque = "k*(b - a)*N.z", body = "disk_a", reaction = "disk_b" }
"""


def test_torque_with_reaction():
    """A torque between two bodies (body and reaction): Q_a = k (b - a) = -Q_b, as a torsion spring."""
    import sympy as sp

    system = parse_system(COUPLED_DISKS)
    (a, b), (da, db) = system.q, system.qd
    k, J1, J2 = sp.symbols("k J1 J2")
    assert sp.simplify(system.forces["a"] - k * (b - a)) == 0
    assert sp.simplify(system.forces["b"] + k * (b - a)) == 0
    assert sp.simplify(system.kinetic - (J1 * da**2 + J2 * db**2) / 2) == 0


class _Ctx:
    """A vector-expression context with one frame F rotated by the symbol s about z and one point P."""

    def __init__(self):
        import sympy as sp

        self.s = sp.Symbol("s")
        c, si = sp.cos(self.s), sp.sin(self.s)
        self.R = sp.Matrix([[c, -si, 0], [si, c, 0], [0, 0, 1]])

    def frame_matrix(self, name, pos):
        return self.R if name == "F" else None

    def point(self, name, pos):
        import sympy as sp

        return (sp.Integer(1), sp.Integer(2), sp.Integer(3)) if name == "P" else None

    def scalar(self, text, offset):
        from bridge.model.expressions import parse_expression

        return parse_expression(text, lambda n, p: {"s": self.s}.get(n) or (_ for _ in ()).throw(KeyError(n)),
                                lambda e, p: e.diff(self.s))

    def der(self, expr, pos):
        return expr.diff(self.s)


@pytest.mark.parametrize("s_value", [0.0, 0.7, -2.1])
def test_vector_expressions_against_numpy(s_value):
    """cross, dot, norm, frame components, unit vectors and scaling evaluate as numpy's."""
    from bridge.model.vectors import parse_scalar, parse_vector

    ctx = _Ctx()
    c, s = np.cos(s_value), np.sin(s_value)
    Fx, Fy = np.array([c, s, 0.0]), np.array([-s, c, 0.0])
    P = np.array([1.0, 2.0, 3.0])

    def vec(text):
        return np.array([float(x.subs(ctx.s, s_value)) for x in parse_vector(text, ctx)])

    def sca(text):
        return float(parse_scalar(text, ctx).subs(ctx.s, s_value))

    np.testing.assert_allclose(vec("cross(F.x, P) - 2*F[1, -1, 0]/4"), np.cross(Fx, P) - (Fx - Fy) / 2, atol=1e-15)
    np.testing.assert_allclose(vec("-(P + [1, 0, 0]*sin(s))"), -(P + np.array([np.sin(s_value), 0, 0])), atol=1e-15)
    np.testing.assert_allclose(vec("der(F.y)"), -Fx, atol=1e-15)
    assert abs(sca("dot(F.x, P)^2 + norm(P)") - (Fx @ P) ** 2 - np.linalg.norm(P)) < 1e-13
    assert abs(sca("sqrt(dot(cross(F.x, F.y), [0, 0, 1]))") - 1.0) < 1e-15


@pytest.mark.parametrize("entry, value", [("kind", "3"), ("kind", '["rolling-disk"]'), ("axis", "{ x = 1 }")])
def test_contact_fields_of_the_wrong_type_are_reported(entry, value):
    """A contact's kind or axis given as a number, list or table: a problem at that entry (was a TypeError)."""
    old = 'wheel = { kind = "rolling-disk",'
    new = f'wheel = {{ axis = {value}, kind = "rolling-disk",' if entry == "axis" else f"wheel = {{ kind = {value},"
    text = WHEEL.read_text().replace(old, new)
    with pytest.raises(SystemFileError) as info:
        parse_system(text)
    assert f"contacts.wheel.{entry}:" in str(info.value)
