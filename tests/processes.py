"""Child processes for the tests that send signals: whatever the suite was started from (a terminal, ``nohup``,
a CI runner, a parent that ignores SIGINT), the child starts with the default signal dispositions, as a
command started from a terminal does, so Python installs its KeyboardInterrupt handler in it."""

from __future__ import annotations

import signal


def default_signals() -> None:
    """``preexec_fn`` for ``subprocess.Popen``: SIGINT and SIGTERM back to their defaults in the child.

    A process started with SIGINT ignored (``nohup``, ``cmd &`` in a non-interactive shell) passes the
    ignored disposition on through ``exec``; Python then leaves SIGINT ignored and Ctrl-C does nothing.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
