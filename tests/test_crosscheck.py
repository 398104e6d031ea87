"""``nhbridge crosscheck``: the FMI Cross-Check layout, its files, checking an FMU in it, bad input."""

from __future__ import annotations

import argparse
import os
import re
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fmpy")

import fmpy
from fmpy.util import read_csv, read_ref_opt_file

import bridge
from bridge.errors import BridgeError, SystemFileError, ValidationError
from bridge.fmu.build import build_fmu
from bridge.validation import crosscheck as xc

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
VERSION = bridge.__version__
NUMBER = r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?"


def fmpy_validators():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from fmpy.cross_check import validate_result, validate_signal
        from fmpy.cross_check.validate_vendor_repo import validate_cross_check_result, validate_repo, validate_test_fmu
    return validate_result, validate_signal, validate_test_fmu, validate_cross_check_result, validate_repo


def quiet(fn, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fmpy imports scipy.ndimage.filters (deprecated)
        return fn(*args, **kw)


def hidden_entries(root: Path) -> list[Path]:
    """Temporary files and folders left behind (they all start with a dot)."""
    return [p for p in root.rglob(".*")]


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def copy_model(model_dir: Path, new_root: Path, old_root: Path) -> Path:
    target = new_root / model_dir.relative_to(old_root)
    shutil.copytree(model_dir, target)
    return target


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("xc")
    hydro = xc.export_crosscheck(EXAMPLES / "hydropulsator.toml", root)
    pendulum = xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", root, fmi_types=("cs", "me"))
    return root, hydro, pendulum


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="nhbridge")
    xc.add_parser(p.add_subparsers(dest="command", required=True))
    return p


def run_cli(*argv: str) -> int:
    args = parser().parse_args(["crosscheck", *map(str, argv)])
    return args.func(args)


# -- export ----------------------------------------------------------------------------------------
def test_layout(tree):
    root, hydro, pendulum = tree
    base = root / "fmus" / "2.0"
    assert hydro == [base / t / "linux64" / "nhbridge" / VERSION / "Hydropulsator" for t in ("me", "cs")]
    assert pendulum == [base / t / "linux64" / "nhbridge" / VERSION / "SimplePendulum" for t in ("cs", "me")]
    stem = "Hydropulsator"
    for folder in hydro:
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            [f"{stem}.fmu", f"{stem}_ref.csv", f"{stem}_ref.opt", f"{stem}_in.csv", "ReadMe.md"])
    for folder in pendulum:  # no inputs: no _in.csv
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            ["SimplePendulum.fmu", "SimplePendulum_ref.csv", "SimplePendulum_ref.opt", "ReadMe.md"])
    assert (hydro[0] / f"{stem}.fmu").read_bytes() == (hydro[1] / f"{stem}.fmu").read_bytes()
    assert xc.parse_layout(hydro[1]) == xc.Layout(root, "2.0", "cs", "linux64", "nhbridge", VERSION, stem)
    assert not hidden_entries(root / "fmus")
    assert all(p.stat().st_mode & 0o777 == 0o777 & ~current_umask() for p in hydro)  # not mkdtemp's 0700


def test_files_follow_the_csv_rules(tree):
    _root, hydro, _ = tree
    folder = hydro[0]
    md = fmpy.read_model_description(str(folder / "Hydropulsator.fmu"), validate=True)
    variables = {v.name: v for v in md.modelVariables}
    system = bridge.load_system(EXAMPLES / "hydropulsator.toml")
    for name in ("Hydropulsator_ref.csv", "Hydropulsator_in.csv"):
        path = folder / name
        assert path.stat().st_size < 1_000_000
        lines = path.read_text().splitlines()
        header = lines[0].split(",")
        assert header[0] == '"time"' and all(re.fullmatch(r'"[^",]+"', h) for h in header)
        assert all(h.strip('"') in variables for h in header[1:])  # exactly the modelDescription names
        row = re.compile(rf"{NUMBER}(?:,{NUMBER}){{{len(header) - 1}}}")
        assert all(row.fullmatch(line) for line in lines[1:])  # unquoted C literals, no trailing separator
        data = read_csv(str(path))  # fmpy's reader of cross-check CSVs
        assert np.all(np.diff(data["time"]) > 0)
    ref = read_csv(str(folder / "Hydropulsator_ref.csv"))
    assert list(ref.dtype.names) == ["time", "x1", "x2", "phi", "psi", "der(x1)", "der(x2)", "der(phi)", "der(psi)",
                                     "relative_displacement", "platform_speed"]
    assert len(ref) == 501 and ref["time"][0] == 0 and ref["time"][-1] == 5
    native = bridge.simulate(bridge.derive(system, "lagrange"), 5.0, interval=0.01, rtol=1e-12, atol=1e-14).columns()
    assert np.allclose(ref["x1"], native["x1"], rtol=0, atol=1e-12)
    inputs = read_csv(str(folder / "Hydropulsator_in.csv"))
    assert list(inputs.dtype.names[1:]) == [v.name for v in md.modelVariables if v.causality == "input"]
    assert list(inputs["Mr"]) == [2.0, 2.0] and list(inputs["Md"]) == [1.0, 1.0] and list(inputs["time"]) == [0, 5]
    opts = read_ref_opt_file(str(folder / "Hydropulsator_ref.opt"))  # fmpy's reader
    assert (opts["StartTime"], opts["StopTime"], opts["StepSize"], opts["RelTol"]) == (0, 5, 0.01, 1e-12)
    assert all(re.fullmatch(rf"[A-Za-z]+,{NUMBER}", line) for line in
               (folder / "Hydropulsator_ref.opt").read_text().splitlines())
    readme = (folder / "ReadMe.md").read_text()
    for text in ("|Model Name|Hydropulsator|", "|FMI Version|2.0|", "|FMI Type|Model Exchange|",
                 "|Platform|linux64|", f"|Generation Tool|nhbridge {VERSION}|", "Hydropulsator_in.csv", "DOP853"):
        assert text in readme
    assert "|FMI Type|Co-Simulation|" in (hydro[1] / "ReadMe.md").read_text()


def test_near_constant_signal_left_out(tree):
    _, _, pendulum = tree
    ref = read_csv(str(pendulum[0] / "SimplePendulum_ref.csv"))
    assert list(ref.dtype.names) == ["time", "theta", "der(theta)"]
    assert "Left out: `energy`" in (pendulum[0] / "ReadMe.md").read_text()


def test_fmpy_validator_accepts_the_export(tree):
    _root, hydro, pendulum = tree
    _, _, validate_test_fmu, _, _ = fmpy_validators()
    for folder in hydro + pendulum:
        assert quiet(validate_test_fmu, str(folder)) == []


def test_export_replaces_an_existing_folder(tmp_path):
    (tmp_path / "fmus").mkdir()
    first = xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", tmp_path, fmi_types=("me",))[0]
    (first / "stale.txt").write_text("from an older export")
    again = xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", tmp_path, fmi_types=("me",))[0]
    assert again == first and not (first / "stale.txt").exists()
    assert not hidden_entries(tmp_path)


# -- check -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("which,index", [("hydro", 0), ("hydro", 1), ("pendulum", 1)])
def test_check_passes(tree, which, index):
    root, hydro, pendulum = tree
    folder = (hydro if which == "hydro" else pendulum)[index]
    model = folder.name
    res = xc.check_crosscheck(folder)
    assert res.passed, res.reasons
    assert res.status == "passed" and not res.reasons
    expected = (root / "results" / "2.0" / xc.parse_layout(folder).fmi_type / "linux64" / "nhbridge" / VERSION
                / "nhbridge" / VERSION / model)
    assert res.results_dir == expected
    assert sorted(p.name for p in expected.iterdir()) == sorted([f"{model}_out.csv", "passed", "ReadMe.md"])
    assert res.files == sorted(expected.iterdir())
    assert {s.signal for s in res.signals} == set(read_csv(str(folder / f"{model}_ref.csv")).dtype.names[1:])
    assert all(s.passed and s.band_outside == 0 and s.metrics.max_rel < 1e-4 for s in res.signals)
    validate_result, _, _, validate_cross_check_result, _ = fmpy_validators()
    assert quiet(validate_cross_check_result, str(expected)) == []
    out, ref = read_csv(str(expected / f"{model}_out.csv")), read_csv(str(folder / f"{model}_ref.csv"))
    stop = read_ref_opt_file(str(folder / f"{model}_ref.opt"))["StopTime"]
    assert quiet(validate_result, out, ref, 0.0, stop) is None
    readme = (expected / "ReadMe.md").read_text()
    assert "|Result|passed|" in readme and ("CVode" if "/me/" in str(folder) else "communication step") in readme


def test_whole_tree_passes_fmpy_vendor_repo_validation(tree):
    root, hydro, pendulum = tree
    for folder in hydro + pendulum:
        if not (xc.results_folder(root, "2.0", xc.parse_layout(folder).fmi_type, "linux64", "nhbridge", VERSION,
                                  folder.name) / "passed").exists():
            xc.check_crosscheck(folder)
    *_, validate_repo = fmpy_validators()
    fmus, results, problems = quiet(validate_repo, str(root))
    assert (fmus, results, problems) == (4, 4, [])


def test_cli_export_and_check_fmi3(tmp_path, capsys):
    assert run_cli(EXAMPLES / "simple_pendulum.toml", "-o", tmp_path, "--fmi-version", "3", "--fmi-type", "me") == 0
    folder = tmp_path / "fmus" / "3.0" / "me" / "linux64" / "nhbridge" / VERSION / "SimplePendulum"
    assert f"wrote {folder}" in capsys.readouterr().out
    assert fmpy.read_model_description(str(folder / "SimplePendulum.fmu")).fmiVersion == "3.0"
    assert run_cli("--check", folder) == 0
    out = capsys.readouterr().out
    assert "SimplePendulum (FMI 3.0 me): PASSED" in out
    assert (tmp_path / "results" / "3.0" / "me" / "linux64" / "nhbridge" / VERSION / "nhbridge" / VERSION
            / "SimplePendulum" / "passed").is_file()


def test_perturbed_fmu_fails(tree, tmp_path, capsys):
    root, _, pendulum = tree
    folder = copy_model(pendulum[0], tmp_path, root)  # the cs folder
    assert run_cli(folder) == 0  # first the original FMU: passed
    results = xc.results_folder(tmp_path, "2.0", "cs", "linux64", "nhbridge", VERSION, "SimplePendulum")
    assert (results / "passed").exists()
    text = (EXAMPLES / "simple_pendulum.toml").read_text().replace("l = { value = 0.8,", "l = { value = 0.82,")
    assert text != (EXAMPLES / "simple_pendulum.toml").read_text()
    build_fmu(bridge.derive(bridge.parse_system(text), "lagrange"), folder / "SimplePendulum.fmu", 2)
    capsys.readouterr()
    assert run_cli(folder) == 1
    out = capsys.readouterr().out
    assert "FAILED" in out and "theta" in out
    assert sorted(p.name for p in results.iterdir()) == ["ReadMe.md", "SimplePendulum_out.csv", "failed"]
    res = xc.check_crosscheck(folder)
    assert not res.passed
    assert any(r.startswith("theta: ") and "outside the tube" in r for r in res.reasons)
    theta = next(s for s in res.signals if s.signal == "theta")
    assert not theta.passed and theta.metrics.max_rel > 0.05
    assert "|Result|failed|" in (results / "ReadMe.md").read_text()
    assert not hidden_entries(tmp_path)
    # the band is fmpy's: same outliers as fmpy.cross_check.validate_signal on the same data
    _, validate_signal, *_ = fmpy_validators()
    out_csv, ref = read_csv(str(results / "SimplePendulum_out.csv")), read_csv(str(folder / "SimplePendulum_ref.csv"))
    for name in ("theta", "der(theta)"):
        for y in (out_csv[name], out_csv[name] * 1.3 + 0.05):
            ours = xc.band_outliers(out_csv["time"], y, ref["time"], ref[name], 0.0, 10.0)
            theirs = quiet(validate_signal, out_csv["time"], y, ref["time"], ref[name], 0.0, 10.0)[3]
            assert np.array_equal(ours, theirs)


# -- bad input -------------------------------------------------------------------------------------
def test_missing_folder(tmp_path):
    with pytest.raises(ValidationError, match="no such folder"):
        xc.check_crosscheck(tmp_path / "fmus" / "2.0" / "me" / "linux64" / "nhbridge" / VERSION / "Nothing")
    with pytest.raises(ValidationError, match="no such file or folder"):
        run_cli(tmp_path / "nothing.toml", "-o", tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_folder_without_reference(tree, tmp_path):
    root, hydro, _ = tree
    folder = copy_model(hydro[0], tmp_path, root)
    (folder / "Hydropulsator_ref.csv").unlink()
    (folder / "Hydropulsator_ref.opt").unlink()
    with pytest.raises(ValidationError) as err:
        xc.check_crosscheck(folder)
    text = str(err.value)
    assert "Hydropulsator_ref.csv: the reference _ref.csv is missing" in text
    assert "Hydropulsator_ref.opt: the options file _ref.opt is missing" in text  # every problem at once
    assert not (tmp_path / "results").exists()


def test_malformed_reference(tree, tmp_path):
    root, hydro, _ = tree
    folder = copy_model(hydro[1], tmp_path, root)
    ref = folder / "Hydropulsator_ref.csv"
    lines = ref.read_text().splitlines()
    lines[3] = lines[3].replace(",", ",abc,", 1)  # a word and one value too many
    lines[5] = "1e-3 m," + lines[5].split(",", 1)[1]  # a unit
    lines[8], lines[9] = lines[9], lines[8]  # time goes backwards (reported once the values are fixed)
    ref.write_text("\n".join(lines) + "\n")
    (folder / "Hydropulsator_ref.opt").write_text("StartTime,0\nStepSize,fast\nRelTol,1e-6\n")
    with pytest.raises(ValidationError) as err:
        run_cli("--check", folder)
    problems = [str(p) for p in err.value.problems]
    assert any("Hydropulsator_ref.csv: line 4: 12 value(s), the header has 11" in p for p in problems)
    assert any("Hydropulsator_ref.csv: line 6: '1e-3 m' is not a number" in p for p in problems)
    assert any("Hydropulsator_ref.opt: line 2: StepSize: 'fast' is not a number" in p for p in problems)
    assert any("missing required element(s) StopTime" in p for p in problems)
    assert not (tmp_path / "results").exists()
    # the values repaired: now the decreasing time is reported
    lines[3] = lines[3].replace(",abc,", ",", 1)
    lines[5] = "0.04," + lines[5].split(",", 1)[1]
    ref.write_text("\n".join(lines) + "\n")
    (folder / "Hydropulsator_ref.opt").write_text("StartTime,0\nStopTime,5\nStepSize,0.01\nRelTol,1e-6\n")
    with pytest.raises(ValidationError, match=r"line 10: time decreases from 0.08 to 0.07"):
        xc.check_crosscheck(folder)
    ref.write_text('x,y\n0,1\n1,2\n')
    with pytest.raises(ValidationError, match='the first column must be "time"'):
        xc.check_crosscheck(folder)
    assert not (tmp_path / "results").exists()


def test_broken_fmu_and_wrong_folder(tree, tmp_path, monkeypatch):
    root, hydro, _ = tree
    folder = copy_model(hydro[0], tmp_path, root)
    (folder / "Hydropulsator.fmu").write_bytes(b"not a zip file")
    with pytest.raises(ValidationError, match="not a loadable FMU"):
        xc.check_crosscheck(folder)
    loose = tmp_path / "loose" / "Hydro"
    shutil.copytree(hydro[0], loose)
    with pytest.raises(ValidationError) as err:
        xc.check_crosscheck(loose)
    assert "the FMU is missing" in str(err.value) and "rename Hydropulsator.fmu" in str(err.value)
    with pytest.raises(ValidationError, match="applies to export only"):
        run_cli("--check", folder, "--fmi-version", "2")
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")  # without -o the export goes to the current directory
    assert run_cli(EXAMPLES / "simple_pendulum.toml", "--fmi-type", "me") == 0
    assert list((tmp_path / "cwd").glob("fmus/2.0/me/*/nhbridge/*/SimplePendulum/SimplePendulum.fmu"))
    assert not (tmp_path / "results").exists() and not (tmp_path / "loose" / "results").exists()


def test_unwritable_output(tree, tmp_path):
    _root, hydro, _ = tree
    blocker = tmp_path / "file.txt"
    blocker.write_text("a file, not a folder")
    with pytest.raises(ValidationError, match="file.txt is a file, not a folder"):
        xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", blocker / "out")
    with pytest.raises(ValidationError, match="is an existing file"):
        run_cli(EXAMPLES / "simple_pendulum.toml", "-o", blocker)
    with pytest.raises(ValidationError, match="file.txt is a file, not a folder"):
        xc.check_crosscheck(hydro[0], blocker / "results")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file.txt"]
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(ValidationError, match="is not writable"):
            xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", locked / "out")


def test_bad_system_file_and_options_reported_together(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "Bad"\n[coordinates]\nx = { velocity = 1.0 }\n')
    with pytest.raises(SystemFileError):
        xc.export_crosscheck(bad, tmp_path / "out")
    with pytest.raises(ValidationError) as err:
        xc.export_crosscheck(bad, tmp_path / "out", fmi_version=4, fmi_types=("xy",))
    text = str(err.value)
    assert "FMI version must be 2 or 3" in text and "me and/or cs" in text and "bad.toml" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.toml"]


def test_failed_commit_keeps_the_previous_export(tree, tmp_path, monkeypatch):
    xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", tmp_path)
    me = xc.model_folder(tmp_path, 2, "me", "SimplePendulum")
    (me / "marker").write_text("the previous export")
    before = {p.name: p.read_bytes() for p in me.iterdir()}
    real_rename = os.rename

    def rename(src, dst):
        if str(src).endswith(".tmp") and Path(dst) == xc.model_folder(tmp_path, 2, "cs", "SimplePendulum").absolute():
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    import bridge.atomic

    real_exchange = bridge.atomic._exchange

    def exchange(a, b):  # the atomic swap of an existing folder (renameat2), failing like the rename
        if Path(b) == xc.model_folder(tmp_path, 2, "cs", "SimplePendulum").absolute():
            raise OSError(28, "No space left on device")
        return real_exchange(a, b)

    monkeypatch.setattr(os, "rename", rename)
    monkeypatch.setattr(bridge.atomic, "_exchange", exchange)
    with pytest.raises(BridgeError, match="No space left on device"):
        xc.export_crosscheck(EXAMPLES / "simple_pendulum.toml", tmp_path)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in me.iterdir()} == before  # the me folder was put back
    assert sorted(p.name for p in xc.model_folder(tmp_path, 2, "cs", "SimplePendulum").iterdir()) == [
        "ReadMe.md", "SimplePendulum.fmu", "SimplePendulum_ref.csv", "SimplePendulum_ref.opt"]
    assert not hidden_entries(tmp_path)


def test_loose_folder_needs_type_and_output(tree, tmp_path):
    _root, _, pendulum = tree
    loose = tmp_path / "incoming" / "SimplePendulum"
    shutil.copytree(pendulum[1], loose)
    res = xc.check_crosscheck(loose, tmp_path / "out", fmi_type="me")
    assert res.passed, res.reasons
    tool = fmpy.read_model_description(str(loose / "SimplePendulum.fmu")).generationTool.split()
    assert res.results_dir == xc.results_folder(tmp_path / "out", "2.0", "me", "linux64", tool[0], tool[-1],
                                                "SimplePendulum")
    assert (res.results_dir / "passed").is_file()
    assert "--fmi-type me -o" in (res.results_dir / "ReadMe.md").read_text()
