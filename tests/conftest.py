"""Fixtures shared by the test modules (the two Modelica compilers, each a skip with its install command where it
is missing) and the markers put on tests from what they do and what they cost.

Markers (registered in pyproject.toml):

- ``compilers``: the test runs Rumoca, pymoca or omc (it asks for the ``rumoca``/``pymoca`` fixture, is named
  after the compiler, or its module drives them itself: ``COMPILER_MODULES``);
- ``fmu``: the test's module compiles FMUs (``FMU_MODULES``);
- ``sanitizer``: C code under AddressSanitizer/UBSan;
- ``slow``: the test costs more than ``SLOW_CPU_SECONDS`` of CPU, as recorded in ``tests/durations.json``,
  its own or that of a module- or session-scoped fixture it uses (so ``-m "not slow"`` does not simply move
  an expensive fixture to the next test that asks for it).

``built_fmu`` (session scope) builds an FMU of a system file, a method and an FMI version once per test run:
under ``scripts/run_tests.py`` the FMUs are shared by every module process of the run (``$NHBRIDGE_TEST_FMU_CACHE``),
under a plain pytest run by the tests of that run.

``derivations`` (session scope) is the same for equations of motion: ``derivations.eom(path, "maggi")`` derives a system
file by a method once per run (``$NHBRIDGE_TEST_DERIVATIONS`` under scripts/run_tests.py) and hands every later
caller, in any module process, an unpickled copy of its own.

``tests/durations.json`` is written by ``python3 scripts/run_tests.py --record-durations``: with
``NHBRIDGE_RECORD_DURATIONS`` set to a file name, this plugin measures the CPU (this process and the
processes it waited for: compilers, child Pythons) of each test's setup, call and teardown and of each shared
fixture, and writes them there when the session ends.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import pickle
import re
import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
DURATIONS = TESTS / "durations.json"
SLOW_CPU_SECONDS = 1.0  # the fast subset (-m "not slow") is what is left: see CONTRIBUTING.md
RECORD_ENV = "NHBRIDGE_RECORD_DURATIONS"
FMU_CACHE_ENV = "NHBRIDGE_TEST_FMU_CACHE"
DERIVATION_CACHE_ENV = "NHBRIDGE_TEST_DERIVATIONS"

# Modules whose tests drive Rumoca, pymoca or omc without asking for the fixtures below.
COMPILER_MODULES = {"test_compiler_defects", "test_cosim", "test_diodes", "test_forms", "test_friction",
                    "test_linear_export", "test_modelica", "test_msl_flanges", "test_msl_habits", "test_pymoca",
                    "test_rumoca_linear_states", "test_switched_modelica", "test_validation"}
# Modules that compile FMUs with gcc (most of their tests do, or share a module fixture that does).
FMU_MODULES = {"test_api", "test_archives", "test_codegen_numbers", "test_control", "test_cosim", "test_crosscheck",
               "test_fmu", "test_fmu_events", "test_fmu_friction_bounds", "test_fmu_jacobian", "test_fmu_platforms",
               "test_fmu_repartition", "test_fmu_runtime", "test_fmu_sanitizers", "test_fmu_sources",
               "test_fmu_start_values", "test_linear_export", "test_no_compiler", "test_reduced_implicit",
               "test_validation", "test_wheel"}
SANITIZER_MODULES = {"test_fmu_sanitizers"}
# Tests elsewhere named after the compiler they run (test_rumoca_backend_pendulum, test_openmodelica_backend...).
COMPILER_NAMES = re.compile(r"rumoca|pymoca|openmodelica|\bomc\b|_omc_")


# The install commands are imported where a fixture is used, not when pytest loads this file: bridge.tools.pymoca
# loads sympy and scipy, which a module that needs neither (test_layout, test_docs ...) would otherwise pay for.
@pytest.fixture
def rumoca():
    """The rumoca module; skip (with the install command) where it is missing."""
    from bridge.tools.rumoca import RUMOCA_MISSING

    return pytest.importorskip("rumoca", reason=RUMOCA_MISSING)


@pytest.fixture
def pymoca():
    """The pymoca module; skip (with the install command) where pymoca or casadi is missing."""
    from bridge.tools.pymoca import PYMOCA_MISSING

    pytest.importorskip("casadi", reason=PYMOCA_MISSING)
    return pytest.importorskip("pymoca", reason=PYMOCA_MISSING)


# -- FMUs built once per run ------------------------------------------------------------------------------------
def source_digest(source: Path | str, *parts: object) -> str:
    """The cache key (hex digest) of a system file (its path and text; "<string>" for a text) and ``parts``."""
    text = source.read_text(encoding="utf-8") if isinstance(source, Path) else source
    where = f"{source.resolve()}" if isinstance(source, Path) else "<string>"
    return hashlib.sha256(json.dumps([where, text, *parts]).encode()).hexdigest()[:32]


def make_once(target: Path, make: Callable[[], None]) -> None:
    """Run ``make()`` (which writes ``target`` atomically) unless ``target`` exists; processes that ask at once
    wait on a lock file beside it for the first to finish."""
    with target.with_suffix(".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not target.is_file():
            make()


class FmuCache:
    """FMUs of (system, method, FMI version, build options), each built once in ``folder`` and then reused.

    The key is the SHA-256 of the system file's text (and its path: a file may name tables beside it), the
    method, the split, the FMI version, the Jacobian option, the platforms and ``$CC``. Within one test run
    the generated sources are a function of these, so keying by them skips what sharing is for: the
    derivation and the code generation, not only the compilation (whose objects ``$NHBRIDGE_OBJECT_CACHE``
    already shares). Processes building the same FMU at once wait on a lock file; the FMU is written
    atomically (``build_fmu``), so a reader never sees a half-written one.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)

    def key(self, source: Path | str, method: str, fmi_version: int, independent: Sequence[str] | None,
            jacobian: bool | str | None, platforms: str | None) -> str:
        """The cache key of one FMU (hex digest)."""
        return source_digest(source, method, fmi_version, list(independent or ()), jacobian, platforms,
                             os.environ.get("CC", ""))

    def build(self, source: Path | str, method: str = "lagrange", fmi_version: int = 2, *,
              independent: Sequence[str] | None = None, jacobian: bool | str | None = "auto",
              platforms: str | None = None, copy_to: Path | None = None) -> Path:
        """The FMU of ``source`` (a system file, or a system file's text) by ``method``; built on first use.

        The returned file is shared: a test that changes it, or needs its own file name (an external FMU's
        run ids carry it), passes ``copy_to`` and gets a copy there.
        """
        import bridge
        from bridge.fmu.build import build_fmu

        fmu = self.folder / f"{self.key(source, method, fmi_version, independent, jacobian, platforms)}.fmu"

        def make() -> None:
            system = bridge.load_system(source) if isinstance(source, Path) else bridge.parse_system(source)
            eom = bridge.derive(system, method, independent=independent)
            build_fmu(eom, fmu, fmi_version, jacobian=jacobian, platforms=platforms)

        make_once(fmu, make)
        if copy_to is None:
            return fmu
        shutil.copyfile(fmu, copy_to)
        return copy_to


@pytest.fixture(scope="session")
def built_fmu(tmp_path_factory) -> FmuCache:
    """The run's FMU cache (``FmuCache``): ``built_fmu.build(path, "maggi", 3)``. Under scripts/run_tests.py it
    is the run's folder, shared by all module processes; else a folder of this pytest session."""
    shared = os.environ.get(FMU_CACHE_ENV)
    return FmuCache(Path(shared) if shared else tmp_path_factory.getbasetemp() / "fmu-cache")


# -- equations of motion derived once per run ----------------------------------------------------------------------
@functools.cache
def bridge_source_hash() -> str:
    """SHA-256 of every Python file of the ``bridge`` package (path and text): a derivation cached under one
    source tree is never handed to a run of another (an edit between two runs sharing a folder)."""
    import bridge

    package = Path(bridge.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(f"{path.relative_to(package)}\0".encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


class DerivationCache:
    """Equations of motion of (system file, method, options), each derived once in ``folder`` and then reused.

    The key is the SHA-256 of the system file's text and path (a file may name tables beside it), the method,
    the options of :func:`bridge.derive` and the hash of the ``bridge`` source tree. The first caller derives (so
    a test of the derivation still runs it at least once per run); the equations are stored with pickle (written
    atomically, processes deriving the same key at once wait on a lock file) and every caller gets its own
    unpickled copy, so no test sees another's cached numeric model or parameter values.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self._pickles: dict[str, bytes] = {}  # read once per process

    def key(self, source: Path | str, method: str, options: dict) -> str:
        """The cache key of one derivation (hex digest)."""
        return source_digest(source, method, sorted((k, repr(v)) for k, v in options.items()), bridge_source_hash())

    def eom(self, source: Path | str, method: str = "lagrange", **options):
        """The equations of ``source`` (a system file, or a system file's text) by ``method``; derived on first
        use with ``bridge.derive(system, method, **options)``."""
        import bridge
        from bridge.atomic import atomic_file

        key = self.key(source, method, options)
        data = self._pickles.get(key)
        if data is None:
            stored = self.folder / f"{key}.pickle"

            def make() -> None:
                system = bridge.load_system(source) if isinstance(source, Path) else bridge.parse_system(source)
                eom = bridge.derive(system, method, **options)
                with atomic_file(stored) as partial:
                    partial.write_bytes(pickle.dumps(eom, protocol=pickle.HIGHEST_PROTOCOL))

            make_once(stored, make)
            data = self._pickles[key] = stored.read_bytes()
        return pickle.loads(data)

    def system(self, source: Path | str, method: str = "lagrange", **options):
        """The system of ``eom(source, method, **options)`` (loaded with the cached equations)."""
        return self.eom(source, method, **options).system


@pytest.fixture(scope="session")
def derivations(tmp_path_factory) -> DerivationCache:
    """The run's derivation cache (``DerivationCache``): ``derivations.eom(path, "maggi")``. Under
    scripts/run_tests.py it is the run's folder, shared by all module processes; else a folder of this pytest
    session."""
    shared = os.environ.get(DERIVATION_CACHE_ENV)
    return DerivationCache(Path(shared) if shared else tmp_path_factory.getbasetemp() / "derivation-cache")


# -- markers ----------------------------------------------------------------------------------------------------
def recorded_durations(path: Path = DURATIONS) -> dict:
    """The measured CPU seconds of ``tests/durations.json`` (``modules``, ``tests``, ``fixtures``); empty
    tables where the file is missing or unreadable (the markers then come from the module lists only)."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        data = {}
    return {key: data.get(key, {}) if isinstance(data, dict) else {} for key in ("modules", "tests", "fixtures")}


def relative(path: Path) -> str:
    """``path`` as pytest's node ids spell it from the repository (``tests/test_x.py``); absolute elsewhere."""
    try:
        return f"{Path(path).relative_to(TESTS.parent)}"
    except ValueError:
        return f"{path}"


def fixture_key(module: str, scope: str, name: str) -> str:
    """How a shared fixture is named in durations.json: per module for module scope, once for the session."""
    return f"session::{name}" if scope == "session" else f"{module}::{name}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    data = recorded_durations()
    slow_fixtures = {key for key, cpu in data["fixtures"].items() if cpu >= SLOW_CPU_SECONDS}
    for item in items:
        module = item.path.stem
        names = set(getattr(item, "fixturenames", ()))
        if module in COMPILER_MODULES or names & {"rumoca", "pymoca"} or COMPILER_NAMES.search(item.name):
            item.add_marker(pytest.mark.compilers)
        if module in FMU_MODULES:
            item.add_marker(pytest.mark.fmu)
        if module in SANITIZER_MODULES or "sanitizer" in item.name or item.name == "test_runtime_harness":
            item.add_marker(pytest.mark.sanitizer)
        uses_slow_fixture = any(key in slow_fixtures for name in names
                                for key in (f"{relative(item.path)}::{name}", f"session::{name}"))
        if data["tests"].get(item.nodeid, 0.0) >= SLOW_CPU_SECONDS or uses_slow_fixture:
            item.add_marker(pytest.mark.slow)


# -- recording CPU per test (scripts/run_tests.py --record-durations) ---------------------------------------------
def cpu_seconds() -> float:
    """User and system CPU of this process and of the child processes it has waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class DurationRecorder:
    """Measures the CPU of each test phase and of each shared fixture's setup; writes them at the end."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.tests: dict[str, float] = {}
        self.fixtures: dict[str, float] = {}
        self.shared_in_setup = 0.0  # CPU of the shared fixtures set up during the current test's setup

    @pytest.hookimpl(hookwrapper=True)
    def pytest_fixture_setup(self, fixturedef, request):
        start = cpu_seconds()
        yield
        if fixturedef.scope != "function":
            spent = cpu_seconds() - start
            module = relative(request.node.path) if fixturedef.scope == "module" else ""
            key = fixture_key(module, fixturedef.scope, fixturedef.argname)
            self.fixtures[key] = round(self.fixtures.get(key, 0.0) + spent, 2)
            self.shared_in_setup += spent

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.shared_in_setup = 0.0
        start = cpu_seconds()
        yield
        own = cpu_seconds() - start - self.shared_in_setup
        self.tests[item.nodeid] = round(self.tests.get(item.nodeid, 0.0) + own, 2)

    def pytest_sessionfinish(self, session):
        self.target.write_text(json.dumps({"tests": self.tests, "fixtures": self.fixtures}, indent=0))


def pytest_configure(config: pytest.Config) -> None:
    target = os.environ.get(RECORD_ENV)
    if target:
        config.pluginmanager.register(DurationRecorder(Path(target)), "nhbridge-duration-recorder")
