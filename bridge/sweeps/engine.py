"""Running the cases on Dask: a LocalCluster of worker processes, or any scheduler by address.

The FMU's bytes and the system (each case's values go through the loader's checks, as ``--set``) are scattered
to the workers once; each worker unpacks the FMU once (cached by its SHA-256). A case is one Dask task: the
worker forks a child (:func:`bridge.validation.runs.isolated`) that runs ``fmpy.simulate_fmu`` with the case's
start values and reduces the signals to the recorded values, so a case whose FMU crashes or hangs (past
``timeout``) is a failed row with its reason and the worker lives on. A worker lost for another reason (killed,
out of memory, its machine gone) has its cases given to another worker by the scheduler, up to Dask's
``distributed.scheduler.allowed-failures`` times (default 3; ``tests/test_sweeps.py`` kills one mid-case); a case
that kills every worker it meets ends as failed (KilledWorker). A task that raises is retried ``RETRIES`` times.
"""

from __future__ import annotations

import atexit
import hashlib
import multiprocessing as mp
import os
import shutil
import socket
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..validation.shared import call_outcome, replay_outcome
from .record import RecordPlan, compiled, evaluate
from .spec import SweepError

CONNECT_TIMEOUT = 5.0
RETRIES = 2


@dataclass(frozen=True)
class Payload:
    """What every case needs: the FMU, the record plan, the run settings; ``system`` for consistent starts."""

    fmu: bytes
    plan: RecordPlan
    residuals: int
    stop_time: float
    interval: float
    rtol: float
    timeout: float
    system: Any = None           # the System: each case's values checked, its start made consistent
    recompute: frozenset = frozenset()  # swept names that need the loader's consistent start state
    settable: tuple = ()         # FMU variables that take start values
    reference: Any = None        # {"time": ..., signal: ...} for the metric records

    @property
    def digest(self) -> str:
        """The SHA-256 of the FMU's bytes (names the per-worker unpacked copy)."""
        return hashlib.sha256(self.fmu).hexdigest()


# -- worker side ---------------------------------------------------------------------------------------------
_UNPACKED: dict[str, Path] = {}


def _unpacked(payload: Payload) -> Path:
    """Return the FMU unpacked once per worker process (within the archive limits), removed at its exit."""
    from ..validation.runs import unpack

    key = payload.digest
    if key not in _UNPACKED:
        folder = Path(tempfile.mkdtemp(prefix=f"nhbridge-sweep-{os.getpid()}-"))
        atexit.register(shutil.rmtree, folder, True)
        fmu = folder / "model.fmu"
        fmu.write_bytes(payload.fmu)
        _UNPACKED[key] = unpack(fmu, folder / "unpacked")
    return _UNPACKED[key]


def start_values(payload: Payload, case: Mapping[str, float]) -> dict[str, float]:
    """Return the FMU start values of a case.

    The swept values, checked as ``--set`` checks them (SystemFileError); with a swept start value the FMU would
    recompute (a dependent one of its split), the whole start state made consistent by the loader.
    """
    from ..model.overrides import apply_overrides

    system = apply_overrides(payload.system, case) if payload.system is not None else None  # the loader's checks
    if system is None or not payload.recompute.intersection(case):
        return dict(case)
    values = dict(case)
    for c in system.coordinates:
        values[c.name] = c.start
        values[f"der({c.name})"] = c.velocity
    return {k: v for k, v in values.items() if k in payload.settable or k in case}


def _case_child(conn, folder: str, payload: Payload, start: dict) -> None:
    import traceback

    try:
        import fmpy

        result = fmpy.simulate_fmu(folder, fmi_type="CoSimulation", start_values=start,
                                   stop_time=payload.stop_time, output_interval=payload.interval,
                                   output=payload.plan.outputs, relative_tolerance=payload.rtol, validate=False)
        data = {n: np.asarray(result[n], dtype=float) for n in result.dtype.names}
        values = evaluate(payload.plan, data, payload.residuals, payload.reference)
        series = {n: data[n] for n in ("time", *payload.plan.series) if n in data}
        conn.send(("ok", values, series if payload.plan.series else None))
    except BaseException as exc:  # everything goes to the parent, which records the case as failed
        lines = str(exc).strip().splitlines()
        conn.send(("error", f"{type(exc).__name__}: {lines[-1] if lines else ''}", traceback.format_exc(limit=2)))
    finally:
        conn.close()


@contextmanager
def _may_fork() -> Iterator[None]:
    """Allow a child process on a Dask worker for the duration of the block.

    Dask's worker processes are daemonic by default, and multiprocessing refuses children there; the case's child is
    forked and killed by :func:`bridge.tools.sandbox.isolated` itself.
    """
    config = mp.current_process()._config  # the only switch multiprocessing offers
    daemon = config.pop("daemon", None)
    try:
        yield
    finally:
        if daemon is not None:
            config["daemon"] = daemon


def run_case(payload: Payload, index: int, case: dict) -> dict:
    """Run one case on a worker: ``{index, status, reason, values, series, seconds, worker}``, never raises."""
    from ..errors import BridgeError
    from ..validation.runs import RunFailure, isolated

    t0 = time.perf_counter()
    row: dict[str, Any] = {"index": index, "status": "ok", "reason": "", "values": {}, "series": None,
                           "worker": _worker_name()}
    try:
        import fmpy.simulation  # noqa: F401 - imported once here, not in every forked child

        for rec in payload.plan.records:
            compiled(rec)
        start = start_values(payload, case)
        folder = _unpacked(payload)
        with _may_fork():
            message = isolated(_case_child, str(folder), payload, start, timeout=payload.timeout)
        if message[0] == "ok":
            row["values"], row["series"] = message[1], message[2]
        else:
            row["status"], row["reason"] = "failed", f"the FMU failed: {message[1]}"
    except RunFailure as exc:
        row["status"], row["reason"] = "failed", exc.reason
    except BridgeError as exc:  # e.g. a start state that cannot be made consistent
        row["status"], row["reason"] = "failed", " ".join(str(exc).split())
    row["seconds"] = time.perf_counter() - t0
    return row


def _worker_name() -> str:
    try:
        from distributed import get_worker

        return str(get_worker().address)
    except (ImportError, ValueError):
        return f"local-{os.getpid()}"


# -- client side ---------------------------------------------------------------------------------------------
def check_address(address: str, timeout: float) -> None:
    """Return a TCP connection to the scheduler within ``timeout`` seconds, else SweepError (before Dask retries)."""
    from urllib.parse import urlparse

    parsed = urlparse(address if "://" in address else f"tcp://{address}")
    if parsed.scheme not in ("tcp", "tls"):
        raise SweepError(f"--scheduler {address}: only tcp:// and tls:// addresses (or 'local') are supported")
    try:
        port = parsed.port or 8786
        host = parsed.hostname
    except ValueError as exc:
        raise SweepError(f"--scheduler {address}: not an address ({exc}); give HOST:PORT or tcp://HOST:PORT") from exc
    if not host:
        raise SweepError(f"--scheduler {address}: no host; give HOST:PORT or tcp://HOST:PORT")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        raise SweepError(f"--scheduler {address}: the Dask scheduler cannot be reached "
                         f"({exc.strerror or exc or 'timed out'} within {timeout:g} s); check that "
                         f"'dask scheduler' runs there and the port is open, or use --scheduler local") from exc


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while the worker processes start (they inherit it).

    A Ctrl-C in the terminal, which goes to the whole process group, then interrupts the client alone and the workers
    print no tracebacks.
    """
    import signal

    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread: leave the signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextmanager
def dask_client(scheduler: str | None = "local", workers: int | None = None,
                connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """Yield a ``distributed.Client``, closed on exit (a local cluster is shut down).

    A LocalCluster of ``workers`` single-threaded processes (default: the cores), or the scheduler at ``scheduler``.
    """
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError as exc:
        raise SweepError("sweeps need Dask: pip install 'nhbridge[sweep]' (dask[distributed] and pyarrow)") from exc
    if scheduler in (None, "", "local"):
        n = workers or max(1, os.cpu_count() or 1)
        with dask.config.set({"distributed.worker.daemon": False, "distributed.logging.distributed": "error"}), \
                _sigint_ignored():  # Ctrl-C reaches this process only; it shuts the cluster down
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                   dashboard_address="127.0.0.1:0", silence_logs=40)  # local: no fixed ports
        client = Client(cluster)
        try:
            yield client
        finally:
            client.close()
            cluster.close()
        return
    check_address(scheduler, connect_timeout)
    try:
        client = Client(scheduler, timeout=connect_timeout)
    except (OSError, TimeoutError) as exc:
        raise SweepError(f"--scheduler {scheduler}: no Dask scheduler answered within {connect_timeout:g} s ({exc}); "
                         "check the address, or use --scheduler local") from exc
    try:
        yield client
    finally:
        client.close()


def run_cases(client, payload: Payload, cases: Iterable[dict], on_row: Callable[[dict, dict], None],
              window: int | None = None) -> None:
    """Submit the cases and call ``on_row(row, case)`` with each finished row, in the order they finish.

    The cases are taken lazily from ``cases``, at most ``window`` in flight. A KeyboardInterrupt cancels what is still
    running and propagates (the rows seen stay).
    """
    from distributed import as_completed

    remote = client.scatter(payload, broadcast=True, hash=False)
    nthreads = sum(client.nthreads().values()) or 1
    window = window or max(8, 4 * nthreads)
    pending = iter(enumerate(cases))
    futures = {}

    def submit(k: int) -> None:
        for index, case in pending:
            fut = client.submit(run_case, remote, index, case, pure=False, retries=RETRIES)
            futures[fut] = (index, case)
            k -= 1
            if k <= 0:
                return

    submit(window)
    queue = as_completed(list(futures))
    try:
        for fut in queue:
            index, case = futures.pop(fut)
            try:
                row = fut.result()
            except Exception as exc:  # KilledWorker and the like: the case took its workers down
                row = {"index": index, "status": "failed", "values": {}, "series": None, "seconds": float("nan"),
                       "worker": "", "reason": "the workers running it were lost or it failed on every try "
                       f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})"}
            on_row(row, case)
            before = len(futures)
            submit(1)
            for new in list(futures)[before:]:
                queue.add(new)
    except KeyboardInterrupt:
        client.cancel(list(futures))
        raise


# -- any calls on Dask (validation campaigns) ----------------------------------------------------------------
def _call(fn: Callable[[], Any]) -> tuple:
    """Carry out ``fn`` on a worker that may fork; return its outcome (:func:`.validation.shared.call_outcome`)."""

    def forking() -> Any:
        with _may_fork():  # the FMU runs fork their own child (bridge.validation.runs.isolated)
            return fn()

    return call_outcome(forking)


class DaskRunner:
    """Runs independent calls on a Dask cluster.

    ``runner(calls)`` -> one callable per call that returns its result or raises its exception (with its attributes)
    when called. Used by ``nhbridge validate --scheduler``.
    """

    def __init__(self, scheduler: str = "local", workers: int | None = None):
        self.scheduler, self.workers = scheduler, workers
        self._context = None
        self.client = None

    def __enter__(self) -> DaskRunner:
        self._context = dask_client(self.scheduler, self.workers)
        self.client = self._context.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        self._context.__exit__(*exc)

    def __call__(self, calls: list[Callable[[], Any]]) -> list[Callable[[], Any]]:
        """Submit the calls to the cluster and wait for all of them.

        Parameters
        ----------
        calls : list of callable
            Independent calls without arguments.

        Returns
        -------
        list of callable
            One per call, in the same order: calling it returns the call's result or raises its exception.
        """
        futures = [self.client.submit(_call, fn, pure=False, retries=RETRIES) for fn in calls]
        out = []
        try:
            for fut in futures:
                try:
                    out.append(replay_outcome(fut.result()))
                except Exception as exc:  # the worker was lost on every try (KilledWorker) or similar
                    from ..validation.runs import RunFailure

                    reason = f"the Dask workers running it were lost or it failed on every try ({type(exc).__name__})"
                    lost = ("raise", RunFailure, (reason,), {"reason": reason, "input": False}, 0.0)
                    out.append(replay_outcome(lost))
        except KeyboardInterrupt:
            self.client.cancel(futures)
            raise
        return out
