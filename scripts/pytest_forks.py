"""A fork server for scripts/run_tests.py: one process imports what nearly every test module needs, then forks a
fresh child for each pytest run.

Every test module still runs in a process of its own that no other module has touched: a child is a copy of the
server as it was after its imports, never of another child, so the FMU libraries, fmpy's process-wide logger,
signal handlers and environment one module leaves behind cannot reach another. What the fork saves is the fixed
cost of a process: pytest, numpy, scipy, sympy, symengine, fmpy and the other libraries of ``PRELOAD`` are
imported once per run instead of once per process.

Forking is only safe from a process with a single thread: after its imports the server counts its threads (all
of them, native ones too: ``/proc/self/task``) and, where there is more than one, says so and serves nothing
(scripts/run_tests.py then starts a plain ``python -m pytest`` per module). The numerical libraries start no
thread pool under ``OPENBLAS_NUM_THREADS=1``/``OMP_NUM_THREADS=1``, which scripts/run_tests.py sets. Nothing
that starts threads when imported (the Rust-based Rumoca, Dask's distributed scheduler) and no package with a
pytest plugin whose modules pytest would rewrite is imported here.

Protocol (one JSON object a line): the server writes ``{"ready": cpu}`` (or ``{"refused": why}``) after its
imports; each request ``{"id", "argv", "env", "output"}`` on stdin is answered by ``{"id", "pid"}`` when its child
is forked and ``{"id", "status", "cpu"}`` when the child has ended (``status`` as ``os.wait4`` gives it,
``cpu`` the user and system CPU of the child and every process it waited for). At the end of stdin the server
waits for its children and leaves; on SIGTERM it terminates them first.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import importlib.metadata
import json
import os
import resource
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Imported once by the server: the libraries that most test modules import at collection, directly or through
# nhbridge (the rest each module imports itself). Not nhbridge itself: its distribution registers a pytest plugin,
# so pytest rewrites the asserts of its modules and they must be imported under pytest (``rewritten_by_pytest``).
# Not pandas or pyarrow: importing pyarrow starts a thread.
PRELOAD = ("pytest", "numpy", "scipy.linalg", "scipy.integrate", "scipy.optimize", "scipy.sparse", "scipy.ndimage",
           "sympy", "sympy.physics.mechanics", "sympy.codegen.ast", "sympy.printing.c", "symengine", "threadpoolctl",
           "tomllib", "matplotlib", "rumoca", "fmpy", "fmpy.fmi2", "fmpy.fmi3", "fmpy.simulation", "fmpy.validation",
           "lxml.etree")


def rewritten_by_pytest() -> set[str]:
    """The top-level packages shipped by a distribution that registers a pytest plugin (``pytest11``): pytest
    marks them for assertion rewriting and warns about any already imported, so the server leaves them alone."""
    names: set[str] = set()
    for dist in importlib.metadata.distributions():
        if any(ep.group == "pytest11" for ep in dist.entry_points):
            for file in dist.files or []:
                parts = Path(str(file)).parts
                if parts and parts[-1].endswith(".py") and not parts[0].endswith((".dist-info", ".egg-info")):
                    names.add(parts[0].removesuffix(".py"))
    return names


def preload(names: Sequence[str]) -> list[str]:
    """Import ``names`` (those installed, bar what pytest rewrites); the names imported."""
    skip = rewritten_by_pytest()
    done = []
    for name in names:
        if name.split(".")[0] in skip:
            continue
        try:
            importlib.import_module(name)
        except Exception:  # an optional dependency missing or broken: a child imports it itself, or fails
            continue
        done.append(name)
    return done


def thread_count() -> int:
    """The threads of this process, native ones included (1 where /proc is not there to ask)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 1


def send(message: dict) -> None:
    """One line to the runner."""
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def become_child(request: dict) -> None:
    """In the forked child: the runner's environment, stdin from /dev/null, stdout and stderr into the output
    file, default signal dispositions, the working folder and ``sys.argv`` of ``python -m pytest``."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C: KeyboardInterrupt, as in any Python
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 0)
    os.dup2(out, 1)
    os.dup2(out, 2)
    os.close(null)
    os.close(out)
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(ROOT)
    import pytest

    sys.argv = [str(Path(pytest.__file__).with_name("__main__.py")), *request["argv"]]


def serve() -> dict | None:
    """Fork a child per request until stdin ends; in a child, return its request (the caller runs pytest)."""
    children: dict[int, int] = {}  # pid -> request id
    pending = b""
    stdin_open = True

    def terminate(signum: int, _frame) -> None:
        for pid in list(children):  # not reaped yet, so no other process can have taken the number
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)
        for pid in list(children):
            with contextlib.suppress(OSError):
                os.waitpid(pid, 0)
        os._exit(128 + signum)

    signal.signal(signal.SIGTERM, terminate)
    # Ctrl-C reaches the whole process group: the children stop their tests, the runner reports them, and the
    # server ends when the runner closes its stdin
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    while stdin_open or children:
        readable, _, _ = select.select([0] if stdin_open else [], [], [], 0.05)
        if readable:
            chunk = os.read(0, 65536)
            stdin_open = bool(chunk)
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                pid = os.fork()
                if pid == 0:
                    become_child(request)
                    return request
                children[pid] = request["id"]
                send({"id": request["id"], "pid": pid})
        while children:
            pid, status, usage = os.wait4(-1, os.WNOHANG)
            if pid == 0:
                break
            send({"id": children.pop(pid), "status": status, "cpu": usage.ru_utime + usage.ru_stime})
    return None


def main() -> int:
    names = sys.argv[1].split(",") if len(sys.argv) > 1 else PRELOAD  # the server's tests import less
    sys.path[0] = str(ROOT)  # as ``python -m pytest`` run from the checkout has it
    os.chdir(ROOT)
    preload([n for n in names if n])
    threads = thread_count()
    if threads > 1:
        send({"refused": f"{threads} threads after the imports: forking would copy a process mid-way"})
        return 0
    gc.collect()
    gc.freeze()  # the imported objects move to a generation no collection visits: children neither scan nor copy them
    usage = resource.getrusage(resource.RUSAGE_SELF)
    send({"ready": usage.ru_utime + usage.ru_stime})
    request = serve()
    if request is None:
        return 0
    # the child: the rest is what ``python -m pytest`` does, and its exit runs the interpreter's usual shutdown
    import pytest

    return pytest.console_main()


if __name__ == "__main__":
    sys.exit(main())


class ForkServer:
    """The runner's end: starts the server and runs pytest processes through it, from any number of threads.

    ``ForkServer.start(env)`` is None where the server cannot serve (it refused, or did not start): the caller
    then starts its processes itself.
    """

    def __init__(self, process: subprocess.Popen, import_cpu: float) -> None:
        self.process = process
        self.import_cpu = import_cpu  # the CPU the server spent on its imports, once for the whole run
        self.lock = threading.Lock()
        self.next_id = 0
        self.waiting: dict[int, dict] = {}  # request id -> {"done": Event, "status": ..., "cpu": ...}
        self.reader = threading.Thread(target=self._read, name="fork-server-reader", daemon=True)
        self.reader.start()

    @classmethod
    def start(cls, env: dict[str, str], preload: Sequence[str] = PRELOAD) -> tuple[ForkServer | None, str]:
        """The server, started with ``env`` and past its imports of ``preload``, or None and why not."""
        try:
            process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), ",".join(preload)],
                                       cwd=ROOT, env=env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        except OSError as error:
            return None, f"the fork server did not start: {error}"
        first = process.stdout.readline()
        try:
            message = json.loads(first)
        except ValueError:
            message = {"refused": f"it answered {first.strip()!r}"}
        if "ready" not in message:
            process.stdin.close()
            process.wait()
            return None, f"the fork server does not serve: {message.get('refused')}"
        return cls(process, float(message["ready"])), ""

    def _read(self) -> None:
        for line in self.process.stdout:
            message = json.loads(line)
            with self.lock:
                entry = self.waiting.get(message["id"])
            if entry is None:
                continue
            if "pid" in message:
                entry["pid"] = message["pid"]
                continue
            entry.update(status=message["status"], cpu=message["cpu"])
            entry["done"].set()
        with self.lock:  # the server is gone: whatever it had not answered ended with it
            for entry in self.waiting.values():
                if not entry["done"].is_set():
                    entry.update(status=signal.SIGTERM, cpu=0.0)
                    entry["done"].set()

    def run(self, argv: list[str], env: dict[str, str], output: Path) -> tuple[int, float]:
        """Run ``pytest argv`` in a fresh fork with ``env``, its output into ``output``: (exit code, CPU)."""
        done = threading.Event()
        with self.lock:
            request_id = self.next_id
            self.next_id += 1
            self.waiting[request_id] = {"done": done}
            try:
                self.process.stdin.write(json.dumps({"id": request_id, "argv": argv, "env": env,
                                                     "output": str(output)}) + "\n")
                self.process.stdin.flush()
            except (OSError, ValueError):  # the server has gone (stopped): the run did not happen
                done.set()
                self.waiting[request_id].update(status=signal.SIGTERM, cpu=0.0)
        done.wait()
        with self.lock:
            entry = self.waiting.pop(request_id)
        return os.waitstatus_to_exitcode(entry["status"]), entry["cpu"]

    def terminate(self) -> None:
        """Stop the server and the processes it runs."""
        self.process.terminate()

    def close(self) -> float:
        """Let the server end once the processes it runs have; the CPU of its imports."""
        with self.lock:
            self.process.stdin.close()
        self.process.wait()
        self.reader.join()
        return self.import_cpu
