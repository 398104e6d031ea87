"""What the runs of one system share, in whichever process runs them: the derived equations and the built FMUs.

A campaign plans its runs as closures. Run one after the other in the campaign's process they could share a
dict; shipped to Dask workers (``validate --scheduler``/``--workers``) each closure is pickled on its own, and a
dict captured by them is copied with every run: each FMU run would derive its method again, and the Model
Exchange and the Co-Simulation run of one FMU would each build it. Here the memo belongs to the process (one per
Dask worker) and to the validation of one system (``token``): a process derives a method at most once per system,
whichever runs it carries out. An FMU is built once per file name for all processes of a machine: the first to
take its lock file builds it, the others wait for it and run the same file.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

try:
    import fcntl
except ImportError:  # not POSIX: the processes of a campaign do not share their FMU builds
    fcntl = None  # type: ignore[assignment]

T = TypeVar("T")
_MEMO: dict[tuple, object] = {}
_TOKEN = [""]
_LOCK = threading.Lock()
_KEY_LOCKS: dict[tuple, threading.Lock] = {}


def remembered(token: str, key: tuple, compute: Callable[[], T]) -> T:
    """Return ``compute()`` for ``key``, computed once per process while ``token`` is the current validation.

    Parameters
    ----------
    token : str
        The validation the value belongs to (one system of one campaign); a new token forgets the values kept
        for the previous one, so a long-lived worker holds one system's equations at most.
    key : tuple
        What is computed (e.g. ``("eom", "maggi")``).
    compute : callable
        Computes the value; an exception it raises is not remembered (the next call computes again).

    Returns
    -------
    object
        The value.
    """
    with _LOCK:
        if token != _TOKEN[0]:
            _MEMO.clear()
            _KEY_LOCKS.clear()
            _TOKEN[0] = token
        if key in _MEMO:
            return _MEMO[key]  # type: ignore[return-value]
        key_lock = _KEY_LOCKS.setdefault(key, threading.Lock())
    with key_lock:  # threads of one worker asking for the same value wait for the first
        with _LOCK:
            if _TOKEN[0] == token and key in _MEMO:
                return _MEMO[key]  # type: ignore[return-value]
        value = compute()
        with _LOCK:
            if _TOKEN[0] == token:
                _MEMO[key] = value
        return value


def built_once(path: Path, build: Callable[[Path], Path]) -> Path:
    """Return the FMU ``path``, built by ``build(path)`` unless another run (any process) has built it already.

    ``build`` writes the file atomically (:func:`bridge.fmu.build.build_fmu`), so an existing file is whole. A
    build that raises leaves no file: the next run tries again and reports its own failure.
    """
    if fcntl is None:
        return path if path.is_file() else build(path)
    with path.with_name(f"{path.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if path.is_file():
            return path
        return build(path)
