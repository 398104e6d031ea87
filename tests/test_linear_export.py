"""The linear model as Modelica (Rumoca, pymoca) and as an FMU (fmpy: FMI 2 and 3, ME and CS).

The linear models are built here by central differences of the nonlinear model's numeric right-hand side
(``eom.numeric``), independently of ``bridge.linearize``: the hanging simple pendulum (examples/simple_pendulum.toml),
a damped pendulum driven by a torque input about its tilted equilibrium (inputs, outputs with feedthrough) and the
Chaplygin sleigh (nonholonomic; maggi, independent x and theta) in straight running, its cyclic x and y dropped.

References: the nonlinear native simulation (``bridge.simulate``) from the same perturbed state: the difference
is second order in the perturbation (a quarter when it halves; an eighth for the hanging pendulum, whose sine has
no quadratic term), and the closed-form solution by the matrix exponential (scipy.linalg.expm) to 1e-8.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import expm

import bridge
from bridge.errors import ExportError
from bridge.linearization.export_common import modelica_name
from bridge.linearization.export_fmu import build_linear_fmu
from bridge.linearization.export_modelica import linear_modelica_source, write_linear_modelica
from bridge.linearization.model import LinearModel

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

DRIVEN = """
name = "DrivenPendulum"
description = "damped pendulum driven by a torque"
[coordinates]
theta = { start = 0.0, velocity = 0.0, unit = "rad", description = "angle from the downward vertical" }
[parameters]
m = { value = 0.5, unit = "kg" }
l = { value = 0.8, unit = "m" }
g = { value = 9.81, unit = "m/s2" }
c = { value = 0.2, unit = "N.m.s/rad" }
[inputs]
tau = { start = 0.3, unit = "N.m", description = "driving torque" }
[energy]
kinetic = "1/2*m*l^2*der(theta)^2"
potential = "m*g*l*(1 - cos(theta))"
[forces]
theta = "tau - c*der(theta)"
[outputs]
tip_x = { expr = "l*sin(theta)", unit = "m" }
load = { expr = "tau + m*g*l*sin(theta)*cos(theta) + c*der(theta)", unit = "N.m" }
[simulation]
stop_time = 4.0
"""


# -- the linear models, by central differences of the nonlinear right-hand side ---------------------------------
def finite_difference_linear(eom, q0, speeds0, inputs0, keep: list[int], step: float = 1e-6) -> LinearModel:
    """A, B, C, D of ``x = (q, u)`` (u: the method's speeds) at the point, over the states ``keep`` (indices
    into x; the others held), by central differences; the point must be a steady state of the kept ones."""
    num = eom.numeric
    system = eom.system
    n = system.n
    x_point = np.concatenate([q0, speeds0]).astype(float)
    u_point = np.asarray(inputs0, dtype=float)

    def f(x, u):
        num.inputs = np.asarray(u, dtype=float)
        return num.rhs(0.0, x)[keep]

    def y(x, u):
        num.inputs = np.asarray(u, dtype=float)
        return num.outputs(0.0, x[:n], num.kinematics(0.0, x[:n], x[n:]))

    def at(z):
        x = x_point.copy()
        x[keep] = z
        return x

    z0 = x_point[keep]
    nk, m, p = len(keep), len(u_point), len(system.outputs)
    A, B, C, D = np.zeros((nk, nk)), np.zeros((nk, m)), np.zeros((p, nk)), np.zeros((p, m))
    for j in range(nk):
        e = np.zeros(nk)
        e[j] = step
        A[:, j] = (f(at(z0 + e), u_point) - f(at(z0 - e), u_point)) / (2 * step)
        C[:, j] = (y(at(z0 + e), u_point) - y(at(z0 - e), u_point)) / (2 * step)
    for k in range(m):
        e = np.zeros(m)
        e[k] = step
        B[:, k] = (f(x_point, u_point + e) - f(x_point, u_point - e)) / (2 * step)
        D[:, k] = (y(x_point, u_point + e) - y(x_point, u_point - e)) / (2 * step)
    assert np.abs(f(x_point, u_point)).max() < 1e-12  # a steady state of the kept states
    speeds = [bridge.symbols.base_name(s) for s in eom.u]
    units = {c.name: c.unit for c in system.coordinates}
    names = [c.name for c in system.coordinates] + [f"der({s})" for s in speeds]
    all_units = [units[c.name] for c in system.coordinates] + [f"{units[s]}/s" for s in speeds]
    dropped = tuple(names[i] for i in range(n) if i not in keep)
    return LinearModel(system.name, eom.method, tuple(names[i] for i in keep), tuple(all_units[i] for i in keep),
                       tuple(u.name for u in system.inputs), tuple(u.unit for u in system.inputs),
                       tuple(system.outputs), tuple(system.output_units.get(o, "") for o in system.outputs),
                       A, B, C, D, z0, u_point, y(x_point, u_point),
                       point={**dict(zip(names, x_point))}, dropped=dropped, independent=tuple(speeds))


class Case:
    """A system, its linear model and the nonlinear simulation from a perturbed start."""

    def __init__(self, key: str, system, method: str, lin: LinearModel, direction: dict[str, float],
                 independent=None, order: int = 2):
        self.key, self.system, self.lin, self.direction, self.order = key, system, lin, direction, order
        self.independent = independent
        self.eom = bridge.derive(system, method, independent=independent)
        self.stop = 4.0

    def start(self, scale: float) -> np.ndarray:
        """The perturbed start (absolute) of the linear model's states."""
        return self.lin.x0 + scale * np.array([self.direction.get(s, 0.0) for s in self.lin.states])

    def nonlinear(self, scale: float, grid: np.ndarray) -> dict[str, np.ndarray]:
        """States and outputs of the nonlinear native simulation from :meth:`start` on ``grid``."""
        from bridge.model.overrides import apply_overrides

        coordinates = {c.name for c in self.system.coordinates}
        inputs = {u.name for u in self.system.inputs}
        keep = coordinates | inputs | {f"der({q})" for q in self.lin.independent}
        values = {k: float(v) for k, v in self.lin.point.items() if k in keep}  # the operating point ...
        values.update(zip(self.lin.states, map(float, self.start(scale))))  # ... perturbed
        system = apply_overrides(self.system, values)
        eom = bridge.derive(system, self.eom.method, independent=self.independent)
        res = bridge.simulate(eom, self.stop, rtol=1e-12, atol=1e-14, interval=self.stop / 400)
        return {name: np.interp(grid, res.time, res[name]) for name in [*self.lin.states, *self.lin.outputs]}


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    out = {}
    pendulum = bridge.load_system(EXAMPLES / "simple_pendulum.toml")
    eom = bridge.derive(pendulum, "lagrange")
    out["pendulum"] = Case("pendulum", pendulum, "lagrange",
                           finite_difference_linear(eom, [0.0], [0.0], [], [0, 1]),
                           {"theta": 0.04, "der(theta)": 0.05}, order=3)
    driven = bridge.parse_system(DRIVEN)
    eom = bridge.derive(driven, "lagrange")
    tilt = math.asin(0.3 / (0.5 * 0.8 * 9.81))  # m g l sin(theta) = tau
    out["driven"] = Case("driven", driven, "lagrange", finite_difference_linear(eom, [tilt], [0.0], [0.3], [0, 1]),
                         {"theta": 0.08, "der(theta)": -0.1})
    sleigh = bridge.load_system(EXAMPLES / "chaplygin_sleigh.toml")
    eom = bridge.derive(sleigh, "maggi", independent=["x", "theta"])
    # straight running along x at 0.3 m/s: states (x, y, theta, der(x), der(theta)); x and y are cyclic
    out["sleigh"] = Case("sleigh", sleigh, "maggi",
                         finite_difference_linear(eom, [0.0, 0.0, 0.0], [0.3, 0.0], [], [2, 3, 4]),
                         {"theta": 0.02, "der(x)": 0.006, "der(theta)": 0.05}, independent=["x", "theta"])
    return out


def build_fmus(cases: dict[str, Case], folder: Path) -> dict[tuple[str, int], Path]:
    return {(key, v): build_linear_fmu(case.lin, folder / f"{key}{v}.fmu", fmi_version=f"{v}.0")
            for key, case in cases.items() for v in (2, 3)}


@pytest.fixture(scope="module")
def fmus(cases, tmp_path_factory) -> dict[tuple[str, int], Path]:
    return build_fmus(cases, tmp_path_factory.mktemp("linear-fmus"))


@pytest.fixture(scope="module")
def linearized() -> dict[str, Case]:
    """The same points linearized by ``bridge.linearization.linearize`` (minimal states: the sleigh keeps der(theta)
    only, its heading cyclic and its speed conserved); skipped while that module is not there."""
    module = pytest.importorskip("bridge.linearization.linearize")
    sleigh = bridge.load_system(EXAMPLES / "chaplygin_sleigh.toml")
    eom = bridge.derive(sleigh, "maggi", independent=["x", "theta"])
    driven = bridge.parse_system(DRIVEN)
    tilt = math.asin(0.3 / (0.5 * 0.8 * 9.81))
    return {
        "sleigh-linearize": Case("sleigh-linearize", sleigh, "maggi",
                                 module.linearize(eom, at={"theta": 0.0, "der(x)": 0.3, "der(theta)": 0.0}),
                                 {"der(theta)": 0.05}, independent=["x", "theta"], order=3),
        "driven-linearize": Case("driven-linearize", driven, "lagrange",
                                 module.linearize(bridge.derive(driven, "lagrange"),
                                                  at={"theta": tilt, "der(theta)": 0.0, "tau": 0.3}),
                                 {"theta": 0.08, "der(theta)": -0.1}),
    }


@pytest.fixture(scope="module")
def linearized_fmus(linearized, tmp_path_factory) -> dict[tuple[str, int], Path]:
    return build_fmus(linearized, tmp_path_factory.mktemp("linearized-fmus"))


# -- running the linear model in each tool ----------------------------------------------------------------------
def run_fmu(path: Path, lin: LinearModel, start: np.ndarray, stop: float, grid: np.ndarray, kind: str,
            inputs: np.ndarray | None = None) -> dict[str, np.ndarray]:
    import fmpy

    signal = None
    if inputs is not None:
        dtype = [("time", float)] + [(u, float) for u in lin.inputs]
        signal = np.array([(0.0, *inputs), (stop, *inputs)], dtype=dtype)
    res = fmpy.simulate_fmu(str(path), fmi_type=kind, start_values=dict(zip(lin.states, map(float, start))),
                            stop_time=stop, output_interval=stop / 400, relative_tolerance=1e-11, input=signal,
                            output=[*lin.states, *lin.outputs])
    return {name: np.interp(grid, res["time"], res[name]) for name in [*lin.states, *lin.outputs]}


def run_modelica(tool: str, lin: LinearModel, start: np.ndarray, stop: float, grid: np.ndarray) -> dict:
    source = linear_modelica_source(lin, x_start=start, stop_time=stop)
    model = f"{lin.system}_linear"
    names = {name: modelica_name(name) for name in [*lin.states, *lin.outputs]}
    if tool == "rumoca":
        import rumoca

        from bridge.tools.rumoca import load_alone

        compiled = load_alone(rumoca, source, model)
        assert compiled.structure().is_balanced
        assert compiled.structure().n_states == len(lin.states)
        res = compiled.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-11, atol=1e-13, dt=stop / 400))
        time = np.asarray(res.time, dtype=float)
        return {k: np.interp(grid, time, np.asarray(res[v], dtype=float)) for k, v in names.items()}
    from bridge.tools.pymoca import simulate_pymoca

    res = simulate_pymoca(source, model, stop, stop / 400, 1e-11)
    assert res.states == len(lin.states)
    return {k: np.interp(grid, res.time, res[v]) for k, v in names.items()}


TOOLS = ["fmu2-ModelExchange", "fmu2-CoSimulation", "fmu3-ModelExchange", "fmu3-CoSimulation", "rumoca", "pymoca"]


def run_linear(tool: str, case: Case, fmus, scale: float, grid: np.ndarray) -> dict[str, np.ndarray]:
    start = case.start(scale)
    if tool.startswith("fmu"):
        version, kind = int(tool[3]), tool.split("-")[1]
        return run_fmu(fmus[case.key, version], case.lin, start, case.stop, grid, kind)
    return run_modelica(tool, case.lin, start, case.stop, grid)


_NONLINEAR: dict[tuple[str, float], dict] = {}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("key", ["pendulum", "driven", "sleigh"])
def test_linear_model_is_the_nonlinear_one_to_second_order(cases, fmus, key, tool):
    """From x0 + s*d, the linear model (in each tool) differs from the nonlinear simulation by O(s^2): halving s
    divides the largest difference of the states and that of the outputs by 4 (the states of the hanging pendulum
    by 8: its sine has no s^2 term; its energy output is quadratic), and for the smaller s they are below 2 % of
    how far the states moved."""
    check_second_order(cases[key], fmus, tool)


def check_second_order(case: Case, fmus, tool: str) -> None:
    """The difference to the nonlinear simulation from x0 + s*d and x0 + s/2*d shrinks as s^order (states) and s^2
    (outputs), and is below 2 % of how far the states moved for s/2."""
    grid = np.linspace(0.0, case.stop, 201)
    errors: dict[str, list[float]] = {"states": [], "outputs": []}
    moved = 0.0
    for scale in (1.0, 0.5):
        if (case.key, scale) not in _NONLINEAR:
            _NONLINEAR[case.key, scale] = case.nonlinear(scale, grid)
        ref = _NONLINEAR[case.key, scale]
        lin = run_linear(tool, case, fmus, scale, grid)
        for part, names in (("states", case.lin.states), ("outputs", case.lin.outputs)):
            errors[part].append(max((float(np.abs(lin[k] - ref[k]).max()) for k in names), default=0.0))
        moved = max(float(np.abs(lin[s] - x).max()) for s, x in zip(case.lin.states, case.lin.x0))
    for part, order in (("states", case.order), ("outputs", 2)):
        if errors[part][1] > 0:
            ratio = errors[part][0] / errors[part][1]
            assert 0.8 * 2 ** order < ratio < 1.25 * 2 ** order, (part, errors, ratio)
    # absolute closeness: the small perturbation's response (it moved the states by > 1e-2) is right to 2 %
    assert moved > 1e-2 and max(errors["states"][1], errors["outputs"][1]) < 0.02 * moved, (errors, moved)


@pytest.mark.parametrize("tool", ["fmu2-ModelExchange", "fmu3-CoSimulation", "rumoca", "pymoca"])
@pytest.mark.parametrize("key", ["sleigh-linearize", "driven-linearize"])
def test_exports_of_bridge_linearize(cases, linearized, linearized_fmus, key, tool):
    """The linear models of ``linearize`` export and run as well (second order; the sleigh's yaw rate, its only
    state, third: its speed changes at second order and enters the yaw equation multiplied by the yaw rate), and
    the driven pendulum's equals the central differences here to 1e-8."""
    case = linearized[key]
    if key == "driven-linearize":
        ref = cases["driven"].lin
        for name in ("A", "B", "C", "D", "x0", "u0", "y0"):
            assert np.allclose(getattr(case.lin, name), getattr(ref, name), rtol=0, atol=1e-8), name
    check_second_order(case, linearized_fmus, tool)


# -- an engineering-sized system: the benchmark bicycle ------------------------------------------------------------
def _benchmark_bicycle():
    """benchmarks/bicycle.py as a module (consistent_state, roll_steer_jacobian)."""
    import importlib.util
    import sys

    path = EXAMPLES.parent / "benchmarks" / "bicycle.py"
    spec = importlib.util.spec_from_file_location("nhbridge_benchmark_bicycle", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bicycle(tmp_path_factory, derivations) -> tuple[dict[str, Case], dict[tuple[str, int], Path]]:
    """The Whipple bicycle (examples/engineering/bicycle.toml, 8 coordinates, 5 constraints) running upright and
    straight at 5 m/s: its roll-steer dynamics (benchmarks/bicycle.py: central differences over consistent
    states), outputs roll, steer and speed by central differences over the same states."""
    bench = _benchmark_bicycle()
    eom = derivations.eom(EXAMPLES / "engineering" / "bicycle.toml", "lagrange")  # derived once per run
    system = eom.system
    num = eom.numeric
    speed = 5.0
    A = bench.roll_steer_jacobian(num, speed)
    step = 1e-6

    def outputs(z):
        q, qd = bench.consistent_state(num, *z, speed)
        return num.outputs(0.0, q, qd)

    C = np.array([(outputs(e) - outputs(-e)) / (2 * step) for e in np.eye(4) * step]).T
    r_R = num.params[[p.name for p in system.parameters].index("r_R")]
    states = ("phi", "delta", "der(phi)", "der(delta)")
    lin = LinearModel(system.name, "lagrange", states, ("rad", "rad", "rad/s", "rad/s"), (), (),
                      tuple(system.outputs), tuple(system.output_units.get(o, "") for o in system.outputs),
                      A, np.zeros((4, 0)), C, np.zeros((len(system.outputs), 0)), np.zeros(4), np.zeros(0),
                      outputs(np.zeros(4)), point={"der(theta_R)": -speed / r_R},
                      dropped=("x", "y", "psi", "theta_R", "theta_F"), independent=("phi", "delta", "theta_R"))
    # left-right symmetry: the lateral states have no quadratic terms (third order); the speed output has
    case = Case("bicycle", system, "lagrange", lin, {"phi": 0.02, "delta": 0.01, "der(phi)": -0.05}, order=3)
    case.stop = 3.0
    return {"bicycle": case}, build_fmus({"bicycle": case}, tmp_path_factory.mktemp("bicycle-fmus"))


@pytest.mark.parametrize("tool", ["fmu2-ModelExchange", "fmu3-CoSimulation", "rumoca", "pymoca"])
def test_bicycle_roll_steer_model(bicycle, tool):
    """The bicycle's linear model (eigenvalues of Meijaard et al. 2007, Table 2 at 5 m/s, checked in
    tests/test_bicycle.py) against the nonlinear lagrange simulation of all 8 coordinates from the same perturbed
    upright state: third order in the roll-steer states, second in the outputs (speed)."""
    cases, fmus = bicycle
    check_second_order(cases["bicycle"], fmus, tool)


# -- the FMU against the closed form ------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("kind", ["ModelExchange", "CoSimulation"])
def test_fmu_is_the_matrix_exponential(cases, fmus, version, kind):
    """Driven pendulum from x0 + dx with the input held at u0 + du: x(t) = x0 + e^(At) dx + int e^(As) ds B du
    (one expm of the augmented matrix [[A, B du], [0, 0]]), y = y0 + C (x - x0) + D du, to 1e-8."""
    case = cases["driven"]
    lin = case.lin
    dx, du = np.array([0.03, -0.2]), np.array([0.15])
    grid = np.linspace(0.0, case.stop, 81)
    got = run_fmu(fmus["driven", version], lin, lin.x0 + dx, case.stop, grid, kind, inputs=lin.u0 + du)
    n = len(lin.states)
    aug = np.zeros((n + 1, n + 1))
    aug[:n, :n], aug[:n, n] = lin.A, lin.B @ du
    x = np.array([lin.x0 + (expm(aug * t) @ np.append(dx, 1.0))[:n] for t in grid])
    y = lin.y0 + (x - lin.x0) @ lin.C.T + lin.D @ du
    for k, s in enumerate(lin.states):
        assert np.abs(got[s] - x[:, k]).max() < 1e-8, s
    for k, o in enumerate(lin.outputs):
        assert np.abs(got[o] - y[:, k]).max() < 1e-8, o
    assert np.abs(x - lin.x0).max() > 0.01  # it moved


@pytest.mark.parametrize("version", [2, 3])
def test_fmu_matrices_are_parameters(cases, fmus, version):
    """A[i,j], x0 ... are parameters: set before the run, the FMU follows the changed model (closed form)."""
    import fmpy

    case = cases["driven"]
    lin = case.lin
    A = lin.A.copy()
    A[1, 0], A[1, 1] = -20.0, -1.5
    x0 = lin.x0 + np.array([0.05, 0.0])  # another operating point; the states start where they did
    grid = np.linspace(0.0, 2.0, 41)
    res = fmpy.simulate_fmu(str(fmus["driven", version]), fmi_type="CoSimulation", stop_time=2.0,
                            output_interval=0.05, relative_tolerance=1e-11, output=list(lin.states),
                            start_values={"A[2,1]": A[1, 0], "A[2,2]": A[1, 1], "x0[1]": x0[0]})
    expected = np.array([x0 + expm(A * t) @ (lin.x0 - x0) for t in grid])
    got = np.array([np.interp(grid, res["time"], res[s]) for s in lin.states]).T
    assert np.abs(got - expected).max() < 1e-8
    assert np.abs(expected - lin.x0).max() > 0.04  # it moved towards the new operating point


@pytest.mark.skipif(__import__("shutil").which("cmake") is None, reason="fmpy compile needs cmake")
@pytest.mark.parametrize("version", [2, 3])
def test_fmu_sources_rebuild_the_binary(cases, fmus, version, tmp_path):
    """The binary removed, ``fmpy compile`` (CMake, all warnings as errors) rebuilds it from sources/ alone; the
    rebuilt FMU gives the same run (CS, input step) to rounding."""
    import subprocess
    import sys
    import zipfile

    case = cases["driven"]
    fmu = fmus["driven", version]
    stripped = tmp_path / fmu.name
    with zipfile.ZipFile(fmu) as src, zipfile.ZipFile(stripped, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if not info.filename.startswith("binaries/"):
                dst.writestr(info, src.read(info))
    proc = subprocess.run([sys.executable, "-m", "fmpy.cli", "compile", str(stripped), "--all-warnings",
                           "--warning-as-error"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    grid = np.linspace(0.0, case.stop, 41)
    start, step = case.lin.x0 + [0.02, 0.0], case.lin.u0 + 0.1
    ours = run_fmu(fmu, case.lin, start, case.stop, grid, "CoSimulation", inputs=step)
    rebuilt = run_fmu(stripped, case.lin, start, case.stop, grid, "CoSimulation", inputs=step)
    assert np.ptp(ours["theta"]) > 5e-3  # it moves
    for name, values in ours.items():
        assert np.abs(rebuilt[name] - values).max() <= 1e-12 * max(1.0, float(np.abs(values).max())), name


def test_fmu_directional_derivatives_are_the_matrices(cases, fmus, tmp_path):
    """FMI 2 ME: getDirectionalDerivative of (derivatives, outputs) by (states, input) is [[A, B], [C, D]]."""
    import fmpy
    from fmpy.fmi2 import FMU2Model

    case = cases["driven"]
    lin = case.lin
    path = fmus["driven", 2]
    md = fmpy.read_model_description(str(path))
    unzipped = fmpy.extract(str(path), unzipdir=str(tmp_path / "unzipped"))
    fmu = FMU2Model(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.modelExchange.modelIdentifier,
                    instanceName="lin")
    vr = {v.name: v.valueReference for v in md.modelVariables}
    deriv = [vr[v.variable.name] for v in md.derivatives]
    fmu.instantiate()
    fmu.setupExperiment()
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    knowns = [vr[s] for s in lin.states] + [vr[u] for u in lin.inputs]
    unknowns = deriv + [vr[o] for o in lin.outputs]
    J = np.array([fmu.getDirectionalDerivative(unknowns, knowns, list(col)) for col in np.eye(len(knowns))]).T
    fmu.terminate()
    fmu.freeInstance()
    expected = np.block([[lin.A, lin.B], [lin.C, lin.D]])
    assert np.array_equal(J, expected)


def test_fmu_model_description(cases, fmus):
    """Names, units, start values and derivative links as the linear model says; fmpy's validation passes."""
    import fmpy
    from fmpy.validation import validate_fmu

    lin = cases["sleigh"].lin
    for version in (2, 3):
        path = fmus["sleigh", version]
        assert validate_fmu(str(path)) == []
        md = fmpy.read_model_description(str(path))
        by_name = {v.name: v for v in md.modelVariables}
        for s, unit, x in zip(lin.states, lin.state_units, lin.x0):
            assert by_name[s].unit == unit and float(by_name[s].start) == float(x)
        derivs = {d.variable.name: d.variable.derivative.name for d in md.derivatives}
        # theta's derivative is the state der(theta); der(x)'s and der(theta)'s are their own variables
        assert derivs == {"der(theta)": "theta", "der(x,2)": "der(x)", "der(theta,2)": "der(theta)"}
        assert float(by_name["A[3,3]"].start) == lin.A[2, 2]
        assert {v.name for v in md.modelVariables if v.causality == "parameter"} >= {"x0[1]", "x0[3]"}


# -- the Modelica text -------------------------------------------------------------------------------------------
def test_modelica_text(cases, tmp_path):
    """StateSpace-compatible parameters with every number exactly as in the model, named states with units,
    input and output declarations, documentation (eigenvalues, dropped coordinates) and the experiment."""
    lin = cases["sleigh"].lin
    path = write_linear_modelica(lin, tmp_path / "sleigh.mo", stop_time=12.0)
    text = path.read_text()
    match = re.search(r"parameter Real A\[3, 3\] = \[(.*?)\] \"state matrix\";", text, re.S)
    assert match is not None
    A = np.array([[float(v) for v in row.split(",")] for row in match.group(1).split(";")])
    assert np.array_equal(A, lin.A)  # full precision: every entry reads back bit for bit
    assert 'Real theta(start=0.0, fixed=true, unit="rad") "coordinate theta";' in text
    assert 'Real der_x(start=0.3, fixed=true, unit="m/s") "velocity der(x)";' in text
    assert "parameter Real B" not in text and "parameter Real C" not in text  # no inputs, no outputs
    assert "experiment(StopTime=12.0, Interval=0.012, Tolerance=1e-08)" in text
    assert "Cyclic coordinates left out of the state: x, y." in text
    slow = min(np.linalg.eigvals(lin.A).real)
    assert f"{slow:.6g}" in text  # the eigenvalues are documented
    driven = linear_modelica_source(cases["driven"].lin, name="Lin")
    assert driven.startswith('model Lin "') and driven.rstrip().endswith("end Lin;")
    assert 'input Real tau(start=0.3, unit="N.m")' in driven and 'output Real load(unit="N.m")' in driven
    assert "parameter Real D[2, 1]" in driven and "D[2, 1]*(tau - u0[1])" in driven


# -- bad input ---------------------------------------------------------------------------------------------------
def _broken(lin: LinearModel, **changes) -> LinearModel:
    from dataclasses import replace

    return replace(lin, **changes)


@pytest.mark.parametrize("target", ["modelica", "fmu"])
def test_bad_linear_models_are_refused_and_nothing_is_written(cases, tmp_path, target):
    lin = cases["driven"].lin
    bad = {
        "shape": (_broken(lin, A=np.zeros((2, 3))), r"A: has the shape \(2, 3\), expected \(2, 2\)"),
        "nan": (_broken(lin, C=np.array([[1.0, np.nan], [0.0, 1.0]])),
                r"C: has 1 non-finite entry \(first: C\[tip_x, der\(theta\)\] = nan\)"),
        "units": (_broken(lin, state_units=("rad",)), "2 names but 1 units"),
        "reserved": (_broken(lin, outputs=("tip_x", "A")), "'A' is one the export uses itself"),
        "twice": (_broken(lin, outputs=("tip_x", "tau")), "used twice among states, inputs and outputs: tau"),
    }
    for key, (model, message) in bad.items():
        path = tmp_path / (f"{key}.mo" if target == "modelica" else f"{key}.fmu")
        with pytest.raises(ExportError, match=message):
            if target == "modelica":
                write_linear_modelica(model, path)
            else:
                build_linear_fmu(model, path)
        assert not path.exists() and list(tmp_path.iterdir()) == []
    for call, message in ((lambda: linear_modelica_source(lin, name="end"), "not a Modelica identifier"),
                          (lambda: build_linear_fmu(lin, tmp_path / "n.fmu", name="a-b"), "must be a C identifier"),
                          (lambda: build_linear_fmu(lin, tmp_path / "v.fmu", fmi_version="1.0"), "2.0 or 3.0"),
                          (lambda: write_linear_modelica(lin, tmp_path / "s.mo", stop_time=-1.0), "positive finite"),
                          (lambda: write_linear_modelica(lin, tmp_path / "x.mo", x_start=[0.0]), "x_start")):
        with pytest.raises(ExportError, match=message):
            call()
    assert list(tmp_path.iterdir()) == []
    # every problem at once
    with pytest.raises(ExportError) as info:
        linear_modelica_source(_broken(lin, A=np.zeros((2, 3)), x0=np.array([np.inf, 0.0])))
    assert len(info.value.problems) == 2


def test_fmu_refuses_a_velocity_state_that_is_not_the_derivative(cases, tmp_path):
    """The state der(theta) serves as theta's derivative in the FMU: a model whose row theta says otherwise is
    refused rather than exported with a wrong derivative link."""
    lin = cases["driven"].lin
    wrong = _broken(lin, A=lin.A + np.array([[0.5, 0.0], [0.0, 0.0]]))
    with pytest.raises(ExportError, match=r"row theta of the model is not der\(theta\) = der\(theta\)"):
        build_linear_fmu(wrong, tmp_path / "w.fmu")
    assert not (tmp_path / "w.fmu").exists()
