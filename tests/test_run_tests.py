"""The test runner (scripts/run_tests.py) and its fork server (scripts/pytest_forks.py).

The fork server is started with a light preload (``json``) so that the module stays cheap; what is checked is
what the runner relies on: every pytest run gets a process that no earlier run has touched (a crash, a changed
environment or a module global do not carry over), the exit code and the output are pytest's own, and the CPU
reported is the child's.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
SCRIPTS = ROOT / "scripts"


def load(name: str):
    """A module of scripts/ (not a package), imported from its file."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


LEAVES_STATE = '''
import os
import json

def test_leaves_state():
    os.environ["NHBRIDGE_FORK_PROBE"] = "set by an earlier run"
    json.PROBE = "set by an earlier run"  # a module global of a module the server imported
'''
SEES_STATE = '''
import os
import json

def test_sees_no_state():
    assert "NHBRIDGE_FORK_PROBE" not in os.environ
    assert not hasattr(json, "PROBE")
    assert os.environ["NHBRIDGE_GIVEN"] == "per run"
'''
CRASHES = '''
import ctypes

def test_crashes():
    ctypes.string_at(0)  # reads address 0: SIGSEGV
'''
FAILS = '''
def test_fails():
    assert 1 + 1 == 3
'''


@pytest.fixture(scope="module")
def server():
    forks = load("pytest_forks")
    server, why_not = forks.ForkServer.start(dict(os.environ), preload=("json",))
    assert server is not None, why_not
    yield server
    assert server.close() >= 0.0


def run(server, tmp_path: Path, name: str, text: str, env: dict[str, str] | None = None) -> tuple[int, float, str]:
    test = tmp_path / f"test_{name}.py"
    test.write_text(text)
    output = tmp_path / f"{name}.txt"
    argv = ["-q", "-p", "no:cacheprovider", "-p", "no:benchmark", "-p", "no:xdist", "-p", "no:hypothesispytest",
            "--rootdir", str(tmp_path), str(test)]
    code, cpu = server.run(argv, {**os.environ, **(env or {})}, output)
    return code, cpu, output.read_text()


def test_each_run_is_a_fresh_process(server, tmp_path):
    """A run's environment and module globals do not reach the next run; a crash ends only its own run."""
    code, cpu, out = run(server, tmp_path, "leaves", LEAVES_STATE)
    assert (code, "1 passed" in out) == (0, True), out
    assert cpu > 0.0
    code, _, out = run(server, tmp_path, "crashes", CRASHES)
    assert code == -11, out  # killed by SIGSEGV, as a process of its own would be
    assert "Segmentation fault" in out  # pytest's faulthandler wrote into the run's output
    code, _, out = run(server, tmp_path, "sees", SEES_STATE, {"NHBRIDGE_GIVEN": "per run"})
    assert (code, "1 passed" in out) == (0, True), out
    assert "NHBRIDGE_FORK_PROBE" not in os.environ  # nor this process


def test_exit_codes_are_pytest_s(server, tmp_path):
    code, _, out = run(server, tmp_path, "fails", FAILS)
    assert code == 1 and "1 failed" in out, out
    code, _, out = run(server, tmp_path, "fails", FAILS + "\n", {"PYTEST_ADDOPTS": "-k nothing_matches"})
    assert code == 5 and "1 deselected" in out, out


def test_runs_at_once_from_threads(server, tmp_path):
    """The runner's lanes ask from several threads: every answer reaches its asker."""
    from concurrent.futures import ThreadPoolExecutor

    for k in range(6):
        (tmp_path / f"{k}").mkdir()
    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(run, server, tmp_path / f"{k}", f"t{k}", FAILS if k % 2 else SEES_STATE,
                               {"NHBRIDGE_GIVEN": "per run"}) for k in range(6)]
        codes = [future.result()[0] for future in futures]
    assert codes == [0, 1, 0, 1, 0, 1]


def test_fast_subset_is_recognised_and_costed():
    runner = load("run_tests")
    assert runner.deselects_slow(["-m", "not slow"]) and runner.deselects_slow(["-mnot slow and not fmu"])
    assert not runner.deselects_slow(["-m", "slow"]) and not runner.deselects_slow(["-k", "not slow"])
    durations = {"modules": {"test_a": 10.0, "test_b": 2.0},
                 "tests": {"tests/test_a.py::test_big": 6.0, "tests/test_a.py::test_small": 0.5},
                 "fixtures": {"tests/test_b.py::shared": 1.5}}
    # test_a without its 6 s test, test_b without its 1.5 s fixture (and never under 1 s)
    assert runner.fast_costs(durations, 1.0) == {"test_a": 4.0, "test_b": 1.0}


def test_idle_cores_come_from_two_samples_of_proc_stat(tmp_path):
    """The extra process's condition: a core's worth of idle time in each of two intervals, computed from the
    kernel's counters (idle and iowait against all), on a made-up /proc/stat of a 2-core machine."""
    runner = load("run_tests")
    stat = tmp_path / "stat"

    def sample(busy: int, idle: int, iowait: int = 0) -> None:  # cumulative jiffies, as the kernel counts them
        stat.write_text(f"cpu  {busy} 0 0 {idle} {iowait} 0 0 0 0 0\ncpu0 1 0 0 1 0 0 0 0 0 0\nintr 5\n")

    assert runner.cpu_times("cpu  100 20 30 400 50 0 0 0 0 0\n") == (450.0, 600.0)
    assert runner.cpu_times("intr 1\n") is None
    sample(0, 0)
    idle = runner.IdleCores(stat, cores=2)
    sample(150, 50)  # one interval: a quarter of the time idle, half a core
    idle.update()
    assert idle.history[-1] == 0.5 and not idle.spare()
    sample(250, 100, iowait=50)  # half idle or waiting for I/O: one core
    idle.update()
    assert idle.history[-1] == 1.0 and not idle.spare()  # the first interval had only half a core
    sample(350, 200, iowait=50)
    idle.update()
    assert idle.spare() and not idle.spare(threshold=1.5)
    idle.clear()  # a process started: two fresh intervals are needed again
    assert not idle.spare()
    stat.unlink()  # no /proc/stat: never an extra process
    idle.update()
    idle.update()
    assert not idle.spare()


def test_stopping_the_server_stops_its_runs(tmp_path):
    """SIGTERM to the server (the runner's stop) ends the runs under way; their askers get an answer."""
    import threading

    forks = load("pytest_forks")
    server, why_not = forks.ForkServer.start(dict(os.environ), preload=("json",))
    assert server is not None, why_not
    started = tmp_path / "started"
    answers: list[tuple[int, float, str]] = []
    asker = threading.Thread(target=lambda: answers.append(run(server, tmp_path, "sleeps", f'''
import pathlib, time

def test_sleeps():
    pathlib.Path({str(started)!r}).write_text("running")
    time.sleep(600)
''')))
    asker.start()
    for _ in range(6000):  # the child has started its test
        if started.exists():
            break
        threading.Event().wait(0.05)
    assert started.exists()
    server.terminate()
    asker.join(120)
    assert not asker.is_alive()
    code, _, _ = answers[0]
    assert code == -15  # ended by SIGTERM, as a process of its own would be
    server.close()


def test_bytecode_goes_to_the_cache_folder_where_the_checkout_gets_none(tmp_path):
    runner = load("run_tests")
    forbidden = {"PYTHONDONTWRITEBYTECODE": "1", "XDG_CACHE_HOME": str(tmp_path), "PATH": "/bin"}
    assert runner.bytecode_cache(forbidden) == {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/bin",
                                                "PYTHONPYCACHEPREFIX": str(tmp_path / "nhbridge" / "pycache")}
    # a folder of the user's own, or bytecode allowed: left as it is
    own = {**forbidden, "PYTHONPYCACHEPREFIX": str(tmp_path / "mine")}
    assert runner.bytecode_cache(own) == own
    assert runner.bytecode_cache({"PATH": "/bin"}) == {"PATH": "/bin"}
