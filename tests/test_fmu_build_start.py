"""The runtime of a native FMU compiles while the system is loaded and derived (bridge/fmu/build.py RuntimeBuild):
a failed derivation or Ctrl-C stops the compilers, leaves no temporary folder and no half-written object, and the
FMU built with the runtime started early is the FMU built without."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import pytest

import bridge
from bridge.commandline import EXIT_INPUT, EXIT_INTERRUPTED
from bridge.fmu.build import RuntimeBuild, build_fmu, start_runtime, toolchains
from bridge.tools.objects import CACHE_ENV, ObjectCache

ROOT = Path(__file__).resolve().parent.parent
BICYCLE = ROOT / "examples" / "engineering" / "bicycle.toml"


def session_processes(sid: int) -> list[str]:
    """The commands of the live processes of session ``sid`` (zombies left out)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(name)
    return found


def child_processes() -> list[int]:
    """The live child processes of this process."""
    children = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            children += [int(p) for p in (task / "children").read_text().split()]
        except OSError:
            continue
    return [p for p in children if Path(f"/proc/{p}").exists()
            and Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]


def cache_is_whole(folder: Path) -> bool:
    """No temporary file in the object cache and every entry's digest matches its object."""
    if not folder.exists():
        return True
    cache, probe = ObjectCache(folder), folder.parent / "probe.o"
    files = [f for f in folder.rglob("*") if f.is_file()]
    return all(f.suffix == ".o" for f in files) and all(cache.load(f.stem, probe) for f in files)


def nhbridge(args: list[str], tmp: Path, cache: Path, **popen) -> subprocess.Popen:
    env = {**os.environ, "TMPDIR": str(tmp), CACHE_ENV: str(cache)}
    return subprocess.Popen([sys.executable, "-m", "bridge.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="needs /proc")
def test_failed_derivation_stops_the_runtime_build(tmp_path):
    """The runtime starts compiling before the derivation; a method that does not apply exits 2 with its message,
    and no compiler, temporary file, FMU or half-written cache entry is left."""
    tmp, cache = tmp_path / "tmp", tmp_path / "objects"
    tmp.mkdir()
    proc = nhbridge(["fmu", str(ROOT / "examples" / "simple_pendulum.toml"), "--method", "chaplygin", "-o",
                     str(tmp_path / "x.fmu")], tmp, cache, start_new_session=True)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == EXIT_INPUT, err
    assert "method 'chaplygin' does not apply" in err and "Traceback" not in err
    assert session_processes(proc.pid) == []
    assert not list(tmp.iterdir()) and not (tmp_path / "x.fmu").exists()
    assert cache_is_whole(cache)


@pytest.mark.skipif(not Path("/proc/self/task").exists() or os.name != "posix", reason="needs /proc and signals")
def test_interrupt_stops_the_compilers(tmp_path):
    """SIGINT to the command alone (not its process group) while the runtime compiles: it exits 130, and no
    compiler of the build outlives it (they run in process groups of their own)."""
    tmp, cache = tmp_path / "tmp", tmp_path / "objects"
    tmp.mkdir()
    def interruptible():  # a shell's background job inherits SIGINT ignored, and Python then leaves it ignored
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    proc = nhbridge(["fmu", str(BICYCLE), "-o", str(tmp_path / "b.fmu")], tmp, cache, start_new_session=True,
                    preexec_fn=interruptible)
    deadline = time.monotonic() + 120
    while "cc1" not in session_processes(proc.pid) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    assert proc.poll() is None, "the build ended before a compiler was seen"
    os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == EXIT_INTERRUPTED, err
    assert "interrupted" in err and "Traceback" not in err
    assert session_processes(proc.pid) == []
    assert not list(tmp.iterdir()) and not (tmp_path / "b.fmu").exists()
    assert cache_is_whole(cache)


def test_runtime_build_closed_by_an_error_leaves_nothing(tmp_path, monkeypatch):
    """An error inside the block of a started runtime build (a failed derivation) stops its compilers and removes
    its folder and objects."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "objects"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    with pytest.raises(RuntimeError, match="derivation failed"), start_runtime(2) as runtime:
        assert runtime.folder.is_dir() and runtime.folder.parent == scratch
        raise RuntimeError("derivation failed")
    assert not list(scratch.iterdir())
    if Path("/proc/self/task").exists():
        assert child_processes() == []
    assert cache_is_whole(tmp_path / "objects")


def test_runtime_started_early_gives_the_same_fmu(tmp_path, monkeypatch):
    """build_fmu with the runtime started before the derivation writes the FMU build_fmu writes alone, byte for
    byte, for FMI 2 and 3 (the second build links the first one's cached objects: the same keys, so the same
    sources and flags); a runtime build of another version is refused and cleaned up."""
    from bridge.errors import ExportError

    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "objects"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    for version in (2, 3):
        with start_runtime(version) as runtime:
            eom = bridge.derive(bridge.load_system(ROOT / "examples" / "rolling_disk.toml"), "lagrange")
            early = build_fmu(eom, tmp_path / f"early{version}.fmu", version, runtime=runtime)
        alone = build_fmu(eom, tmp_path / f"alone{version}.fmu", version)
        with zipfile.ZipFile(early) as a, zipfile.ZipFile(alone) as b:
            assert a.namelist() == b.namelist()
            assert all(a.read(n) == b.read(n) for n in a.namelist())
    with pytest.raises(ExportError, match="does not fit"):
        build_fmu(eom, tmp_path / "x.fmu", 2, runtime=RuntimeBuild(3, toolchains()))
    assert not list(scratch.iterdir())
