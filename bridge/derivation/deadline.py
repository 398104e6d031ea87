"""A wall-clock limit for symbolic work (``--timeout``): the work is interrupted, never left to hang.

:func:`deadline` arms a real-time interval timer (``SIGALRM``). When it fires, the handler raises
:class:`_Expired`, a ``BaseException`` so that no ``except Exception`` inside sympy swallows it; the timer
re-fires every :data:`REFIRE` seconds in case a bare ``except`` does. At the ``with`` boundary it becomes a
:class:`DerivationTimeout` (a :class:`~bridge.errors.DerivationError`; the command line exits with 1).
The interrupted results are discarded; sympy's cache only holds completed results. Work inside one long
call into compiled code (symengine) is interrupted when that call returns.

Only the main thread receives signals: elsewhere, and on platforms without ``setitimer``, the limit is
not enforced.
"""

from __future__ import annotations

import contextlib
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
    raise _Expired


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
    previous = signal.signal(signal.SIGALRM, _expired) if not _active else None
    _active.append(expiry)
    try:
        _arm(expiry)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except _Expired:
        raise DerivationTimeout(
            f"{what} did not finish within --timeout {seconds:g} s and was stopped. Raise --timeout, or choose "
            "a method that scales to this system (lagrange, nielsen)") from None
    finally:
        _active.pop()
        if _active:
            _arm(_active[-1])
        else:
            signal.signal(signal.SIGALRM, previous)
