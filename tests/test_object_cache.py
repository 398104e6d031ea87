"""The object cache of the FMU builds (bridge/tools/objects.py): a second build of the same system links cached
objects, a corrupted entry is detected and compiled anew, concurrent builds leave valid entries, and the key
changes with the flags, the headers and the compiler's target."""

from __future__ import annotations

import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import fmpy
import numpy as np
import pytest

import bridge
from bridge.fmu.build import RUNTIME_SOURCES, build_fmu, compiler
from bridge.tools.objects import CACHE_ENV, ObjectCache, object_cache, object_key

ROOT = Path(__file__).resolve().parent.parent
SOURCES = 2 + len(RUNTIME_SOURCES[2])  # model.c, model_data.c and the runtime's C files of an FMI 2 FMU


@pytest.fixture(scope="module")
def eom():
    return bridge.derive(bridge.load_system(ROOT / "examples" / "simple_pendulum.toml"), "lagrange")


def entries(folder: Path) -> list[Path]:
    return sorted(folder.rglob("*.o"))


def binary(fmu: Path) -> bytes:
    with zipfile.ZipFile(fmu) as zf:
        return zf.read(next(n for n in zf.namelist() if n.startswith("binaries/") and n.endswith(".so")))


def final_state(fmu: Path) -> np.ndarray:
    result = fmpy.simulate_fmu(str(fmu), stop_time=1.0, output_interval=0.1)
    return np.array(result[-1].tolist())


def valid(folder: Path) -> bool:
    """Every entry's digest matches its object."""
    cache = ObjectCache(folder)
    probe = folder.parent / "probe.o"
    return all(cache.load(entry.stem, probe) for entry in entries(folder))


def test_second_build_hits_the_cache(eom, tmp_path, monkeypatch):
    folder = tmp_path / "objects"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    first = build_fmu(eom, tmp_path / "a.fmu", 2)
    stats = object_cache().stats
    assert stats["miss"] == SOURCES and stats["stored"] == SOURCES and stats["hit"] == 0
    assert len(entries(folder)) == SOURCES
    second = build_fmu(eom, tmp_path / "b.fmu", 2)
    assert stats["hit"] == SOURCES and stats["miss"] == SOURCES and stats["stored"] == SOURCES
    assert binary(first) == binary(second)  # linked from the same objects
    np.testing.assert_array_equal(final_state(first), final_state(second))
    # the runtime's objects serve another model of the same FMI version; only its model.c and values are compiled
    other = bridge.derive(bridge.load_system(ROOT / "examples" / "cartesian_pendulum.toml"), "lagrange")
    build_fmu(other, tmp_path / "c.fmu", 2)
    assert stats["miss"] == SOURCES + 2 and stats["hit"] == 2 * SOURCES - 2


def test_rebuild_after_changed_values_compiles_the_values_alone(eom, tmp_path, monkeypatch):
    """Parameter and start values are data of model_data.c: with other values only that file is compiled, and the
    FMU linked from the cached objects runs exactly as one compiled from scratch with those values."""
    folder = tmp_path / "objects"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    first = build_fmu(eom, tmp_path / "a.fmu", 2)
    text = (ROOT / "examples" / "simple_pendulum.toml").read_text(encoding="utf-8")
    changed = text.replace("value = 0.8,", "value = 1.3,").replace("start = 0.5,", "start = 0.2,")
    assert changed.count("1.3") == 1 and changed.count("start = 0.2,") == 1
    other = bridge.derive(bridge.parse_system(changed), "lagrange")
    stats = object_cache().stats
    rebuilt = build_fmu(other, tmp_path / "b.fmu", 2)
    assert stats["miss"] == SOURCES + 1 and stats["hit"] == SOURCES - 1  # model_data.c alone compiled again
    monkeypatch.setenv(CACHE_ENV, "off")
    scratch = build_fmu(other, tmp_path / "c.fmu", 2)
    np.testing.assert_array_equal(final_state(rebuilt), final_state(scratch))
    assert not np.array_equal(final_state(rebuilt), final_state(first))


def test_other_fmi_version_compiles_only_its_own_files(eom, tmp_path, monkeypatch):
    """model.c and the runtime files both versions share are compiled once for FMI 2 and FMI 3: the object's key
    hashes the headers a file includes, not every header of the folder (which holds the version's FMI headers);
    the FMI 3 build compiles its FMI 3 files and the names and variable table of model_data.c alone."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "objects"))
    build_fmu(eom, tmp_path / "a.fmu", 2)
    stats = object_cache().stats
    three = build_fmu(eom, tmp_path / "b.fmu", 3)
    own = set(RUNTIME_SOURCES[3]) - set(RUNTIME_SOURCES[2])
    shared = set(RUNTIME_SOURCES[3]) & set(RUNTIME_SOURCES[2])
    assert own and shared
    assert stats["miss"] == SOURCES + len(own) + 1 and stats["hit"] == len(shared) + 1  # + model_data.c, model.c
    monkeypatch.setenv(CACHE_ENV, "off")
    scratch = build_fmu(eom, tmp_path / "c.fmu", 3)
    np.testing.assert_array_equal(final_state(three), final_state(scratch))


def test_corrupt_entry_is_detected_and_rebuilt(eom, tmp_path, monkeypatch):
    folder = tmp_path / "objects"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    reference = final_state(build_fmu(eom, tmp_path / "a.fmu", 2))
    victim = max(entries(folder), key=lambda p: p.stat().st_size)
    data = bytearray(victim.read_bytes())
    data[-100] ^= 0xFF
    victim.write_bytes(bytes(data))
    truncated = min(entries(folder), key=lambda p: p.stat().st_size)
    truncated.write_bytes(truncated.read_bytes()[:10])
    stats = object_cache().stats
    stored = stats["stored"]
    rebuilt = build_fmu(eom, tmp_path / "b.fmu", 2)
    assert stats["corrupt"] == 2 and stats["stored"] == stored + 2
    assert valid(folder) and len(entries(folder)) == SOURCES
    np.testing.assert_array_equal(final_state(rebuilt), reference)


def test_concurrent_builds_leave_valid_entries(eom, tmp_path, monkeypatch):
    folder = tmp_path / "objects"
    monkeypatch.setenv(CACHE_ENV, str(folder))
    with ThreadPoolExecutor(max_workers=3) as pool:
        fmus = list(pool.map(lambda k: build_fmu(eom, tmp_path / f"f{k}.fmu", 2), range(3)))
    assert len(entries(folder)) == SOURCES and valid(folder)
    assert not list(folder.rglob("*.tmp"))  # no temporary file left behind
    states = [final_state(f) for f in fmus]
    for state in states[1:]:
        np.testing.assert_array_equal(state, states[0])


def test_cache_off(eom, tmp_path, monkeypatch):
    monkeypatch.setenv(CACHE_ENV, "off")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    build_fmu(eom, tmp_path / "a.fmu", 2)
    assert object_cache().folder is None and not (tmp_path / "xdg").exists()


def test_key_follows_flags_headers_and_target(tmp_path):
    cc = compiler()
    src = tmp_path / "unit.c"
    src.write_text('#include "unit.h"\ndouble f(double x) { return SCALE * x; }\n', encoding="utf-8")
    header = tmp_path / "unit.h"
    header.write_text("#define SCALE 2.0\n", encoding="utf-8")
    base = object_key(cc, src, ["-O2", "-fPIC"], [tmp_path])
    assert object_key(cc, src, ["-O2", "-fPIC"], [tmp_path]) == base
    assert object_key(cc, src, ["-O2", f"-I{tmp_path}", "-fPIC"], [tmp_path]) == base  # folders: by their headers
    assert object_key(cc, src, ["-O1", "-fPIC"], [tmp_path]) != base
    header.write_text("#define SCALE 3.0\n", encoding="utf-8")
    assert object_key(cc, src, ["-O2", "-fPIC"], [tmp_path]) != base
    base = object_key(cc, src, ["-O2", "-fPIC"], [tmp_path])
    (tmp_path / "unrelated.h").write_text("#define OTHER 1\n", encoding="utf-8")  # included by nothing
    assert object_key(cc, src, ["-O2", "-fPIC"], [tmp_path]) == base
    header.write_text('#include <nested.h>\n#define SCALE 3.0\n', encoding="utf-8")  # found in the folders
    (tmp_path / "nested.h").write_text("#define DEPTH 1\n", encoding="utf-8")
    nested = object_key(cc, src, ["-O2", "-fPIC"], [tmp_path])
    assert nested != base
    (tmp_path / "nested.h").write_text("#define DEPTH 2\n", encoding="utf-8")
    assert object_key(cc, src, ["-O2", "-fPIC"], [tmp_path]) != nested
    header.write_text('#define WHERE "unrelated.h"\n#include WHERE\n', encoding="utf-8")  # by a macro: every header
    by_macro = object_key(cc, src, ["-O2", "-fPIC"], [tmp_path])
    (tmp_path / "unrelated.h").write_text("#define OTHER 2\n", encoding="utf-8")
    assert object_key(cc, src, ["-O2", "-fPIC"], [tmp_path]) != by_macro
    from bridge.fmu.platforms import LINUX_AARCH64, WINDOWS_X86_64, compilers

    for p in (WINDOWS_X86_64, LINUX_AARCH64):
        try:
            cross = compilers([p])[p]
        except bridge.BridgeError:
            continue
        assert object_key(cross, src, ["-O2", *p.flags], [tmp_path]) != object_key(cc, src, ["-O2", *p.flags],
                                                                                     [tmp_path])


def test_large_generated_units_compile_at_O1(tmp_path):
    from bridge.fmu.runtime import COLD_SOURCES, runtime_sources

    from bridge.fmu.build import GENERATED_GCC_FLAGS, LARGE_UNIT_BYTES, RUNTIME, unit_level
    from bridge.tools.gcc import compiler, is_gcc

    small, large = tmp_path / "small.c", tmp_path / "model.c"
    small.write_text("int f(void) { return 1; }\n", encoding="utf-8")
    large.write_text("/*" + "x" * LARGE_UNIT_BYTES + "*/\n", encoding="utf-8")
    assert unit_level(small) == [] and unit_level(large) == ["-O1"]
    cc = compiler()
    gcc_flags = list(GENERATED_GCC_FLAGS) if is_gcc(cc) else []
    assert unit_level(small, cc) == gcc_flags and unit_level(large, cc) == ["-O1", *gcc_flags]
    hot = tmp_path / "nhb_linalg.c"  # a runtime file keeps its level whatever its size: -O2 on the hot path
    hot.write_bytes((RUNTIME / "nhb_linalg.c").read_bytes() + b"/*" + b"x" * LARGE_UNIT_BYTES + b"*/\n")
    assert unit_level(hot, cc) == []
    cold = tmp_path / "nhb_start.c"  # set-up code: -O1
    cold.write_bytes((RUNTIME / "nhb_start.c").read_bytes())
    assert unit_level(cold, cc) == ["-O1"]
    assert set(COLD_SOURCES) <= set(runtime_sources(2)) | set(runtime_sources(3))
    assert not {"nhb_linalg.c", "nhb_rk.c", "nhb_cosim.c", "nhb_split.c"} & set(COLD_SOURCES)


def test_failing_generation_stops_the_build_cleanly(tmp_path, monkeypatch):
    """The runtime compiles while the model's C is generated: a generation that fails cancels the waiting compiles,
    waits for the running ones, raises its own error and leaves no FMU and no temporary folder behind."""
    import tempfile

    from bridge.errors import ExportError
    from bridge.fmu.build import pack_source_fmu, toolchains

    monkeypatch.setenv(CACHE_ENV, "off")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))

    def generate():
        raise ExportError("the model's C could not be generated")

    with pytest.raises(ExportError, match="could not be generated"):
        pack_source_fmu(tmp_path / "x.fmu", "X", 2, generate, lambda files: b"", toolchains())
    assert not (tmp_path / "x.fmu").exists() and not list(scratch.iterdir())
