"""Modelica export: printer, model text, package, and real compilers (Rumoca; OpenModelica where present)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import bridge
from bridge.cli import main
from bridge.errors import ValidationError
from bridge.modelica.export import package_files
from bridge.modelica.printer import modelica_code
from bridge.tools.openmodelica import find_omc
from bridge.validation.tool_checks import check_openmodelica, check_rumoca

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
X, Y = sp.symbols("x y")

@pytest.mark.parametrize("expr, text", [
    (-X**2, "-x^2"),
    (X**-2, "1.0/x^2"),
    (X**Y, "x^y"),
    (X**(Y + 1), "x^(y + 1)"),
    ((X + Y)**2, "(x + y)^2"),
    (sp.Rational(3, 10) * X, "0.3*x"),
    (sp.sqrt(X), "sqrt(x)"),
    (sp.Abs(X) + sp.sign(Y), "abs(x) + (if y > 0 then 1.0 else if y < 0 then -1.0 else 0.0)"),
    (sp.atan2(Y, X), "atan2(y, x)"),
    (bridge.symbols.t, "time"),
])
def test_printer(expr, text):
    assert modelica_code(expr).replace("(0.3)", "0.3") == text


def test_printer_quotes_reserved_words_and_maps_symbols():
    assert modelica_code(sp.Symbol("end") + 1) == "'end' + 1"
    assert modelica_code(sp.Symbol("Real") * 2) == "2*'Real'"
    assert modelica_code(sp.Symbol("der(x)") * 2, {sp.Symbol("der(x)"): "der_x"}) == "2*der_x"


def test_full_precision_numbers():
    assert modelica_code(sp.Rational(1, 3)) == "1.0/3.0"
    assert modelica_code(sp.Float(0.1234567890123456789, 20)) == repr(0.12345678901234568)


def test_model_text_follows_msl_conventions(derivations):
    text = bridge.modelica_export.model_source(derivations.eom(ROOT / "examples" / "chaplygin_sleigh.toml"))
    assert text.startswith('model ChaplyginSleigh "')
    assert 'parameter Real m(unit="kg") = 1.5 "mass";' in text
    assert "Real x(start=0.0, fixed=true, unit=\"m\")" in text
    assert "// constraints.nonholonomic[1]" in text and "residual[1] =" in text
    assert "experiment(StopTime=20.0" in text and "Documentation(info=" in text
    assert "Lagrange's equations with multipliers" in text
    assert text.rstrip().endswith("end ChaplyginSleigh;")


def test_deterministic_output():
    system = bridge.load_system(ROOT / "examples" / "rolling_sphere.toml")
    a = bridge.modelica_export.model_source(bridge.derive(system, "chaplygin"))
    b = bridge.modelica_export.model_source(bridge.derive(bridge.load_system(ROOT / "examples" / "rolling_sphere.toml"),
                                                         "chaplygin"))
    assert a == b


def test_committed_library_is_regenerated_identically(derivations):
    eoms = [derivations.eom(p, "lagrange") for p in EXAMPLES]
    files = package_files(eoms, "NonholonomicExamples")
    folder = ROOT / "modelica" / "NonholonomicExamples"
    assert sorted(files) == sorted(p.name for p in folder.iterdir())
    for name, text in files.items():
        assert (folder / name).read_text(encoding="utf-8") == text, f"{name}: run nhbridge modelica examples/*.toml " \
            "--package NonholonomicExamples -o modelica/"


@pytest.mark.parametrize("method", ["lagrange", "maggi"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_rumoca_compiles_simulates_and_matches(path, method, derivations):
    pytest.importorskip("rumoca")
    eom = derivations.eom(path, method)  # shared with tests/test_forms.py
    system = eom.system
    try:  # in the form bridge.modelica.forms chooses (the car's coupled split: normal equations)
        report = check_rumoca(eom, stop_time=min(system.stop_time, 4.0))
    except ValidationError as exc:
        if "SymbolicSingular" in str(exc) or "cannot be solved for" in str(exc):  # tests/test_compiler_defects.py
            pytest.xfail(f"a Rumoca defect documented in docs/compiler-defects/ (pymoca: tests/test_forms.py): {exc}")
        raise
    assert report.balanced
    assert report.max_error < 1e-6, report.summary()


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_constraints_as_given_parse_and_balance(path, derivations):
    rumoca = pytest.importorskip("rumoca")
    eom = derivations.eom(path, "lagrange")
    system = eom.system
    text = bridge.modelica_export.model_source(eom, level="given")
    model = rumoca.loads(text, model=system.name, roots=[])
    assert model.structure().is_balanced
    if system.m:
        assert "constraints as given" in text


def test_openmodelica(tmp_path):
    if find_omc() is None:
        pytest.skip("OpenModelica's omc is not on PATH or in OPENMODELICAHOME (not installable on this machine)")
    system = bridge.load_system(ROOT / "examples" / "chaplygin_sleigh.toml")
    report = check_openmodelica(bridge.derive(system, "lagrange"), stop_time=5.0)
    assert report.max_error < 1e-6


def test_openmodelica_missing_is_a_clear_error(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("OPENMODELICAHOME", raising=False)
    code = main(["modelica", str(EXAMPLES[0]), "-o", str(tmp_path / "M.mo"), "--check", "openmodelica"])
    assert code == 1
    assert "omc was not found on PATH or in OPENMODELICAHOME" in capsys.readouterr().err


def test_cli_modelica_errors(capsys, tmp_path):
    assert main(["modelica", *map(str, EXAMPLES[:2]), "-o", str(tmp_path)]) == 2
    assert "--package" in capsys.readouterr().err
    assert main(["modelica", str(EXAMPLES[0]), "-o", str(tmp_path / "model.txt")]) == 2
    bad = ROOT / "tests" / "bad_inputs" / "nonholonomic_not_linear.toml"
    assert main(["modelica", str(EXAMPLES[0]), str(bad), "--package", "P", "-o", str(tmp_path / "lib")]) == 2
    assert not (tmp_path / "lib").exists()  # nothing written when one system fails


def test_acceleration_forms_are_the_same_equations():
    system = bridge.load_system(ROOT / "examples" / "rolling_sphere.toml")
    eom = bridge.derive(system, "lagrange")
    implicit = bridge.modelica_export.model_source(eom, "index1", accelerations="implicit")
    variables = bridge.modelica_export.model_source(eom, "index1", accelerations="variables")
    assert "der(der_x)" in implicit and "der_der_x" not in implicit
    assert "der(der_x) = der_der_x;" in variables
    assert implicit.count(";") + 2 * len(eom.u) == variables.count(";")


def test_rumoca_check_compiles_the_one_model_wherever_it_runs(tmp_path, monkeypatch, derivations):
    """Run where the model was exported (SimplePendulum.mo) beside another .mo declaring the same class, Rumoca
    loaded the folder too and failed with 'Duplicate class ... with non-identical definition'."""
    pytest.importorskip("rumoca")
    eom = derivations.eom(ROOT / "examples" / "simple_pendulum.toml")
    text = bridge.modelica_export.model_source(eom)
    (tmp_path / "SimplePendulum.mo").write_text(text, encoding="utf-8")
    (tmp_path / "Copy.mo").write_text(text.replace("= 0.5", "= 0.25"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    report = check_rumoca(eom, stop_time=2.0)
    assert report.balanced and report.max_error < 1e-6, report.summary()


def test_package_annotation_is_valid_modelica(tmp_path, derivations):
    """``quote=False`` (an argument of html.escape) leaked into every package.mo annotation."""
    eom = derivations.eom(ROOT / "examples" / "simple_pendulum.toml")
    files = package_files([eom], "P", description='a "quoted" <b> & back\\slash')
    head = files["package.mo"]
    assert "quote=False" not in head
    assert 'info="<html><p>a \\"quoted\\" &lt;b&gt; &amp; back\\\\slash; generated by nhbridge' in head
    rumoca = pytest.importorskip("rumoca")
    assert rumoca.validate_source(head) == []
    (tmp_path / "P").mkdir()
    for name, text in files.items():
        (tmp_path / "P" / name).write_text(text, encoding="utf-8")
    model = rumoca.loads(head, model="P.SimplePendulum", roots=[str(tmp_path)])
    result = model.simulate((0.0, 1.0), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=0.01))
    native = bridge.simulate(eom, 1.0, rtol=1e-10, atol=1e-12)
    assert float(result["theta"][-1]) == pytest.approx(native.q[-1, 0], abs=1e-6)


# names a C template declares itself (fmi2Component c, ModelInstance* m, x_nominal, nx, ...)
TEMPLATE_NAMES = """
name = "Names"
[coordinates]
x_nominal = { start = 0.4, velocity = 0.0 }
[parameters]
c = { value = 3.0 }
m = { value = 0.5 }
nx = { value = 2.0 }
value = { value = 0.1 }
vr = { value = 1.0 }
[energy]
kinetic = "1/2*m*der(x_nominal)^2"
potential = "1/2*c*x_nominal^2 + value*nx*vr*x_nominal^4"
[outputs]
i = { expr = "c*x_nominal" }
"""


def test_rumoca_fmu_with_names_of_its_c_template(tmp_path):
    """A parameter named c ("'c' redeclared" in Rumoca's fmi2GetNominalsOfContinuousStates) and other names of
    Rumoca's C template build an FMU that keeps the user's names and matches the native simulation."""
    pytest.importorskip("rumoca")
    fmpy = pytest.importorskip("fmpy")
    from bridge.backends.fmu import build_rumoca_fmu

    path = tmp_path / "names.toml"
    path.write_text(TEMPLATE_NAMES, encoding="utf-8")
    eom = bridge.derive(bridge.load_system(path), "lagrange")
    fmu = build_rumoca_fmu(eom, tmp_path / "n.fmu")
    names = {v.name for v in fmpy.read_model_description(str(fmu), validate=False).modelVariables}
    assert {"x_nominal", "der_x_nominal", "der(x_nominal)", "c", "m", "nx", "value", "vr", "i"} <= names
    assert not any("nhb_" in n for n in names)
    res = fmpy.simulate_fmu(str(fmu), validate=False, fmi_type="ModelExchange", solver="CVode",
                            relative_tolerance=1e-10, stop_time=2.0, output_interval=0.01,
                            output=["x_nominal", "i"], start_values={"c": 4.0})
    native = bridge.simulate(eom, 2.0, interval=0.01, parameters={"c": 4.0})
    ref = native.q[:, 0]
    assert np.abs(np.interp(native.time, res["time"], res["x_nominal"]) - ref).max() < 1e-6 * np.ptp(ref)
    assert np.allclose(res["i"], 4.0 * np.asarray(res["x_nominal"]), rtol=1e-12, atol=1e-15)


def test_reserved_names_are_quoted_in_declarations_and_equations_alike(derivations):
    """Every user name goes through one spelling: renamed to Modelica's reserved words, the model still compiles,
    balances and simulates like the native run (Rumoca 0.9 drops a quoted name on the left of an equation, so
    the output is checked as text only)."""
    rumoca = pytest.importorskip("rumoca")
    eom = derivations.eom(ROOT / "examples" / "simple_pendulum.toml")
    text = bridge.modelica_export.model_source(eom, rename={"energy": "String"})
    assert "output Real 'String'(unit=\"J\")" in text and "\n  'String' = " in text
    text = bridge.modelica_export.model_source(eom, rename={"m": "Real", "l": "end", "g": "sin"})
    assert "parameter Real 'Real'(unit=\"kg\") = 0.5" in text and "= -'sin'*'end'*'Real'*sin(theta);" in text
    model = rumoca.loads(text, model="SimplePendulum", roots=[])
    assert model.structure().is_balanced
    result = model.simulate((0.0, 1.0), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=0.01))
    native = bridge.simulate(eom, 1.0, rtol=1e-10, atol=1e-12)
    assert float(result["theta"][-1]) == pytest.approx(native.q[-1, 0], abs=1e-6)
