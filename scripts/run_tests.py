"""Run the test modules in separate pytest processes, several at a time, and sum up.

A module that builds FMUs, or is listed in ``ISOLATED``, runs in its own process: what it leaves loaded (FMU
libraries, fmpy's process-wide logger, signal handlers, environment it changes) cannot change what another
module sees. The light modules that do neither (recorded under ``BATCH_CPU_SECONDS`` of CPU each) are run
together, a few per process, so that the fixed cost of a process is paid once per batch instead of once per
module.

The processes are forked from a server (scripts/pytest_forks.py) that has imported what nearly every module
needs (pytest, numpy, scipy, sympy, symengine, fmpy: about 1.5 s of CPU, once per run); each child is a copy
of the server as it was after those imports, never of another child, so it is as fresh as a new
``python -m pytest`` process and pays only for pytest's start, nhbridge's own modules and the module's other
imports (a module importing sympy, scipy, fmpy and the FMU build: 0.8 s of CPU instead of 2.7 s). Where the
server cannot serve (it has more than one thread after its imports) and with ``--no-fork``, each process is
started afresh.

A batch that fails is run again module by module: the outcome reported is each module's own, and a module that
passes alone but failed in its batch is reported as needing isolation (a failure of the run: add it to
``ISOLATED``).

``--jobs`` processes run at once (default: the number of cores), and one more (``--extra-jobs``) while the CPUs
sit idle although every lane is busy: a module that waits (for wine, qemu, pip, a compiler's child process)
leaves its core unused, and the next process fills it. The CPUs' idle time is read from the kernel
(``/proc/stat``, the whole machine): the extra process starts only after the machine had a core's worth of idle
time over two samples a second apart, so on a machine that other work keeps busy no extra process starts.
Processes are started longest first (longest-processing-time
scheduling) by the CPU seconds each module took when last measured (``tests/durations.json``; modules not
measured yet start first, as if they were the longest), so that the lanes finish together. With ``-m "not slow"``
(the fast subset) a module's figure is what it costs in the subset: its CPU less its tests and module fixtures
recorded at ``SLOW_CPU_SECONDS`` (tests/conftest.py) or more. Each process's
output is printed whole when it ends, with the CPU it used, and the last lines sum all modules as pytest does
(``N passed, N failed, N skipped``), so a CI log reads like one pytest run. The pytest plugins no test uses
(pytest-benchmark, xdist unless ``-n`` is given, hypothesis outside the modules that import it) are not loaded:
together they cost a process about 1 s of CPU.

Every run gets a fresh folder for the FMU build's object cache (``NHBRIDGE_OBJECT_CACHE``) and one for the
whole FMUs the tests share (``NHBRIDGE_TEST_FMU_CACHE``, read by ``tests/conftest.py``): the modules of one
run share the C objects they compile and the FMUs they build, nothing built by an earlier run or another
checkout is reused, and the folders are removed at the end.

``--record-durations`` measures the CPU of every module (each in its own process, so that its figure is its
own), test and shared fixture (tests/conftest.py) and writes them into ``tests/durations.json``, which orders
the next runs, forms the batches and sets the ``slow`` marker; the modules not run keep their entries.

Usage: ``python3 scripts/run_tests.py [--jobs N] [--extra-jobs N] [--modules GLOB]... [--record-durations] [--no-batch]
[--no-fork] [pytest options...]``; ``python3 scripts/run_tests.py --slowest 20`` lists the costliest tests and shared
fixtures recorded (nothing is run).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from pytest_forks import ForkServer

ROOT = Path(__file__).resolve().parent.parent
DURATIONS = ROOT / "tests" / "durations.json"
# Modules that need a process of their own although they build no FMU, with the reason. Those of FMU_MODULES in
# tests/conftest.py (and any module that loads FMUs: LOADS_FMUS) are never batched: the FMU libraries they load
# stay loaded, and fmpy keeps ONE Python logger for every FMI 2 instance of the process in a C global
# (fmpy.logging.addLoggerProxy, called by simulate_fmu(..., logger=...)): a test that passes its own logger, as
# test_fmu_repartition does, leaves that global pointing at a callback freed after the call, and the next FMI 2
# instance in the process that logs through fmpy's default callbacks crashes the interpreter.
ISOLATED = {
    "test_timeout": "asserts SIGALRM and the interval timer are left as a fresh process has them",
    "test_cosim_isolation": "runs foreign FMUs that segfault or hang, and checks the process survives them",
    "test_no_compiler": "hides the C compiler from the process (PATH, CC) around every test",
    "test_object_cache": "points the object cache of the whole process elsewhere",
    "test_fuzz": "the only user of hypothesis's pytest plugin (its settings and database hooks)",
    "test_animation": "drives a headless browser through Playwright's event loop",
}
BATCH_CPU_SECONDS = 20.0  # a module measured under this is batched (unless isolated or building FMUs)
BATCH_TOTAL_SECONDS = 45.0  # the CPU a batch aims at: small enough to keep the lanes balanced
RUNNING: set[subprocess.Popen] = set()  # the modules' pytest processes still running
RUNNING_LOCK = threading.Lock()
STOPPING = threading.Event()  # set by SIGTERM: no further process is started
SERVER: ForkServer | None = None  # forks the modules' pytest processes (scripts/pytest_forks.py); None: Popen
COUNTS = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed|deselected)")


@dataclass
class ModuleRun:
    """What one pytest process did: one module, or a batch of light modules."""

    modules: list[Path]
    code: int
    output: str
    wall: float
    cpu: float  # user + system of the pytest process and every process it waited for

    @property
    def name(self) -> str:
        """The module's file name, or the batch's module names."""
        if len(self.modules) == 1:
            return self.modules[0].name
        return f"batch of {len(self.modules)}: " + " ".join(m.stem for m in self.modules)


def load_durations() -> dict:
    """tests/durations.json, or empty tables where it is missing or unreadable."""
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        data = {}
    return {key: dict(data.get(key, {})) for key in ("modules", "tests", "fixtures")}


def modules(patterns: list[str], measured: dict[str, float]) -> list[Path]:
    """The modules matching any of ``patterns``, longest first; the ones never measured before all the others."""
    found = sorted({p for pattern in patterns for p in (ROOT / "tests").glob(pattern)})
    return sorted(found, key=lambda p: (p.stem in measured, -measured.get(p.stem, 0.0), p.name))


def fmu_modules() -> set[str]:
    """The modules that compile FMUs, as tests/conftest.py lists them for the ``fmu`` marker."""
    text = (ROOT / "tests" / "conftest.py").read_text()
    found = re.search(r"FMU_MODULES = \{(.*?)\}", text, re.S)
    return set(re.findall(r'"(test_\w+)"', found.group(1))) if found else set()


def slow_threshold() -> float:
    """The CPU seconds from which tests/conftest.py marks a test ``slow`` (``SLOW_CPU_SECONDS``)."""
    found = re.search(r"^SLOW_CPU_SECONDS = ([0-9.]+)", (ROOT / "tests" / "conftest.py").read_text(), re.M)
    return float(found.group(1)) if found else 3.0


def deselects_slow(extra: list[str]) -> bool:
    """Whether the pytest options select the fast subset (a ``-m`` expression with ``not slow``)."""
    marks = [b for a, b in zip(extra, [*extra[1:], ""]) if a == "-m"] + [a[2:] for a in extra if a.startswith("-m")
                                                                         and len(a) > 2]
    return any(re.search(r"\bnot\s+slow\b", m) for m in marks)


def fast_costs(durations: dict, threshold: float) -> dict[str, float]:
    """Each module's CPU without its tests and module fixtures recorded at ``threshold`` or more: what it costs
    in the fast subset (its process's fixed cost and the tests under the threshold), for the schedule and the
    batches of ``-m "not slow"``."""
    costs = dict(durations["modules"])
    for table in ("tests", "fixtures"):
        for key, cpu in durations[table].items():
            module = Path(key.split("::")[0]).stem
            if cpu >= threshold and module in costs and key.startswith("tests/"):
                costs[module] = costs[module] - cpu
    return {module: max(cpu, 1.0) for module, cpu in costs.items()}


# A module whose text names one of these loads FMU libraries into its process (or may): never batched, whether or
# not tests/conftest.py lists it among the FMU modules.
LOADS_FMUS = re.compile(r"\bfmpy\b|build_fmu|bridge\.cosim|built_fmu")


def batchable(module: Path, measured: dict[str, float], isolated: set[str]) -> bool:
    """Whether ``module`` may share its process: measured light, not loading FMUs, not needing isolation."""
    cpu = measured.get(module.stem)
    return (cpu is not None and cpu < BATCH_CPU_SECONDS and module.stem not in isolated
            and not LOADS_FMUS.search(module.read_text(encoding="utf-8")))


def plan(found: list[Path], measured: dict[str, float], batch: bool) -> list[list[Path]]:
    """The processes to run, each a list of modules, longest first (by their summed recorded CPU).

    With ``batch``, the light modules are packed first-fit, longest first, into batches of about
    ``BATCH_TOTAL_SECONDS`` of CPU; every other module is a process of its own.
    """
    isolated = set(ISOLATED) | fmu_modules()
    light = [m for m in found if batch and batchable(m, measured, isolated)]
    jobs = [[m] for m in found if m not in light]
    batches: list[list[Path]] = []
    for module in sorted(light, key=lambda m: (-measured[m.stem], m.name)):
        fits = next((b for b in batches if sum(measured[m.stem] for m in b) + measured[module.stem]
                     <= BATCH_TOTAL_SECONDS), None)
        if fits is None:
            batches.append([module])
        else:
            fits.append(module)
    jobs += [sorted(b, key=lambda m: m.name) for b in batches]
    known = lambda job: all(m.stem in measured for m in job)  # noqa: E731
    return sorted(jobs, key=lambda job: (known(job), -sum(measured.get(m.stem, 0.0) for m in job), job[0].name))


def plugin_options(job: list[Path], extra: list[str]) -> list[str]:
    """``-p no:...`` for the installed pytest plugins the job's tests do not use (each costs CPU to load)."""
    options = ["-p", "no:benchmark"]
    if not any(a == "-n" or a.startswith(("-n", "--numprocesses", "--dist")) for a in extra):
        options += ["-p", "no:xdist", "-p", "no:xdist.looponfail"]
    if not any("hypothesis" in m.read_text(encoding="utf-8") for m in job):
        options += ["-p", "no:hypothesispytest"]
    return options


def cpu_times(stat: str) -> tuple[float, float] | None:
    """(idle, total) jiffies of all CPUs from the text of ``/proc/stat`` (idle counts iowait too), or None."""
    for line in stat.splitlines():
        fields = line.split()
        if fields and fields[0] == "cpu":
            values = [float(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
            return values[3] + values[4], sum(values)
    return None


class IdleCores:
    """How many cores the whole machine left idle between two samples of ``/proc/stat``."""

    def __init__(self, path: Path = Path("/proc/stat"), cores: int | None = None) -> None:
        self.path = path
        self.cores = cores or os.cpu_count() or 1
        self.last = self._sample()
        self.history: deque[float] = deque(maxlen=2)

    def _sample(self) -> tuple[float, float] | None:
        try:
            return cpu_times(self.path.read_text())
        except (OSError, ValueError, IndexError):
            return None

    def update(self) -> None:
        """Take a sample: the idle cores since the previous one join the history."""
        now = self._sample()
        if now is not None and self.last is not None and now[1] > self.last[1]:
            self.history.append(self.cores * (now[0] - self.last[0]) / (now[1] - self.last[1]))
        self.last = now

    def spare(self, threshold: float = 0.75) -> bool:
        """Whether at least ``threshold`` of a core sat idle in each of the last two intervals."""
        return len(self.history) == self.history.maxlen and min(self.history) >= threshold

    def clear(self) -> None:
        """Forget the history: a process just started, and the next samples must see what it does."""
        self.history.clear()


def run(job: list[Path], extra: list[str], env: dict[str, str], record: Path | None) -> ModuleRun:
    """Run one pytest process over ``job``; its CPU is read from the kernel's accounting of the process tree."""
    if record is not None:
        env = {**env, "NHBRIDGE_RECORD_DURATIONS": str(record)}
    start = time.monotonic()
    argv = ["-q", "-p", "no:cacheprovider", *plugin_options(job, extra), *extra,
            *(str(m.relative_to(ROOT)) for m in job)]
    if SERVER is not None:
        if STOPPING.is_set():
            return ModuleRun(job, 128 + signal.SIGTERM, "not run: the run was stopped", 0.0, 0.0)
        handle, name = tempfile.mkstemp(prefix="pytest-output-", suffix=".txt")
        os.close(handle)
        try:
            code, cpu = SERVER.run(argv, env, Path(name))
            output = Path(name).read_text(errors="replace")
        finally:
            os.unlink(name)
        return ModuleRun(job, code, output, time.monotonic() - start, cpu)
    command = [sys.executable, "-m", "pytest", *argv]
    with tempfile.TemporaryFile("w+") as out:
        with RUNNING_LOCK:  # started under the lock: SIGTERM either sees it running or it is never started
            if STOPPING.is_set():
                return ModuleRun(job, 128 + signal.SIGTERM, "not run: the run was stopped", 0.0, 0.0)
            proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, text=True)
            RUNNING.add(proc)
        _, status, usage = os.wait4(proc.pid, 0)
        with RUNNING_LOCK:
            RUNNING.discard(proc)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        output = out.read()
    return ModuleRun(job, proc.returncode, output, time.monotonic() - start, usage.ru_utime + usage.ru_stime)


def run_job(job: list[Path], extra: list[str], env: dict[str, str], records: Path | None) -> list[ModuleRun]:
    """Run ``job``; a batch that fails is run again module by module, and the module runs are what counts.

    A module that passes alone but failed in its batch gets exit code 1 and a note: it changes, or depends on,
    what another module of the batch leaves in the process, and belongs in ``ISOLATED``.
    """
    record = None if records is None else records / f"{job[0].stem}.json"
    first = run(job, extra, env, record)
    if len(job) == 1 or first.code in (0, 5):
        return [first]
    failed_together = set(re.findall(r"^(?:FAILED|ERROR) tests/(test_\w+)\.py", first.output, re.M))
    alone = []
    for module in job:
        result = run([module], extra, env, None)
        if result.code in (0, 5) and module.stem in failed_together:
            result.code = 1
            result.output += (f"\n{module.name} passes alone but failed in a batch with "
                              f"{', '.join(m.stem for m in job if m != module)}: it, or a module run before it, "
                              "depends on or changes process-wide state; make the module that changes it restore "
                              "it, or give that module a process of its own (ISOLATED in scripts/run_tests.py)\n")
        alone.append(result)
    alone[0].output = (f"(the batch failed, exit {first.code}; its modules were run again one by one)\n"
                       + alone[0].output)
    alone[0].cpu += first.cpu  # the batch's CPU is spent too
    return alone


def merge_durations(data: dict, runs: list[ModuleRun], records: Path) -> dict:
    """``data`` with the measurements of the modules of ``runs`` replacing what was known of them."""
    for result in runs:
        if len(result.modules) != 1:  # a batch's CPU is no module's own figure
            continue
        module = result.modules[0]
        relative = f"{module.relative_to(ROOT)}"
        data["modules"][module.stem] = round(result.cpu, 1)
        for table in ("tests", "fixtures"):
            data[table] = {k: v for k, v in data[table].items() if not k.startswith(relative + "::")}
        path = records / f"{module.stem}.json"
        if path.is_file():
            recorded = json.loads(path.read_text())
            # tests under 0.5 s CPU are left out: neither the schedule nor the slow marker needs them
            data["tests"].update({k: v for k, v in recorded["tests"].items() if v >= 0.5})
            data["fixtures"].update({k: v for k, v in recorded["fixtures"].items() if v >= 0.5})
    return {key: dict(sorted(data[key].items())) for key in ("modules", "tests", "fixtures")}


def write_durations(data: dict) -> None:
    """Replace tests/durations.json whole (a temporary file renamed over it)."""
    tmp = DURATIONS.with_name(f".{DURATIONS.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=1) + "\n")
    os.replace(tmp, DURATIONS)


def slowest_recorded(durations: dict, count: int) -> str:
    """The ``count`` costliest tests and shared fixtures recorded, one a line: CPU seconds and node id."""
    entries = [(cpu, name) for name, cpu in durations["tests"].items()]
    entries += [(cpu, f"{name} (fixture)") for name, cpu in durations["fixtures"].items()]
    return "\n".join(f"{cpu:7.1f} s  {name}" for cpu, name in sorted(entries, reverse=True)[:count])


def report(result: ModuleRun, totals: dict[str, int], failed: list[str]) -> None:
    """Print a process's output whole, add its counts to ``totals`` and its name to ``failed`` if it failed."""
    print(f"==== {result.name} ({result.wall:.0f} s, {result.cpu:.0f} s CPU, exit {result.code})", flush=True)
    print(result.output.rstrip(), flush=True)
    lines = [line for line in result.output.strip().splitlines() if COUNTS.search(line) and " in " in line]
    for number, word in COUNTS.findall(lines[-1] if lines else ""):
        word = "errors" if word.startswith("error") else word
        totals[word] = totals.get(word, 0) + int(number)
    if result.code not in (0, 5):  # 5: every test deselected by the options given
        failed.append(result.name)


def bytecode_cache(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` for the test processes: where it forbids bytecode files (``PYTHONDONTWRITEBYTECODE``) and names
    no cache folder of its own (``PYTHONPYCACHEPREFIX``), the bytecode is written to the user's cache folder
    (``$XDG_CACHE_HOME/nhbridge/pycache``, ``~/.cache/...``) instead: nothing is written into the checkout, as the
    setting asks, and nhbridge's modules, the test modules (rewritten by pytest) and the libraries are compiled
    once instead of in every process that imports them. Python checks each file against its source (modification
    time and size) before using it."""
    if not environ.get("PYTHONDONTWRITEBYTECODE") or environ.get("PYTHONPYCACHEPREFIX"):
        return dict(environ)
    home = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    env = {k: v for k, v in environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(Path(home) / "nhbridge" / "pycache")
    return env


def stop(signum: int, _frame) -> None:
    """SIGTERM: stop the modules' processes and start no other, then leave through the cleanup (the run's
    folder is removed)."""
    STOPPING.set()
    with RUNNING_LOCK:
        for proc in RUNNING:
            proc.terminate()
    if SERVER is not None:
        SERVER.terminate()
    sys.exit(128 + signum)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="modules run at once")
    parser.add_argument("--extra-jobs", type=int, default=1,
                        help="processes started beyond --jobs while the CPUs sit idle (a running module waits); "
                             "0: never (default 1; always 0 with --record-durations)")
    parser.add_argument("--modules", action="append",
                        help="which modules of tests/ (a glob; repeated: any of them); default test_*.py")
    parser.add_argument("--record-durations", action="store_true",
                        help="measure the CPU of every module (each alone), test and shared fixture into "
                             "tests/durations.json")
    parser.add_argument("--no-batch", action="store_true", help="every module in its own process")
    parser.add_argument("--no-fork", action="store_true",
                        help="start every pytest process afresh (python -m pytest) instead of forking it from a "
                             "process that has imported the common libraries once (scripts/pytest_forks.py)")
    parser.add_argument("--no-bytecode-cache", action="store_true",
                        help="with PYTHONDONTWRITEBYTECODE set, compile every module in every process as it says, "
                             "instead of caching the bytecode in the user's cache folder")
    parser.add_argument("--slowest", type=int, metavar="N",
                        help="list the N costliest tests and shared fixtures of tests/durations.json; run nothing")
    args, extra = parser.parse_known_args()
    durations = load_durations()
    if args.slowest:
        print(slowest_recorded(durations, args.slowest))
        return 0
    signal.signal(signal.SIGTERM, stop)
    scratch = Path(tempfile.mkdtemp(prefix="nhbridge-tests-"))
    objects = scratch / "objects"
    objects.mkdir()
    fmus = scratch / "fmus"
    fmus.mkdir()
    records = scratch / "durations"
    records.mkdir()
    # Each pytest process is one lane: numerical libraries get one thread each instead of every process
    # spinning up a thread per core for tiny matrices.
    base = dict(os.environ) if args.no_bytecode_cache else bytecode_cache(dict(os.environ))
    env = {**base, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "NHBRIDGE_OBJECT_CACHE": str(objects), "NHBRIDGE_TEST_FMU_CACHE": str(fmus)}
    env["NHBRIDGE_TEST_DERIVATIONS"] = str(scratch / "derivations")  # equations shared likewise (tests/conftest.py)
    totals: dict[str, int] = {}
    failed: list[str] = []
    finished: list[ModuleRun] = []
    started = time.monotonic()
    # the fast subset is scheduled and batched by what each module costs in it, not by its whole recorded CPU
    costs = fast_costs(durations, slow_threshold()) if deselects_slow(extra) else durations["modules"]
    found = modules(args.modules or ["test_*.py"], costs)
    jobs = plan(found, costs, batch=not (args.record_durations or args.no_batch))
    global SERVER
    if not args.no_fork:
        SERVER, why_not = ForkServer.start(env)
        if why_not:
            print(f"{why_not}; every module's process is started afresh", flush=True)
    server_cpu = 0.0
    lanes = max(1, args.jobs)
    spare = 0 if args.record_durations else max(0, args.extra_jobs)  # recorded figures: no more processes than lanes
    idle = IdleCores()
    admitted = 0  # processes started beyond the lanes because the CPUs sat idle
    try:
        with ThreadPoolExecutor(max_workers=lanes + spare) as pool:
            pending = deque(jobs)
            running: set[Future] = set()
            while pending or running:
                while pending and (len(running) < lanes or (len(running) < lanes + spare and idle.spare())):
                    admitted += len(running) >= lanes
                    running.add(pool.submit(run_job, pending.popleft(), extra, env,
                                            records if args.record_durations else None))
                    idle.clear()
                done, running = wait(running, timeout=1.0, return_when=FIRST_COMPLETED)
                idle.update()
                for future in done:
                    for result in future.result():
                        report(result, totals, failed)
                        finished.append(result)
        if args.record_durations:
            write_durations(merge_durations(durations, finished, records))
            print(f"\nrecorded the CPU of {len(finished)} module(s) in {DURATIONS.relative_to(ROOT)}")
    finally:
        if SERVER is not None:
            server_cpu = SERVER.close()
        shutil.rmtree(scratch, ignore_errors=True)
    slowest = sorted(finished, key=lambda r: r.cpu, reverse=True)[:8]
    print("\nslowest processes: " + ", ".join(f"{r.name} {r.cpu:.0f} s CPU" for r in slowest))
    if failed:
        print("failed modules: " + " ".join(sorted(failed)))
    summary = f"{totals.get('passed', 0)} passed, {totals.get('failed', 0) + totals.get('errors', 0)} failed"
    if totals.get("skipped"):
        summary += f", {totals['skipped']} skipped"
    if totals.get("deselected"):
        summary += f", {totals['deselected']} deselected"
    cpu = sum(r.cpu for r in finished) + server_cpu
    forked = f" (forked from one that imported the common libraries in {server_cpu:.1f} s CPU)" if server_cpu else ""
    extra_note = f"; {admitted} started beyond {lanes} at once while the CPUs sat idle" if admitted else ""
    print(f"\n{len(found)} modules in {len(jobs)} processes{forked}{extra_note}, {time.monotonic() - started:.0f} s "
          f"wall, {cpu:.0f} s CPU")
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
