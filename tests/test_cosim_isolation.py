"""Foreign FMUs in a co-simulation run in a child process; the work is estimated before a run (issue 11).

The FMUs are real: tests/foreign_fmu.py writes a tiny FMI 2.0 Co-Simulation FMU in C and compiles it with gcc,
in a mode that segfaults, hangs or is slow in ``fmi2DoStep`` from t = 0.05 s on.
"""

from __future__ import annotations

import csv
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fmpy")

from bridge.cli import main
from bridge.cosim import CosimError, CosimRunError, parse_scenario, prepare

from .foreign_fmu import foreign_fmu
from .processes import default_signals

ROOT = Path(__file__).parent.parent
COMMITTED_SSP = ROOT / "examples" / "cosim" / "hydropulsator_motors.ssp"
STEP, STOP = 0.01, 0.2


@pytest.fixture(scope="module")
def fmus(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("foreign")
    for mode in ("ok", "segfault", "hang", "slow"):
        foreign_fmu(folder, mode, name=mode.capitalize())
    return folder


def scenario(folder: Path, bad: str, stop: float = STOP, step: float = STEP) -> Path:
    path = folder / f"{bad.lower()}_{round(stop)}.toml"
    path.write_text(f'[components.good]\nfmu = "Ok.fmu"\n[components.bad]\nfmu = "{bad}.fmu"\n'
                    f"[master]\nstep = {step}\nstop_time = {stop}\n")
    return path


def test_a_well_behaved_foreign_fmu_runs_in_the_child_and_gives_its_output(fmus):
    with prepare(scenario(fmus, "Ok")) as cs:
        result = cs.run()
    assert result.names == ("good.y", "bad.y")
    n = round(STOP / STEP)
    assert np.allclose(result.time, np.linspace(0, STOP, n + 1))
    assert np.allclose(result["good.y"], result.time) and np.allclose(result["bad.y"], result.time)  # y = t


def test_a_segfaulting_fmu_is_named_and_the_command_survives(fmus, tmp_path, capsys):
    out = tmp_path / "o.csv"
    assert main(["cosim", str(scenario(fmus, "Segfault")), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "component bad (Segfault.fmu) crashed in doStep at t = 0.05 s (signal SIGSEGV)" in err
    assert "Traceback" not in err and not out.exists()
    with prepare(scenario(fmus, "Segfault")) as cs, pytest.raises(CosimRunError, match="component bad"):
        cs.run()
    with prepare(scenario(fmus, "Ok")) as cs:  # the process that ran the crashed child still works
        assert cs.run().time[-1] == pytest.approx(STOP)


def test_a_hanging_fmu_is_stopped_by_the_watchdog_and_named(fmus, tmp_path, capsys):
    out = tmp_path / "o.csv"
    assert main(["cosim", str(scenario(fmus, "Hang")), "-o", str(out), "--call-timeout", "1"]) == 1
    err = capsys.readouterr().err
    assert "component bad (Hang.fmu): doStep at t = 0.05 s did not return within 1 s" in err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_writes_the_finished_steps_as_a_partial_csv(fmus, tmp_path, signum):
    """SIGINT (or SIGTERM) to the command: the child stops after its current step; the finished rows go to
    o.partial.csv."""
    path = scenario(fmus, "Slow", stop=20.0)  # 20 ms per step after t = 0.05: about 40 s in all
    out = tmp_path / "o.csv"
    proc = subprocess.Popen([sys.executable, "-m", "bridge.cli", "cosim", str(path), "-o", str(out), "--progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            preexec_fn=default_signals)
    deadline = time.monotonic() + 60
    seen = ""
    while time.monotonic() < deadline:  # a progress line with more than 5 finished steps: the loop is running
        seen += proc.stderr.read(1)
        shown = re.findall(r"(\d+) steps, ", seen)
        if shown and int(shown[-1]) > 5:
            break
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    partial = tmp_path / "o.partial.csv"
    assert "co-simulation interrupted at t = " in err and "partial" in err and not out.exists()
    rows = list(csv.reader(partial.open()))
    assert rows[0] == ["time", "good.y", "bad.y"]
    times = np.array([float(r[0]) for r in rows[1:]])
    assert 5 < len(times) < 2001 and times[-1] < 20.0
    assert np.allclose(np.diff(times), STEP)  # every finished step, none missing
    assert np.allclose([float(r[1]) for r in rows[1:]], times)


# -- unbounded work -------------------------------------------------------------------------------------------
def test_too_many_steps_need_yes_and_tiny_steps_are_refused(fmus, capsys):
    path = scenario(fmus, "Ok", stop=1.0)
    assert main(["cosim", str(path), "--step", "1e-8"]) == 2
    err = capsys.readouterr().err
    assert "1e+08 communication steps, more than the limit of 1e+07" in err and "--yes" in err
    assert main(["cosim", str(path), "--step", "1e-13", "--yes"]) == 2  # below stop_time * 1e-12: never
    err = capsys.readouterr().err
    assert "below stop_time * 1e-12" in err and "Traceback" not in err
    sc = parse_scenario(path.read_text(), str(path), fmus)
    with prepare(sc) as cs, pytest.raises(CosimError, match="limit of 1e\\+07"):
        cs.run(step=1e-8)


def test_an_ssp_with_a_step_of_1e_300_is_refused_before_the_run(tmp_path, capsys):
    with zipfile.ZipFile(COMMITTED_SSP) as z:
        members = {n: z.read(n) for n in z.namelist()}
    ssd = members["SystemStructure.ssd"].decode()
    assert ' step="0.005"' in ssd
    members["SystemStructure.ssd"] = ssd.replace(' step="0.005"', ' step="1e-300"').encode()
    path = tmp_path / "tiny.ssp"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    assert main(["cosim", str(path), "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "master.step = 1e-300 s is below stop_time * 1e-12" in err and not (tmp_path / "o.csv").exists()


def test_validate_with_a_tiny_step_is_refused_not_allocated(tmp_path, capsys):
    system = ROOT / "examples" / "simple_pendulum.toml"
    assert main(["validate", str(system), "--runs", "methods", "--step", "1e-12"]) == 2
    out = capsys.readouterr().out
    assert "below stop_time * 1e-12" in out
    assert main(["validate", str(system), "--runs", "methods", "--step", "1e-7"]) == 2
    out = capsys.readouterr().out
    assert "output rows per run, more than the limit of 1e+07" in out and "--yes" in out


def test_a_crosscheck_folder_asking_for_a_tiny_step_is_refused(tmp_path):
    from bridge.errors import ValidationError
    from bridge.validation import crosscheck as xc

    folder = xc.export_crosscheck(ROOT / "examples" / "simple_pendulum.toml", tmp_path, 2, ("cs",))[0]
    opt = folder / "SimplePendulum_ref.opt"
    text = opt.read_text()
    assert "StepSize," in text
    opt.write_text("\n".join("StepSize,1e-12" if line.startswith("StepSize,") else line
                             for line in text.splitlines()) + "\n")
    with pytest.raises(ValidationError, match="StepSize 1e-12 s over 10 s means 1e\\+13 points"):
        xc.check_crosscheck(folder, tmp_path / "results")
    assert not (tmp_path / "results").exists()
