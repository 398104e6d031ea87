"""What the runs of one system share, in whichever process runs them: the derived equations and the built FMUs.

A campaign plans its runs as closures. Run one after the other in the campaign's process they could share a
dict; shipped to Dask workers (``validate --scheduler``/``--workers``) each closure is pickled on its own, and a
dict captured by them is copied with every run: each FMU run would derive its method again, and the Model
Exchange and the Co-Simulation run of one FMU would each build it. Here the memo belongs to the process (one per
Dask worker) and to the validation of one system (``token``): a process derives a method at most once per system,
whichever runs it carries out. An FMU is built once per file name for all processes of a machine: the first to
take its lock file builds it, the others wait for it and run the same file.

Shipped to workers, the runs that share work go together (:func:`run_together`): the runs of one method (its
native run and its FMUs, FMI 2 and 3, Model Exchange and Co-Simulation) are one call, so a method is derived, its
FMUs built and checked by ``fmpy.validation`` once per system, whatever the number of workers.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

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
    build that raises leaves no file: the next run tries again and reports its own failure. The same holds for a
    folder that ``build`` makes whole or not at all (an unpacked FMU: :func:`bridge.validation.runs.unpack_to`).
    """
    if fcntl is None:
        return path if path.exists() else build(path)
    with path.with_name(f"{path.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if path.exists():
            return path
        return build(path)


def call_outcome(call: Callable[[], Any]) -> tuple:
    """Carry out ``call`` (on a worker) and return its outcome, to be sent back and read with :func:`replay_outcome`.

    ``("ok", value, seconds)`` or ``("raise", class, args, attributes, seconds)``: the exception's class, arguments
    and attributes, so that it is raised again as it was.

    Examples
    --------
    >>> call_outcome(lambda: 1 / 0)[:3]
    ('raise', <class 'ZeroDivisionError'>, ('division by zero',))
    """
    t0 = time.perf_counter()
    try:
        return ("ok", call(), time.perf_counter() - t0)
    except Exception as exc:  # sent back and raised again where the result is read
        return ("raise", type(exc), exc.args, dict(vars(exc)), time.perf_counter() - t0)


def _outcomes(calls: Sequence[Callable[[], Any]]) -> list[tuple]:
    """Carry out the calls one after the other; return each one's outcome (:func:`call_outcome`)."""
    return [call_outcome(call) for call in calls]


def replay_outcome(outcome: tuple) -> Callable[[], Any]:
    """Return a callable that gives back what a call sent from a worker gave: its value, or its exception raised again.

    ``outcome`` is ``("ok", value, seconds)`` or ``("raise", class, args, attributes, seconds)``; the exception
    is rebuilt with its class, arguments and attributes. The callable's ``seconds`` is the time the call took
    where it ran.

    Examples
    --------
    >>> replay_outcome(("ok", 3, 0.1))()
    3
    """

    def replay() -> Any:
        if outcome[0] == "ok":
            return outcome[1]
        exc = outcome[1].__new__(outcome[1])
        exc.args = outcome[2]
        vars(exc).update(outcome[3])
        raise exc

    replay.seconds = outcome[-1]  # type: ignore[attr-defined]  # the time the call took where it ran
    return replay


def _failed_with(bundle: Callable[[], Any]) -> Callable[[], Any]:
    def replay() -> Any:
        return bundle()  # raises the bundle's failure (e.g. its worker was lost on every try)

    replay.seconds = getattr(bundle, "seconds", 0.0)  # type: ignore[attr-defined]
    return replay


def run_together(runner: Callable[[list[Callable[[], Any]]], list[Callable[[], Any]]],
                 calls: Sequence[tuple[Hashable, Callable[[], Any]]]) -> list[Callable[[], Any]]:
    """Run ``calls`` with ``runner``, those with the same key together as one call, in the same process.

    Parameters
    ----------
    runner : callable
        ``runner(list of calls)`` -> one callable per call that returns its result or raises its exception
        (e.g. :class:`bridge.sweeps.engine.DaskRunner`).
    calls : sequence of (key, callable)
        The calls; those of one key share work that a process keeps (:func:`remembered`), e.g. a method's
        equations and its FMUs. The groups with the most calls are handed out first.

    Returns
    -------
    list of callable
        One per call, in the order of ``calls``: calling it returns the call's result or raises its exception;
        its ``seconds`` is the time the call took.
    """
    groups: dict[Hashable, list[int]] = {}
    for k, (key, _) in enumerate(calls):
        groups.setdefault(key, []).append(k)
    order = sorted(groups.values(), key=len, reverse=True)
    bundles = runner([partial(_outcomes, [calls[k][1] for k in ks]) for ks in order])
    out: list[Callable[[], Any] | None] = [None] * len(calls)
    for ks, bundle in zip(order, bundles):
        try:
            outcomes = bundle()
        except Exception:  # the whole group failed where it ran: each of its calls reports that failure
            for k in ks:
                out[k] = _failed_with(bundle)
            continue
        for k, outcome in zip(ks, outcomes):
            out[k] = replay_outcome(outcome)
    return out  # type: ignore[return-value]
