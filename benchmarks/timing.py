"""Shared by the benchmark scripts: the machine line printed above every table, and best-of-N timing."""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import sympy as sp


def best(fn: Callable[[], Any], repeats: int = 3) -> tuple[float, Any]:
    """The shortest wall time of ``repeats`` calls of ``fn``, and the last call's result."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else what ``platform.processor()`` says."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def usable_cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def machine() -> str:
    """CPU model, cores and library versions."""
    import numpy
    import symengine

    return (f"CPU: {cpu_model()}, {os.cpu_count()} logical cores ({usable_cores()} usable)\n"
            f"Python {platform.python_version()}, sympy {sp.__version__}, symengine {symengine.__version__}, "
            f"numpy {numpy.__version__}, {platform.system()} {platform.release()}")


