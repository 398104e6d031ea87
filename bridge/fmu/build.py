"""Native FMUs: generated C for one model plus the fixed runtime in ``fmu/``.

One :class:`~.plan.CModelPlan` (the equations, the :class:`~.layout.FmuLayout` of value references and
variable kinds, the GUID) is computed from the equations and drives both the generated C (``NHB_VARIABLES``)
and ``modelDescription.xml`` (FMI 2.0 or 3.0), so the two cannot drift. This module writes the FMU's files and
says what is compiled for which platform; the compiler runs in :mod:`bridge.tools.gcc` (every C file to an object,
concurrently and cached by content, :mod:`bridge.tools.objects`; the objects linked into the platform's library);
the runtime's files compile while the model's C is generated. The C is printed from symengine's joint CSE pass
over the mass matrix, forcing and kinematics (:mod:`bridge.codegen.symengine_c`); the mass-matrix system is
solved at run time by the runtime's LU with partial pivoting (``nhb_lu_solve``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from importlib import resources
from pathlib import Path

from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError
from ..tools.gcc import NO_COMPILER_HINT, compiler, is_gcc, shared_library_build
from ..tools.objects import CompileQueue, LibraryBuild, object_cache
from .code_cache import cached_model_files
from .model_description import build_description, model_description
from .plan import build_plan
from .platforms import Platform, compilers, parse_platforms
from .runtime import COLD_SOURCES, LINEAR_SOURCES, runtime_sources
from .runtime import HEADERS as RUNTIME_HEADERS

__all__ = ["NO_COMPILER_HINT", "RuntimeBuild", "build_fmu", "compile_binaries", "compiler", "output_path",
           "pack_folder", "pack_source_fmu", "start_runtime", "toolchains"]

# -- build ---------------------------------------------------------------------------------------------
RUNTIME = resources.files("bridge.fmu.runtime")  # the C runtime (top-level fmu/), shipped as package data
RUNTIME_SOURCES = {version: list(runtime_sources(version)) for version in (2, 3)}  # the runtime's file lists


def output_path(path: str | Path) -> Path:
    """Check the FMU's target path: it ends in .fmu and its folder exists or can be made.

    Parameters
    ----------
    path : str or Path
        The target.

    Returns
    -------
    Path
        The same path, its folder created.

    Raises
    ------
    ExportError
        Another suffix, or a folder that cannot be made.
    """
    path = Path(path)
    if path.suffix != ".fmu":
        raise ExportError(f"{path}: an FMU file must end in .fmu")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write here ({exc.strerror or exc}); choose a writable output path") from exc
    return path


#: a generated C file larger than this (bytes) compiles with -O1: gcc -O2 spends much longer on its long
#: straight-line functions (register allocation and scheduling over thousands of temporaries) and they run no
#: faster (benchmarks/fmu_scaling.py)
LARGE_UNIT_BYTES = 32 * 1024
#: gcc flags of every generated C file: no dead-store elimination. The generated code stores each value once
#: (CSE temporaries, matrix entries), so the passes find nothing to remove, and on the long straight-line
#: functions their alias walks are a third of gcc's time; the code gcc emits runs as fast
#: (docs/benchmarks/fmu_scaling.md)
GENERATED_GCC_FLAGS = ("-fno-tree-dse", "-fno-dse")
_RUNTIME_FILES = {name for names in RUNTIME_SOURCES.values() for name in names} | set(LINEAR_SOURCES)


def unit_level(source: Path, cc: str | None = None) -> list[str]:
    """Return the optimisation flags of ``source`` beyond the default -O2.

    A runtime file off the hot path (:data:`bridge.fmu.runtime.COLD_SOURCES`) compiles with ``-O1``, the
    runtime's other files with -O2. A generated file gets :data:`GENERATED_GCC_FLAGS` when ``cc`` is gcc (not
    clang, which has no such passes to turn off) and ``-O1`` when it is larger than :data:`LARGE_UNIT_BYTES`.

    Parameters
    ----------
    source : Path
        The C file.
    cc : str, optional
        The compiler command (None: the flags that suit any compiler).

    Returns
    -------
    list of str
        The extra flags.
    """
    if source.name in _RUNTIME_FILES:
        return ["-O1"] if source.name in COLD_SOURCES else []
    extra = list(GENERATED_GCC_FLAGS) if cc is not None and is_gcc(cc) else []
    return ["-O1", *extra] if source.stat().st_size > LARGE_UNIT_BYTES else extra


def toolchains(platforms: Iterable[str] | str | None = None) -> dict[Platform, str]:
    """Find the compiler of each platform named by ``platforms``.

    Call it before anything is derived or written.

    Parameters
    ----------
    platforms : str or iterable of str, optional
        Platform names (see :func:`~bridge.fmu.platforms.parse_platforms`; None: the host's).

    Returns
    -------
    dict of Platform to str
        Each platform's C compiler.

    Raises
    ------
    ExportError
        An unknown platform name.
    CompilerNotFoundError
        A compiler is missing; the message names the Debian packages of every missing cross compiler.
    """
    return compilers(parse_platforms(platforms))


def compile_binaries(folder: Path, name: str, sources: list[Path], flags: list[str], fmi_version: int,
                     tools: dict[Platform, str], what: str) -> list[Path]:
    """Compile one shared library ``binaries/<platform folder>/<name><suffix>`` in ``folder`` per platform.

    Parameters
    ----------
    folder : Path
        The FMU's folder.
    name : str
        The model identifier.
    sources : list of Path
        The C files.
    flags : list of str
        Extra compiler flags.
    fmi_version : int
        2 or 3 (the binaries' folder names differ).
    tools : dict of Platform to str
        Platform -> compiler (:func:`toolchains`); the platforms compile concurrently.
    what : str
        What is compiled, for error messages.

    Returns
    -------
    list of Path
        The libraries.
    """
    with CompileQueue(object_cache()) as queue:
        builds = start_binaries(queue, folder, name, flags, fmi_version, tools, what)
        for build in builds:
            build.add(sources)
        for build in builds:
            build.link()  # the first failure is raised
    return [build.binary for build in builds]


def start_binaries(queue: CompileQueue, folder: Path, name: str, flags: list[str], fmi_version: int,
                   tools: dict[Platform, str], what: str) -> list[LibraryBuild]:
    """Start one shared library per platform on ``queue`` (:func:`compile_binaries`; the sources queued later).

    Returns
    -------
    list of LibraryBuild
        One per platform of ``tools``, in order: queue the C files with ``add``, then ``link``.
    """
    def level(cc: str) -> Callable[[Path], list[str]]:
        return lambda source: unit_level(source, cc)

    return [shared_library_build(queue, cc, folder / "binaries" / p.folder(fmi_version) / f"{name}{p.suffix}", flags,
                                 what if p.is_host and len(tools) == 1 else f"{what} for {p.name}", p.flags, level(cc))
            for p, cc in tools.items()]


def pack_folder(path: Path, folder: Path) -> Path:
    """Zip modelDescription.xml, binaries/ and sources/ of ``folder`` into the FMU ``path``.

    The archive is written atomically and reproducibly (fixed member order, time stamps and modes:
    :func:`.archive.write_zip`); returns ``path``.
    """
    from .archive import write_zip

    members = [folder / "modelDescription.xml", *sorted(f for f in (folder / "binaries").rglob("*") if f.is_file()),
               *sorted((folder / "sources").iterdir())]
    write_zip(path, [(f.relative_to(folder).as_posix(), f) for f in members])
    return path


def build_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
              jacobian: bool | str | None = "auto", platforms: Iterable[str] | str | None = None,
              runtime: RuntimeBuild | None = None) -> Path:
    """Generate, compile and pack a source FMU with one binary per platform; written atomically.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations, by any method (a reduced method's FMU re-partitions at run time).
    path : str or Path
        The ``.fmu`` file.
    fmi_version : int
        2 or 3 (Model Exchange and Co-Simulation either way).
    jacobian : bool or "auto"
        Generate the Jacobian code for directional derivatives (``"auto"``: when the system has at most
        ``bridge.fmu.features.JACOBIAN_MAX_STATES`` states).
    platforms : str or iterable of str, optional
        Names of :data:`~bridge.fmu.platforms.PLATFORMS` (``linux64``, ``win64``, ``aarch64-linux``, a comma list
        or ``all``; default the host's).
    runtime : RuntimeBuild, optional
        The runtime already compiling for this version and these platforms (:func:`start_runtime`, called
        before the equations were derived); used up and closed here.

    Returns
    -------
    Path
        The FMU written.

    Raises
    ------
    ExportError
        A bad version or platform; :class:`~bridge.errors.CompilerNotFoundError` without a C compiler.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import bridge
    >>> text = '''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... '''
    >>> eom = bridge.derive(bridge.parse_system(text), "lagrange")
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     fmu = bridge.build_fmu(eom, Path(folder) / "Oscillator.fmu", fmi_version=3)
    ...     import zipfile
    ...     names = zipfile.ZipFile(fmu).namelist()
    >>> "modelDescription.xml" in names and "sources/model.c" in names
    True
    """
    if fmi_version not in (2, 3):
        raise ExportError(f"FMI version must be 2 or 3, got {fmi_version}")
    tools = runtime.tools if runtime is not None and platforms is None else toolchains(platforms)
    try:
        path = output_path(path)
        plan = build_plan(eom, fmi_version, jacobian)
    except BaseException:
        if runtime is not None:
            runtime.close(failed=True)
        raise
    return pack_source_fmu(path, eom.system.name, fmi_version, lambda: cached_model_files(plan),
                           lambda c_files: model_description(plan, c_files), tools, runtime=runtime)


class RuntimeBuild:
    """The folder of a source FMU being built, its runtime's C files copied there and compiling.

    The runtime does not depend on the model, so a command starts it before the model is loaded and derived
    (:func:`start_runtime`) and hands it to :func:`build_fmu`, which generates the model's C meanwhile. Use it as
    a context manager: leaving the block (after the FMU is packed, or by an error or Ctrl-C) stops the compilers
    still running, and removes the folder and the objects; nothing is written to the object cache but complete
    objects (:class:`~bridge.tools.objects.CompileQueue`).

    Parameters
    ----------
    fmi_version : int
        2 or 3.
    tools : dict of Platform to str
        Platform -> compiler (:func:`toolchains`).
    model_sources : iterable of str
        Fixed C files of the runtime that implement the model functions (see :func:`pack_source_fmu`).
    """

    def __init__(self, fmi_version: int, tools: dict[Platform, str], model_sources: Iterable[str] = ()):
        if fmi_version not in (2, 3):
            raise ExportError(f"FMI version must be 2 or 3, got {fmi_version}")
        self.fmi_version, self.tools = fmi_version, dict(tools)
        self.sources = [*model_sources, *RUNTIME_SOURCES[fmi_version]]
        self.folder = Path(tempfile.mkdtemp(prefix="nhbridge-fmu-"))
        self.queue = CompileQueue(object_cache())
        self.builds: list[LibraryBuild] = []
        self._used = False
        try:
            src = self.folder / "sources"
            src.mkdir()
            for file in [*self.sources, *RUNTIME_HEADERS]:
                shutil.copy(RUNTIME / file, src / file)
            for header in (RUNTIME / "include" / f"fmi{fmi_version}").iterdir():
                if header.name.endswith(".h"):
                    shutil.copy(header, src / header.name)
            self.builds = start_binaries(self.queue, self.folder, "model", ["-Wall", "-Wextra", f"-I{src}"],
                                         fmi_version, self.tools, "the FMU runtime")
            for build in self.builds:
                build.add([src / s for s in self.sources])
        except BaseException:
            self.close(failed=True)
            raise

    def matches(self, fmi_version: int, tools: dict[Platform, str], model_sources: Iterable[str] = ()) -> bool:
        """Tell whether this build compiles the runtime of an FMU of ``fmi_version`` for ``tools``."""
        return (fmi_version == self.fmi_version and dict(tools) == self.tools
                and [*model_sources, *RUNTIME_SOURCES[fmi_version]] == self.sources)

    def close(self, failed: bool = False) -> None:
        """Stop (``failed``) or wait for the compilers, then remove the objects and the folder."""
        try:
            if failed:
                self.queue.abort()
            for build in self.builds:
                build.discard()
            self.queue.close()
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def __enter__(self) -> RuntimeBuild:
        return self

    def __exit__(self, exc_type, *exc) -> None:
        self.close(failed=exc_type is not None)

    def pack(self, path: Path, name: str, model_c_text: str | dict[str, str] | Callable[[], str | dict[str, str]],
             description: Callable[[list[str]], bytes]) -> Path:
        """Generate the model's C, compile and link it with the runtime and pack the FMU (:func:`pack_source_fmu`).

        A runtime build packs one FMU.
        """
        if self._used:
            raise ExportError("a runtime build packs one FMU; start another with start_runtime")
        self._used = True
        folder, src = self.folder, self.folder / "sources"
        for p, build in zip(self.tools, self.builds, strict=True):
            build.binary = folder / "binaries" / p.folder(self.fmi_version) / f"{name}{p.suffix}"
            build.what = name if p.is_host and len(self.tools) == 1 else f"{name} for {p.name}"
        try:
            text = model_c_text() if callable(model_c_text) else model_c_text
            generated = {"model.c": text} if isinstance(text, str) else text
            for file, code in generated.items():
                (src / file).write_text(code, encoding="utf-8")
            for build in self.builds:
                build.add([src / file for file in generated], urgency=1.0)
            for build in self.builds:
                build.link()  # the first failure is raised
        except BaseException:
            self.queue.abort()  # stop the running compilers before waiting for their jobs
            raise
        finally:
            for build in self.builds:
                build.discard()
        c_files = [*generated, *self.sources]  # what an importer compiles to rebuild the binary (fmpy compile)
        if self.fmi_version == 3:
            (src / "buildDescription.xml").write_bytes(build_description(name, c_files))
        (folder / "modelDescription.xml").write_bytes(description(c_files))
        return pack_folder(path, folder)


def start_runtime(fmi_version: int = 2, platforms: Iterable[str] | str | None = None) -> RuntimeBuild:
    """Start compiling the runtime of a native FMU before its model is known, to hand to :func:`build_fmu`.

    A command that derives the equations and then builds their FMU calls this first, so that the runtime's files
    compile (or come from the object cache) while the system is loaded and derived.

    Parameters
    ----------
    fmi_version : int
        2 or 3.
    platforms : str or iterable of str, optional
        As :func:`build_fmu`'s.

    Returns
    -------
    RuntimeBuild
        A context manager: build in its block, ``build_fmu(eom, path, fmi_version, runtime=...)``.

    Raises
    ------
    ExportError
        A bad version or platform; :class:`~bridge.errors.CompilerNotFoundError` without a C compiler.
    """
    return RuntimeBuild(fmi_version, toolchains(platforms))


def pack_source_fmu(path: Path, name: str, fmi_version: int,
                    model_c_text: str | dict[str, str] | Callable[[], str | dict[str, str]],
                    description: Callable[[list[str]], bytes], tools: dict[Platform, str],
                    model_sources: Iterable[str] = (), runtime: RuntimeBuild | None = None) -> Path:
    """Pack the source FMU ``path`` of a generated ``model.c`` beside the fixed runtime, atomically.

    The FMU holds ``sources/`` with ``model.c`` and the runtime's C files and headers, one binary per platform
    compiled from them, FMI 3's ``buildDescription.xml`` and ``modelDescription.xml``. The runtime's files start
    compiling first (or come from the object cache); when ``model_c_text`` is a function, the model's C is
    generated meanwhile, and its files compile before any runtime file still waiting.

    Parameters
    ----------
    path : Path
        The ``.fmu`` file.
    name : str
        The model identifier.
    fmi_version : int
        2 or 3.
    model_c_text : str, dict of str to str, or callable
        The generated ``model.c``, or the generated C files by name (``model.c`` and its parts), or a function
        without arguments that generates either.
    description : callable
        Gives ``modelDescription.xml`` for the list of C files an importer compiles.
    tools : dict of Platform to str
        Platform -> compiler (:func:`toolchains`).
    model_sources : iterable of str
        Fixed C files of the runtime that implement the model functions for the generated data of ``model.c``
        (the linear FMU's ``nhb_linear.c``).
    runtime : RuntimeBuild, optional
        The runtime already compiling (:func:`start_runtime`) for the same version, platforms and model sources;
        it is used up and closed here. None: one is started here.

    Returns
    -------
    Path
        The FMU written.
    """
    if runtime is not None and not runtime.matches(fmi_version, tools, model_sources):
        runtime.close(failed=True)
        raise ExportError(f"the runtime build started for FMI {runtime.fmi_version} on "
                          f"{', '.join(p.name for p in runtime.tools)} does not fit the FMU {path} (FMI {fmi_version})")
    with runtime if runtime is not None else RuntimeBuild(fmi_version, tools, model_sources) as build:
        return build.pack(path, name, model_c_text, description)
