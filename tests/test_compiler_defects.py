"""The Modelica compiler defects nhbridge works around (docs/compiler-defects/): each is still present.

DEFECT CANARIES: every test below runs a minimal reproducer through the compiler it documents and asserts that
the compiler still fails with the documented message. When one of these tests fails, the compiler was fixed:
drop the workaround it names (and the reproducer), then update docs/compiler-defects/README.md. The other
compiler simulates each reproducer correctly (checked against an independent reference), and the workaround
is checked to work.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import solve_ivp

DEFECTS = Path(__file__).parent.parent / "docs" / "compiler-defects"




def _rumoca_simulate(rumoca, name: str, stop: float):
    """Rumoca's result for the reproducer ``name``, or the RumocaError it raised."""
    source = (DEFECTS / f"{name}.mo").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        model = rumoca.loads(source, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=[])
        try:
            return model.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=stop / 100))
        except rumoca.RumocaError as exc:
            return exc


def _coupled_block_reference(x0: float, times: np.ndarray) -> np.ndarray:
    """x(t) of der(x) = 0.1*a with a from the 2x2 block, the block solved by numpy at every step."""
    def rhs(_t, x):
        L = np.array([[np.sin(x[0]), -np.cos(x[0])], [np.sin(x[0] + 0.5), -np.cos(x[0] + 0.5)]])
        a, _ = np.linalg.solve(L, [-1.0, 2.0])
        return [0.1 * a]
    return solve_ivp(rhs, (0.0, times[-1]), [x0], t_eval=times, rtol=1e-12, atol=1e-14).y[0]


# -- DEFECT CANARY: Rumoca solves a coupled linear block row by row ------------------------------------------
def test_rumoca_still_fails_on_a_coupled_linear_block(rumoca):
    """Workaround: the export form "normal" (bridge.modelica.forms), chosen for every coupled split."""
    for name in ("RumocaCoupledLinearBlock", "RumocaCoupledLinearBlockMidRun"):
        outcome = _rumoca_simulate(rumoca, name, 1.0)
        assert isinstance(outcome, rumoca.RumocaError), f"Rumoca now simulates {name}: drop the workaround"
        assert "algebraic refresh row 1 cannot be solved for 'a'" in str(outcome)


def test_the_normal_equations_work_around_it(rumoca):
    result = _rumoca_simulate(rumoca, "RumocaCoupledLinearBlockNormal", 1.0)
    assert not isinstance(result, Exception), result
    t = np.asarray(result.time, dtype=float)
    np.testing.assert_allclose(np.asarray(result["x"], dtype=float), _coupled_block_reference(0.0, t), atol=1e-7)


def test_pymoca_simulates_the_coupled_linear_block(pymoca):
    from bridge.tools.pymoca import simulate_pymoca

    text = (DEFECTS / "RumocaCoupledLinearBlock.mo").read_text(encoding="utf-8")
    run = simulate_pymoca(text, "RumocaCoupledLinearBlock", 1.0, 0.01, 1e-10)
    np.testing.assert_allclose(run["x"], _coupled_block_reference(0.0, run.time), atol=1e-7)
    x = run["x"]
    np.testing.assert_allclose(run["a"], (np.cos(x + 0.5) + 2 * np.cos(x)) / np.sin(0.5), atol=1e-7)


# -- DEFECT CANARY: Rumoca factorises an implicit DAE with a coupled row without the algebraic variable -----------
def test_rumoca_still_fails_on_an_implicit_coupled_row(rumoca):
    """Workaround: the export form "variables" (bridge.modelica.forms), chosen for every multiplier DAE with a
    dynamics row that holds no multiplier but several accelerations."""
    outcome = _rumoca_simulate(rumoca, "RumocaImplicitCoupledRow", 1.0)
    assert isinstance(outcome, rumoca.RumocaError), "Rumoca now simulates RumocaImplicitCoupledRow: drop the workaround"
    assert "SymbolicSingular" in str(outcome)


@pytest.mark.parametrize("name", ["RumocaImplicitCoupledRowReordered", "RumocaImplicitCoupledRowVariables"])
def test_the_same_rows_reordered_or_with_acceleration_variables_simulate(rumoca, name):
    """der(vp) = 5, der(vq) = -3 (the linear system solved by hand in the files' comments; numpy agrees)."""
    K = np.array([[0.8, 1.0, 0.0], [0.0, 1.0, -1.0], [1.0, 0.0, 1.0]])
    ap, aq, lam = np.linalg.solve(K, [1.0, 0.0, 2.0])
    result = _rumoca_simulate(rumoca, name, 1.0)
    assert not isinstance(result, Exception), result
    t = np.asarray(result.time, dtype=float)
    np.testing.assert_allclose(np.asarray(result["vp"], dtype=float), ap * t, atol=1e-8)
    np.testing.assert_allclose(np.asarray(result["vq"], dtype=float), aq * t, atol=1e-8)
    np.testing.assert_allclose(np.asarray(result["l"], dtype=float)[1:], lam, atol=1e-8)


def test_pymoca_simulates_the_implicit_coupled_row(pymoca):
    from bridge.tools.pymoca import simulate_pymoca

    text = (DEFECTS / "RumocaImplicitCoupledRow.mo").read_text(encoding="utf-8")
    run = simulate_pymoca(text, "RumocaImplicitCoupledRow", 1.0, 0.1, 1e-10)
    np.testing.assert_allclose(run["vp"], 5.0 * run.time, atol=1e-8)
    np.testing.assert_allclose(run["vq"], -3.0 * run.time, atol=1e-8)


# -- DEFECT CANARY: the same with every row holding the algebraic variable (the rolling wheel's structure) ----------
def test_rumoca_still_fails_on_an_implicit_coupled_block(rumoca):
    """Workaround: the export form "variables", chosen where Rumoca's derivative rows couple accelerations that a
    constraint row holds (bridge.modelica.forms.coupled_derivative_block: the rolling wheel by lagrange)."""
    outcome = _rumoca_simulate(rumoca, "RumocaImplicitCoupledBlock", 1.0)
    assert isinstance(outcome, rumoca.RumocaError), "Rumoca now simulates RumocaImplicitCoupledBlock: drop the rule"
    assert "SymbolicSingular" in str(outcome)


def test_rumoca_simulates_the_block_when_the_algebraic_row_holds_an_uncoupled_derivative(rumoca):
    """der(vr) = l = 2, then [0.8 1; 2 1] [der(vp); der(vq)] = [1 + l; -l] (numpy solves the 2 x 2)."""
    dvp, dvq = np.linalg.solve([[0.8, 1.0], [2.0, 1.0]], [3.0, -2.0])
    result = _rumoca_simulate(rumoca, "RumocaImplicitCoupledBlockUncoupledLeft", 1.0)
    assert not isinstance(result, Exception), result
    t = np.asarray(result.time, dtype=float)
    for name, rate in (("vp", dvp), ("vq", dvq), ("vr", 2.0)):
        np.testing.assert_allclose(np.asarray(result[name], dtype=float), rate * t, atol=1e-8)


def test_pymoca_simulates_the_implicit_coupled_block(pymoca):
    from bridge.tools.pymoca import simulate_pymoca

    dvp, dvq, lam = np.linalg.solve([[0.8, 1.0, -1.0], [2.0, 1.0, 1.0], [1.0, -1.0, 0.0]], [1.0, 0.0, 2.0])
    text = (DEFECTS / "RumocaImplicitCoupledBlock.mo").read_text(encoding="utf-8")
    run = simulate_pymoca(text, "RumocaImplicitCoupledBlock", 1.0, 0.1, 1e-10)
    np.testing.assert_allclose(run["vp"], dvp * run.time, atol=1e-8)
    np.testing.assert_allclose(run["vq"], dvq * run.time, atol=1e-8)
    np.testing.assert_allclose(run["l"], lam, atol=1e-8)


# -- DEFECT CANARY: Rumoca with implicit coupled rows and an output linear in a state ------------------------------
def _linear_output_reference(times: np.ndarray) -> np.ndarray:
    """x, v, w of der(x) = v, [2 0.5; 0.5 1] [der(v); der(w)] = [-x; 0] by solve_ivp (numpy solves the 2x2)."""
    def rhs(_t, y):
        dv, dw = np.linalg.solve([[2.0, 0.5], [0.5, 1.0]], [-y[0], 0.0])
        return [y[1], dv, dw]
    return solve_ivp(rhs, (0.0, times[-1]), [0.0, 1.0, 0.0], t_eval=times, rtol=1e-12, atol=1e-14).y


def test_rumoca_still_fails_with_an_output_linear_in_a_state(rumoca):
    """Workaround: the export writes the velocities in output equations as der(q) (ModelicaWriter._output_code);
    the rolling disk and the bicycle (speed = r*der(phi)) met it."""
    outcome = _rumoca_simulate(rumoca, "RumocaLinearOutputOfState", 1.0)
    assert isinstance(outcome, rumoca.RumocaError), "Rumoca now simulates RumocaLinearOutputOfState"
    assert "structurally singular system: 3 matched out of 4 equations" in str(outcome)


def test_the_output_through_der_and_pymoca_simulate_it(rumoca, pymoca):
    from bridge.tools.pymoca import simulate_pymoca

    result = _rumoca_simulate(rumoca, "RumocaLinearOutputOfStateDer", 1.0)
    assert not isinstance(result, Exception), result
    t = np.asarray(result.time, dtype=float)
    x, v, _ = _linear_output_reference(t)
    np.testing.assert_allclose(np.asarray(result["speed"], dtype=float), 0.3 * v, atol=1e-7)
    run = simulate_pymoca((DEFECTS / "RumocaLinearOutputOfState.mo").read_text(encoding="utf-8"),
                          "RumocaLinearOutputOfState", 1.0, 0.01, 1e-10)
    x, v, _ = _linear_output_reference(run.time)
    np.testing.assert_allclose(run["x"], x, atol=1e-7)
    np.testing.assert_allclose(run["speed"], 0.3 * v, atol=1e-7)


# -- DEFECT CANARY: Rumoca does no index reduction -----------------------------------------------------------
def test_rumoca_still_has_no_index_reduction(rumoca):
    """Workaround: constraints at acceleration level (index 1) by default; --constraint-level given with
    --check rumoca is refused with the form to use (bridge.modelica.forms.require_expressible)."""
    source = (DEFECTS / "RumocaNoIndexReduction.mo").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        model = rumoca.loads(source, model="RumocaNoIndexReduction",
                             filename=str(Path(tmp) / "RumocaNoIndexReduction.mo"), roots=[])
        with pytest.raises(rumoca.RumocaError, match="structurally singular system"):
            model.simulate((0.0, 1.0), config=rumoca.SimConfig(rtol=1e-8, atol=1e-10, dt=0.01))


# -- DEFECT CANARY: pymoca lacks asin, acos, atan, atan2 -----------------------------------------------------
UNPATCHED = """
import shutil, sys, tempfile
from pathlib import Path
from pymoca.backends.casadi.api import transfer_model
tmp = Path(tempfile.mkdtemp())
shutil.copy(sys.argv[1], tmp / "PymocaAcos.mo")
try:
    transfer_model(str(tmp), "PymocaAcos", {"replace_constant_values": True})
    print("compiled")
except Exception as exc:
    print("failed:", exc)
"""


def test_pymoca_still_lacks_acos(pymoca):
    """pymoca as installed (in a fresh process: nhbridge's operator-table patch is not applied there).
    Workaround: bridge.tools.pymoca.require_pymoca (MISSING_BUILTINS)."""
    out = subprocess.run([sys.executable, "-c", UNPATCHED, str(DEFECTS / "PymocaAcos.mo")], capture_output=True,
                         text=True, timeout=120).stdout
    assert "failed: Unknown function acos" in out, f"pymoca now compiles acos ({out!r}): drop MISSING_BUILTINS"


def test_acos_works_through_the_workaround_and_in_rumoca(pymoca, rumoca):
    from bridge.tools.pymoca import simulate_pymoca

    reference = solve_ivp(lambda _t, x: [-0.1 * np.arccos(x[0])], (0.0, 1.0), [0.5], t_eval=np.linspace(0, 1, 101),
                          rtol=1e-12, atol=1e-14)
    run = simulate_pymoca((DEFECTS / "PymocaAcos.mo").read_text(encoding="utf-8"), "PymocaAcos", 1.0, 0.01, 1e-10)
    np.testing.assert_allclose(run["x"], reference.y[0], atol=1e-8)
    result = _rumoca_simulate(rumoca, "PymocaAcos", 1.0)
    assert not isinstance(result, Exception), result
    np.testing.assert_allclose(np.asarray(result["x"], dtype=float), reference.y[0], atol=1e-7)


# -- DEFECT CANARIES: Rumoca's function lowering (the re-partitioning text's nhb_solve works around both) --------
def _rumoca_text(rumoca, name: str, text: str, stop: float):
    with tempfile.TemporaryDirectory() as tmp:
        model = rumoca.loads(text, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=[])
        return model.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=stop / 100))


def test_rumoca_still_reads_a_model_parameter_for_a_function_local(rumoca):
    """solve's local r and the parameter r: after the start x2 is negative (closed form cos/(cos + 0.5) > 0).
    Workaround: nhb_solve's names carry the reserved prefix nhb_lu_ (bridge.modelica.repartition.LOCAL); the same
    model with the parameter renamed follows the closed form."""
    name = "RumocaFunctionLocalCapture"
    result = _rumoca_simulate(rumoca, name, 0.2)
    assert not isinstance(result, Exception), result
    assert float(np.asarray(result["x2"], dtype=float)[-1]) < 0.0, "Rumoca now scopes function locals: see LOCAL"
    text = (DEFECTS / f"{name}.mo").read_text(encoding="utf-8")
    renamed = _rumoca_text(rumoca, name, text.replace("parameter Real r ", "parameter Real q ").replace(
        "a = -r;", "a = -q;"), 0.2)
    c = np.cos(np.asarray(renamed["th"], dtype=float))
    np.testing.assert_allclose(np.asarray(renamed["x1"], dtype=float), 0.5 / (c + 0.5), atol=1e-9)
    np.testing.assert_allclose(np.asarray(renamed["x2"], dtype=float), c / (c + 0.5), atol=1e-9)


def test_rumoca_still_freezes_a_relation_in_a_function(rumoca):
    """step(x) stays 1 after x passes 0.5. Workaround: nhb_solve's pivot comparisons are noEvent, which Rumoca
    evaluates at every call (2 after x = 0.5)."""
    name = "RumocaFunctionRelationFrozen"
    result = _rumoca_simulate(rumoca, name, 1.0)
    assert not isinstance(result, Exception), result
    assert np.all(np.asarray(result["y"], dtype=float) == 1.0), "Rumoca now re-evaluates relations in functions"
    text = (DEFECTS / f"{name}.mo").read_text(encoding="utf-8").replace("if u > 0.5 then", "if noEvent(u > 0.5) then")
    fixed = _rumoca_text(rumoca, name, text, 1.0)
    x, y = np.asarray(fixed["x"], dtype=float), np.asarray(fixed["y"], dtype=float)
    far = np.abs(x - 0.5) > 1e-6
    np.testing.assert_array_equal(y[far], np.where(x[far] > 0.5, 2.0, 1.0))


def test_every_reproducer_is_indexed():
    readme = (DEFECTS / "README.md").read_text(encoding="utf-8")
    for path in DEFECTS.glob("*.mo"):
        assert path.name in readme, f"{path.name} is not in docs/compiler-defects/README.md"
