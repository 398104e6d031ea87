"""Source FMUs: every native FMU carries its complete C sources and says how to build them (FMI 2: ``<SourceFiles>``
in ModelExchange and CoSimulation; FMI 3: ``sources/buildDescription.xml``), so that fmpy's own build (``fmpy
compile``: CMake, not nhbridge's compiler call) rebuilds the binary from ``sources/`` alone, with the same results."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import bridge

fmpy = pytest.importorskip("fmpy")
from fmpy.model_description import read_build_description, read_model_description  # noqa: E402
from fmpy.validation import validate_fmu  # noqa: E402

ROOT = Path(__file__).parent.parent
EXAMPLE = ROOT / "examples" / "car.toml"  # two nonholonomic constraints and an input F
STOP = 2.0
# a time-varying input, so that the input path of the rebuilt binary is compared too
SIGNALS = ["x", "y", "phi", "der(x)", "der(y)", "der(phi)", "lambda[1]", "lambda[2]", "speed", "kinetic_energy"]
INPUT = np.array([(0.0, 50.0), (0.8, 120.0), (1.5, -30.0), (STOP, 10.0)], dtype=[("time", float), ("F", float)])


@pytest.fixture(scope="module")
def fmus(built_fmu):
    """The car's lagrange FMUs from the run's FMU cache (test_fmu builds the same ones)."""
    return {v: built_fmu.build(EXAMPLE, "lagrange", v) for v in (2, 3)}


def declared_sources(fmu: Path, version: int) -> dict[str, list[str]]:
    """The C files the FMU says to compile, read from its XML directly: per interface (FMI 2) or build file (FMI 3)."""
    from lxml import etree

    with zipfile.ZipFile(fmu) as zf:
        if version == 2:
            root = etree.fromstring(zf.read("modelDescription.xml"))
            return {el.tag: [f.get("name") for f in el.findall("SourceFiles/File")]
                    for el in root if el.tag in ("ModelExchange", "CoSimulation")}
        root = etree.fromstring(zf.read("sources/buildDescription.xml"))
        return {"buildDescription": [f.get("name") for f in root.iter("SourceFile")]}


@pytest.mark.parametrize("version", [2, 3])
def test_sources_are_complete_and_declared(fmus, version):
    fmu = fmus[version]
    with zipfile.ZipFile(fmu) as zf:
        names = zf.namelist()
        sources = {n.removeprefix("sources/"): zf.read(n).decode() for n in names if n.startswith("sources/")}
    c_files = sorted(n for n in sources if n.endswith(".c"))
    declared = declared_sources(fmu, version)
    assert set(declared) == ({"ModelExchange", "CoSimulation"} if version == 2 else {"buildDescription"})
    for files in declared.values():
        assert sorted(files) == c_files  # every C file, nothing that is not there
    assert "model.c" in c_files and f"fmi{version}_runtime.c" in c_files
    # every quoted include of every source file is in sources/ (flat): nothing comes from the nhbridge install
    included = {inc for text in sources.values() for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', text, re.M)}
    assert included and included <= set(sources), included - set(sources)
    assert validate_fmu(str(fmu)) == []  # fmpy's validation (FMI 3: the build description against its schema too)
    configs = read_model_description(str(fmu)).buildConfigurations  # what fmpy's build reads
    assert len(configs) == 1 and sorted(configs[0].sourceFileSets[0].sourceFiles) == c_files
    if version == 3:
        (config,) = read_build_description(str(fmu), validate=True)
        assert config.modelIdentifier == "SteeredCar" and config.sourceFileSets[0].language == "C99"


def without_binaries(fmu: Path, target: Path) -> Path:
    with zipfile.ZipFile(fmu) as src, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if not info.filename.startswith("binaries/"):
                dst.writestr(info, src.read(info))
    return target


def simulate(fmu: Path, kind: str):
    kw = dict(solver="CVode", relative_tolerance=1e-10) if kind == "ModelExchange" else {}
    return fmpy.simulate_fmu(str(fmu), fmi_type=kind, stop_time=STOP, output_interval=0.01, input=INPUT,
                             output=SIGNALS, start_values={"c_d": 0.7}, **kw)


@pytest.mark.skipif(shutil.which("cmake") is None, reason="fmpy compile needs cmake (pip install cmake)")
@pytest.mark.parametrize("version", [2, 3])
def test_fmpy_compile_rebuilds_the_binary(fmus, version, tmp_path):
    """The binary removed, ``fmpy compile`` (CMake, Release) builds it again from sources/; ME and CS runs with a
    changed parameter and a time-varying input give the results of the FMU as nhbridge built it."""
    fmu = fmus[version]
    stripped = without_binaries(fmu, tmp_path / fmu.name)
    with zipfile.ZipFile(stripped) as zf:
        assert not any(n.startswith("binaries/") for n in zf.namelist())
    proc = subprocess.run([sys.executable, "-m", "fmpy.cli", "compile", str(stripped), "--all-warnings",
                           "--warning-as-error"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    platform = fmpy.platform if version == 2 else fmpy.platform_tuple
    with zipfile.ZipFile(stripped) as zf:
        assert f"binaries/{platform}/SteeredCar.so" in zf.namelist()
    for kind in ("ModelExchange", "CoSimulation"):
        ours, rebuilt = simulate(fmu, kind), simulate(stripped, kind)
        assert ours.dtype.names == rebuilt.dtype.names and set(ours.dtype.names) == {"time", *SIGNALS}
        assert len(ours) == len(rebuilt) > 100
        assert np.ptp(ours["der(phi)"]) > 0.1  # the run moves (a wrong input or parameter would not compare)
        for name in ours.dtype.names:
            # the same C built with other flags (CMake Release: -O3): equal up to rounding, in practice bit for bit
            scale = max(1.0, float(np.abs(ours[name]).max()))
            assert np.abs(rebuilt[name] - ours[name]).max() <= 1e-12 * scale, (kind, name)


def test_rumoca_fmu_declares_its_sources(tmp_path):
    """Rumoca's fmi2 FMU lists its self-contained C file; compiled from the declared files alone (fmpy compile
    refuses this FMU: Rumoca's modelDescription fails fmpy's validation), it gives the original's results."""
    pytest.importorskip("rumoca")
    from lxml import etree

    from bridge.backends.fmu import build_rumoca_fmu
    from bridge.fmu.build import compiler

    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "simple_pendulum.toml"), "lagrange")
    fmu = build_rumoca_fmu(eom, tmp_path / "SimplePendulum.fmu")
    with zipfile.ZipFile(fmu) as zf:
        root = etree.fromstring(zf.read("modelDescription.xml"))
        c_files = sorted(n.removeprefix("sources/") for n in zf.namelist() if n.startswith("sources/")
                         and n.endswith(".c"))
        rebuilt = tmp_path / "rebuilt"
        zf.extractall(rebuilt)
    declared = {el.tag: sorted(f.get("name") for f in el.findall("SourceFiles/File"))
                for el in root if el.tag in ("ModelExchange", "CoSimulation")}
    assert declared == {"ModelExchange": c_files, "CoSimulation": c_files} and c_files
    binary = rebuilt / "binaries" / "linux64" / "SimplePendulum.so"
    binary.unlink()
    subprocess.run([*compiler().split(), "-shared", "-fPIC", "-O2", "-o", str(binary),
                    *[str(rebuilt / "sources" / f) for f in declared["ModelExchange"]], "-lm"], check=True)
    kw = dict(validate=False, fmi_type="ModelExchange", solver="CVode", relative_tolerance=1e-10, stop_time=STOP,
              output_interval=0.01, output=["theta"])
    ours, again = fmpy.simulate_fmu(str(fmu), **kw), fmpy.simulate_fmu(str(rebuilt), **kw)
    assert np.ptp(ours["theta"]) > 0.1
    assert np.abs(again["theta"] - ours["theta"]).max() <= 1e-12


# -- the generated right-hand side in parts (bridge.codegen.c.cse_parts) ------------------------------------------
def _me_derivatives(fmu: Path, states: np.ndarray, folder: Path) -> np.ndarray:
    """getDerivatives of the FMU (FMI 2 Model Exchange) at each row of ``states``, t = 0."""
    from ctypes import c_double

    from fmpy import extract
    from fmpy.fmi2 import FMU2Model

    md = read_model_description(str(fmu))
    unzipped = extract(str(fmu), unzipdir=str(folder))
    model = FMU2Model(guid=md.guid, unzipDirectory=unzipped, modelIdentifier=md.modelExchange.modelIdentifier,
                      instanceName="parts")
    model.instantiate()
    model.setupExperiment(startTime=0.0)
    model.enterInitializationMode()
    model.exitInitializationMode()
    model.enterContinuousTimeMode()
    nx = len(md.derivatives)
    out = []
    for x in states:
        model.setContinuousStates((c_double * nx)(*x), nx)
        dx = (c_double * nx)()
        model.getDerivatives(dx, nx)
        out.append(list(dx))
    model.terminate()
    model.freeInstance()
    return np.array(out)


@pytest.mark.parametrize(("example", "method"), [("car", "lagrange"), ("rolling_disk", "maggi")])
def test_right_hand_side_in_parts_matches_the_native_one(example, method, tmp_path, monkeypatch):
    """With the part size lowered, nhb_rhs is split over part functions in several files (maggi: reading the
    auxiliary block Z); the derivatives at random states equal the native right-hand side's (symengine, no
    generated C) to 1e-12."""
    import bridge.codegen.c as codegen
    import bridge.fmu.model_c as model_c
    from bridge.fmu.build import build_fmu

    monkeypatch.setattr(codegen, "PART_STATEMENTS", 2)
    monkeypatch.setattr(model_c, "PARTS_PER_FILE", 2)
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / f"{example}.toml"), method)
    fmu = build_fmu(eom, tmp_path / f"parts_{method}.fmu", 2)
    with zipfile.ZipFile(fmu) as zf:
        parts = sorted(n.removeprefix("sources/") for n in zf.namelist() if n.startswith("sources/model_part"))
        model = zf.read("sources/model.c").decode()
    assert len(parts) >= 2 and "nhb_rhs_part1(" in model
    if method == "maggi":  # the re-partition's split-free dynamics are split too
        assert "nhb_split_dynamics_part1(" in model
    declared = declared_sources(fmu, 2)
    assert all(set(parts) <= set(files) for files in declared.values())
    native = eom.numeric
    nx = eom.system.n + len(eom.u)
    rng = np.random.default_rng(7)
    states = rng.uniform(-1.0, 1.0, (6, nx))
    got = _me_derivatives(fmu, states, tmp_path / "unzipped")
    want = np.array([native.rhs(0.0, x) for x in states])
    assert got.shape == want.shape
    assert np.abs(got - want).max() <= 1e-12 * max(1.0, np.abs(want).max())


DETERMINISM = """
import hashlib, sys
import bridge, bridge.codegen.c as codegen
from bridge.fmu.model_c import model_files
from bridge.fmu.plan import build_plan
codegen.PART_STATEMENTS = 4
eom = bridge.derive(bridge.load_system(sys.argv[1]), "maggi")
files = model_files(build_plan(eom, 2))
print(len(files), hashlib.sha256(repr(sorted(files.items())).encode()).hexdigest())
"""


def test_generated_c_is_the_same_in_every_process():
    """The same system gives the same C bytes in processes with different hash seeds (symengine's CSE included)."""
    import os

    out = []
    for seed in ("1", "2"):
        proc = subprocess.run([sys.executable, "-c", DETERMINISM, str(ROOT / "examples" / "rolling_disk.toml")],
                              capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed}, check=True)
        out.append(proc.stdout.split())
    assert out[0] == out[1] and int(out[0][0]) >= 2
