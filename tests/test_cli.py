"""The command line: the user's commands from the issue, outputs and exit codes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.cli import main

ROOT = Path(__file__).parent.parent
SPHERE = str(ROOT / "examples" / "rolling_sphere.toml")


def test_check(capsys):
    assert main(["check", SPHERE]) == 0
    out = capsys.readouterr().out
    assert "RollingSphere is valid" in out and "3 independent velocities" in out


def test_methods_lists_registry(capsys):
    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    for name in ("lagrange", "maggi", "appell", "nielsen", "chaplygin"):
        assert name in out


def test_derive_latex(capsys):
    assert main(["derive", SPHERE, "--method", "chaplygin", "--format", "latex"]) == 0
    out = capsys.readouterr().out
    assert r"\begin{align}" in out and r"\ddot{\theta}" in out and "A sigma" in out


def test_derive_json_roundtrip(capsys, tmp_path):
    target = tmp_path / "eq.json"
    assert main(["derive", SPHERE, "--method", "lagrange", "--format", "json", "-o", str(target)]) == 0
    data = json.loads(target.read_text())
    assert data["method"] == "lagrange" and len(data["mass_matrix"]) == 5 + 2


def test_derive_stats_reproduces_seed_count(capsys):
    assert main(["derive", str(ROOT / "examples" / "vibratory_exciter.toml"), "--stats"]) == 0
    out = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in out.splitlines()[2:] if line and line.split()[0] in
            ("lagrange", "nielsen")}
    # inertia-term differentiations: the seed counts 68 for Lagrange, more for Nielsen
    assert rows["lagrange"][4] == "68"
    assert int(rows["nielsen"][4]) > 68


def test_simulate_writes_csv(capsys, tmp_path):
    target = tmp_path / "sphere.csv"
    assert main(["simulate", SPHERE, "--method", "maggi", "--stop-time", "2", "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "largest constraint residual" in out
    with target.open() as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    system = bridge.load_system(SPHERE)
    names = [c.name for c in system.coordinates]
    assert header[: 1 + 2 * len(names)] == ["time", *names, *[f"der({n})" for n in names]]
    assert header[1 + 2 * len(names):] == list(system.outputs)
    data = np.array(rows[1:], dtype=float)
    assert data[0, 0] == 0.0 and data[-1, 0] == pytest.approx(2.0)


def test_simulate_lagrange_has_multiplier_columns(tmp_path, capsys):
    target = tmp_path / "s.csv"
    assert main(["simulate", SPHERE, "--stop-time", "1", "-o", str(target)]) == 0
    header = target.read_text().splitlines()[0].split(",")
    assert header[-2:] == ["lambda[1]", "lambda[2]"]


def test_output_not_writable_keeps_nothing_half_written(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["simulate", SPHERE, "--stop-time", "0.5", "-o", str(blocker / "out.csv")])
    assert code == 2
    assert "cannot write" in capsys.readouterr().err


def test_existing_output_survives_failure(tmp_path, capsys):
    target = tmp_path / "keep.csv"
    target.write_text("precious\n")
    code = main(["simulate", str(ROOT / "tests" / "bad_inputs" / "nonholonomic_not_linear.toml"), "-o", str(target)])
    assert code == 2
    assert target.read_text() == "precious\n"


def test_simulation_failure_exit_code(capsys, tmp_path):
    code = main(["simulate", str(ROOT / "examples" / "hydropulsator.toml"), "--method", "chaplygin",
                 "-o", str(tmp_path / "h.csv")])
    assert code == 1
    err = capsys.readouterr().err
    assert "t = " in err and "singular" in err and "Traceback" not in err
    assert not (tmp_path / "h.csv").exists()


def test_bad_cli_arguments_exit_2(capsys):
    with pytest.raises(SystemExit) as info:
        main(["simulate", SPHERE, "--stop-time", "-1"])
    assert info.value.code == 2


def test_missing_file(capsys):
    assert main(["check", "no/such/file.toml"]) == 2
    assert "cannot read" in capsys.readouterr().err
