"""The C runtime under AddressSanitizer and UndefinedBehaviorSanitizer, driven through fmpy (issue 11).

The hand-written pendulum FMUs (FMI 2 and 3) are built with -fsanitize=address,undefined
(fmu/tests/build_test_fmu.sh with NHB_EXTRA_CFLAGS) and driven by fmu/tests/stress_fmpy.py in a child
Python with libasan preloaded (the interpreter itself is not instrumented): 10,000 instantiations, every
function in every mode, bad steps, NaN/huge inputs, invalid value references, 600 corrupted serialized
states and 8,000 random calls with hostile arguments. The sanitizers must stay silent and every
expectation of the driver hold; a deliberate use after free proves that the sanitizer is live. Leaks
are checked by the C tests (LeakSanitizer and a counting allocator in fmu/tests/test_edges.c), since
Python's own allocations would drown LeakSanitizer here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fmpy")
ROOT = Path(__file__).parent.parent
TESTS = ROOT / "fmu" / "tests"
SANITIZE = "-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer"


def _libasan() -> str:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not found")
    path = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    if not os.path.isabs(path) or not os.path.exists(path):
        pytest.skip("gcc has no AddressSanitizer runtime here")
    return path


# Slow (about 12 s of CPU, once per module): the hand-written FMUs built with ASan/UBSan, for every test below.
@pytest.fixture(scope="module")
def sanitized(tmp_path_factory):
    libasan = _libasan()
    out = tmp_path_factory.mktemp("sanitized")
    build = subprocess.run(["bash", str(TESTS / "build_test_fmu.sh"), str(out)], capture_output=True, text=True,
                           env={**os.environ, "NHB_EXTRA_CFLAGS": SANITIZE}, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    assert build.stdout.count("-fsanitize=address,undefined") == 2
    return libasan, out / "fmi2" / "Pendulum.fmu", out / "fmi3" / "Pendulum.fmu"


def _drive(sanitized, *extra: str) -> subprocess.CompletedProcess:
    libasan, fmi2, fmi3 = sanitized
    env = {**os.environ, "LD_PRELOAD": libasan, "ASAN_OPTIONS": "detect_leaks=0",
           "UBSAN_OPTIONS": "print_stacktrace=1:halt_on_error=1"}
    return subprocess.run([sys.executable, str(TESTS / "stress_fmpy.py"), str(fmi2), str(fmi3), *extra],
                          capture_output=True, text=True, env=env, timeout=600)


# About 7 s of CPU: every hostile call sequence of stress_fmpy.py under the sanitizers; each is a distinct misuse.
def test_hostile_calls_leave_the_sanitizers_silent(sanitized):
    proc = _drive(sanitized)
    detail = proc.stdout[-4000:] + proc.stderr[-4000:]
    assert proc.returncode == 0, detail
    assert "AddressSanitizer" not in proc.stderr and "runtime error" not in proc.stderr, detail
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["failures"] == 0, detail
    assert summary["sanitizers"] == ["libasan", "libubsan"]  # both runtimes were in the process
    assert summary["instantiations"] >= 10_000 and summary["failed_instantiations"] == 200
    assert summary["corrupted_states"] == 600
    assert summary["corrupted_rejected"] + summary["corrupted_accepted_and_used"] == 600
    assert summary["corrupted_rejected"] >= 480  # bit flips, truncations, GUID and header changes: all of them
    assert summary["random_calls"] == 8_000 and summary["wrong_order_checks"] >= 200


def test_the_sanitizer_is_live(sanitized):
    """The positive control: a state freed twice is reported, inside the runtime's own code."""
    proc = _drive(sanitized, "--canary")
    assert proc.returncode != 0
    assert "heap-use-after-free" in proc.stderr and "nhb_state_free" in proc.stderr, proc.stderr[-3000:]
    assert "canary: no report" not in proc.stdout
