"""A wall-clock limit for symbolic work (``--timeout``): the work is interrupted, never left to hang.

:func:`deadline` arms a real-time interval timer (``SIGALRM``). When it fires, the handler raises
:class:`_Expired`, a ``BaseException`` so that no ``except Exception`` inside sympy swallows it; the timer
re-fires every :data:`REFIRE` seconds in case a bare ``except`` does. At the ``with`` boundary it becomes a
:class:`DerivationTimeout` (a :class:`~bridge.errors.DerivationError`; the command line exits with 1).
The interrupted results are discarded; sympy's cache only holds completed results. Work inside one long
call into compiled code (symengine) is interrupted when that call returns.

:func:`memory_budget` bounds the resident memory the same way: a CPU-time interval timer (``SIGVTALRM``)
samples the resident set every :data:`MEMORY_SAMPLE` seconds of CPU and stops the work above the limit
(:class:`DerivationMemoryError`, exit code 1).

Only the main thread receives signals: elsewhere, and on platforms without ``setitimer``, the limits are
not enforced.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import threading
import time
from collections.abc import Iterator

from ..errors import DerivationError

REFIRE = 0.5
_active: list[float] = []  # expiry times (time.monotonic) of the deadlines in force, outermost first


class DerivationTimeout(DerivationError):
    """Symbolic work did not finish within the time limit: a failed run (exit code 1), not bad input."""

    exit_code = 1


class _Expired(BaseException):
    """Raised by the timer inside the interrupted work."""


def _expired(signum, frame) -> None:
    """Interrupt the work on SIGALRM when the innermost deadline in force has passed.

    A signal still pending when a deadline ends runs this after it: with no deadline in force, or one that has not
    passed, it does nothing.
    """
    if _active and time.monotonic() >= _active[-1]:
        raise _Expired


def _caused_by(exc: BaseException | None, marker: type[BaseException]) -> bool:
    """Return whether ``exc`` is the marker or was caused by it.

    A compiled extension may turn the marker raised inside it into another exception (a ``SystemError`` 'returned a
    result with an exception set', an ``AttributeError``...) that keeps it as its cause or context.
    """
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, marker):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _arm(expiry: float) -> None:
    signal.setitimer(signal.ITIMER_REAL, max(expiry - time.monotonic(), 1e-6), REFIRE)


@contextlib.contextmanager
def deadline(seconds: float | None, what: str) -> Iterator[None]:
    """Run the body for at most ``seconds`` (None: no limit); on expiry raise :class:`DerivationTimeout`.

    Deadlines nest: an inner one that ends later than the one around it changes nothing (the outer one
    fires, its message is reported); an earlier one is armed, and the outer one re-armed when it ends.
    """
    if seconds is None or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    expiry = time.monotonic() + seconds
    if _active and _active[-1] <= expiry:
        yield
        return
    depth = len(_active)
    previous = signal.signal(signal.SIGALRM, _expired) if not depth else None
    _active.append(expiry)
    try:
        _arm(expiry)
        try:
            yield
        finally:
            del _active[depth:]  # first: from here on an alarm (also a pending one) sees only the deadlines around
            if _active:
                _arm(_active[-1])
            else:
                signal.setitimer(signal.ITIMER_REAL, 0)
    except BaseException as exc:
        if not (_caused_by(exc, _Expired) or time.monotonic() >= expiry):
            raise
        raise DerivationTimeout(
            f"{what} did not finish within --timeout {seconds:g} s and was stopped. Raise --timeout, or choose "
            "a method that scales to this system (lagrange, nielsen)") from None
    finally:
        del _active[depth:]
        if not depth:  # the handler finds no deadline in force if the alarm is still pending
            signal.signal(signal.SIGALRM, previous if previous is not None else signal.SIG_DFL)


MEMORY_SAMPLE = 0.05  # seconds of CPU time between two samples of the resident set
_memory: list[int] = []  # limits (bytes) of the budgets in force, outermost first


def default_memory_limit() -> int:
    """Return half the physical memory, at most 8 GiB: the command line's default ``--memory-limit``."""
    try:
        physical = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        physical = 16 * 2**30
    return min(8 * 2**30, physical // 2)


def resident_bytes() -> int:
    """Return the process's resident set now (``/proc/self/statm``), else its peak (``getrusage``)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class DerivationMemoryError(DerivationError):
    """Symbolic work needed more memory than its budget: a failed run (exit code 1), not bad input."""

    exit_code = 1


class _OverBudget(BaseException):
    """Raised by the sampling timer inside the interrupted work."""


_over: list[bool] = [False]  # the sampling timer found the budget exceeded (its exception may come back altered)


def _sample(signum, frame) -> None:
    """Interrupt the work on SIGVTALRM when the resident set exceeds the innermost budget in force.

    A sample still pending when a budget ends runs this after it (at the latest inside the ``signal.signal`` call that
    restores the handler): with no budget in force there is nothing to sample.
    """
    if _memory and resident_bytes() > _memory[-1]:
        _over[0] = True
        raise _OverBudget


@contextlib.contextmanager
def memory_budget(limit: int | None, what: str) -> Iterator[None]:
    """Run the body while the resident memory stays below ``limit`` bytes (None: no limit).

    Above it the work is interrupted and :class:`DerivationMemoryError` raised. Budgets nest: only a
    tighter inner one changes the limit while it lasts.
    """
    if (limit is None or not hasattr(signal, "setitimer")
            or threading.current_thread() is not threading.main_thread() or (_memory and _memory[-1] <= limit)):
        yield
        return
    depth = len(_memory)
    previous = signal.signal(signal.SIGVTALRM, _sample) if not depth else None
    _memory.append(limit)
    try:
        signal.setitimer(signal.ITIMER_VIRTUAL, MEMORY_SAMPLE, MEMORY_SAMPLE)
        try:
            _sample(signal.SIGVTALRM, None)  # already above the budget: the work does not start
            yield
        finally:
            del _memory[depth:]  # first: from here on a sample (also a pending one) sees only the budgets around
            signal.setitimer(signal.ITIMER_VIRTUAL, *((MEMORY_SAMPLE, MEMORY_SAMPLE) if _memory else (0,)))
    except BaseException as exc:
        if not (_over[0] or _caused_by(exc, _OverBudget)):
            raise
        raise DerivationMemoryError(
            f"{what} needed more than its memory budget of {limit / 2**30:.3g} GiB and was stopped. Raise "
            "--memory-limit, or choose a method that scales to this system (lagrange, nielsen)") from None
    finally:
        del _memory[depth:]
        _over[0] = False
        if not depth:  # the handler finds no budget in force if a sample is still pending
            signal.signal(signal.SIGVTALRM, previous if previous is not None else signal.SIG_DFL)


@contextlib.contextmanager
def budget(seconds: float | None, memory: int | None, what: str) -> Iterator[None]:
    """Apply both limits at once: at most ``seconds`` of wall time and ``memory`` bytes resident."""
    with deadline(seconds, what), memory_budget(memory, what):
        yield
