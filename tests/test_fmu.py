"""Native FMUs (FMI 2.0 and 3.0, ME and CS) against the native simulation, validated by fmpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.cli import main
from bridge.fmu.build import build_fmu

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
STOP = 2.0
#: examples where fmpy's CVode at rtol 1e-10 stays above the 1e-7 goal by its own global error (measured against a
#: native reference converged to 1.5e-10: the error shrinks 50x at rtol 1e-12, so it is CVode's, not the model's)
SLEEVE = "the sleeve x stays near 0.1 m but moves by only 8 mm: CVode's global error is 2.4e-7 of that range"
CVODE_GLOBAL_ERROR = {"constant_speed_drive": SLEEVE, "dc_motor_drive": SLEEVE,
                      "rolling_wheel": "the wheel's lateral position y: 1.04e-7 of its range (2.1e-9 at rtol 1e-12)"}


def native(eom, parameters=None):
    return bridge.simulate(eom, STOP, interval=0.01, parameters=parameters)


def run(fmu: Path, kind: str, names: list[str], start_values=None):
    kw = dict(fmi_type=kind, stop_time=STOP, output_interval=0.01, output=names, start_values=start_values or {})
    if kind == "ModelExchange":
        kw.update(solver="CVode", relative_tolerance=1e-10)
    else:
        kw.update(relative_tolerance=1e-10)
    return fmpy.simulate_fmu(str(fmu), **kw)


def max_rel(result, ref, names) -> float:
    worst = 0.0
    for i, name in enumerate(names):
        sig = np.interp(ref.time, result["time"], result[name])
        span = float(np.ptp(ref.q[:, i])) or max(1.0, float(np.abs(ref.q[:, i]).max()))
        worst = max(worst, float(np.abs(sig - ref.q[:, i]).max() / span))
    return worst


@pytest.fixture(scope="module")
def fmus(built_fmu):
    """Every example's lagrange FMU, FMI 2 and 3, from the run's FMU cache (other modules build some too)."""
    built = {}
    for path in EXAMPLES:
        eom = bridge.derive(bridge.load_system(path), "lagrange")
        for version in (2, 3):
            built[path.stem, version] = (eom, built_fmu.build(path, "lagrange", version))
    return built


@pytest.mark.parametrize("version", [2, 3])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_fmu_validates_and_matches_native(fmus, path, version):
    eom, fmu = fmus[path.stem, version]
    assert validate_fmu(str(fmu)) == []
    names = [c.name for c in eom.system.coordinates]
    ref = native(eom)
    me = run(fmu, "ModelExchange", names)
    cs = run(fmu, "CoSimulation", names)
    assert max_rel(cs, ref, names) < 1e-6
    if path.stem in CVODE_GLOBAL_ERROR:
        assert max_rel(me, ref, names) < 1e-6
        pytest.xfail(f"fmpy CVode at rtol 1e-10 is above the 1e-7 goal: {CVODE_GLOBAL_ERROR[path.stem]}")
    assert max_rel(me, ref, names) < 1e-7


@pytest.mark.parametrize("path", EXAMPLES[:4], ids=lambda p: p.stem)
def test_fmi2_and_fmi3_agree(fmus, path):
    eom, f2 = fmus[path.stem, 2]
    _, f3 = fmus[path.stem, 3]
    names = [c.name for c in eom.system.coordinates]
    a, b = run(f2, "ModelExchange", names), run(f3, "ModelExchange", names)
    for name in names:
        assert np.abs(a[name] - b[name]).max() < 1e-9 * max(1.0, np.ptp(a[name]))


@pytest.mark.parametrize("version", [2, 3])
def test_fmu_state_rollback_is_bit_identical(fmus, version, tmp_path):
    """FMU2Slave/FMU3Slave get/set and serialize/deserialize the FMU state: a rollback repeats the trajectory
    bit for bit (also after an input change, which the state undoes), in the same and in another instance;
    a corrupted serialized state is rejected."""
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    eom, fmu = fmus["hydropulsator", version]
    unzip = extract(str(fmu), unzipdir=str(tmp_path / "unzip"))
    md = read_model_description(unzip)
    for kind in (md.modelExchange, md.coSimulation):
        assert kind.canGetAndSetFMUstate and kind.canSerializeFMUstate
    vr = {v.name: v.valueReference for v in md.modelVariables}
    names = [c.name for c in eom.system.coordinates] + ["der(phi)", "lambda[1]"]
    refs = [vr[n] for n in names]

    def start(name):
        slave = (FMU2Slave if version == 2 else FMU3Slave)(guid=md.guid, unzipDirectory=unzip,
                                                            modelIdentifier=md.coSimulation.modelIdentifier,
                                                            instanceName=name)
        slave.instantiate()
        if version == 2:
            slave.setupExperiment(tolerance=1e-8, startTime=0.0, stopTime=STOP)
            slave.enterInitializationMode()
        else:
            slave.enterInitializationMode(tolerance=1e-8, startTime=0.0, stopTime=STOP)
        slave.exitInitializationMode()
        return slave

    def api(slave, name):  # fmpy spells FMI 2's functions "FMUstate", FMI 3's "FMUState"
        return getattr(slave, name if version == 3 else name.replace("FMUState", "FMUstate").replace(
            "deserialize", "deSerialize"))

    def steps(slave, t, n, h=0.01):
        get = slave.getReal if version == 2 else slave.getFloat64
        out = []
        for k in range(n):
            slave.doStep(currentCommunicationPoint=t + k * h, communicationStepSize=h)
            out.append(get(refs))
        return out

    a = start("a")
    steps(a, 0.0, 37)
    t0 = 0.37
    state = api(a, "getFMUState")()
    first = steps(a, t0, 40)
    (a.setReal if version == 2 else a.setFloat64)([vr["Mr"]], [5.0])  # undone by setting the state
    api(a, "setFMUState")(state)
    assert steps(a, t0, 40) == first
    blob = api(a, "serializeFMUState")(state)
    api(a, "freeFMUState")(state)

    b = start("b")
    restored = api(b, "deserializeFMUState")(blob)
    api(b, "setFMUState")(restored)
    assert steps(b, t0, 40) == first
    corrupted = bytearray(blob)
    corrupted[len(blob) // 2] ^= 0x04
    with pytest.raises(Exception, match="status 3"):
        api(b, "deserializeFMUState")(bytes(corrupted))
    for slave in (a, b):
        slave.terminate()
        slave.freeInstance()


def test_parameters_through_start_values(fmus):
    eom, fmu = fmus["simple_pendulum", 2]
    ref = native(eom, {"l": 1.3})
    res = run(fmu, "ModelExchange", ["theta"], {"l": 1.3})
    assert max_rel(res, ref, ["theta"]) < 1e-7
    assert max_rel(res, native(eom), ["theta"]) > 1e-3  # the change does change the result


def test_reduced_method_fmu(tmp_path):
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "rolling_sphere.toml"), "chaplygin")
    fmu = build_fmu(eom, tmp_path / "s.fmu", 2)
    assert validate_fmu(str(fmu)) == []
    names = [c.name for c in eom.system.coordinates]
    assert max_rel(run(fmu, "ModelExchange", names), native(eom), names) < 1e-7


def test_runtime_error_is_reported_not_crashed(fmus):
    _eom, fmu = fmus["simple_pendulum", 2]
    with pytest.raises(Exception, match="failed with status 3 \\(error\\)"):
        run(fmu, "ModelExchange", ["theta"], {"m": 0.0})


def test_bad_output_and_compiler(tmp_path, monkeypatch, capsys):
    example = str(EXAMPLES[0])
    assert main(["fmu", example, "-o", str(tmp_path / "x.zip")]) == 2
    blocker = tmp_path / "f"
    blocker.write_text("")
    assert main(["fmu", example, "-o", str(blocker / "x.fmu")]) == 2
    monkeypatch.setenv("CC", "/nonexistent/cc")
    assert main(["fmu", example, "-o", str(tmp_path / "y.fmu")]) == 2
    assert "CC" in capsys.readouterr().err
    assert not (tmp_path / "y.fmu").exists()


def test_rumoca_backend_pendulum(tmp_path):
    """Rumoca's fmi2 FMU: real, simulates correctly in ME, but its modelDescription fails fmpy's validation."""
    pytest.importorskip("rumoca")
    from bridge.backends.fmu import build_rumoca_fmu

    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "simple_pendulum.toml"), "lagrange")
    fmu = build_rumoca_fmu(eom, tmp_path / "p.fmu")
    problems = validate_fmu(str(fmu))
    assert any("is not defined" in p for p in problems)  # units used without UnitDefinitions
    assert any('initial="calculated" but provides a start value' in p for p in problems)
    res = fmpy.simulate_fmu(str(fmu), validate=False, fmi_type="ModelExchange", solver="CVode",
                            relative_tolerance=1e-10, stop_time=STOP, output_interval=0.01, output=["theta"])
    assert max_rel(res, native(eom), ["theta"]) < 1e-7


def test_rumoca_backend_reports_codegen_failure(tmp_path, capsys):
    pytest.importorskip("rumoca")
    # Rumoca 0.9.13's fmi2 template fails on time-dependent constraints (the car's steering)
    code = main(["fmu", str(ROOT / "examples" / "car.toml"), "--backend", "rumoca", "-o", str(tmp_path / "c.fmu")])
    assert code == 2
    assert "Rumoca cannot generate an FMU" in capsys.readouterr().err
    assert not (tmp_path / "c.fmu").exists()
    assert main(["fmu", str(EXAMPLES[0]), "--backend", "rumoca", "--fmi-version", "3", "-o",
                 str(tmp_path / "d.fmu")]) == 2


def test_openmodelica_backend(tmp_path, monkeypatch, capsys):
    from bridge.tools.openmodelica import find_omc

    if find_omc() is None:
        monkeypatch.delenv("OPENMODELICAHOME", raising=False)
        code = main(["fmu", str(EXAMPLES[0]), "--backend", "openmodelica", "-o", str(tmp_path / "o.fmu")])
        assert code == 2
        assert ("OpenModelica's omc was not found on PATH or in OPENMODELICAHOME; install OpenModelica or use "
                "--backend native") in capsys.readouterr().err
        pytest.skip("OpenModelica's omc is not on PATH or in OPENMODELICAHOME (not installable on this machine)")
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "simple_pendulum.toml"), "lagrange")
    from bridge.backends.fmu import build_openmodelica_fmu

    fmu = build_openmodelica_fmu(eom, tmp_path / "o.fmu")
    res = fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode", relative_tolerance=1e-10,
                            stop_time=STOP, output_interval=0.01, output=["theta"])
    assert max_rel(res, native(eom), ["theta"]) < 1e-7


def test_output_units_and_descriptions_reach_fmu_and_modelica(tmp_path):
    """[outputs] x = { expr, unit, description }: the unit and text appear in modelDescription.xml and the .mo."""
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "hydropulsator.toml"), "lagrange")
    md = fmpy.read_model_description(str(build_fmu(eom, tmp_path / "h.fmu", 3)))
    speed = next(v for v in md.modelVariables if v.name == "platform_speed")
    assert speed.unit == "m/s" and speed.description == "inflow per piston area, eq. (4.356)"
    assert speed.causality == "output"
    source = bridge.modelica_export.model_source(eom)
    assert 'output Real platform_speed(unit="m/s") "inflow per piston area, eq. (4.356)";' in source
    # the output's description does not replace the model's (a regression: it once did)
    assert eom.system.description.startswith("Rotary hydropulsator") and md.description.startswith("Rotary")
