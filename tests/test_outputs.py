"""Whole outputs and clean exits (issue 11): folders swapped in as a whole, leftovers of killed runs removed.

Real processes are killed: a Modelica package export and a cross-check export are SIGKILLed in the middle (also
between the two renames of the fallback swap), ``nhbridge fmu`` and ``nhbridge validate`` are stopped with
SIGTERM and SIGKILL while they work; the leftovers are counted before and after the next run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import bridge
from bridge.atomic import atomic_folder, recover_folder, sweep
from bridge.modelica.export import write_package

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
PENDULUM = EXAMPLES / "simple_pendulum.toml"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def start(script: str, env: dict | None = None) -> subprocess.Popen:
    """A Python process running ``script`` (it prints READY when it reached the point to be killed at)."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)


def wait_for_ready(proc: subprocess.Popen) -> None:
    line = proc.stdout.readline()
    assert line.strip() == "READY", (line, proc.stderr.read() if proc.poll() is not None else "")


@pytest.fixture(scope="module")
def eoms():
    return [bridge.derive(bridge.load_system(EXAMPLES / n), "lagrange") for n in ("simple_pendulum.toml",
                                                                                   "skate.toml")]


# -- folders swapped in as a whole -----------------------------------------------------------------------------
def test_a_package_export_killed_mid_way_leaves_the_old_package_whole(eoms, tmp_path):
    target = write_package(eoms[:1], tmp_path, "Pkg")
    before = snapshot(target)
    proc = start(f"""
        import sys, time
        import bridge
        import bridge.modelica.export as export
        real, written = export.write_text, []
        def slow(path, text):
            real(path, text)
            written.append(path)
            if len(written) == 2:
                print("READY", flush=True)
                time.sleep(60)
        export.write_text = slow
        eoms = [bridge.derive(bridge.load_system(f"examples/{{n}}.toml"), "lagrange")
                for n in ("simple_pendulum", "skate")]
        export.write_package(eoms, {str(tmp_path)!r}, "Pkg")
    """)
    wait_for_ready(proc)
    proc.kill()
    proc.wait()
    assert snapshot(target) == before  # two files of the new export were written, none of them is visible
    assert len(hidden(tmp_path)) == 1  # the staging folder of the killed process
    after = write_package(eoms, tmp_path, "Pkg")  # the next export removes it
    assert sorted(snapshot(after)) == sorted([f"{e.system.name}.mo" for e in eoms] + ["package.mo", "package.order"])
    assert hidden(tmp_path) == []


def test_a_swap_killed_between_its_two_renames_is_repaired_by_the_next_run(eoms, tmp_path):
    """Where the file system has no atomic exchange, the old folder is renamed away first; a kill right then
    leaves no folder at all, and the next run (any writer of that folder) puts the old one back."""
    target = write_package(eoms[:1], tmp_path, "Pkg")
    before = snapshot(target)
    proc = start(f"""
        import os, signal
        import bridge, bridge.atomic as atomic
        from bridge.modelica.export import write_package
        atomic._exchange = lambda a, b: False
        real = os.rename
        def rename(src, dst):
            real(src, dst)
            if str(dst).endswith(".old"):
                os.kill(os.getpid(), signal.SIGKILL)
        os.rename = rename
        write_package([bridge.derive(bridge.load_system("examples/skate.toml"), "lagrange")], {str(tmp_path)!r}, "Pkg")
    """)
    proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    assert not target.exists() and any(n.endswith(".old") for n in hidden(tmp_path))
    recover_folder(target)
    assert snapshot(target) == before and hidden(tmp_path) == []
    write_package(eoms, tmp_path, "Pkg")
    assert f"{eoms[1].system.name}.mo" in snapshot(target) and hidden(tmp_path) == []


def test_a_crosscheck_folder_killed_between_its_renames_comes_back(tmp_path):
    from bridge.validation import crosscheck as xc

    first = xc.export_crosscheck(PENDULUM, tmp_path, 2, ("me",))[0]
    before = snapshot(first)
    scratch = tmp_path / "scratch"  # the killed child's temporary folders stay in the test's own folder
    scratch.mkdir()
    proc = start(f"""
        import os, signal, tempfile
        tempfile.tempdir = {str(scratch)!r}
        import bridge.atomic as atomic
        from bridge.validation import crosscheck as xc
        atomic._exchange = lambda a, b: False
        real = os.rename
        def rename(src, dst):
            real(src, dst)
            if str(dst).endswith(".old"):
                os.kill(os.getpid(), signal.SIGKILL)
        os.rename = rename
        xc.export_crosscheck({str(PENDULUM)!r}, {str(tmp_path)!r}, 2, ("me",))
    """)
    proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr.read()
    assert not first.exists()  # killed between "old folder away" and "new folder in"
    again = xc.export_crosscheck(PENDULUM, tmp_path, 2, ("me",))[0]  # the next run repairs, then writes
    assert again == first and sorted(snapshot(again)) == sorted(before)
    assert hidden(first.parent) == []


def test_atomic_folder_keeps_the_old_folder_on_failure(tmp_path):
    target = tmp_path / "out"
    with atomic_folder(target) as staging:
        (staging / "a.txt").write_text("one")
    with pytest.raises(RuntimeError), atomic_folder(target) as staging:
        (staging / "a.txt").write_text("two")
        raise RuntimeError("failed while writing")
    assert snapshot(target) == {"a.txt": b"one"} and hidden(tmp_path) == []


# -- SIGTERM and SIGKILL ---------------------------------------------------------------------------------------
def nhbridge(*args: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "bridge.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def leftovers(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("nhbridge-"))


def wait_for_build(proc: subprocess.Popen, tmp: Path) -> None:
    """Until the command compiles (its nhbridge-fmu-* folder exists inside its own temporary folder)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if list(tmp.glob(f"nhbridge-{proc.pid}-*/nhbridge-fmu-*")):
            return
        time.sleep(0.01)
    raise AssertionError(f"the build never started: {proc.communicate()}")


@pytest.fixture
def tmpdir_env(tmp_path) -> tuple[Path, dict]:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    return tmp, {**os.environ, "TMPDIR": str(tmp)}


def test_sigterm_during_an_fmu_build_leaves_nothing_behind(tmpdir_env, tmp_path):
    tmp, env = tmpdir_env
    out = tmp_path / "out" / "p.fmu"
    proc = nhbridge("fmu", str(PENDULUM), "-o", str(out), env=env)
    wait_for_build(proc, tmp)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert leftovers(tmp) == [] and not out.exists()
    assert not out.parent.exists() or hidden(out.parent) == []


def test_leftovers_of_a_sigkilled_run_are_removed_by_the_next_run(tmpdir_env, tmp_path):
    tmp, env = tmpdir_env
    out = tmp_path / "out" / "p.fmu"
    proc = nhbridge("fmu", str(PENDULUM), "-o", str(out), env=env)
    wait_for_build(proc, tmp)
    proc.kill()
    proc.wait()
    assert leftovers(tmp) and all(f"-{proc.pid}-" in n for n in leftovers(tmp))  # SIGKILL: nothing could clean up
    # a file half-written by atomic_file when its process was killed, beside the same output
    writer = start(f"""
        import time
        from bridge.atomic import atomic_file
        with atomic_file({str(out)!r}) as tmp:
            tmp.write_bytes(b"half an FMU")
            print("READY", flush=True)
            time.sleep(60)
    """, env=env)
    wait_for_ready(writer)
    writer.kill()
    writer.wait()
    assert [n for n in hidden(out.parent) if f".{writer.pid}-" in n and n.endswith(".tmp")]
    again = nhbridge("fmu", str(PENDULUM), "-o", str(out), env=env)
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert leftovers(tmp) == [] and hidden(out.parent) == [] and out.is_file()


def test_sigterm_runs_the_finally_blocks_of_a_writer(tmpdir_env, tmp_path):
    tmp, env = tmpdir_env
    out = tmp_path / "o.txt"
    writer = start(f"""
        import time
        from bridge.atomic import atomic_file, guard_process
        guard_process()
        with atomic_file({str(out)!r}) as tmp:
            tmp.write_bytes(b"half")
            print("READY", flush=True)
            time.sleep(60)
    """, env=env)
    wait_for_ready(writer)
    assert len(hidden(tmp_path)) == 1 and len(leftovers(tmp)) == 1
    writer.send_signal(signal.SIGTERM)
    writer.wait(timeout=30)
    assert hidden(tmp_path) == [] and leftovers(tmp) == [] and not out.exists()


def test_validate_stopped_by_sigterm_reports_the_finished_runs(tmpdir_env):
    tmp, env = tmpdir_env
    proc = nhbridge("validate", str(PENDULUM), "--runs", "methods,fmu", "--fmi-version", "2", "--stop-time", "1",
                    "--progress", env=env)
    seen = ""
    while "native-lagrange" not in seen:  # the first run finished
        line = proc.stderr.readline()
        assert line, f"no progress line: {seen}"
        seen += line
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "native-lagrange" in out and "interrupted" in out + err and "partial" in err
    assert leftovers(tmp) == []


def test_sweep_keeps_the_files_of_live_processes(tmp_path):
    live = tmp_path / f".x.txt.{os.getpid()}-abc.tmp"
    dead = tmp_path / ".x.txt.999999999-abc.tmp"
    live.write_text("in use")
    dead.write_text("left over")
    assert sweep(tmp_path, "x.txt") == [dead]
    assert live.exists() and not dead.exists()


def test_an_interrupt_altered_by_compiled_code_is_still_an_interrupt():
    """SIGTERM or Ctrl-C raised inside symengine's callback into sympy comes back as e.g. AttributeError with the
    interrupt as its context (seen in CI: a traceback and exit 1 instead of the partial report and 130)."""
    from bridge.atomic import Terminated, interrupt_pending

    try:
        try:
            raise Terminated("terminated (SIGTERM)")
        except Terminated:
            raise AttributeError("'Integer' object has no attribute 'as_base_exp'")  # noqa: B904
    except AttributeError as exc:
        altered = exc
    assert interrupt_pending(altered)
    assert not interrupt_pending(AttributeError("an ordinary error"))
