"""--set overrides, simulate --input/--plot/--interval, and the command-line defects of issue 10.

References are independent of the code under test: another formulation of the same system (the
Cartesian pendulum against the angle pendulum), the file edited as text instead of --set, closed-form
constraint solutions, a time function written into the file instead of an input table.
"""

from __future__ import annotations

import csv
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.cli import build_parser, main

ROOT = Path(__file__).parent.parent
EX = ROOT / "examples"
SLEIGH = str(EX / "chaplygin_sleigh.toml")
CARTESIAN = str(EX / "cartesian_pendulum.toml")
PENDULUM = str(EX / "simple_pendulum.toml")
SPHERE = str(EX / "rolling_sphere.toml")
CAR = str(EX / "car.toml")


def read_csv(path) -> dict[str, np.ndarray]:
    with open(path) as fh:
        rows = list(csv.reader(fh))
    return {name: np.array([float(r[k]) for r in rows[1:]]) for k, name in enumerate(rows[0])}


# -- --set: values, consistency, errors ------------------------------------------------------------
def test_set_holonomic_start_matches_the_angle_pendulum(tmp_path, capsys):
    """x, der(x) and l set on the Cartesian pendulum: y = -sqrt(l^2 - x^2) and der(y) = -x der(x)/y are
    computed, and the motion equals the angle pendulum's with the same l, theta0, der(theta)0."""
    cart, pend = tmp_path / "c.csv", tmp_path / "p.csv"
    sets = ["--set", "l=1.0", "--set", "x=0.6", "--set", "der(x)=0.4"]
    assert main(["simulate", CARTESIAN, *sets, "--stop-time", "3", "-o", str(cart)]) == 0
    assert "start values computed from the constraints: y, der(y)" in capsys.readouterr().out
    theta0, dtheta0 = float(np.arctan2(0.6, 0.8)), 0.4 / 0.8  # x = l sin(theta), der(x) = l cos(theta) der(theta)
    assert main(["simulate", PENDULUM, "--set", "l=1.0", "--set", f"theta={theta0!r}",
                 "--set", f"der(theta)={dtheta0!r}", "--stop-time", "3", "-o", str(pend)]) == 0
    c, p = read_csv(cart), read_csv(pend)
    assert c["x"][0] == 0.6 and c["der(x)"][0] == 0.4
    assert abs(c["y"][0] + 0.8) < 1e-14 and abs(c["der(y)"][0] - 0.3) < 1e-14
    assert np.abs(c["theta"] - p["theta"]).max() < 1e-7


def test_set_equals_editing_the_file(tmp_path):
    """--set m=2.5 and der(theta)=0.5 give the run of the file with those numbers written into it and the
    dependent der(y) = a der(theta) = 0.1 (the constraint at theta = 0) written by hand."""
    text = Path(SLEIGH).read_text()
    edited = re.sub(r"m = \{ value = [0-9.]+", "m = { value = 2.5", text)
    edited = re.sub(r"(y\s+= \{ start = 0.0, velocity = )[0-9.]+", r"\g<1>0.1", edited)
    edited = re.sub(r"(theta\s+= \{ start = 0.0, velocity = )[0-9.]+", r"\g<1>0.5", edited)
    assert edited.count("0.5") > text.count("0.5") and "value = 2.5" in edited and "velocity = 0.1" in edited
    (tmp_path / "s.toml").write_text(edited)
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["simulate", SLEIGH, "--set", "m=2.5", "--set", "der(theta)=0.5", "--stop-time", "2",
                 "-o", str(a)]) == 0
    assert main(["simulate", str(tmp_path / "s.toml"), "--stop-time", "2", "-o", str(b)]) == 0
    ra, rb = read_csv(a), read_csv(b)
    assert ra["der(theta)"][0] == 0.5 and abs(ra["der(y)"][0] - 0.1) < 1e-15
    for name in ("x", "y", "theta", "der(x)"):
        assert np.abs(ra[name] - rb[name]).max() < 1e-12, name


def test_set_velocity_keeps_the_value_and_solves_the_constraint():
    """der(x) set on the sleigh: der(x) is kept, the constraint -sin(th) x' + cos(th) y' - a th' = 0 holds."""
    s = bridge.load_system(SLEIGH, overrides={"der(x)": "pi/4", "theta": 0.3})
    c = {k.name: k for k in s.coordinates}
    a = next(p.value for p in s.parameters if p.name == "a")
    assert c["x"].velocity == np.pi / 4 and c["theta"].start == 0.3
    residual = -np.sin(0.3) * c["x"].velocity + np.cos(0.3) * c["y"].velocity - a * c["theta"].velocity
    assert abs(residual) < 1e-14
    assert s.with_values({"der(x)": np.pi / 4}, theta=0.3).coordinates == s.coordinates


def test_set_geometric_parameter_moves_the_dependent_position():
    s = bridge.load_system(CARTESIAN).with_values(l=1.2)
    x, y = (c.start for c in s.coordinates)
    vx, vy = (c.velocity for c in s.coordinates)
    assert abs(x * x + y * y - 1.44) < 1e-13 and abs(x * vx + y * vy) < 1e-13


def test_set_bad_names_and_values_reported_at_once(capsys):
    assert main(["simulate", SLEIGH, "--set", "mm=1", "--set", "der(x)=fast", "--set", "a=1e999"]) == 2
    err = capsys.readouterr().err
    assert "'mm' is not a parameter" in err and "did you mean 'm'?" in err.lower()
    assert "'fast' is not a number" in err and "a: expected a finite number" in err
    assert "Traceback" not in err


def test_set_syntax_is_an_argument_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["simulate", SLEIGH, "--set", "m"])
    assert exc.value.code == 2 and "expected NAME=VALUE" in capsys.readouterr().err


def test_set_overdetermined_velocities_refused(capsys):
    code = main(["simulate", SLEIGH, "--set", "der(x)=1", "--set", "der(y)=5", "--set", "der(theta)=3"])
    err = capsys.readouterr().err
    assert code == 2 and "constraints.nonholonomic[1]" in err and "only 2 independent velocities" in err
    # at theta = 0 the constraint y' = a theta' does not contain x': der(y) and der(theta) cannot both be kept
    with pytest.raises(bridge.SystemFileError, match="cannot be solved for the other velocities"):
        bridge.load_system(SLEIGH, overrides={"der(y)": 1, "der(theta)": 2})
    s = bridge.load_system(SLEIGH, overrides={"der(x)": 1, "der(theta)": 2})  # y dependent: der(y) = a der(theta)
    assert [c.velocity for c in s.coordinates] == [1.0, pytest.approx(0.4, abs=1e-15), 2.0]


def test_set_reaches_modelica_and_validate(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["modelica", SLEIGH, "--set", "m=2.5", "--set", "der(theta)=0.5"]) == 0  # -o default <name>.mo
    mo = (tmp_path / "ChaplyginSleigh.mo").read_text()
    assert re.search(r"parameter Real m\b[^;]*= 2\.5", mo)
    assert main(["validate", SLEIGH, "--runs", "methods", "--methods", "maggi", "--stop-time", "0.5",
                 "--set", "m=2.5", "--set", "nope=1"]) == 2
    assert "'nope' is not a parameter" in capsys.readouterr().out + capsys.readouterr().err


def test_set_reaches_the_fmu_start_values(tmp_path, monkeypatch):
    """fmu without -o writes <name>.fmu; the set values and the recomputed der(y) = a der(theta) are its starts."""
    import xml.etree.ElementTree as ET
    import zipfile

    monkeypatch.chdir(tmp_path)
    assert main(["fmu", SLEIGH, "--set", "m=2.5", "--set", "der(theta)=0.5"]) == 0
    with zipfile.ZipFile(tmp_path / "ChaplyginSleigh.fmu") as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    start = {v.get("name"): float(v.find("Real").get("start")) for v in root.iter("ScalarVariable")
             if v.find("Real") is not None and v.find("Real").get("start") is not None}
    assert start["m"] == 2.5 and start["der(theta)"] == 0.5 and abs(start["der(y)"] - 0.2 * 0.5) < 1e-15


# -- simulate: --input, --plot, grid guard ------------------------------------------------------------
def test_input_table_equals_the_time_function(tmp_path):
    """A linear input table F(t) = 50 + 10 t gives the run of the file with F written as that function of t."""
    table = tmp_path / "in.csv"
    table.write_text("time,F\n0,50\n4,90\n")
    out = tmp_path / "table.csv"
    assert main(["simulate", CAR, "-m", "maggi", "--stop-time", "4", "--input", str(table), "-o", str(out)]) == 0
    text = Path(CAR).read_text()
    text = re.sub(r"\nF = \{ start = 50.0[^\n]*", "", text).replace("[definitions]", '[definitions]\nF = "50 + 10*t"')
    ref = bridge.simulate(bridge.derive(bridge.parse_system(text, "car-F(t)"), "maggi"), 4.0)
    got = read_csv(out)
    assert np.abs(got["phi"] - ref["phi"]).max() < 1e-8 and np.abs(got["x"] - ref["x"]).max() < 1e-8
    held = bridge.simulate(bridge.derive(bridge.load_system(CAR), "maggi"), 4.0)
    assert np.abs(got["phi"] - held["phi"]).max() > 1e-2  # the table did change the run


def test_input_table_is_the_format_fmpy_reads(tmp_path, monkeypatch):
    """The same CSV drives the native run and the FMU under fmpy (ME and CS). A step input (a repeated time)
    is compared, since fmpy holds inputs between communication points while both interpolate at rows."""
    fmpy = pytest.importorskip("fmpy")
    from fmpy.util import read_csv as fmpy_csv

    monkeypatch.chdir(tmp_path)
    Path("in.csv").write_text("time,F\n0,50\n1,50\n1,80\n3,80\n")
    assert main(["fmu", CAR]) == 0
    assert main(["simulate", CAR, "--input", "in.csv", "--stop-time", "3", "--interval", "0.01", "-o", "n.csv"]) == 0
    native = read_csv("n.csv")
    for fmi_type, tol in (("ModelExchange", 1e-6), ("CoSimulation", 1e-7)):
        res = fmpy.simulate_fmu("SteeredCar.fmu", stop_time=3.0, output_interval=0.01, input=fmpy_csv("in.csv"),
                                relative_tolerance=1e-10, fmi_type=fmi_type, output=["phi", "x"])
        for name in ("phi", "x"):
            assert np.abs(np.interp(native["time"], res["time"], res[name]) - native[name]).max() < tol


@pytest.mark.parametrize("content, message", [
    ("time,G\n0,1\n", "the input 'F' has no column"),
    ("time,F\n0,1\n2,2\n1,3\n", "time decreases from 2 to 1"),
    ("time,F\n0,1\n1,abc\n", "'abc' is not a finite number"),
    ("t,F\n0,1\n", "the first column must be 'time'"),
    ("time,F,F\n0,1,1\n", "the column 'F' appears more than once"),
    ("", "the input file is empty"),
])
def test_bad_input_tables(tmp_path, capsys, content, message):
    table, out = tmp_path / "in.csv", tmp_path / "out.csv"
    table.write_text(content)
    assert main(["simulate", CAR, "--input", str(table), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not out.exists()


def test_plot_png_and_svg_with_units(tmp_path):
    png, svg = tmp_path / "run.png", tmp_path / "run.svg"
    assert main(["simulate", CARTESIAN, "--stop-time", "1", "-o", str(tmp_path / "r.csv"), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["simulate", SLEIGH, "--stop-time", "1", "-o", str(tmp_path / "s.csv"), "--plot", str(svg)]) == 0
    text = svg.read_text()
    for label in ("position [m]", "position [rad]", "velocity [m/s]", "velocity [rad/s]", "constraint residual",
                  "time [s]"):
        assert label in text


def test_plot_bad_suffix_refused_before_the_run(tmp_path, capsys):
    out = tmp_path / "r.csv"
    assert main(["simulate", SLEIGH, "-o", str(out), "--plot", str(tmp_path / "run.jpeg")]) == 2
    assert ".png, .pdf or .svg" in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize("interval, message", [("1e-12", "below 1e-12 x the stop time"), ("1e-7", "--yes")])
def test_tiny_interval_refused(tmp_path, capsys, interval, message):
    out = tmp_path / "r.csv"
    assert main(["simulate", SLEIGH, "--interval", interval, "-o", str(out), "--progress"]) == 2
    err = capsys.readouterr().err
    assert message in err and not out.exists() and "deriving" not in err  # refused before any work


# -- defects: singular --independent, closed pipes, help texts, README count ---------------------------
def test_singular_independent_split_is_bad_input_on_the_command_line_and_in_the_file(tmp_path, capsys):
    """theta, x, y independent for the rolling sphere leaves (phi, psi) dependent with a singular block:
    a clean message and exit 2 both from --independent and from [method] independent (was a sympy traceback)."""
    assert main(["simulate", SPHERE, "--independent", "theta,x,y", "-m", "maggi", "-o",
                 str(tmp_path / "a.csv")]) == 2
    err = capsys.readouterr().err
    assert "cannot be solved for the dependent velocities" in err and "Traceback" not in err
    text = Path(SPHERE).read_text().replace("[simulation]",
                                            '[method]\nindependent = ["theta", "x", "y"]\n\n[simulation]')
    (tmp_path / "s.toml").write_text(text)
    assert main(["simulate", str(tmp_path / "s.toml"), "-m", "maggi", "-o", str(tmp_path / "b.csv")]) == 2
    assert "cannot be solved for the dependent velocities" in capsys.readouterr().err
    for wrong, message in (("theta,x", "so exactly 3 are independent"), ("theta,x,x", "listed twice")):
        assert main(["simulate", SPHERE, "--independent", wrong, "-m", "maggi", "-o", str(tmp_path / "c.csv")]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err  # was an IndexError traceback


def test_closed_pipe_ends_quietly_with_the_exit_code(tmp_path):
    """nhbridge simulate -o - | head -1: the reader goes away after one line of a 0.5 MB CSV (pipes hold 64 kB)."""
    proc = subprocess.Popen([sys.executable, "-m", "bridge.cli", "simulate", SLEIGH, "-o", "-", "--stop-time", "4",
                             "--interval", "0.001"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 0
    assert first.startswith(b"time,x,y,theta")
    assert "Traceback" not in err and "BrokenPipe" not in err and "wrote standard output" in err


def test_no_help_text_says_default_none():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, sp in sub.choices.items():
        text = sp.format_help()
        assert "default: None" not in text and "default None" not in text, name


def test_long_commands_share_progress_and_set_options():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name in ("derive", "simulate", "modelica", "fmu", "validate", "cosim", "ssp", "crosscheck"):
        opts = {o for a in sub.choices[name]._actions for o in a.option_strings}
        assert {"--progress", "--quiet"} <= opts and ("--set" in opts or name in ("cosim", "ssp", "crosscheck")), name
    for name, sp in sub.choices.items():  # -o optional everywhere, its default stated
        out = next((a for a in sp._actions if "-o" in a.option_strings), None)
        assert out is None or (not out.required and "default" in out.help), name


def test_shared_options_mean_one_thing():
    """--tolerance, --fmi-version, --progress, --quiet: one help text each (one meaning) wherever they appear."""
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for option in ("--tolerance", "--progress", "--quiet", "--set"):
        helps = {a.help for sp in sub.choices.values() for a in sp._actions if option in a.option_strings}
        assert len(helps) == 1, (option, helps)
    fmi = [a.help for sp in sub.choices.values() for a in sp._actions if "--fmi-version" in a.option_strings]
    assert len(fmi) == 5 and all(h.startswith("FMI version") for h in fmi)   # fmu, validate, crosscheck, linearize,
    #                                                                          controller


def test_progress_only_when_asked_or_on_a_terminal(tmp_path, capsys):
    assert main(["simulate", SLEIGH, "--stop-time", "0.5", "-o", str(tmp_path / "a.csv")]) == 0
    assert "deriving" not in capsys.readouterr().err  # captured stderr is not a terminal
    assert main(["simulate", SLEIGH, "--stop-time", "0.5", "-o", str(tmp_path / "a.csv"), "--progress"]) == 0
    err = capsys.readouterr().err
    assert "deriving ChaplyginSleigh (lagrange) ... done" in err and "simulating ChaplyginSleigh ... done" in err


def test_the_guide_counts_the_bad_input_files():
    files = [p for p in (ROOT / "tests" / "bad_inputs").glob("*.toml") if p.name != "expected.toml"]
    page = ROOT / "docs" / "guide" / "system-file.md"  # where the user guide describes the bad inputs
    stated = re.search(r"`tests/bad_inputs/` holds (\d+) bad files", page.read_text())
    assert stated and int(stated.group(1)) == len(files)
