"""Directional derivatives of the native FMUs (FMI 2.0 and 3.0) from the symbolic Jacobian code.

The FMU's Jacobian (fmpy ``getDirectionalDerivative`` column by column) is compared with
* central finite differences of ``getDerivatives`` and of the outputs/multipliers (states perturbed through
  ``setContinuousStates``, inputs through ``setReal``/``setFloat64``): relative 1e-6 per row;
* the Jacobian evaluated in Python from the same equations by an independent path: sympy's own
  differentiation, ``lambdify`` and numpy's solve of ``M dz = dF - (dM) z``: relative 1e-10 per row;
at the start state and at a later state of the native simulation (see ``rel_error`` for rows that are
zero up to round-off).
"""

from __future__ import annotations

import shutil
from ctypes import c_double
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import bridge
from bridge import symbols as S
from bridge.cli import main
from bridge.fmu.build import build_fmu
from bridge.fmu.layout import layout

fmpy = pytest.importorskip("fmpy")
from fmpy import extract, read_model_description  # noqa: E402
from fmpy.fmi1 import FMICallException  # noqa: E402
from fmpy.fmi2 import FMU2Model  # noqa: E402
from fmpy.fmi3 import FMU3Model  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

ROOT = Path(__file__).parent.parent
CASES = [("rolling_sphere", "lagrange"), ("car", "lagrange"), ("cartesian_pendulum", "lagrange"),
         ("hydropulsator", "lagrange"), ("rolling_sphere", "maggi"), ("hydropulsator", "maggi")]
INPUTS = {"hydropulsator": {"Mr": 2.5, "Md": 0.7}}  # not the start values, so that the inputs matter
KINKS = ROOT / "tests" / "models" / "kinks.toml"  # abs, sign, min and max


class Instance:
    """A Model Exchange instance in Continuous-Time Mode, FMI 2 or 3, with the value references it needs."""

    def __init__(self, fmu: Path, version: int, inputs: dict[str, float] | None = None):
        md = read_model_description(str(fmu))
        self.dir = extract(str(fmu))
        self.v3 = version == 3
        cls = FMU3Model if self.v3 else FMU2Model
        self.fmu = cls(guid=md.guid, unzipDirectory=self.dir, modelIdentifier=md.modelExchange.modelIdentifier,
                       instanceName="jac")
        self.vr = {v.name: v.valueReference for v in md.modelVariables}
        self.der = [u.variable.valueReference for u in md.derivatives]
        self.states = [u.variable.derivative.valueReference for u in md.derivatives]
        self.nx = len(self.der)
        self.fmu.instantiate()
        if self.v3:
            self.fmu.enterInitializationMode(startTime=0.0)
        else:
            self.fmu.setupExperiment(startTime=0.0)
            self.fmu.enterInitializationMode()
        for name, value in (inputs or {}).items():
            self.set([self.vr[name]], [value])
        self.fmu.exitInitializationMode()
        self.fmu.enterContinuousTimeMode()

    def close(self) -> None:
        self.fmu.terminate()
        self.fmu.freeInstance()
        shutil.rmtree(self.dir, ignore_errors=True)

    def get(self, vrs) -> np.ndarray:
        return np.array(self.fmu.getFloat64(vrs) if self.v3 else self.fmu.getReal(vrs))

    def set(self, vrs, values) -> None:
        (self.fmu.setFloat64 if self.v3 else self.fmu.setReal)(vrs, list(values))

    def x(self) -> np.ndarray:
        a = (c_double * self.nx)()
        self.fmu.getContinuousStates(a, self.nx)
        return np.array(a)

    def set_x(self, x) -> None:
        self.fmu.setContinuousStates((c_double * self.nx)(*x), self.nx)

    def dx(self) -> np.ndarray:
        a = (c_double * self.nx)()
        (self.fmu.getContinuousStateDerivatives if self.v3 else self.fmu.getDerivatives)(a, self.nx)
        return np.array(a)

    def jacobian(self, unknowns, knowns) -> np.ndarray:
        cols = []
        for j in range(len(knowns)):
            seed = [0.0] * len(knowns)
            seed[j] = 1.0
            cols.append(self.fmu.getDirectionalDerivative(unknowns, knowns, seed))
        return np.array(cols).T


def provides(fmu: Path) -> list[bool]:
    """providesDirectionalDerivative(s) of ModelExchange and CoSimulation in modelDescription.xml."""
    import xml.etree.ElementTree as ET
    import zipfile

    with zipfile.ZipFile(fmu) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    attr = "providesDirectionalDerivatives" if root.get("fmiVersion") == "3.0" else "providesDirectionalDerivative"
    return [root.find(kind).get(attr, "false") == "true" for kind in ("ModelExchange", "CoSimulation")]


def rel_error(a: np.ndarray, ref: np.ndarray, floor: float) -> float:
    """max |a - ref| relative to each row's largest |ref|, at least floor * the largest entry (rows that are
    zero up to round-off, e.g. accelerations at rest, would otherwise compare round-off with round-off)."""
    scale = np.maximum(np.abs(ref).max(axis=1), floor * max(np.abs(ref).max(), 1e-300))
    return float((np.abs(a - ref).max(axis=1) / scale).max())


def explicit_split(eom) -> dict:
    """The reduced methods' placeholders (B, beta, B', beta') as explicit expressions by sympy's LU solve of the
    (small) auxiliary blocks: the reference differentiates the explicit equations, not the FMU's implicit ones."""
    sub: dict = {}
    for stage in eom.auxiliary:
        sol = sp.Matrix(stage.matrix).LUsolve(sp.Matrix(stage.rhs).xreplace(sub))
        sub.update(dict(zip(stage.unknowns, sol)))
    return sub


def reference_jacobian(eom, t: float, x: np.ndarray, inputs: np.ndarray) -> np.ndarray:
    """Rows [dx; lambda; y] over [x; inputs] by sympy differentiation and numpy (no symengine, no C)."""
    system = eom.system
    p = len(eom.u)
    knowns = [*system.q, *eom.u, *(u.symbol for u in system.inputs)]
    args = [S.t, *system.q, *eom.u, *(q.symbol for q in system.parameters), *(u.symbol for u in system.inputs)]
    split = explicit_split(eom)
    M, F, K = (sp.Matrix(a).xreplace(split) for a in (eom.mass_matrix, eom.forcing, eom.kinematics))
    velocity = {c.velocity_symbol: K[i] for i, c in enumerate(system.coordinates)}
    Y = sp.Matrix([y.xreplace(velocity) for y in system.outputs.values()] or [sp.S.Zero])
    f = sp.lambdify(args, [M, F, K.jacobian(knowns), F.jacobian(knowns), [M.diff(w) for w in knowns],
                           Y.jacobian(knowns)], "numpy")
    vals = [t, *x, *(q.value for q in system.parameters), *inputs]
    Mv, Fv, dK, dF, dM, dY = (np.array(a, dtype=float) if not isinstance(a, list) else [np.array(b, dtype=float)
                                                                                        for b in a]
                              for a in f(*vals))
    z = np.linalg.solve(Mv, Fv.ravel())
    dz = np.linalg.solve(Mv, dF - np.column_stack([dMj @ z for dMj in dM]))
    return np.vstack([dK, dz[:p], dz[p:], dY[:len(system.outputs)]])


@pytest.fixture(scope="module")
def built(built_fmu):
    """The FMUs of CASES, FMI 2 and 3, from the run's FMU cache (test_fmu builds the lagrange ones too)."""
    result = {}
    for example, method in CASES:
        path = ROOT / "examples" / f"{example}.toml"
        eom = bridge.derive(bridge.load_system(path), method)
        for version in (2, 3):
            result[example, method, version] = (eom, built_fmu.build(path, method, version))
    return result


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_directional_derivatives(built, case, version):
    eom, fmu = built[(*case, version)]
    system = eom.system
    assert layout(eom, version).jacobian
    assert validate_fmu(str(fmu)) == []
    assert provides(fmu) == [True, True]
    inputs = INPUTS.get(case[0], {})
    inst = Instance(fmu, version, inputs)
    try:
        lam = [inst.vr[f"lambda[{k + 1}]"] for k in range(len(eom.multipliers))]
        outs = [inst.vr[name] for name in system.outputs]
        unknowns = inst.der + lam + outs
        in_vrs = [inst.vr[u.name] for u in system.inputs]
        knowns = inst.states + in_vrs
        u0 = np.array([inputs.get(u.name, u.start) for u in system.inputs], dtype=float)
        later = bridge.simulate(eom, 0.7, interval=0.7)
        points = [(0.0, inst.x()), (float(later.time[-1]), eom.numeric.state(later.q[-1], later.qd[-1]))]
        for t, x in points:
            inst.fmu.setTime(t)
            inst.set_x(x)
            J = inst.jacobian(unknowns, knowns)
            assert J.shape == (len(unknowns), inst.nx + len(in_vrs))
            # an independent evaluation of the same equations
            ref = reference_jacobian(eom, t, x, u0)
            assert rel_error(J, ref, 1e-6) < 1e-10, (t, np.abs(J - ref).max())

            # central finite differences through the FMI functions
            def read():
                return np.concatenate([inst.dx(), inst.get(lam + outs)])

            cols = []
            for j in range(inst.nx):
                h = 1e-6 * max(1.0, abs(x[j]))
                inst.set_x(x + h * np.eye(inst.nx)[j])
                fp = read()
                inst.set_x(x - h * np.eye(inst.nx)[j])
                fm = read()
                cols.append((fp - fm) / (2 * h))
            inst.set_x(x)
            for k, vr in enumerate(in_vrs):
                h = 1e-6 * max(1.0, abs(u0[k]))
                inst.set([vr], [u0[k] + h])
                fp = read()
                inst.set([vr], [u0[k] - h])
                fm = read()
                inst.set([vr], [u0[k]])
                cols.append((fp - fm) / (2 * h))
            assert rel_error(J, np.array(cols).T, 1e-3) < 1e-6, t
            # a combined seed is the same linear combination of the columns
            seed = np.linspace(-1.0, 2.0, len(knowns))
            assert np.allclose(inst.fmu.getDirectionalDerivative(unknowns, knowns, list(seed)), J @ seed,
                               rtol=1e-12, atol=1e-12 * np.abs(J).max())
    finally:
        inst.close()


@pytest.mark.parametrize("version", [2, 3])
def test_kinks_and_inputs(tmp_path, version):
    """abs, sign, min and max (symengine leaves their derivatives unevaluated) and an input in an output."""
    eom = bridge.derive(bridge.load_system(KINKS), "lagrange")
    fmu = build_fmu(eom, tmp_path / "k.fmu", version)
    assert validate_fmu(str(fmu)) == []
    inst = Instance(fmu, version)
    try:
        unknowns, knowns = inst.der + [inst.vr["y"]], inst.states + [inst.vr["f"]]
        x = inst.x()
        J = inst.jacobian(unknowns, knowns)
        cols = []
        for j in range(len(knowns)):
            h = 1e-6
            if j < inst.nx:
                inst.set_x(x + h * np.eye(inst.nx)[j])
                fp = np.append(inst.dx(), inst.get([inst.vr["y"]]))
                inst.set_x(x - h * np.eye(inst.nx)[j])
                fm = np.append(inst.dx(), inst.get([inst.vr["y"]]))
                inst.set_x(x)
            else:
                inst.set([inst.vr["f"]], [0.4 + h])
                fp = np.append(inst.dx(), inst.get([inst.vr["y"]]))
                inst.set([inst.vr["f"]], [0.4 - h])
                fm = np.append(inst.dx(), inst.get([inst.vr["y"]]))
                inst.set([inst.vr["f"]], [0.4])
            cols.append((fp - fm) / (2 * h))
        assert rel_error(J, np.array(cols).T, 1e-3) < 1e-6
        assert J[-1, -1] == pytest.approx(0.8)  # d(f^2)/df
    finally:
        inst.close()


@pytest.mark.parametrize("version", [2, 3])
def test_wrong_references_are_errors_with_a_message(built, version, capfd):
    _eom, fmu = built["hydropulsator", "lagrange", version]
    inst = Instance(fmu, version)
    try:
        dx0 = inst.dx()
        vr = inst.vr
        wrong = [([99999], [inst.states[0]], "unknown value reference 99999 in unknowns"),
                 ([inst.der[0]], [99999], "unknown value reference 99999 in knowns"),
                 ([inst.der[0]], [vr["k"]], "cannot be a known"),
                 ([vr["residual[1]"]], [inst.states[0]], "cannot be an unknown"),
                 ([vr["Mr"]], [inst.states[0]], "cannot be an unknown")]
        for unknowns, knowns, message in wrong:
            capfd.readouterr()
            with pytest.raises(FMICallException, match="status 3"):
                inst.fmu.getDirectionalDerivative(unknowns, knowns, [1.0] * len(knowns))
            assert message in capfd.readouterr().out
        if version == 3:
            with pytest.raises(FMICallException, match="status 3"):
                inst.fmu.getDirectionalDerivative(inst.der, inst.states[:1], [1.0], nSensitivity=1)
            assert "nSensitivity" in capfd.readouterr().out
        # the instance is unchanged and still works
        assert np.array_equal(inst.dx(), dx0)
        assert inst.fmu.getDirectionalDerivative(inst.der[:1], inst.states, [0.0] * inst.nx) == [0.0]
    finally:
        inst.close()


def test_without_jacobian(tmp_path, capfd, monkeypatch):
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "cartesian_pendulum.toml"), "lagrange")
    for version in (2, 3):
        fmu = build_fmu(eom, tmp_path / f"p{version}.fmu", version, jacobian=False)
        assert validate_fmu(str(fmu)) == []
        assert provides(fmu) == [False, False]
        inst = Instance(fmu, version)
        try:
            capfd.readouterr()
            with pytest.raises(FMICallException, match="status 3"):
                inst.fmu.getDirectionalDerivative(inst.der, inst.states[:1], [1.0])
            assert "not supported" in capfd.readouterr().out
        finally:
            inst.close()
    assert main(["fmu", str(ROOT / "examples" / "cartesian_pendulum.toml"), "--no-jacobian", "-o",
                 str(tmp_path / "cli.fmu")]) == 0
    assert provides(tmp_path / "cli.fmu") == [False, False]
    # "auto" decides by the number of states
    import bridge.fmu.features as fj

    assert layout(eom, 2).jacobian
    monkeypatch.setattr(fj, "JACOBIAN_MAX_STATES", 3)
    assert not layout(eom, 2).jacobian and layout(eom, 2, True).jacobian
