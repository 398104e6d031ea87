"""--timeout and --memory-limit: symbolic work past its time or memory budget stops with a clear message and exit
code 1, never hangs or exhausts the machine."""

from __future__ import annotations

import contextlib
import signal
import time
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.derivation.deadline import DerivationMemoryError, DerivationTimeout, deadline, memory_budget, resident_bytes

BICYCLE = str(Path(__file__).resolve().parents[1] / "examples" / "engineering" / "bicycle.toml")


def test_deadline_interrupts_work_that_swallows_exceptions():
    t0 = time.monotonic()
    with (pytest.raises(DerivationTimeout, match=r"the busy loop did not finish within --timeout 0.3 s"),
          deadline(0.3, "the busy loop")):
        while True:
            with contextlib.suppress(Exception):
                sum(range(10_000))
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
    with (pytest.raises(DerivationMemoryError, match=r"the hungry loop needed more than its memory budget"),
          memory_budget(limit, "the hungry loop")):
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


def _busy(iterations: int) -> int:
    """A little CPU work (the sampling timer counts CPU time)."""
    total = 0
    for i in range(iterations):
        total += i * i
    return total


def test_entering_and_leaving_the_budgets_many_times_never_fails(monkeypatch):
    """A sample (SIGVTALRM) or an alarm (SIGALRM) still pending when a budget ends used to run its handler after
    the budget was gone: ``_memory[-1]`` on an empty list raised inside the ``signal.signal`` call that restores
    the handler (a traceback about once in twenty runs). Now a handler with nothing to watch returns, and leaving
    a budget restores the handler only after its limit is gone. Thousands of entries and exits, nested, with a
    sampling interval of 20 us (a sample pending at almost every exit), 20,000 rounds: no exception,
    and the handlers in force before are in force after."""
    import signal

    import bridge.derivation.deadline as dl

    monkeypatch.setattr(dl, "MEMORY_SAMPLE", 2e-5)  # the timer's resolution (a clock tick of CPU time) bounds it
    before = signal.getsignal(signal.SIGVTALRM), signal.getsignal(signal.SIGALRM)
    roomy = resident_bytes() + 2**30
    # a fixed number of rounds, not as many as fit in a few seconds: the same work however loaded the machine is
    # (about 1.5 s of CPU)
    for _ in range(20000):
        with memory_budget(roomy, "outer"):
            _busy(50)
            with memory_budget(roomy - 2**20, "inner"), deadline(60.0, "inner work"):
                _busy(50)
            _busy(50)
    assert (signal.getsignal(signal.SIGVTALRM), signal.getsignal(signal.SIGALRM)) == before
    assert signal.getitimer(signal.ITIMER_VIRTUAL) == (0.0, 0.0) and signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_a_handler_that_runs_after_its_budget_ended_does_nothing():
    """The race of the stress test above made certain: the handlers in force inside the budgets, called as a
    pending signal would call them once the budgets ended (or once only the outer ones are left, which have
    neither run out of time nor of memory), return without raising."""
    import signal

    roomy = resident_bytes() + 2**30
    with memory_budget(roomy, "outer"), deadline(60.0, "outer work"):
        with memory_budget(roomy - 2**20, "inner"), deadline(30.0, "inner work"):
            sample, alarm = signal.getsignal(signal.SIGVTALRM), signal.getsignal(signal.SIGALRM)
        sample(signal.SIGVTALRM, None)  # the outer budgets are in force and not exceeded
        alarm(signal.SIGALRM, None)
    sample(signal.SIGVTALRM, None)  # no budget in force
    alarm(signal.SIGALRM, None)
