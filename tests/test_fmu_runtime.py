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
