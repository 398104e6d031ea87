"""nhbridge validate: every example passes, known answers hold, and the validator does fail when it should."""

from __future__ import annotations

import csv
import json
import os
import signal
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.cli import main
from bridge.fmu.build import build_fmu
from bridge.model.units import compatible
from bridge.validation.campaign import FAILED, PASSED, SKIPPED, Options, planned_runs, validate_system
from bridge.validation.metrics import compare, signal_scale
from bridge.validation.runs import RunFailure, isolated

from .shared_campaign import examples_campaign

pytest.importorskip("fmpy")
pytest_plugins = ["pytester"]

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
PENDULUM = ROOT / "examples" / "simple_pendulum.toml"
PENDULUM_TEXT = PENDULUM.read_text()
FAST = Options(groups=("methods", "fmu"), methods=("lagrange",), fmi_versions=(2,), overrides={"stop_time": 2.0})


# Slow (the campaign of every example by every method natively, through Rumoca and pymoca and as every method's
# four FMUs): run once per test run (tests/shared_campaign.py) for the tests here that read its
# report and those of test_validate_examples; the end-to-end check of the suite.
@pytest.fixture(scope="module")
def campaign(tmp_path_factory):
    """All examples, every method and backend, through the CLI, with every report."""
    return examples_campaign(tmp_path_factory.getbasetemp())


def runs_of(data, name):
    system = next(s for s in data["systems"] if s["name"] == name)
    return {r["id"]: r for r in system["runs"]}


def test_every_example_passes(campaign):
    code, _reports, data = campaign
    assert code == 0, data["failures"]
    assert len(data["systems"]) == len(EXAMPLES)
    for system in data["systems"]:
        ran = [r for r in system["runs"] if r["status"] != SKIPPED]
        kinds = {r["id"] for r in ran}
        # every example is run by lagrange natively, through Rumoca's Modelica simulation and 4 native FMU runs
        assert {"native-lagrange", "modelica-rumoca", "fmu2-me", "fmu2-cs", "fmu3-me", "fmu3-cs"} <= kinds
        assert all(r["status"] == PASSED for r in ran)
        for r in ran:
            signals = {m["signal"] for m in r["signals"]}
            assert {"der(" + s + ")" for s in signals if not s.startswith("der(")} & signals  # velocities compared
            assert all(m["max_rel"] <= r["tolerance"] and m["tube_ok"] for m in r["signals"])
    skipped = [r for s in data["systems"] for r in s["runs"] if r["status"] == SKIPPED]
    assert all(r["reason"] for r in skipped)


def test_reports_are_written(campaign, tmp_path):
    _, reports, data = campaign
    page = reports["html"].read_text()
    assert "data:image/png;base64," not in page  # the campaign asks for --no-plots
    assert all(s["name"] in page for s in data["systems"])
    # with plots, on two examples: one embedded plot per system at least, the page self-contained; on a Dask worker
    # process (the shared campaign runs in this process): the path of validate --workers, whose runs of one method
    # go to a worker together (bridge.validation.shared.run_together) and come back to be judged; one worker costs
    # about 4 s of CPU here, two about 9 s (two workers: test_sweeps' --scheduler campaign)
    chosen = [ROOT / "examples" / "skate.toml", ROOT / "examples" / "rolling_disk.toml"]
    assert main(["validate", *map(str, chosen), "-q", "--runs", "methods", "--methods", "lagrange,maggi",
                 "--workers", "1", "--report", str(tmp_path / "p.html"), "--json", str(tmp_path / "p.json")]) == 0
    plotted_runs = json.loads((tmp_path / "p.json").read_text())
    ran = [r for s in plotted_runs["systems"] for r in s["runs"] if r["status"] == PASSED]
    assert {r["id"] for r in ran} >= {"native-lagrange", "native-maggi"} and len(ran) >= 2 * len(chosen)
    plotted = (tmp_path / "p.html").read_text()
    assert plotted.count("data:image/png;base64,") >= len(chosen)
    assert "<script" not in plotted and "http" not in plotted.split("<body>")[1].split("nhbridge validation report")[0]
    assert "<script" not in page and "http" not in page.split("<body>")[1].split("nhbridge validation report")[0]
    rows = list(csv.DictReader(reports["csv"].open()))
    assert {r["system"] for r in rows} == {s["name"] for s in data["systems"]}
    assert all(float(r["max_rel"]) <= float(r["tolerance"]) for r in rows if r["max_rel"])


def test_skate_matches_its_closed_form(campaign):
    """x = g sin(a)/(2w^2) sin^2(wt), y = g sin(a)/(2w) (t - sin(2wt)/(2w)): 1e-8 natively, 1e-6 in FMUs."""
    _, _, data = campaign
    system = next(s for s in data["systems"] if s["name"] == "InclinedSkate")
    assert set(system["closed_forms"]) >= {"x", "y"}
    runs = runs_of(data, "InclinedSkate")
    for rid, run in runs.items():
        if run["status"] == SKIPPED:
            continue
        errors = {m["signal"]: m["max_rel"] for m in run["signals"] if m["signal"] in ("x", "y")}
        bound = 1e-8 if rid.startswith("native") else 1e-6
        assert set(errors) == {"x", "y"} and max(errors.values()) < bound, (rid, errors)


def test_rolling_sphere_keeps_its_first_integral(campaign):
    _, _, data = campaign
    for rid, run in runs_of(data, "RollingSphere").items():
        if run["status"] == SKIPPED:
            continue
        assert run["energy_drift"] is not None and run["energy_drift"] < 1e-6, rid  # conservative: checked
        omega = next(m for m in run["signals"] if m["signal"] == "omega_z")
        # cos(theta) phi' + psi' is constant: measured against its magnitude, it holds to 1e-7 in every run
        assert omega["max_rel"] < 1e-7, rid


def test_energy_checked_only_for_conservative_systems(campaign):
    _, _, data = campaign
    checked = {s["name"]: s["energy_checked"] for s in data["systems"]}
    assert checked["SimplePendulum"] and checked["ChaplyginSleigh"] and checked["RollingSphere"]
    assert not checked["Hydropulsator"] and not checked["InclinedSkate"] and not checked["SteeredCar"]


def perturbed_fmu(tmp_path, text: str, name: str = "p.fmu") -> Path:
    eom = bridge.derive(bridge.parse_system(text, "variant"), "lagrange")
    return build_fmu(eom, tmp_path / name, 2)


def relabelled_fmu(source: Path, target: Path, old: str, new: str) -> Path:
    """A copy of the FMU ``source`` with ``old`` replaced by ``new`` in its modelDescription.xml."""
    import zipfile

    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == "modelDescription.xml":
                data = data.replace(old.encode(), new.encode())
            zout.writestr(item, data)
    return target


def test_perturbed_fmu_is_flagged(tmp_path, capsys, built_fmu):
    """A validator that cannot fail is worthless: l = 0.8 -> 0.81 in an FMU is caught."""
    fmu = perturbed_fmu(tmp_path, PENDULUM_TEXT.replace("value = 0.8,", "value = 0.81,"))
    same = built_fmu.build(PENDULUM, "lagrange", 2, copy_to=tmp_path / "same.fmu")
    args = ["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "3"]
    assert main([*args, "--fmu", str(same)]) == 0
    capsys.readouterr()
    assert main([*args, "--fmu", str(fmu), "--json", str(tmp_path / "r.json")]) == 1
    out = capsys.readouterr().out
    assert "FAILED SimplePendulum: external-p-me: der(theta): max error 0.03" in out
    runs = runs_of(json.loads((tmp_path / "r.json").read_text()), "SimplePendulum")
    assert runs["external-p-me"]["status"] == FAILED and runs["external-p-cs"]["status"] == FAILED
    assert runs["native-lagrange"]["status"] == PASSED  # the other runs are still reported


def test_external_fmu_with_missing_variables_and_other_units(tmp_path, built_fmu):
    cart = built_fmu.build(ROOT / "examples" / "cartesian_pendulum.toml", "lagrange", 2, copy_to=tmp_path / "cart.fmu")
    degrees = relabelled_fmu(built_fmu.build(PENDULUM, "lagrange", 2), tmp_path / "deg.fmu",
                             'unit="rad"', 'unit="deg"')  # a system file gives SI units only: an FMU from elsewhere
    result = validate_system(PENDULUM, Options(groups=(), external=(str(cart), str(degrees)),
                                               overrides={"stop_time": 1.0}))
    runs = {r.id: r for r in result.runs}
    assert "lacks the variable(s) der(theta)" in runs["external-cart-me"].reason  # (theta is one of its outputs)
    assert "theta has unit 'deg', the system file says 'rad'" in runs["external-deg-me"].reason
    assert all(r.status == "error" and not r.input_error for k, r in runs.items() if k.startswith("external"))
    assert compatible("m/s2", "m.s-2") and compatible("N.m", "m.N") and not compatible("rad/s", "rad")


def test_fmu_failing_mid_run_and_unloadable_fmu(tmp_path, capsys):
    # the force sqrt(1 - t) is NaN after t = 1: the FMU reports an error at run time
    text = PENDULUM_TEXT.replace("[constraints]", '[forces]\ntheta = "sqrt(1 - t)"\n\n[constraints]')
    broken = perturbed_fmu(tmp_path, text, "broken.fmu")
    junk = tmp_path / "junk.fmu"
    junk.write_bytes(b"not a zip archive")
    code = main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "2",
                 "--fmu", str(broken), "--fmu", str(junk), "--json", str(tmp_path / "r.json")])
    assert code == 2  # the unloadable FMU is bad input
    out = capsys.readouterr().out
    assert "external-broken-me: the FMU failed during the run" in out
    assert "junk.fmu: not a loadable FMU" in out
    runs = runs_of(json.loads((tmp_path / "r.json").read_text()), "SimplePendulum")
    assert runs["native-lagrange"]["status"] == PASSED


def test_a_crashing_process_is_reported_not_fatal():
    def crash(conn):
        import faulthandler

        faulthandler.disable()  # pytest's handler would print the child's stack: the crash is intended
        os.kill(os.getpid(), signal.SIGSEGV)

    with pytest.raises(RunFailure, match="crashed the simulation process \\(signal SIGSEGV\\)"):
        isolated(crash, timeout=30)


def test_bad_reference_and_validation_tables(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text(PENDULUM_TEXT + '\n[reference]\ntheta = "0.5*cos(omega*t)"\nphi = "1"\n'
                   '\n[validation]\ntube = -1\ntolerance = { fmu-xx = 1e-3 }\n')
    code = main(["validate", str(bad), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "1"])
    assert code == 2
    out = capsys.readouterr().out
    assert "reference.theta: unknown name 'omega'" in out
    assert "reference.phi: 'phi' is not a signal of SimplePendulum" in out
    assert "validation.tube: expected a positive number" in out
    assert "validation.tolerance.fmu-xx: unknown run type" in out
    assert "native-lagrange    pass" in out  # the runs are still carried out and reported


def test_wrong_closed_form_fails(tmp_path):
    wrong = tmp_path / "wrong.toml"
    wrong.write_text(PENDULUM_TEXT + '\n[reference]\ntheta = "0.5*cos(sqrt(g/l)*t)"\n')  # small-angle formula
    result = validate_system(wrong, FAST)
    assert result.closed_forms and not result.problems
    run = next(r for r in result.runs if r.id == "native-lagrange")
    assert run.status == FAILED and run.reason.startswith("theta: max error")


def test_unwritable_report_path(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code = main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "1",
                 "--report", str(blocker / "r.html"), "--json", str(tmp_path / "r.json")])
    assert code == 2
    out = capsys.readouterr().out
    assert f"{blocker / 'r.html'}: {blocker} is not a directory" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["exit_code"] == 2 and any("is not a directory" in f for f in data["failures"])
    assert not (blocker / "r.html").exists()


def test_bad_system_file_still_reports_the_others(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = 'X'\n[coordinates]\nx = { start = 0 }\n[energy]\nkinetic = 'm*der(x)^2'\n")
    code = main(["validate", str(bad), str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q",
                 "--stop-time", "1"])
    assert code == 2
    out = capsys.readouterr().out
    assert "unknown name 'm'" in out and "SimplePendulum       native-lagrange    pass" in out


# Two FMU validations (about 1 s of CPU): the tolerance from the file and the one from the command line must each
# decide a real run; lagrange's FMU only (the tolerance is the run type's, the same for every method's FMU).
def test_tolerances_from_system_file_and_command_line(tmp_path):
    strict = tmp_path / "strict.toml"
    strict.write_text(PENDULUM_TEXT + "\n[validation]\ntolerance = { fmu-me = 1e-12 }\nstop_time = 2.0\n")
    lagrange_fmu = Options(groups=("fmu",), fmu_methods=("lagrange",), fmi_versions=(2,))
    result = validate_system(strict, lagrange_fmu)
    runs = {r.id: r for r in result.runs}
    assert runs["fmu2-me"].status == FAILED and runs["fmu2-me"].tolerance == 1e-12
    assert runs["fmu2-cs"].status == PASSED and result.stop_time == 2.0
    looser = validate_system(strict, replace(lagrange_fmu, overrides={"tolerances": {"fmu-me": 1e-5}}))
    assert {r.id: r.status for r in looser.runs}["fmu2-me"] == PASSED


def test_metrics_and_tube():
    t = np.linspace(0, 1, 1001)
    ref = np.sin(2 * np.pi * t) ** 3
    shifted = np.sin(2 * np.pi * (t - 0.002)) ** 3  # a time shift of 2 ms: inside a 5 ms time tolerance
    m = compare("y", t, ref, t, shifted, 0.002, 0.005)
    assert m.tube_ok and abs(m.max_rel - np.abs(shifted - ref).max() / 2) < 1e-15
    assert abs(m.rms - np.sqrt(np.mean((shifted - ref) ** 2))) < 1e-15
    assert not compare("y", t, ref, t, shifted, 0.002, 0.0).tube_ok  # no time tolerance: outside
    offset = compare("y", t, ref, t, ref + 0.005, 0.002, 0.0)  # 0.0025 of the range 2
    assert not offset.tube_ok and offset.tube_violations == t.size
    coarse = compare("y", t, ref, t[::10], ref[::10], 0.002, 0.0)  # other grid: interpolated
    assert 0 < coarse.max_rel < 1e-3 and coarse.tube_ok
    assert signal_scale(np.full(5, -3.0)) == 3.0 and signal_scale(np.array([1.0, 1.5])) == 0.5
    assert signal_scale(np.zeros(5)) == 1.0
    nan = compare("y", t, ref, t, np.where(t > 0.5, np.nan, ref), 0.002, 0.0)
    assert not nan.tube_ok and nan.max_rel == float("inf") and nan.worst_time > 0.5


# Slow (about 10 s of CPU): the plugin collects every run of two systems (all methods, natively and as FMUs); the
# outcome counts asserted below are those of the full set.
def test_pytest_plugin_on_a_folder(pytester):
    folder = pytester.mkdir("systems")
    (folder / "pendulum.toml").write_text(PENDULUM_TEXT + "\n[validation]\nstop_time = 2.0\n")
    (folder / "wrong.toml").write_text(PENDULUM_TEXT.replace('"SimplePendulum"', '"WrongPendulum"')
                                       + '\n[reference]\ntheta = "0.5*cos(sqrt(g/l)*t)"\n'
                                       + "\n[validation]\nstop_time = 2.0\n")
    (folder / "broken.toml").write_text("name = 'X'\n")
    (folder / "scenario.toml").write_text('[components.a]\nfmu = "a.fmu"\n')  # a co-simulation scenario: not collected
    result = pytester.runpytest("--nhbridge-validate", str(folder), "--nhbridge-runs", "methods,fmu", "-p",
                                "no:cacheprovider", "-rs")
    outcomes = result.parseoutcomes()
    # pendulum: every applicable method natively and its FMU (FMI 2 and 3, ME and CS) pass; the methods that do not
    # apply are skipped natively and as FMUs, and rumoca-fmu too; wrong: every run but the skipped ones (and the
    # reference run itself) fails against the closed form; broken: its system-file item fails
    from bridge.derivation.methods import METHODS

    pendulum = bridge.load_system(folder / "pendulum.toml")
    applicable = sum(method.applicable(pendulum) is None for method in METHODS.values())
    skipped = 2 * (len(METHODS) - applicable) + 1
    assert outcomes["passed"] == 5 * applicable and outcomes["failed"] == 1 + 5 * applicable + 1
    assert outcomes["skipped"] == 2 * skipped
    result.stdout.fnmatch_lines(["*broken.toml: bad input*", "*coordinates: the [[]coordinates[]] table is missing*",
                                 "*WrongPendulum native-maggi (native maggi*): theta: max error*"])


def test_aliases_match_an_fmu_with_other_names(tmp_path, capsys):
    renamed = perturbed_fmu(tmp_path, PENDULUM_TEXT.replace("theta", "angle").replace("energy = {", "E = {"),
                            "renamed.fmu")
    args = ["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "2",
            "--fmu", str(renamed)]
    assert main(args) == 1  # matched by name: nothing to compare
    assert "lacks the variable(s) theta, der(theta), energy" in capsys.readouterr().out
    assert main([*args, "--alias", "theta=angle", "--alias", "der(theta)=der(angle)", "--alias", "energy=E"]) == 0
    capsys.readouterr()
    assert main([*args, "--alias", "omega=w"]) == 2
    assert "--alias: omega is not a signal of SimplePendulum" in capsys.readouterr().out


def test_fmu_made_by_another_tool(tmp_path, capsys):
    """An FMU built by Rumoca from the exported .mo, validated as a foreign FMU: its Model Exchange passes,
    its Co-Simulation (fixed-step explicit Euler) is caught, and its modelDescription problems are noted."""
    pytest.importorskip("rumoca")
    from bridge.backends.fmu import build_rumoca_fmu

    fmu = build_rumoca_fmu(bridge.derive(bridge.load_system(PENDULUM), "lagrange"), tmp_path / "Pendulum.fmu")
    code = main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "-q", "--stop-time", "2",
                 "--fmu", str(fmu), "--json", str(tmp_path / "r.json")])
    assert code == 1
    runs = runs_of(json.loads((tmp_path / "r.json").read_text()), "SimplePendulum")
    me, cs = runs["external-Pendulum-me"], runs["external-Pendulum-cs"]
    assert me["status"] == PASSED and max(m["max_rel"] for m in me["signals"]) < 1e-6
    assert any(n.startswith("fmpy validation:") for n in me["notes"])
    assert cs["status"] == FAILED and "max error" in cs["reason"]


def test_a_method_that_does_not_apply_is_skipped_with_its_reason(tmp_path):
    """Not a Chaplygin system for this split: the chaplygin run is skipped with the failing condition, not failed."""
    text = (ROOT / "examples" / "chaplygin_sleigh.toml").read_text().replace(
        "[method]  ", '[method]\nindependent = ["x", "y"]\n#')
    path = tmp_path / "sleigh_xy.toml"
    path.write_text(text)
    result = validate_system(path, Options(groups=("methods",), methods=("lagrange", "chaplygin"),
                                           overrides={"stop_time": 1.0}))
    runs = {r.id: r for r in result.runs}
    assert runs["native-lagrange"].status == PASSED
    assert runs["native-chaplygin"].status == SKIPPED and "not a Chaplygin system" in runs["native-chaplygin"].reason
    assert result.status == PASSED


# -- the FMU of every method ---------------------------------------------------------------------------------------
def test_fmu_methods_option_selects_the_fmus(capsys):
    """--fmu-methods picks the methods whose FMUs are built; by default the methods of --methods (all)."""
    from bridge.derivation.methods import METHODS

    car = ROOT / "examples" / "car.toml"

    def fmu_ids(**kw):
        return {s.id for s in planned_runs(car, Options(groups=("fmu",), fmi_versions=(2,), **kw))[1]}

    assert fmu_ids(fmu_methods=("maggi",)) == {"fmu2-me-maggi", "fmu2-cs-maggi", "rumoca-fmu"}
    assert fmu_ids(methods=("lagrange",)) == {"fmu2-me", "fmu2-cs", "rumoca-fmu"}
    every = fmu_ids()
    assert {"fmu2-me", "fmu2-cs"} <= every
    for name in METHODS:
        if name != "lagrange":
            assert {f"fmu2-me-{name}", f"fmu2-cs-{name}"} <= every or f"fmu-{name}" in every  # run, or skipped
    with pytest.raises(SystemExit) as exit_:
        main(["validate", str(car), "--fmu-methods", "maggi,newton"])
    assert exit_.value.code == 2
    assert "unknown method(s) newton" in capsys.readouterr().err


def test_every_applicable_methods_fmu_is_validated(campaign):
    """The native FMU of every applicable method, FMI 2 and 3, Model Exchange and Co-Simulation, against the
    reference: a car (nonholonomic; every reduced method applies) and the Cartesian pendulum (holonomic: the
    Chaplygin form does not apply and is skipped with its reason). Read from the campaign of every example, whose
    default (no --fmu-methods) is every method's FMUs: the same runs as ``--fmu-methods all``."""
    from bridge.derivation.methods import METHODS

    code, _, data = campaign
    assert code == 0, data["failures"]
    files = [ROOT / "examples" / "car.toml", ROOT / "examples" / "cartesian_pendulum.toml"]
    for path in files:
        every = Options(groups=("fmu",))
        assert [s.id for s in planned_runs(path, every)[1]] == [
            s.id for s in planned_runs(path, replace(every, fmu_methods=tuple(METHODS)))[1]]
    by_name = {s["name"]: s for s in data["systems"]}
    for path in files:
        loaded = bridge.load_system(path)
        runs = {r["id"]: r for r in by_name[loaded.name]["runs"]}
        applicable = [m for m, method in METHODS.items() if method.applicable(loaded) is None]
        assert {"lagrange", "nielsen", "maggi", "appell"} <= set(applicable)
        for name in METHODS:
            suffix = "" if name == "lagrange" else f"-{name}"
            ids = [f"fmu{v}-{k}{suffix}" for v in (2, 3) for k in ("me", "cs")]
            if name in applicable:
                for i in ids:
                    assert runs[i]["status"] == PASSED, (path.name, runs[i])
                    assert max(m["max_rel"] for m in runs[i]["signals"]) <= runs[i]["tolerance"]
            else:
                assert runs[f"fmu{suffix}"]["status"] == SKIPPED and "not applicable" in runs[f"fmu{suffix}"]["reason"]
    car_runs = {r["id"] for r in by_name[bridge.load_system(files[0]).name]["runs"]}
    assert "fmu3-cs-chaplygin" in car_runs  # the car is a Chaplygin system: its Chaplygin FMU was run


CONTACT_SLEIGH = ROOT / "tests" / "models" / "contact_sleigh.toml"


# About 2 s of CPU: 3 s of simulated time are needed to pass the split change at t ~ 1.03 s and settle after it.
def test_a_reduced_fmu_follows_its_method_through_a_split_change():
    """The contact-point sleigh passes theta = pi/2 at t ~ 1.03 s, where the build-time split (x, theta
    independent) turns singular: native maggi re-partitions and passes, and so does maggi's FMU (ME and CS)."""
    opts = Options(groups=("methods", "fmu"), methods=("lagrange", "maggi"), fmi_versions=(2,))
    result = validate_system(CONTACT_SLEIGH, replace(opts, overrides={"stop_time": 3.0}))
    runs = {r.id: r for r in result.runs}
    assert runs["native-maggi"].status == PASSED and any("re-partitioned" in n for n in runs["native-maggi"].notes)
    assert runs["fmu2-me"].status == runs["fmu2-cs"].status == PASSED  # lagrange's FMU has no split
    for rid in ("fmu2-me-maggi", "fmu2-cs-maggi"):
        assert runs[rid].status == PASSED, runs[rid]
    assert result.status == PASSED


def test_a_reduced_fmu_stopping_where_its_method_stops_is_skipped_like_it():
    """The hydropulsator's Chaplygin split turns singular at t = 0.115 s with no other Chaplygin split: the native
    run does not apply from there, and the FMU, stopping at the same place, is skipped with that reason too."""
    result = validate_system(ROOT / "examples" / "hydropulsator.toml",
                             Options(groups=("methods", "fmu"), methods=("chaplygin",), fmi_versions=(2,),
                                     overrides={"stop_time": 0.3}))
    runs = {r.id: r for r in result.runs}
    assert runs["native-chaplygin"].status == SKIPPED and "no other usable split" in runs["native-chaplygin"].reason
    for rid in ("fmu2-me-chaplygin", "fmu2-cs-chaplygin"):
        assert runs[rid].status == SKIPPED and "the FMU stops there too" in runs[rid].reason, runs[rid]
    assert result.status == PASSED


def _build_once_in_child(path: str, log: str) -> None:
    from bridge.validation.shared import built_once

    def build(target: Path) -> Path:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        tmp = target.with_suffix(".part")
        tmp.write_bytes(b"fmu")
        os.replace(tmp, target)  # whole or absent, as build_fmu writes it
        return target

    assert built_once(Path(path), build) == Path(path) and Path(path).read_bytes() == b"fmu"


def test_runs_of_one_system_share_derivations_and_fmu_builds(tmp_path):
    """What the runs of one system share when Dask pickles each on its own: a process computes a value once per
    system (token) and forgets it for the next; processes building the same FMU build it once."""
    import multiprocessing

    from bridge.validation.shared import remembered

    calls = []

    def compute(value):
        calls.append(value)
        return value

    assert remembered("system-a", ("eom", "maggi"), lambda: compute(1)) == 1
    assert remembered("system-a", ("eom", "maggi"), lambda: compute(2)) == 1 and calls == [1]
    assert remembered("system-b", ("eom", "maggi"), lambda: compute(3)) == 3  # another system: derived anew
    assert remembered("system-a", ("eom", "maggi"), lambda: compute(4)) == 4 and calls == [1, 3, 4]

    def fails():
        raise ValueError("no split")

    with pytest.raises(ValueError):
        remembered("system-a", ("eom", "kane"), fails)
    assert remembered("system-a", ("eom", "kane"), lambda: compute(5)) == 5  # a failure is not remembered
    fmu, log = tmp_path / "fmu2_X.fmu", tmp_path / "builds.log"
    context = multiprocessing.get_context("fork")
    children = [context.Process(target=_build_once_in_child, args=(str(fmu), str(log))) for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(60)
    assert [c.exitcode for c in children] == [0, 0, 0]
    assert len(log.read_text().split()) == 1  # built by one of them, run by all



def test_runs_sharing_work_are_handed_out_together():
    """validate on workers: the runs of one key (a method's native run and its FMUs) are one call of the runner, so
    one process derives the method and builds its FMUs; every run's result or exception (with its attributes) comes
    back in the order planned, and a group lost as a whole (e.g. its worker died) fails each of its runs."""
    from bridge.validation.shared import run_together

    handed = []

    def runner(calls):  # runs the calls here; the last one is lost as a whole
        handed.append(len(calls))
        values = [call() for call in calls[:-1]]
        out = [(lambda value=value: value) for value in values]

        def lost():
            raise RunFailure("the Dask workers running it were lost")

        return out + [lost]

    def bad_input():
        raise RunFailure("not an FMU", input=True)

    calls = [("maggi", lambda: 1), ("kane", lambda: 2), ("maggi", bad_input), ("maggi", lambda: 3), (7, lambda: 4)]
    done = run_together(runner, calls)
    assert handed == [3]  # maggi (3 runs), kane, 7: three calls of the runner, the largest group first
    assert [done[k]() for k in (0, 1, 3)] == [1, 2, 3] and all(done[k].seconds >= 0 for k in (0, 1, 3))
    with pytest.raises(RunFailure) as caught:
        done[2]()
    assert caught.value.input and caught.value.reason == "not an FMU"  # rebuilt with its attributes
    with pytest.raises(RunFailure, match="were lost"):
        done[4]()
