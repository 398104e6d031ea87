"""``[simulation] interval, rtol, atol`` of a system file are used: by the native simulation (unless the command
line or the call gives others), as the Modelica ``experiment`` annotation and as the FMU's ``DefaultExperiment``."""

from __future__ import annotations

import zipfile
from xml.etree import ElementTree

import numpy as np
import pytest

import bridge
from bridge.cli import main

OSCILLATOR = """
name = "Oscillator"
[coordinates]
x = {{ start = 1.0, velocity = 0.0, unit = "m" }}
[parameters]
m = {{ value = 1.0, unit = "kg" }}
k = {{ value = 4.0, unit = "N/m" }}
[energy]
kinetic = "m/2*der(x)^2"
potential = "k/2*x^2"
[simulation]
stop_time = 10.0
{settings}
"""


def _system(settings: str = ""):
    return bridge.parse_system(OSCILLATOR.format(settings=settings))


def _error(result) -> float:
    """max |x - cos(2 t)|: the closed form of x'' = -4 x from x = 1 at rest."""
    return float(np.abs(result.q[:, 0] - np.cos(2.0 * result.time)).max())


def test_file_settings_drive_the_native_run():
    loose = _system("interval = 0.05\nrtol = 1e-4\natol = 1e-6")
    assert (loose.interval, loose.rtol, loose.atol) == (0.05, 1e-4, 1e-6)
    run = bridge.simulate(bridge.derive(loose, "lagrange"))
    assert len(run.time) == 201 and run.time[1] == pytest.approx(0.05)
    assert run.settings["rtol"] == 1e-4 and run.settings["atol"] == 1e-6
    default = bridge.simulate(bridge.derive(_system(), "lagrange"))
    assert len(default.time) == 1001
    assert _error(default) < 1e-8
    assert _error(run) > 10 * _error(default)         # the loose tolerance of the file was really used
    tight = bridge.simulate(bridge.derive(loose, "lagrange"), rtol=1e-10, atol=1e-12)   # the call wins
    assert _error(tight) < 1e-8


def test_command_line_overrides_the_file(tmp_path, capsys):
    path = tmp_path / "osc.toml"
    path.write_text(OSCILLATOR.format(settings="interval = 0.5"), encoding="utf-8")
    assert main(["simulate", str(path), "-o", str(tmp_path / "a.csv")]) == 0
    assert len((tmp_path / "a.csv").read_text().splitlines()) == 1 + 21
    assert main(["simulate", str(path), "--interval", "0.25", "-o", str(tmp_path / "b.csv")]) == 0
    assert len((tmp_path / "b.csv").read_text().splitlines()) == 1 + 41
    capsys.readouterr()


def test_exports_carry_the_settings(tmp_path):
    eom = bridge.derive(_system("interval = 0.02\nrtol = 1e-6"), "lagrange")
    text = bridge.modelica_export.model_source(eom)
    assert "experiment(StopTime=10.0, Interval=0.02, Tolerance=1e-06)" in text
    pytest.importorskip("lxml")
    fmu = bridge.build_fmu(eom, tmp_path / "osc.fmu")
    with zipfile.ZipFile(fmu) as z:
        root = ElementTree.fromstring(z.read("modelDescription.xml"))
    experiment = root.find("DefaultExperiment").attrib
    assert float(experiment["stepSize"]) == 0.02 and float(experiment["tolerance"]) == 1e-6
    default = bridge.modelica_export.model_source(bridge.derive(_system(), "lagrange"))
    assert "experiment(StopTime=10.0, Interval=0.01, Tolerance=1e-08)" in default


def test_bad_setting_is_reported(tmp_path, capsys):
    path = tmp_path / "osc.toml"
    path.write_text(OSCILLATOR.format(settings="rtol = -1"), encoding="utf-8")
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "simulation.rtol" in err and "positive" in err and "Traceback" not in err
