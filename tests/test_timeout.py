"""--timeout and --memory-limit: symbolic work past its time or memory budget stops with a clear message and exit
code 1, never hangs or exhausts the machine."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.derivation.deadline import DerivationMemoryError, DerivationTimeout, deadline, memory_budget, resident_bytes

BICYCLE = str(Path(__file__).resolve().parents[1] / "examples" / "engineering" / "bicycle.toml")


def test_deadline_interrupts_work_that_swallows_exceptions():
    t0 = time.monotonic()
    with pytest.raises(DerivationTimeout, match=r"the busy loop did not finish within --timeout 0.3 s"):
        with deadline(0.3, "the busy loop"):
            while True:
                try:
                    sum(range(10_000))
                except Exception:  # noqa: BLE001 - what sympy does in places; must not swallow the deadline
                    pass
    assert time.monotonic() - t0 < 5.0
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None, signal.default_int_handler)


def test_deadline_leaves_finished_work_alone():
    with deadline(5.0, "quick work"):
        value = sum(range(1000))
    assert value == 499500
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_cli_derivation_past_timeout_exits_1(capsys):
    """maggi on the bicycle takes seconds: a --timeout well below that stops it with exit code 1, also when the
    timer fires inside a compiled extension (symengine calling back into sympy)."""
    t0 = time.monotonic()
    assert main(["derive", BICYCLE, "--method", "maggi", "--timeout", "0.2"]) == 1
    assert time.monotonic() - t0 < 30.0
    err = capsys.readouterr().err
    assert "the derivation of WhippleBicycle by maggi did not finish within --timeout 0.2 s" in err
    assert "Traceback" not in err


def test_cli_derivation_within_timeout(capsys):
    sleigh = str(Path(BICYCLE).parents[1] / "chaplygin_sleigh.toml")
    assert main(["derive", sleigh, "--method", "maggi", "--timeout", "60"]) == 0
    assert "ChaplyginSleigh" in capsys.readouterr().out


def test_memory_budget_stops_growing_work_and_frees_it():
    limit = resident_bytes() + 200 * 2**20
    kept = []
    with pytest.raises(DerivationMemoryError, match=r"the hungry loop needed more than its memory budget"):
        with memory_budget(limit, "the hungry loop"):
            while True:  # grows by 8 MB per step (touched pages) until the budget stops it
                kept.append(b"\x01" * (8 * 2**20))
                sum(range(200_000))  # CPU time, which the sampling timer counts (a few steps per sample)
    peak = resident_bytes()
    kept.clear()
    assert limit < peak <= limit + 200 * 2**20  # stopped past the budget, and soon after
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


def test_memory_budget_leaves_small_work_alone():
    with memory_budget(resident_bytes() + 500 * 2**20, "small work"):
        value = sum(range(100_000))
    assert value == 4999950000
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0)


def test_cli_memory_limit_is_enforced(capsys):
    """A budget below what the process already holds (sympy alone is more than 50 MB) stops the derivation."""
    sleigh = str(Path(BICYCLE).parents[1] / "chaplygin_sleigh.toml")
    assert main(["derive", sleigh, "--method", "lagrange", "--memory-limit", "0.05"]) == 1
    err = capsys.readouterr().err
    assert "the derivation of ChaplyginSleigh by lagrange needed more than its memory budget of 0.05 GiB" in err
    assert "Traceback" not in err
