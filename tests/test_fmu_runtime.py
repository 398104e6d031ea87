"""The fixed FMI runtime on its own: hand-written pendulum FMUs (FMI 2/3, ME/CS), C unit tests under sanitizers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fmpy")
ROOT = Path(__file__).parent.parent


def test_runtime_harness():
    proc = subprocess.run([sys.executable, str(ROOT / "fmu" / "tests" / "check_runtime.py")], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "0 failure(s)" in proc.stdout


LEAK_CHILD = r"""
import sys
from fmpy import extract, read_model_description
from fmpy.fmi2 import FMU2Slave
from fmpy.fmi3 import FMU3Slave

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096

growth = []
for version, path in ((2, sys.argv[1]), (3, sys.argv[2])):
    unzipdir = extract(path)
    md = read_model_description(unzipdir)
    fmu = (FMU2Slave if version == 2 else FMU3Slave)(guid=md.guid, unzipDirectory=unzipdir,
                                                     modelIdentifier=md.coSimulation.modelIdentifier)
    free = fmu.fmi2FreeInstance if version == 2 else fmu.fmi3FreeInstance
    for cycles in (500, 5000):  # warm-up, then the measurement
        before = rss()
        for _ in range(cycles):
            fmu.instantiate()
            fmu.getFMUState()
            fmu.getFMUState()
            free(fmu.component)  # the states were never freed by the importer
        growth.append(rss() - before)
print(growth[1], growth[3])
"""


def test_free_instance_frees_the_states_it_handed_out(tmp_path):
    """5,000 instantiations, each leaving two FMU states to FreeInstance (before: +6.8 MB in issue 11)."""
    build = subprocess.run(["bash", str(ROOT / "fmu" / "tests" / "build_test_fmu.sh"), str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    proc = subprocess.run([sys.executable, "-c", LEAK_CHILD, str(tmp_path / "fmi2" / "Pendulum.fmu"),
                           str(tmp_path / "fmi3" / "Pendulum.fmu")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    growth2, growth3 = map(int, proc.stdout.split())
    # two states of ~700 bytes per cycle would be ~7 MB; allow 1 MB of allocator noise
    assert growth2 < 1_000_000 and growth3 < 1_000_000, (growth2, growth3)
