"""The wheel is complete: built from the sources (``pip wheel``, setuptools in an isolated build environment),
installed into a fresh virtual environment (no system site-packages, so neither the checkout nor an editable
install is visible), it runs ``nhbridge fmu``, ``validate``, ``cosim``, ``crosscheck`` and the pytest plugin from a
directory outside the checkout. The venv sees exactly the distributions the wheel declares (``dependencies`` and
the ``cosim`` extra, with theirs) and pytest: where this interpreter has them all, they are linked in from its
site-packages (a folder of links to those distributions alone, so an undeclared import still fails and ``pip
check`` still judges the declared versions); else pip installs them from the package index or its cache.
Deselect with ``-m "not wheel"``."""

from __future__ import annotations

import csv
import email
import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

import bridge

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

pytestmark = pytest.mark.wheel

ROOT = Path(__file__).parent.parent
SOURCES = ("pyproject.toml", "setup.py", "README.md", "bridge", "fmu", "modelica")  # what the wheel is built from
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "tests", "build", "*.egg-info")


def run(cmd: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)} -> {proc.returncode}\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    return proc


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the sources (the checkout gets no build/ or egg-info)."""
    base = tmp_path_factory.mktemp("wheel-build")
    src = base / "src"
    src.mkdir()
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=SKIP)
        else:
            shutil.copy(path, src / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(base / "dist"), str(src)], base,
        dict(os.environ))
    (whl,) = (base / "dist").glob("nhbridge-*.whl")
    return whl


WANTED = ("cosim",)  # the extras the venv gets, beside the wheel's dependencies and pytest


def requirement_closure(wheel: Path) -> list[importlib.metadata.Distribution] | None:
    """The distributions of this interpreter that the wheel needs (its ``Requires-Dist`` with the extras of
    ``WANTED``, and pytest), with everything they require in turn; None where one is missing here or its version
    does not satisfy a requirement (the venv then installs from the index)."""
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    with zipfile.ZipFile(wheel) as zf:
        metadata = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        requires = email.message_from_bytes(zf.read(metadata)).get_all("Requires-Dist") or []
    todo = [(Requirement(r), ("", *WANTED)) for r in requires] + [(Requirement("pytest"), ("",))]
    found: dict[str, importlib.metadata.Distribution] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    while todo:
        req, extras = todo.pop()
        if req.marker is not None and not any(req.marker.evaluate({"extra": e}) for e in extras):
            continue
        name = canonicalize_name(req.name)
        try:
            dist = found.get(name) or importlib.metadata.distribution(req.name)
        except importlib.metadata.PackageNotFoundError:
            return None
        if not req.specifier.contains(dist.version, prereleases=True) or dist.files is None:
            return None
        found[name] = dist
        key = (name, tuple(sorted(req.extras)))  # a distribution asked for with other extras needs more
        if key not in seen:
            seen.add(key)
            todo += [(Requirement(r), ("", *key[1])) for r in dist.requires or ()]
    return list(found.values())


def link_distributions(dists: list[importlib.metadata.Distribution], folder: Path) -> None:
    """Link the top-level files and folders of ``dists`` (their RECORD) into ``folder``: a site folder holding
    those distributions and nothing else."""
    folder.mkdir()
    for dist in dists:
        top = {f.parts[0] for f in dist.files if f.parts and f.parts[0] not in ("..", "__pycache__")}
        for name in top:
            source = Path(dist.locate_file(name))
            if source.exists() and not (folder / name).exists():
                (folder / name).symlink_to(source)


# Slow (a few seconds of CPU, once per module): a fresh virtual environment with the wheel installed is the check.
@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv with the wheel, its ``cosim`` extra (fmpy, Rumoca) and pytest: linked in from this
    interpreter's site-packages where it has them all, else installed by pip from the index."""
    base = tmp_path_factory.mktemp("wheel-venv")
    env_dir = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env_dir)], check=True, timeout=120)
    python = env_dir / "bin" / "python"
    dists = requirement_closure(wheel)
    if dists is None:
        run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
             "--only-binary", "rumoca", f"{wheel}[cosim]", "pytest"], base, dict(os.environ), timeout=900)
    else:
        link_distributions(dists, base / "dependencies")
        site = Path(run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], base,
                        {}).stdout.strip())
        (site / "dependencies.pth").write_text(f"{base / 'dependencies'}\n")
        run([sys.executable, "-m", "pip", "--python", str(python), "install", "--quiet", "--no-compile",
             "--no-deps", "--no-index", str(wheel)], base, dict(os.environ), timeout=300)
        run([sys.executable, "-m", "pip", "--python", str(python), "check"], base, dict(os.environ))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
    env |= {"PATH": f"{env_dir / 'bin'}{os.pathsep}{env.get('PATH', '')}", "VIRTUAL_ENV": str(env_dir),
            "MPLBACKEND": "Agg"}
    work = base / "work"  # outside the checkout
    work.mkdir()
    assert not work.resolve().is_relative_to(ROOT.resolve())
    yield {"python": str(python), "nhbridge": str(env_dir / "bin" / "nhbridge"), "env": env, "work": work,
           "site": env_dir}
    # about 0.6 GB in many small files: removed in the background (tens of seconds on a busy disk)
    subprocess.Popen(["rm", "-rf", str(env_dir)], start_new_session=True, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL)


def test_wheel_holds_every_module_and_data_file(wheel):
    """Every module of bridge/, the C runtime (fmu/ without its tests) and the Modelica library are in the wheel."""
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "bridge").rglob("*.py") if "__pycache__" not in p.parts}
    runtime = {"bridge/fmu/runtime/" + p.relative_to(ROOT / "fmu").as_posix() for p in (ROOT / "fmu").rglob("*")
               if p.is_file() and p.relative_to(ROOT / "fmu").parts[0] != "tests" and "__pycache__" not in p.parts}
    library = {"bridge/modelica/library/" + p.relative_to(ROOT / "modelica").as_posix()
               for p in (ROOT / "modelica").rglob("*") if p.is_file() and "__pycache__" not in p.parts}
    assert {"bridge/fmu/runtime/nhb_instance.c", "bridge/fmu/runtime/include/fmi3/fmi3Functions.h",
            "bridge/modelica/library/NonholonomicExamples/package.mo"} <= runtime | library
    assert sorted((modules | runtime | library) - names) == []
    assert not any("/tests/" in n or n.endswith((".so", ".fmu")) for n in names)
    assert wheel.stat().st_size < 2_000_000, wheel.stat().st_size  # sources only (about 0.3 MB)


def test_installed_package_is_the_wheel(venv):
    """The venv imports bridge, its C runtime and Modelica library from its own site-packages, not the checkout."""
    code = ("import bridge, importlib.resources as r; from bridge.fmu.build import RUNTIME; "
            "print(bridge.__file__); print(RUNTIME / 'nhb_instance.c'); "
            "print(r.files('bridge.modelica.library') / 'NonholonomicExamples' / 'package.mo')")
    out = run([venv["python"], "-c", code], venv["work"], venv["env"]).stdout.split()
    assert len(out) == 3
    for path in map(Path, out):
        assert path.is_file() and path.is_relative_to(venv["site"]) and not path.is_relative_to(ROOT)
    assert Path(out[1]).read_bytes() == (ROOT / "fmu" / "nhb_instance.c").read_bytes()


def test_fmu_from_the_wheel(venv):
    work = venv["work"] / "fmu"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "car.toml", work / "car.toml")
    out = run([venv["nhbridge"], "fmu", "car.toml", "--fmi-version", "3", "-o", "Car.fmu"], work, venv["env"]).stdout
    assert "wrote Car.fmu (FMI 3.0" in out
    fmu = work / "Car.fmu"
    assert validate_fmu(str(fmu)) == []
    with zipfile.ZipFile(fmu) as zf:
        assert {"binaries/x86_64-linux/SteeredCar.so", "sources/buildDescription.xml"} <= set(zf.namelist())
    # against the native simulation of this checkout's nhbridge
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "car.toml"), "lagrange")
    ref = bridge.simulate(eom, 2.0, interval=0.01)
    res = fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode", relative_tolerance=1e-10,
                            stop_time=2.0, output_interval=0.01, output=["x", "y", "phi"])
    for i, name in enumerate(["x", "y", "phi"]):
        sig = np.interp(ref.time, res["time"], res[name])
        assert np.abs(sig - ref.q[:, i]).max() <= 1e-6 * max(1.0, float(np.ptp(ref.q[:, i]))), name


def test_validate_from_the_wheel(venv):
    work = venv["work"] / "validate"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "simple_pendulum.toml", work / "pendulum.toml")
    proc = run([venv["nhbridge"], "validate", "pendulum.toml", "--runs", "methods,fmu", "--methods",
                "lagrange,maggi", "--fmu-methods", "lagrange", "--fmi-version", "2", "--json", "v.json", "--quiet"],
               work, venv["env"])
    assert "1 system(s): 4 run(s) passed, 0 failed, 0 error(s)" in proc.stdout
    runs = {r["id"]: r["status"] for r in json.loads((work / "v.json").read_text())["systems"][0]["runs"]}
    assert {k: runs[k] for k in ("native-lagrange", "native-maggi", "fmu2-me", "fmu2-cs")} == dict.fromkeys(
        ("native-lagrange", "native-maggi", "fmu2-me", "fmu2-cs"), "passed")


def test_cosim_from_the_wheel(venv):
    """The scenario of examples/cosim (the pulsator FMU built by nhbridge, two motors compiled by Rumoca) against
    the monolithic model, natively simulated by this checkout."""
    work = venv["work"] / "cosim"
    work.mkdir()
    for name in ("hydropulsator_motors.toml", "pulsator.toml", "Motor.mo"):
        shutil.copy(ROOT / "examples" / "cosim" / name, work / name)
    out = run([venv["nhbridge"], "cosim", "hydropulsator_motors.toml", "--stop-time", "1", "-o", "run.csv"], work,
              venv["env"]).stdout
    assert "wrote run.csv" in out
    with open(work / "run.csv", newline="") as f:
        rows = list(csv.reader(f))
    header, data = rows[0], np.array(rows[1:], dtype=float)
    assert header[0] == "time" and "pulsator.w_r" in header and "motor_r.tau" in header
    assert abs(data[-1, 0] - 1.0) < 1e-12 and np.isfinite(data).all()
    mono = bridge.simulate(bridge.derive(bridge.load_system(ROOT / "examples" / "cosim" /
                                                            "hydropulsator_monolithic.toml"), "lagrange"), 1.0,
                           interval=0.01)
    w_r = np.interp(mono.time, data[:, 0], data[:, header.index("pulsator.w_r")])
    ref = mono.columns()["der(phi)"]
    assert np.abs(w_r - ref).max() <= 0.02 * np.ptp(ref), np.abs(w_r - ref).max()


def test_crosscheck_from_the_wheel(venv):
    work = venv["work"] / "crosscheck"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "simple_pendulum.toml", work / "pendulum.toml")
    out = run([venv["nhbridge"], "crosscheck", "pendulum.toml", "--fmi-type", "me", "-o", "xc"], work,
              venv["env"]).stdout
    (folder,) = [p for p in (work / "xc" / "fmus").rglob("SimplePendulum") if p.is_dir()]
    assert f"wrote {folder.resolve()} (" in out
    assert {"SimplePendulum.fmu", "SimplePendulum_ref.csv", "SimplePendulum_ref.opt", "ReadMe.md"} <= {
        p.name for p in folder.iterdir()}
    check = run([venv["nhbridge"], "crosscheck", str(folder), "-o", "results"], work, venv["env"]).stdout
    assert "PASSED" in check


def test_pytest_plugin_from_the_wheel(venv):
    work = venv["work"] / "plugin"
    (work / "systems").mkdir(parents=True)
    shutil.copy(ROOT / "examples" / "simple_pendulum.toml", work / "systems" / "pendulum.toml")
    proc = run([venv["python"], "-m", "pytest", "-v", "-rs", "-p", "no:cacheprovider", "--nhbridge-validate=systems",
                "--nhbridge-runs=methods,fmu"], work, venv["env"])
    assert "plugins: " in proc.stdout and "nhbridge-" in proc.stdout  # registered through the wheel's entry point
    status = dict(line.split("::")[-1].split()[:2] for line in proc.stdout.splitlines()
                  if line.startswith("systems/") and "::" in line)
    runs = ("native-lagrange", "native-nielsen", "native-maggi", "native-appell", "fmu2-me", "fmu2-cs", "fmu3-me",
            "fmu3-cs")
    assert {k: status.get(k) for k in runs} == dict.fromkeys(runs, "PASSED"), proc.stdout[-3000:]
    assert "failed" not in proc.stdout.splitlines()[-1] and "error" not in proc.stdout.splitlines()[-1]
