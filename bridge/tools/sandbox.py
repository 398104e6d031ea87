"""Foreign FMU code run in a child process: a crash or a hang stops the child, never the caller.

:func:`isolated` forks a child that runs ``target(conn, *args)`` and sends one message back through ``conn``.
The parent waits with a watchdog: with a :class:`Beacon` (shared memory the child stamps before every foreign
call: a call counter, who is called, which call, the time) the child is stopped when the counter stands still
for ``timeout`` seconds, i.e. one call did not return; without one, when the whole run takes longer. The child
dies with its parent (``PR_SET_PDEATHSIG``). Ctrl-C (or SIGTERM turned into an exception) in the parent is
forwarded to the child as SIGINT; a child that stops cleanly sends what it finished, which the parent raises as
:class:`ChildInterrupted`; one that does not is killed after ``grace`` seconds.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from typing import Any

PR_SET_PDEATHSIG = 1


class Beacon:
    """Cells shared with a child process: the last foreign call it entered and its progress.

    ``[calls, who, what, t]`` are written by the child before every foreign call, ``[progress time, progress
    steps]`` for the parent to show.
    """

    def __init__(self) -> None:
        from multiprocessing.sharedctypes import RawArray

        self.cells = RawArray(ctypes.c_double, 6)

    def update(self, t: float, steps: int, force: bool = False) -> None:
        """Record the child's progress (the interface of :class:`bridge.cosim.results.Progress`)."""
        self.cells[4], self.cells[5] = t, steps

    def finish(self, t: float, steps: int) -> None:
        """Record the final progress (the interface of :class:`bridge.cosim.results.Progress`).

        Parameters
        ----------
        t : float
            The time reached.
        steps : int
            The steps taken.
        """
        self.update(t, steps)

    def progress(self) -> tuple[float, int]:
        """Return the child's last progress.

        Returns
        -------
        tuple of (float, int)
            The time reached and the steps taken.
        """
        return float(self.cells[4]), int(self.cells[5])

    def mark(self, who: int, what: int, t: float) -> None:
        """Stamp a foreign call before it is made, so that a crash or hang can be blamed on it.

        Parameters
        ----------
        who : int
            The component's index.
        what : int
            The call's code.
        t : float
            The simulated time of the call.
        """
        cells = self.cells
        cells[1], cells[2], cells[3] = who, what, t
        cells[0] += 1.0

    @property
    def calls(self) -> int:
        """The number of foreign calls stamped so far."""
        return int(self.cells[0])

    def last(self) -> tuple[int, int, float]:
        """Return (who, what, t) of the last foreign call the child entered."""
        return int(self.cells[1]), int(self.cells[2]), float(self.cells[3])


class ChildFailure(Exception):
    """The child crashed (``kind`` "crashed", ``signal`` its name or "exit code N") or hung (``kind`` "timeout")."""

    def __init__(self, kind: str, reason: str, signal_name: str = ""):
        super().__init__(reason)
        self.kind, self.reason, self.signal = kind, reason, signal_name


class ChildInterrupted(Exception):
    """The caller was interrupted; ``message`` is what the child sent after it stopped, ``interrupt`` the cause."""

    def __init__(self, message: Any, interrupt: BaseException):
        super().__init__("interrupted")
        self.message, self.interrupt = message, interrupt


def _child(target: Callable, conn, args: tuple) -> None:
    faulthandler.disable()  # a crash is reported by the parent, naming the call; no interpreter dump
    with contextlib.suppress(OSError, AttributeError):  # not Linux
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    target(conn, *args)


def _exit_reason(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit code {code}"


def isolated(target: Callable, *args, timeout: float = 600.0, beacon: Beacon | None = None,
             grace: float = 10.0, tick: Callable[[], None] | None = None) -> Any:
    """Run ``target(conn, *args)`` in a forked child and return the one message it sends.

    Raise :class:`ChildFailure` when the child crashes or hangs, :class:`ChildInterrupted` when the caller is
    interrupted (see the module). ``tick`` is called while waiting (e.g. to show the child's progress).
    """
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(target, child, args), daemon=True)
    proc.start()
    child.close()
    interrupt: BaseException | None = None
    interrupted_at = 0.0
    since = time.monotonic()
    calls = beacon.calls if beacon is not None else 0
    try:
        while True:
            try:
                if parent.poll(0.05):
                    message = parent.recv()
                    break
                now = time.monotonic()
                if tick is not None:
                    tick()
                if not proc.is_alive() and not parent.poll(0):
                    proc.join(5)
                    raise ChildFailure("crashed", f"the process crashed ({_exit_reason(proc.exitcode)})",
                                       _exit_reason(proc.exitcode))
                if interrupt is not None:
                    if now - interrupted_at > grace:
                        raise interrupt
                    continue
                if beacon is not None and beacon.calls != calls:
                    calls, since = beacon.calls, now
                if now - since > timeout:
                    what = "one call did not return" if beacon is not None else "no result"
                    raise ChildFailure("timeout", f"{what} within {timeout:g} s; the process was stopped")
            except KeyboardInterrupt as exc:
                if interrupt is not None:
                    raise
                interrupt, interrupted_at = exc, time.monotonic()
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGINT)
            except EOFError:
                proc.join(5)
                raise ChildFailure("crashed", f"the process crashed ({_exit_reason(proc.exitcode)})",
                                   _exit_reason(proc.exitcode)) from None
    finally:
        if proc.is_alive():
            proc.join(0.5 if interrupt is None else 2)
        if proc.is_alive():
            proc.kill()
            proc.join(5)
        parent.close()
    if interrupt is not None:
        raise ChildInterrupted(message, interrupt)
    return message
