"""Without a C compiler: every command that builds an FMU says so in one line and exits 2; ``validate`` still makes
and reports every run that needs no compiler. Two ways to lack one: ``CC`` naming no executable, and no ``CC`` with
a PATH that holds no cc, gcc or clang."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.fmu.build import compiler

ROOT = Path(__file__).parent.parent
PENDULUM = ROOT / "examples" / "simple_pendulum.toml"
SCENARIO = ROOT / "examples" / "cosim" / "hydropulsator_motors.toml"


@pytest.fixture(params=["bad CC", "empty PATH"])
def no_compiler(request, monkeypatch, tmp_path):
    """The environment without a C compiler; the message's ``where`` part."""
    if request.param == "bad CC":
        monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
        return "is not an executable"
    monkeypatch.delenv("CC", raising=False)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert not any(shutil.which(c) for c in ("cc", "gcc", "clang"))
    return "no cc, gcc or clang on PATH"


def one_line(err: str, where: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    (line,) = lines
    assert line.startswith("nhbridge: error: ") and "no C compiler found" in line and where in line
    assert "apt-get install gcc" in line and "set CC" in line  # how to get one
    return line


def test_compiler_found_here():
    """The premise of the tests below: this machine has one, so each test's failure is due to its environment."""
    assert shutil.which(compiler().split()[0])


@pytest.mark.parametrize("backend", ["native", "rumoca"])
def test_fmu(no_compiler, backend, tmp_path, capsys):
    out = tmp_path / "p.fmu"
    assert main(["fmu", str(PENDULUM), "--backend", backend, "-o", str(out)]) == 2
    one_line(capsys.readouterr().err, no_compiler)
    assert not out.exists() and list(tmp_path.glob("*.fmu")) == []


def test_crosscheck(no_compiler, tmp_path, capsys):
    assert main(["crosscheck", str(PENDULUM), "-o", str(tmp_path / "xc")]) == 2
    one_line(capsys.readouterr().err, no_compiler)
    assert not (tmp_path / "xc" / "fmus").exists()


@pytest.mark.parametrize("command", ["cosim", "ssp"])
def test_cosim_building_components(no_compiler, command, tmp_path, capsys):
    out = tmp_path / ("run.csv" if command == "cosim" else "s.ssp")
    assert main([command, str(SCENARIO), "-o", str(out)]) == 2
    line = one_line(capsys.readouterr().err, no_compiler)
    assert "components pulsator, motor_r, motor_d" in line
    assert not out.exists()


def test_validate_reports_every_other_run(no_compiler, tmp_path, capsys):
    report = tmp_path / "v.json"
    code = main(["validate", str(PENDULUM), "--runs", "methods,fmu,rumoca-fmu", "--methods", "lagrange,nielsen",
                 "--fmu-methods", "lagrange", "--json", str(report), "--quiet"])
    out, err = capsys.readouterr()
    assert code == 2
    line = one_line(err, no_compiler)
    assert line.endswith("the FMU runs were skipped")
    runs = {r["id"]: r for r in json.loads(report.read_text())["systems"][0]["runs"]}
    native = {k for k in runs if k.startswith("native-")}
    assert native == {"native-lagrange", "native-nielsen"}
    assert all(runs[k]["status"] == "passed" for k in native)  # made and judged against the reference
    fmu_runs = {k for k in runs if "fmu" in k}
    assert fmu_runs == {"fmu2-me", "fmu2-cs", "fmu3-me", "fmu3-cs", "rumoca-fmu2-me", "rumoca-fmu2-cs"}
    for k in fmu_runs:
        assert runs[k]["status"] == "skipped" and runs[k]["reason"].startswith("no C compiler found"), runs[k]
    assert "native-lagrange    pass" in out and "fmu2-me            skip" in out


def test_validate_without_fmu_runs_needs_no_compiler(no_compiler, capsys):
    assert main(["validate", str(PENDULUM), "--runs", "methods", "--methods", "lagrange", "--quiet"]) == 0
    assert "C compiler" not in capsys.readouterr().err
