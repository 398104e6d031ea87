"""The C runtime's file lists (fmu/__init__.py): complete, used by every build, and files of a reviewable size."""

from __future__ import annotations

import re
import runpy
import zipfile
from pathlib import Path

import pytest

from bridge.fmu import runtime

ROOT = Path(__file__).parent.parent
FMU_DIR = ROOT / "fmu"
#: the longest file of the runtime (lines), so that each stays one readable section
MAX_LINES = 800


def _listed_c_files() -> list[str]:
    return [*runtime.CORE_SOURCES, *runtime.FMI_SOURCES[2], *runtime.FMI_SOURCES[3], *runtime.LINEAR_SOURCES]


def test_every_runtime_file_is_listed_once():
    """Each C file and header of fmu/ is in exactly one list, and each listed file exists."""
    listed = _listed_c_files()
    assert len(listed) == len(set(listed)), listed
    assert sorted(listed) == sorted(p.name for p in FMU_DIR.glob("*.c"))
    assert sorted(runtime.HEADERS) == sorted(p.name for p in FMU_DIR.glob("*.h"))
    assert runtime.runtime_sources(2)[-1] == "fmi2_runtime.c" and "fmi3_clocks.c" in runtime.runtime_sources(3)


def test_runtime_files_stay_small():
    """No file of the runtime is longer than MAX_LINES: the core is cut along its sections."""
    sizes = {p.name: len(p.read_text().splitlines()) for p in [*FMU_DIR.glob("*.c"), *FMU_DIR.glob("*.h")]}
    assert {name: n for name, n in sizes.items() if n > MAX_LINES} == {}
    assert len(sizes) >= 20  # the glob found the runtime


def test_internal_helpers_stay_out_of_the_public_header():
    """nhb_core.h (the interface to the FMI layers) declares none of the helpers of nhb_internal.h."""
    declared = re.compile(r"^[a-z][\w ]*?\**\b(nhb_\w+)\(", re.M)  # a declaration at the start of a line
    internal = set(declared.findall((FMU_DIR / "nhb_internal.h").read_text()))
    public = set(declared.findall((FMU_DIR / "nhb_core.h").read_text()))
    assert len(internal) >= 20 and len(public) >= 20 and not internal & public
    for layer in ("fmi2_runtime.c", "fmi3_runtime.c", "fmi3_clocks.c"):
        assert '#include "nhb_internal.h"' not in (FMU_DIR / layer).read_text()


def test_shell_and_harness_read_the_same_lists():
    """fmu/__init__.py run as a script (tests/build_test_fmu.sh) prints the lists the builder uses."""
    import subprocess
    import sys

    for version in (2, 3):
        out = subprocess.run([sys.executable, str(FMU_DIR / "__init__.py"), "sources", str(version)],
                             capture_output=True, text=True, check=True).stdout.split()
        assert tuple(out) == runtime.runtime_sources(version)
    out = subprocess.run([sys.executable, str(FMU_DIR / "__init__.py"), "headers"], capture_output=True, text=True,
                         check=True).stdout.split()
    assert tuple(out) == runtime.HEADERS
    assert runpy.run_path(str(FMU_DIR / "__init__.py"))["CORE_SOURCES"] == runtime.CORE_SOURCES


@pytest.mark.parametrize("version", [2, 3])
def test_source_fmu_ships_and_declares_the_listed_files(built_fmu, version):
    """A built FMU's sources/ holds model.c, model_data.c, the listed C files and headers (nothing else of fmu/), and
    its modelDescription.xml (FMI 2) or buildDescription.xml (FMI 3) names the generated and listed C files in
    order."""
    pytest.importorskip("fmpy")
    fmu = built_fmu.build(ROOT / "examples" / "simple_pendulum.toml", "lagrange", version)
    with zipfile.ZipFile(fmu) as zf:
        names = {n.removeprefix("sources/") for n in zf.namelist() if n.startswith("sources/")}
        text = zf.read("modelDescription.xml" if version == 2 else "sources/buildDescription.xml").decode()
    fmi_headers = {p.name for p in (FMU_DIR / "include" / f"fmi{version}").glob("*.h")}
    expected = {"model.c", "model_data.c", *runtime.runtime_sources(version), *runtime.HEADERS, *fmi_headers}
    assert names - {"buildDescription.xml"} == expected
    declared = re.findall(r'<(?:Source)?File name="([^"]+)"', text)
    files = ["model.c", "model_data.c", *runtime.runtime_sources(version)]
    assert declared == files * (2 if version == 2 else 1)  # FMI 2: ModelExchange and CoSimulation


def test_runtime_follows_clang_format():
    """fmu/*.c and fmu/*.h are formatted with the repository's .clang-format (when clang-format is installed)."""
    import shutil
    import subprocess

    tool = shutil.which("clang-format")
    if tool is None:
        pytest.skip("clang-format is not installed (Debian: apt-get install clang-format)")
    files = sorted(str(p) for p in [*FMU_DIR.glob("*.c"), *FMU_DIR.glob("*.h")])
    proc = subprocess.run([tool, "--dry-run", "-Werror", "--style=file", *files], capture_output=True, text=True,
                          cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[:3000]
