"""The second Modelica compiler: pymoca (Modelica -> CasADi) integrated by IDAS, against the native simulation."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from bridge.cli import main
from bridge.errors import ExportError, ValidationError
from bridge.model.loader import load_system
from bridge.modelica.export import model_source
from bridge.tools.pymoca import require_pymoca, simulate_pymoca

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"



def _check(derivations, name: str, method: str):
    from bridge.validation.tool_checks import check_pymoca

    return check_pymoca(derivations.eom(EXAMPLES / f"{name}.toml", method))  # derived once per run


@pytest.mark.parametrize("name", ["simple_pendulum", "chaplygin_sleigh", "car", "rolling_sphere", "skate",
                                  "cartesian_pendulum"])
def test_examples_by_lagrange_match_the_native_simulation(name, pymoca, derivations):
    report = _check(derivations, name, "lagrange")
    assert report.tool == "pymoca" and report.balanced
    assert set(report.errors) == {c.name for c in load_system(EXAMPLES / f"{name}.toml").coordinates}
    assert report.max_error < 1e-6, report.summary()


@pytest.mark.parametrize("name", ["simple_pendulum", "chaplygin_sleigh", "car"])
def test_examples_by_maggi_match_the_native_simulation(name, pymoca, derivations):
    report = _check(derivations, name, "maggi")
    assert report.max_error < 1e-6, report.summary()


def test_a_wrong_parameter_in_the_mo_is_caught(pymoca, derivations):
    """The same text with the rod 10 % longer: pymoca simulates it, and the comparison fails."""
    from bridge.validation.tool_checks import compare

    eom = derivations.eom(EXAMPLES / "simple_pendulum.toml", "lagrange")
    text = model_source(eom)
    assert 'parameter Real l(unit="m") = 0.8 ' in text
    wrong = text.replace('parameter Real l(unit="m") = 0.8 ', 'parameter Real l(unit="m") = 0.88 ')
    T = eom.system.stop_time
    good = simulate_pymoca(text, eom.system.name, T, T / 500, 1e-10)
    bad = simulate_pymoca(wrong, eom.system.name, T, T / 500, 1e-10)
    assert max(compare(eom, "pymoca", good.time, good.__getitem__, T, T / 500, 1e-10)[0].values()) < 1e-6
    assert max(compare(eom, "pymoca", bad.time, bad.__getitem__, T, T / 500, 1e-10)[0].values()) > 1e-2


def test_the_outputs_are_computed_after_the_integration(pymoca, derivations):
    """The pendulum's energy output (not part of the DAE pymoca integrates) is conserved along the run."""
    eom = derivations.eom(EXAMPLES / "simple_pendulum.toml", "lagrange")
    run = simulate_pymoca(model_source(eom), eom.system.name, 5.0, 0.01, 1e-10)
    energy = run["energy"]
    assert energy[0] > 0 and np.ptp(energy) < 1e-7 * energy[0]


def test_builtins_pymoca_lacks_keep_their_meaning(pymoca):
    """atan2 and acos (Modelica built-ins that pymoca 0.12 does not know) mean what numpy means by them."""
    text = ("model Trig\n  Real x(start=0.3, fixed=true);\n  output Real a;\n  output Real b;\nequation\n"
            "  der(x) = 1;\n  a = atan2(x, -0.5);\n  b = acos(x/4);\nend Trig;\n")
    run = simulate_pymoca(text, "Trig", 2.0, 0.1, 1e-10)
    x = 0.3 + run.time
    np.testing.assert_allclose(run["x"], x, atol=1e-8)
    np.testing.assert_allclose(run["a"], np.arctan2(x, -0.5), atol=1e-8)
    np.testing.assert_allclose(run["b"], np.arccos(x / 4), atol=1e-8)


def test_a_model_pymoca_cannot_compile_is_a_clear_failure(pymoca):
    text = "model Bad\n  Real x(start=1, fixed=true);\nequation\n  der(x) = undefined_function(x);\nend Bad;\n"
    with pytest.raises(ValidationError, match="pymoca rejected the exported model Bad"):
        simulate_pymoca(text, "Bad", 1.0, 0.1, 1e-8)


def test_cli_checks_with_both_compilers(tmp_path, capsys, pymoca):
    pytest.importorskip("rumoca")
    out = tmp_path / "SimplePendulum.mo"
    code = main(["modelica", str(EXAMPLES / "simple_pendulum.toml"), "-o", str(out), "--check", "rumoca,pymoca"])
    text = capsys.readouterr().out
    assert code == 0 and out.exists()
    assert "ok rumoca: SimplePendulum" in text and "ok pymoca: SimplePendulum" in text


def test_cli_rejects_an_unknown_compiler(capsys):
    with pytest.raises(SystemExit) as info:
        main(["modelica", str(EXAMPLES / "simple_pendulum.toml"), "--check", "rumoca,dymola"])
    assert info.value.code == 2
    assert "unknown Modelica tool dymola" in capsys.readouterr().err


def test_validate_plans_a_pymoca_run(pymoca):
    from bridge.validation.campaign import Options, validate_system

    result = validate_system(EXAMPLES / "chaplygin_sleigh.toml", Options(groups=("pymoca",)))
    run = next(r for r in result.runs if r.id == "modelica-pymoca")
    assert run.status == "passed", run.reason


def test_missing_pymoca_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymoca", None)
    monkeypatch.setitem(sys.modules, "pymoca.backends.casadi.api", None)
    with pytest.raises(ExportError) as info:
        require_pymoca()
    assert 'pip install "pymoca==0.12.*" "casadi<3.7"' in str(info.value)


def test_cli_names_the_install_command_of_a_missing_compiler(monkeypatch, tmp_path, capsys):
    """The model is written; the missing compiler is a skip (exit 0) with the install command."""
    monkeypatch.setitem(sys.modules, "pymoca", None)
    monkeypatch.setitem(sys.modules, "pymoca.backends.casadi.api", None)
    code = main(["modelica", str(EXAMPLES / "simple_pendulum.toml"), "-o", str(tmp_path / "P.mo"), "--check", "pymoca"])
    err = capsys.readouterr().err
    assert code == 0 and (tmp_path / "P.mo").exists()
    assert "skipped pymoca: " in err and 'pip install "pymoca==0.12.*" "casadi<3.7"' in err


def test_the_native_reference_is_integrated_once_per_equations(derivations):
    """Checks of one equations object with several compilers share one native run (per horizon, interval and
    rtol); another object of the same equations gets its own run, with the same values."""
    from bridge.simulation.simulate import simulate
    from bridge.validation.tool_checks import native_reference

    eom = derivations.eom(EXAMPLES / "simple_pendulum.toml", "lagrange")
    run = native_reference(eom, 1.0, 0.01, 1e-10)
    assert native_reference(eom, 1.0, 0.01, 1e-10) is run
    assert native_reference(eom, 1.0, 0.02, 1e-10) is not run
    twin = derivations.eom(EXAMPLES / "simple_pendulum.toml", "lagrange")
    assert native_reference(twin, 1.0, 0.01, 1e-10) is not run
    direct = simulate(eom, 1.0, interval=0.01, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(run.q, direct.q)
