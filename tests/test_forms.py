"""Export forms (bridge.modelica.forms): the automatically chosen form of every example and test system is
simulated by both Modelica compilers within 1e-6 of the range of the native simulation, by lagrange and by a
reduced method; the normal form is the same equations; bad combinations are clear errors."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from bridge.cli import main
from bridge.derivation.eom import AuxiliaryStage
from bridge.derivation.methods import METHODS
from bridge.errors import ExportError, ValidationError
from bridge.modelica.export import model_source
from bridge.modelica.forms import (
    NORMAL_GROWTH_LIMIT,
    applicable_forms,
    choose_form,
    coupled_blocks,
    coupled_derivative_block,
    normal_growth,
    normal_split,
    regular_horizon,
    require_expressible,
)
from bridge.simulation.simulate import simulate
from bridge.tools.pymoca import PYMOCA_MISSING
from bridge.validation.tool_checks import check_pymoca, check_rumoca, simulate_form

ROOT = Path(__file__).parent.parent
DEFECTS = ROOT / "docs" / "compiler-defects"
#: the bicycle runs through the compilers in benchmarks/compilers.py (its row of docs/compilers.md), not here
SYSTEMS = [*sorted((ROOT / "examples").glob("*.toml")), *sorted((ROOT / "tests" / "models").glob("*.toml"))]
STOP = 2.0  # seconds of simulated time at most (test time)
#: Rumoca's run of the 3-link snake by lagrange ends earlier (test time): Rumoca 0.9's BDF at rtol 1e-10 spends
#: 30-100 s of CPU per simulated second on it (75 s for the 2 s, 21.6 s for 0.25 s, 10.4 s for 0.1 s), per
#: integration step and not because of how the text is written: without the CSE temporaries (21 variables instead
#: of 112) 63 s, with consistent start values of the accelerations and multipliers the same, other forms rejected
#: (implicit: "SymbolicSingular"; given: structurally singular), Rumoca's explicit rk-like solver 16.2 s for
#: 0.25 s; at rtol 1e-8 the error reaches 9e-7 of the range, too close to the 1e-6 bound. The first 0.1 s holds
#: the snake's whole start transient, where the integrator works hardest: the accelerations peak at 2,770 rad/s^2
#: at t = 0.0225 s and the three angles cover their whole range of the first quarter second by t = 0.05 s (x and y
#: keep drifting after it); the variables form at this size (5 coordinates, 3 constraints) runs its full horizon on
#: differential_drive, and pymoca runs the snake's full horizon below.
RUMOCA_STOP = {("snake3", "lagrange"): 0.1}


def _reduced(system) -> str:
    return "maggi" if not METHODS.get_method("maggi").applicable(system) else "appell"


_EQUATIONS: dict = {}


def _equations(derivations, path: Path, kind: str):
    """The equations of ``path`` by lagrange or a reduced method: one object for both compilers' tests, so the
    horizon (bridge.modelica.forms.regular_horizon) and the native reference (bridge.validation.tool_checks.
    native_reference), kept per equations object, are integrated once for both."""
    if (path, kind) not in _EQUATIONS:
        system = derivations.system(path)
        _EQUATIONS[path, kind] = derivations.eom(path, "lagrange" if kind == "lagrange" else _reduced(system))
    return _EQUATIONS[path, kind]


#: messages of the Rumoca defects documented in docs/compiler-defects/ (a failure with one of them, where pymoca
#: simulates the same model correctly, is the documented defect, not a failure of the export)
RUMOCA_DEFECTS = {"SymbolicSingular": "RumocaImplicitCoupledRow.mo",
                  "cannot be solved for": "RumocaCoupledLinearBlock.mo"}


@pytest.mark.parametrize("tool", ["rumoca", "pymoca"])
@pytest.mark.parametrize("kind", ["lagrange", "reduced"])
@pytest.mark.parametrize("path", SYSTEMS, ids=lambda p: p.stem)
def test_the_chosen_form_is_simulated_by_both_compilers(path, kind, tool, derivations):
    if tool == "rumoca":
        pytest.importorskip("rumoca", reason='pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"')
    pytest.importorskip("casadi", reason=PYMOCA_MISSING)  # pymoca is the peer where Rumoca meets a defect
    pytest.importorskip("pymoca", reason=PYMOCA_MISSING)
    eom = _equations(derivations, path, kind)
    system = eom.system
    stop = regular_horizon(eom, min(system.stop_time, STOP))  # the reduced ODE exists up to there
    if tool == "rumoca":
        stop = min(stop, RUMOCA_STOP.get((path.stem, kind), stop))
        try:
            report = check_rumoca(eom, "auto", stop_time=stop)
        except ValidationError as exc:  # only a documented defect, with pymoca simulating the model correctly
            defect = next((f for pattern, f in RUMOCA_DEFECTS.items() if pattern in str(exc)), None)
            assert defect, f"Rumoca fails on {system.name} ({eom.method}) without a documented defect: {exc}"
            assert (DEFECTS / defect).exists()
            peer = check_pymoca(eom, "auto", stop_time=stop)
            assert peer.max_error < 1e-6, peer.summary()
            return
        if report.form != choose_form(eom).form:  # the chosen text met a documented defect: the fallback's result
            assert any(pattern in report.messages for pattern in RUMOCA_DEFECTS), report.messages
    else:  # check_pymoca ends at the same horizon itself (regular_horizon, computed once per equations object)
        report = check_pymoca(eom, "auto", stop_time=min(system.stop_time, STOP))
        assert report.compared_until == stop
    assert report.balanced
    assert set(report.errors) == {c.name for c in system.coordinates}
    assert report.max_error < 1e-6, report.summary()


def test_a_coupled_split_gets_the_normal_form_and_the_reason(derivations):
    eom = derivations.eom(ROOT / "examples" / "car.toml", "maggi")
    assert coupled_blocks(eom) == ["stage 1 (2x2)", "stage 2 (2x2)"]
    choice = choose_form(eom)
    assert choice.form == "normal" and "normal" in applicable_forms(eom)
    text = model_source(eom)
    assert "Export form (chosen automatically): normal:" in text and "docs/compiler-defects" in text
    lagrange = derivations.eom(ROOT / "examples" / "car.toml", "lagrange")
    assert choose_form(lagrange).form == "implicit" and "normal" not in applicable_forms(lagrange)
    assert "given" in applicable_forms(lagrange)
    assert "Export form (chosen automatically): implicit:" in model_source(lagrange)
    # an explicit form is written as asked, without the automatic paragraph
    assert "Export form" not in model_source(eom, "index1", accelerations="implicit")


def test_a_one_dimensional_split_keeps_the_implicit_form(derivations):
    eom = derivations.eom(ROOT / "examples" / "chaplygin_sleigh.toml", "maggi")
    assert coupled_blocks(eom) == [] and choose_form(eom).form == "implicit"


def _dense(r: int, c: int, name: str) -> sp.ImmutableMatrix:
    return sp.ImmutableMatrix(r, c, lambda i, j: sp.Symbol(f"{name}{i}{j}"))


def test_the_growth_of_the_normal_equations_is_the_block_dimension(derivations):
    """g = r for a dense r x r block, 2 for two dense 2 x 2 blocks side by side (one per axle), less for a
    triangular block; the car's split is a dense 2 x 2 block (normal), the bicycle's 5 x 5 split grows more
    (implicit)."""
    car = derivations.eom(ROOT / "examples" / "car.toml", "maggi")

    def growth(L, R):
        Z = sp.ImmutableMatrix(R.shape[0], R.shape[1], lambda i, j: sp.Symbol(f"z{i}{j}"))
        return normal_growth(replace(car, auxiliary=(AuxiliaryStage(Z, L, R),)))

    for r in (2, 3, 5):
        assert growth(_dense(r, r, "a"), _dense(r, 2, "b")) == pytest.approx(r)
    axles = sp.diag(_dense(2, 2, "a"), _dense(2, 2, "c"))
    assert growth(sp.ImmutableMatrix(axles), _dense(4, 1, "b")) == pytest.approx(2.0)
    lower = sp.ImmutableMatrix(3, 3, lambda i, j: sp.Symbol(f"a{i}{j}") if j <= i else 0)
    assert growth(lower, _dense(3, 1, "b")) < 3
    assert normal_growth(car) == pytest.approx(2.0) and NORMAL_GROWTH_LIMIT >= 2.0
    assert choose_form(car).form == "normal"
    bicycle = derivations.eom(ROOT / "examples" / "engineering" / "bicycle.toml", "maggi")
    assert coupled_blocks(bicycle) == ["stage 1 (5x5)", "stage 2 (5x5)"]
    assert normal_growth(bicycle) > NORMAL_GROWTH_LIMIT
    choice = choose_form(bicycle)
    assert choice.form == "implicit" and "normal equations would write each entry" in choice.reason


#: the multiplier DAEs whose implicit text Rumoca 0.9 factorises as "SymbolicSingular", by the rule
COUPLED_DERIVATIVES = {"RollingDisk": ["x", "y", "phi"], "RollingSphere": ["phi"], "RollingWheel": ["psi", "phi"],
                       "ContactSleigh": ["x", "y"], "DifferentialDrive": ["x", "y", "psi"], "TurntableBall": ["phi"],
                       "Snake3": ["x", "y", "th1", "th2", "th3"]}
#: how Rumoca 0.9.13 stops on such a text: factorising the singular block, or (the rolling wheel, whose no-slip rows
#: run along the wheel's heading and axle) already in its BDF initialisation, whose Newton step meets the same block
RUMOCA_COUPLED_FAILURE = "SymbolicSingular|BDF init panicked"


@pytest.mark.parametrize("path", SYSTEMS, ids=lambda p: p.stem)
def test_the_coupled_derivative_rule_predicts_rumoca_on_the_implicit_text(path, derivations):
    """Every multiplier DAE (lagrange) exported implicitly: Rumoca fails with "SymbolicSingular" exactly where
    coupled_derivative_block finds the structure, and simulates the others correctly; those get variables."""
    pytest.importorskip("rumoca", reason='pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"')
    eom = _equations(derivations, path, "lagrange")  # the object of the test above (its numeric model built once)
    system = eom.system
    if not eom.multipliers:
        pytest.skip(f"{system.name} has no multipliers: no algebraic rows")
    coupled = coupled_derivative_block(eom)
    assert coupled == COUPLED_DERIVATIVES.get(system.name, [])
    assert choose_form(eom).form == ("variables" if coupled else "implicit")
    if coupled:
        with pytest.raises(ValidationError, match=RUMOCA_COUPLED_FAILURE):
            simulate_form(eom, "implicit", "rumoca", 0.5)
    else:
        assert simulate_form(eom, "implicit", "rumoca", 0.5).max_error < 1e-6


def test_the_normal_form_is_the_same_equations(derivations):
    """Native simulation of the split as normal equations equals the original (another text, same motion)."""
    eom = derivations.eom(ROOT / "examples" / "car.toml", "maggi")
    normal = normal_split(eom)
    assert [s.matrix for s in normal.auxiliary] != [s.matrix for s in eom.auxiliary]
    a = simulate(eom, 2.0, interval=0.01, rtol=1e-11, atol=1e-13)
    b = simulate(normal, 2.0, interval=0.01, rtol=1e-11, atol=1e-13)
    span = np.ptp(a.q, axis=0).max()
    assert np.abs(a.q - b.q).max() < 1e-8 * span


def test_constraints_as_given_are_refused_for_tools_without_index_reduction(tmp_path, capsys, derivations):
    eom = derivations.eom(ROOT / "examples" / "skate.toml", "lagrange")
    for tool in ("rumoca", "pymoca"):
        with pytest.raises(ExportError, match=r"constraints\.holonomic\[1\].*index 3.*--constraint-level index1"):
            require_expressible(eom, "given", tool)
    require_expressible(eom, "index1", "rumoca")  # no error
    out = tmp_path / "Skate.mo"
    code = main(["modelica", str(ROOT / "examples" / "skate.toml"), "-o", str(out), "--constraint-level", "given",
                 "--check", "pymoca"])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert "constraints.nonholonomic[1]" in err and "--constraint-level index1" in err and "Traceback" not in err


def test_a_missing_compiler_is_a_skip_with_the_install_command(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(sys.modules, "rumoca", None)
    out = tmp_path / "P.mo"
    code = main(["modelica", str(ROOT / "examples" / "simple_pendulum.toml"), "-o", str(out), "--check", "rumoca"])
    err = capsys.readouterr().err
    assert code == 0 and out.exists()
    assert 'skipped rumoca: Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"' in err


#: der(psi) = 10, s = sin(psi)/0.003, der(v) = -s: consistent start psi = v = 0, s = 0, der(psi) = 10. IDAS's
#: consistent initialisation (IDACalcIC) started from der(psi) = 0 fails on it (IDA_LINESEARCH_FAIL): its Newton
#: step for the derivatives moves s by ds/dpsi = cos(psi)/0.003 times its own size.
START_DERIVATIVES = """model StartDerivatives
  Real psi(start=0, fixed=true);
  Real v(start=0, fixed=true);
  Real s;
equation
  der(psi) = 10;
  0.003*s = sin(psi);
  der(v) = -s;
end StartDerivatives;
"""


def test_pymoca_starts_idas_from_the_consistent_derivatives(derivations):
    """psi = 10 t, v = (cos(10 t) - 1)/0.03 (closed form); and the hydropulsator by chaplygin, whose split row
    ties its placeholder B' to psi the same way, against the native simulation up to where its split is
    regular."""
    pytest.importorskip("casadi", reason=PYMOCA_MISSING)
    pytest.importorskip("pymoca", reason=PYMOCA_MISSING)
    from bridge.tools.pymoca import simulate_pymoca

    run = simulate_pymoca(START_DERIVATIVES, "StartDerivatives", 0.1, 0.001, 1e-10)
    np.testing.assert_allclose(run["psi"], 10 * run.time, atol=1e-9)
    np.testing.assert_allclose(run["v"], (np.cos(10 * run.time) - 1) / 0.03, rtol=1e-7, atol=1e-9)
    eom = derivations.eom(ROOT / "examples" / "hydropulsator.toml", "chaplygin")
    report = check_pymoca(eom, "auto", stop_time=regular_horizon(eom, STOP))
    assert report.max_error < 1e-6, report.summary()
