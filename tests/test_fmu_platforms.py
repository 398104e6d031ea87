"""FMUs with Linux x86-64, Windows x64 and Linux aarch64 binaries (``--platform``), every binary run.

Each platform's binary is run by the test host ``tests/fmi_host/host.c`` compiled for that platform (Windows x64
under wine, aarch64 under qemu-aarch64) and compared with the Linux x86-64 binary's run of the same FMU: Model
Exchange (fixed-step RK4, events at step ends) and Co-Simulation, FMI 2 and 3, a constrained system (the rolling
disk, leaning), a switched one (stick-slip belt friction), a linear FMU and a Rumoca-backend FMU. The x86-64
host's runs are checked against fmpy's. The runtime and the host compile with -Wall -Wextra -Wpedantic -Werror
for each compiler.
"""

from __future__ import annotations

import hashlib
import subprocess
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest

from bridge.cli import main
from bridge.fmu.build import build_fmu

from .platform_hosts import COMPILERS, WARNINGS, compile_host, missing, start_wineserver, stop_wineserver

ROOT = Path(__file__).resolve().parent.parent
PLATFORMS = ("linux64", "win64", "aarch64-linux")
FOLDERS = {2: ("linux64", "win64", "aarch64-linux"), 3: ("x86_64-linux", "x86_64-windows", "aarch64-linux")}
RTOL = 1e-12  # same code, same arithmetic (no FMA contraction): only the libm may differ in the last bits


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """The test host per platform; a platform whose toolchain or runner is missing maps to its skip reason."""
    folder = tmp_path_factory.mktemp("hosts")
    out: dict[str, object] = {}
    for platform in PLATFORMS:
        why = missing(platform)
        out[platform] = why if why else compile_host(platform, folder)
    if not isinstance(out["win64"], str):
        start_wineserver()  # one server for the module's wine runs, not one per run
    yield out
    if not isinstance(out["win64"], str):
        stop_wineserver()


def _require(hosts, platform: str):
    host = hosts[platform]
    if isinstance(host, str):
        pytest.skip(host)
    return host


def _need_cross() -> None:
    for platform in PLATFORMS[1:]:
        if missing(platform):
            pytest.skip(missing(platform))


# Slow (about 18 s of CPU, once per module): the FMUs cross-compiled for every platform (MinGW-w64, aarch64 gcc),
# whose binaries the tests run under wine and qemu; each platform is a distinct target.
@pytest.fixture(scope="module")
def fmus(tmp_path_factory, derivations):
    """name -> (FMU, items to set) of the FMUs with all three binaries; built once for the module."""
    _need_cross()
    folder = tmp_path_factory.mktemp("fmus")
    disk = folder / "disk2.fmu"  # the CLI, --platform repeated and as a comma list
    assert main(["fmu", str(ROOT / "examples" / "rolling_disk.toml"), "-o", str(disk), "-q",
                 "--platform", "linux64,win64", "--platform", "aarch64-linux"]) == 0
    belt = build_fmu(derivations.eom(ROOT / "examples" / "nonsmooth" / "belt_friction.toml", "lagrange"),
                     folder / "belt3.fmu", 3, platforms="all")  # the equations shared with test_fmu_events
    linear = folder / "linear2.fmu"  # the linear FMU about the pendulum's rest, started away from it
    assert main(["linearize", str(ROOT / "examples" / "simple_pendulum.toml"), "--set", "theta=0", "--set",
                 "der(theta)=0", "--fmu", str(linear), "--platform", "all", "-q"]) == 0
    out = {"disk2": (disk, {"theta": 0.3, "der(psi)": 1.5}), "belt3": (belt, {}),
           "linear2": (linear, {"theta": 0.5})}
    try:
        import rumoca  # noqa: F401
    except ImportError:
        return out
    rumoca_fmu = folder / "rumoca2.fmu"  # the Rumoca backend's C, compiled per platform the same way
    assert main(["fmu", str(ROOT / "examples" / "simple_pendulum.toml"), "--backend", "rumoca", "-o",
                 str(rumoca_fmu), "--platform", "all", "-q"]) == 0
    return out | {"rumoca2": (rumoca_fmu, {"theta": 1.0})}


def _fmu(fmus, name: str):
    if name not in fmus:
        pytest.skip("Rumoca is not installed (pip install --only-binary rumoca rumoca)")
    return fmus[name]


def _unpacked(fmu: Path, folder: Path) -> tuple[Path, object]:
    target = folder / fmu.stem
    if not target.exists():
        fmpy.extract(str(fmu), str(target))
    return target, fmpy.read_model_description(str(target), validate=False)  # Rumoca: no UnitDefinitions


def _arguments(md, sets: dict[str, float]) -> tuple[int, str, int, int, list[str]]:
    version = int(md.fmiVersion[0])
    token = md.guid if version == 2 else md.instantiationToken
    real = [v for v in md.modelVariables if v.type in ("Real", "Float64")]
    by_name = {v.name: v.valueReference for v in real}
    items = [f"{by_name[n]}={value!r}" for n, value in sets.items()] + [str(v.valueReference) for v in real]
    nz = md.numberOfEventIndicators or 0
    if version == 3:
        nz = len(md.eventIndicators)
    return version, token, len(md.derivatives), nz, items


def _run(host, fmu: Path, sets: dict[str, float], mode: str, folder: Path, stop: float = 2.0, step: float = 0.01):
    unzipdir, md = _unpacked(fmu, folder)
    version, token, nx, nz, items = _arguments(md, sets)
    platform = host.platform
    name = md.coSimulation.modelIdentifier
    library = unzipdir / "binaries" / FOLDERS[version][PLATFORMS.index(platform)] / (
        name + (".dll" if platform == "win64" else ".so"))
    assert library.is_file(), library
    out = folder / f"{fmu.stem}-{mode}-{platform}-{step:g}.csv"
    return host.run(version, mode, library, token, stop, step, out, nx, nz, items), md


def _scales(names: list[str], reference: np.ndarray) -> np.ndarray:
    """Each column's largest magnitude; for a constraint residual (zero up to the integration error, computed
    from the velocities) the velocities' largest magnitude."""
    scale = np.abs(reference).max(axis=0)
    velocities = [j for j, n in enumerate(names) if n.startswith("der(") and "," not in n]
    floor = scale[velocities].max() if velocities else scale.max()
    for j, n in enumerate(names):
        if n.startswith("residual["):
            scale[j] = max(scale[j], floor)
    return np.maximum(scale, 1e-300)


def _relative_difference(result: np.ndarray, reference: np.ndarray, md) -> np.ndarray:
    """|result - reference| relative to :func:`_scales` (normwise per column); the host's columns."""
    names = ["time"] + [v.name for v in md.modelVariables if v.type in ("Real", "Float64")]
    return np.abs(result - reference) / _scales(names, reference)


@pytest.mark.parametrize("name", ["disk2", "belt3", "linear2", "rumoca2"])
def test_binaries_in_standard_folders(fmus, name):
    """One binary per platform under the standard folder names, the sources beside them."""
    fmu, _ = _fmu(fmus, name)
    with zipfile.ZipFile(fmu) as zf:
        names = zf.namelist()
    version = 3 if name.endswith("3") else 2
    binaries = sorted(n.split("/")[1] for n in names if n.startswith("binaries/"))
    assert binaries == sorted(FOLDERS[version])
    assert any(n.endswith(".dll") for n in names) and any(n.startswith("sources/") and n.endswith(".c") for n in names)


@pytest.mark.parametrize("mode", ["cs", "me"])
@pytest.mark.parametrize("platform", ["win64", "aarch64-linux"])
@pytest.mark.parametrize("name", ["disk2", "belt3", "linear2", "rumoca2"])
def test_binary_runs_like_the_x86_64_binary(hosts, fmus, tmp_path_factory, name, platform, mode):
    """The platform's binary, run by the host of its platform, gives the x86-64 binary's numbers to 1e-12."""
    folder = tmp_path_factory.getbasetemp() / "runs"
    folder.mkdir(exist_ok=True)
    fmu, sets = _fmu(fmus, name)
    reference, md = _run(_require(hosts, "linux64"), fmu, sets, mode, folder)
    result, _ = _run(_require(hosts, platform), fmu, sets, mode, folder)
    assert result.shape == reference.shape and len(reference) == 201
    assert np.ptp(reference[:, 1:], axis=0).max() > 0.1  # the run moves: the comparison means something
    err = _relative_difference(result, reference, md)
    assert err.max() <= RTOL, f"{name} {mode} on {platform}: relative difference {err.max():.3g}"


@pytest.mark.parametrize("name", ["disk2", "belt3", "linear2"])
def test_x86_64_host_agrees_with_fmpy(hosts, fmus, tmp_path_factory, name):
    """The test host itself: its Co-Simulation run equals fmpy's (same steps), its RK4 Model Exchange run
    fmpy's CVode run to RK4's accuracy at a quarter of the step (not for the switched system, whose events the
    host takes at step ends)."""
    folder = tmp_path_factory.getbasetemp() / "fmpy"
    folder.mkdir(exist_ok=True)
    fmu, sets = fmus[name]
    host = _require(hosts, "linux64")
    unzipdir, md = _unpacked(fmu, folder)
    names = [v.name for v in md.modelVariables if v.type in ("Real", "Float64")]
    columns = [v.name for v in md.modelVariables if v.type in ("Real", "Float64") and v.causality != "independent"]
    index = [1 + names.index(c) for c in columns]
    cs, _ = _run(host, fmu, sets, "cs", folder)
    ref = fmpy.simulate_fmu(str(unzipdir), fmi_type="CoSimulation", stop_time=2.0, output_interval=0.01,
                            start_values=sets, output=columns)
    theirs = np.column_stack([ref[c] for c in columns])
    scale = _scales(columns, theirs)
    assert np.abs(ref["time"] - cs[:, 0]).max() < 1e-12
    assert (np.abs(cs[:, index] - theirs) / scale).max() <= 1e-12
    if name == "belt3":
        return
    me, _ = _run(host, fmu, sets, "me", folder, step=0.0025)  # RK4's error ~ step^4 below the bound
    cvode = fmpy.simulate_fmu(str(unzipdir), fmi_type="ModelExchange", stop_time=2.0, output_interval=0.0025,
                              start_values=sets, output=columns, relative_tolerance=1e-10)
    theirs = np.column_stack([cvode[c] for c in columns])
    assert (np.abs(me[:, index] - theirs) / scale).max() < 1e-6


@pytest.mark.parametrize("platform", PLATFORMS)
def test_sources_compile_pedantic(fmus, tmp_path, platform):
    """The runtime and the generated C (FMI 2 and 3, nonlinear and linear) compile with -Wall -Wextra
    -Wpedantic -Werror for each platform's compiler."""
    if missing(platform):
        pytest.skip(missing(platform))
    # A translation unit the same in several FMUs is compiled once: the same source preprocessed to the same text
    # by this compiler (the runtime's files of an FMI 2 and an FMI 3 FMU, which include no FMI header).
    compiled: set[str] = set()
    for name, (fmu, _) in fmus.items():
        if name == "rumoca2":  # Rumoca's generated C, not nhbridge's: compiled (warnings allowed) by the run tests
            continue
        target = tmp_path / name
        with zipfile.ZipFile(fmu) as zf:
            zf.extractall(target)
        sources = sorted((target / "sources").glob("*.c"))
        for source in sources:
            text = subprocess.run([COMPILERS[platform], "-std=c99", "-E", "-P", f"-I{target / 'sources'}", str(source)],
                                  capture_output=True).stdout  # what the compiler reads, without line markers
            unit = hashlib.sha256(source.read_bytes() + b"\0" + text).hexdigest()
            if unit in compiled:
                continue
            compiled.add(unit)
            proc = subprocess.run([COMPILERS[platform], "-std=c99", "-O2", *WARNINGS, f"-I{target / 'sources'}", "-c",
                                   str(source), "-o", str(tmp_path / f"{name}-{source.stem}.o")],
                                  capture_output=True, text=True)
            assert proc.returncode == 0, f"{name}/{source.name} with {COMPILERS[platform]}: {proc.stderr[:2000]}"


@pytest.mark.parametrize("name", ["disk2", "belt3"])
def test_all_platform_fmu_passes_fmpy_and_fmutool(fmus, name):
    """An FMU with all three binaries passes fmpy's validation and fmu-manipulation-toolbox's checker."""
    from fmpy.validation import validate_fmu

    fmu, _ = fmus[name]
    assert validate_fmu(str(fmu)) == []
    fmutool = pytest.importorskip("fmu_manipulation_toolbox")
    del fmutool
    proc = subprocess.run(["fmutool", "-input", str(fmu), "-check"], capture_output=True, text=True, timeout=300)
    text = proc.stdout + proc.stderr
    version = "3" if name.endswith("3") else "2"
    assert proc.returncode == 0, text
    assert f"compliant with FMI-{version}.0" in text and f"No semantic error against the FMI-{version}" in text, text


def _only_gcc_on_path(tmp_path: Path, monkeypatch) -> None:
    """PATH with the native compiler only: no cross compilers."""
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "cc").symlink_to(shutil.which("gcc") or shutil.which("cc"))
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.delenv("CC", raising=False)


@pytest.mark.parametrize("platform, package", [("win64", "gcc-mingw-w64-x86-64"),
                                               ("aarch64-linux", "gcc-aarch64-linux-gnu libc6-dev-arm64-cross"),
                                               ("all", "gcc-mingw-w64-x86-64")])
def test_missing_cross_compiler_is_bad_input(tmp_path, monkeypatch, capsys, platform, package):
    """No cross compiler: exit 2 before anything is derived or written, naming the Debian package."""
    _only_gcc_on_path(tmp_path, monkeypatch)
    out = tmp_path / "out" / "disk.fmu"
    assert main(["fmu", str(ROOT / "examples" / "rolling_disk.toml"), "-o", str(out), "--platform", platform]) == 2
    err = capsys.readouterr().err
    assert package in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()
    lin = tmp_path / "out" / "lin.fmu"
    json = tmp_path / "out" / "lin.json"
    assert main(["linearize", str(ROOT / "examples" / "simple_pendulum.toml"), "--set", "theta=0", "--set",
                 "der(theta)=0", "--fmu", str(lin), "--json", str(json), "--platform", platform]) == 2
    assert package in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_missing_cross_compiler_in_validate_crosscheck_ssp(tmp_path, monkeypatch, capsys):
    """validate, crosscheck and ssp pass --platform to the same check: exit 2, the package named, nothing written."""
    _only_gcc_on_path(tmp_path, monkeypatch)
    out = tmp_path / "out"
    pendulum = str(ROOT / "examples" / "simple_pendulum.toml")
    commands = [["validate", pendulum, "--runs", "fmu", "--json", str(out / "v.json"), "--platform", "win64"],
                ["crosscheck", pendulum, "-o", str(out), "--platform", "win64"],
                ["ssp", str(ROOT / "examples" / "cosim" / "dc_motor_drive.toml"), "-o", str(out / "d.ssp"),
                 "--platform", "win64"]]
    for command in commands:
        assert main(command) == 2, command
        err = capsys.readouterr().err
        assert "gcc-mingw-w64-x86-64" in err and "Traceback" not in err, (command, err)
        assert not out.exists(), command


def _members(data: bytes) -> list[str]:
    import io

    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return zf.namelist()


def test_ssp_and_crosscheck_fmus_carry_the_platforms(tmp_path):
    """ssp's FMUs carry the binaries asked for; crosscheck's the host's and those asked for."""
    _need_cross()
    ssp = tmp_path / "drive.ssp"
    assert main(["ssp", str(ROOT / "examples" / "cosim" / "dc_motor_drive.toml"), "-o", str(ssp), "-q",
                 "--platform", "win64"]) == 0
    with zipfile.ZipFile(ssp) as zf:
        inner = {n: _members(zf.read(n)) for n in zf.namelist() if n.endswith(".fmu")}
    assert len(inner) == 2
    for name, members in inner.items():
        binaries = [m for m in members if m.startswith("binaries/")]
        assert binaries == [f"binaries/win64/{Path(name).stem}.dll"], (name, members)
    assert main(["crosscheck", str(ROOT / "examples" / "simple_pendulum.toml"), "-o", str(tmp_path / "cc"),
                 "--fmi-type", "cs", "--platform", "aarch64-linux", "-q"]) == 0
    (fmu,) = (tmp_path / "cc").rglob("SimplePendulum.fmu")
    with zipfile.ZipFile(fmu) as zf:
        assert sorted(n for n in zf.namelist() if n.startswith("binaries/")) == [
            "binaries/aarch64-linux/SimplePendulum.so", "binaries/linux64/SimplePendulum.so"]
    assert "linux64, aarch64-linux binaries" in (fmu.parent / "ReadMe.md").read_text()


def test_unknown_platform_is_bad_input(tmp_path, capsys):
    out = tmp_path / "x.fmu"
    assert main(["fmu", str(ROOT / "examples" / "rolling_disk.toml"), "-o", str(out), "--platform", "win32"]) == 2
    err = capsys.readouterr().err
    assert "unknown platform 'win32'" in err and "aarch64-linux" in err and not out.exists()
