"""Components as FMUs: build them (system files, Modelica models) and read what the master needs.

:class:`ModelInfo` is the part of an FMU's ``modelDescription.xml`` the checks and the master use:
variables with causality, units and value references, the continuous states, which outputs depend
directly on which inputs (direct feedthrough), and how a step can be rolled back.

Direct feedthrough is read from ``ModelStructure``: an output with a ``dependencies`` attribute
depends directly on the inputs listed there (FMI 2.0 ``<Outputs><Unknown dependencies=...>``, FMI 3.0
``<Output dependencies=...>``). Without the attribute, FMI says the output depends on every known;
nhbridge follows that, except for an output that is itself a continuous state, which cannot depend
directly on an input. nhbridge's own FMUs declare their dependencies.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .errors import CosimError
from .scenario import ComponentSpec

REAL_TYPES = ("Real", "Float64", "Float32")


@dataclass(frozen=True)
class VariableInfo:
    """One scalar variable of an FMU's model description (name, value reference, causality, unit, start)."""

    name: str
    vr: int
    causality: str
    variability: str
    initial: str | None
    type: str
    unit: str
    start: float | None


@dataclass(frozen=True)
class ModelInfo:
    """What the master needs to know about one FMU."""

    path: Path
    fmi_version: int                             # 1, 2 or 3
    guid: str
    model_name: str
    identifier: str                              # Co-Simulation modelIdentifier ("" when the FMU has no CS)
    generation_tool: str
    can_get_set_state: bool
    variable_step: bool                          # canHandleVariableCommunicationStepSize
    variables: dict[str, VariableInfo]
    states: tuple[str, ...]                      # continuous states
    feedthrough: dict[str, tuple[str, ...]]      # output -> inputs it depends on directly
    declared: frozenset[str]                     # outputs whose dependencies the FMU declares
    discrete: tuple[str, ...]                    # local/output variables of discrete variability (hidden state)

    @property
    def co_simulation(self) -> bool:
        """Whether the FMU has a Co-Simulation interface (a Co-Simulation model identifier)."""
        return bool(self.identifier)

    @property
    def stateless(self) -> bool:
        """No continuous or discrete state: the outputs are functions of inputs, parameters and time."""
        return not self.states and not self.discrete

    @property
    def made_by_nhbridge(self) -> bool:
        """Whether nhbridge generated the FMU (its ``generationTool``), which allows a rollback by reinit."""
        return self.generation_tool.startswith("nhbridge")

    @property
    def rollback(self) -> str | None:
        """How a step can be undone: "fmu-state", "stateless", "reinit" (nhbridge FMUs) or None."""
        if self.can_get_set_state:
            return "fmu-state"
        if self.stateless:
            return "stateless"
        if self.made_by_nhbridge:
            return "reinit"
        return None

    def inputs(self) -> list[str]:
        """Return the names of the FMU's input variables, in the order of its model description.

        Returns
        -------
        list of str
            Names of the variables with causality ``input``.
        """
        return [v.name for v in self.variables.values() if v.causality == "input"]

    def outputs(self) -> list[str]:
        """Return the names of the FMU's output variables, in the order of its model description.

        Returns
        -------
        list of str
            Names of the variables with causality ``output``.
        """
        return [v.name for v in self.variables.values() if v.causality == "output"]


def read_model_info(path: Path, unzipdir: Path | None = None) -> ModelInfo:
    """Read ``modelDescription.xml`` of the FMU ``path`` (not validated: foreign FMUs often have small defects).

    From ``unzipdir`` when the FMU is unpacked there (:func:`unpack`), else from the archive after its sizes
    were checked (:func:`bridge.fmu.archive.check_archive`).
    """
    import fmpy

    from ..fmu.archive import ArchiveError, check_archive, check_identifiers

    try:
        if unzipdir is None:
            check_archive(path)
        md = fmpy.read_model_description(str(unzipdir or path), validate=False)
        if unzipdir is not None:
            check_identifiers(md, unzipdir, str(path), fmpy.platform)
    except ArchiveError as exc:
        raise CosimError(str(exc)) from exc
    except Exception as exc:  # fmpy raises plain Exceptions for unreadable archives and XML
        raise CosimError(f"{path}: not a readable FMU ({exc}); check the file") from exc
    version = int(str(md.fmiVersion).split(".")[0])
    cs = md.coSimulation
    variables: dict[str, VariableInfo] = {}
    for v in md.modelVariables:
        try:
            start = float(v.start) if v.start is not None and v.type in REAL_TYPES else None
        except (TypeError, ValueError):
            start = None
        unit = v.unit or ""
        if not unit and getattr(v, "declaredType", None) is not None:
            unit = getattr(v.declaredType, "unit", None) or ""
        variables[v.name] = VariableInfo(v.name, int(v.valueReference), v.causality or "local",
                                         v.variability or "continuous", v.initial, v.type, unit, start)
    states = tuple(dict.fromkeys(u.variable.derivative.name for u in md.derivatives
                                 if u.variable.derivative is not None))
    inputs = [n for n, v in variables.items() if v.causality == "input"]
    feedthrough: dict[str, tuple[str, ...]] = {}
    declared = set()
    listed = {u.variable.name: u for u in md.outputs}
    for name, v in variables.items():
        if v.causality != "output":
            continue
        unknown = listed.get(name)
        if unknown is not None and unknown.dependencies is not None:
            declared.add(name)
            feedthrough[name] = tuple(d.name for d in unknown.dependencies if d.causality == "input")
        elif name in states:
            feedthrough[name] = ()
        else:
            feedthrough[name] = tuple(inputs)
    discrete = tuple(n for n, v in variables.items()
                     if v.variability == "discrete" and v.causality in ("local", "output"))
    return ModelInfo(path=path, fmi_version=version, guid=md.guid, model_name=md.modelName,
                     identifier=cs.modelIdentifier if cs is not None else "",
                     generation_tool=md.generationTool or "",
                     can_get_set_state=bool(cs is not None and cs.canGetAndSetFMUstate),
                     variable_step=bool(cs is not None and cs.canHandleVariableCommunicationStepSize),
                     variables=variables, states=states, feedthrough=feedthrough, declared=frozenset(declared),
                     discrete=discrete)


def unpack(path: Path, folder: Path) -> Path:
    """Return the FMU unpacked into a new folder below ``folder`` within the archive limits; CosimError (bad input)."""
    from ..fmu.archive import ArchiveError, unpack_fmu

    target = Path(tempfile.mkdtemp(prefix="fmu-", dir=folder))
    try:
        return unpack_fmu(path, target)
    except ArchiveError as exc:
        shutil.rmtree(target, ignore_errors=True)
        raise CosimError(str(exc)) from exc


def build_modelica_fmu(source: Path, model: str, path: Path, platforms: Sequence[str] | None = None) -> Path:
    """Compile the Modelica model ``model`` of ``source`` to an FMI 2.0 FMU with Rumoca's ``fmi2`` code generation.

    One binary per platform of ``platforms``, default the host's.

    Rumoca's Co-Simulation integrates with explicit Euler (ten sub-steps per communication step), so use it
    for algebraic or slow components; its modelDescription lacks UnitDefinitions (fmpy validation complains).
    """
    from ..backends.fmu import declare_sources
    from ..errors import ExportError
    from ..fmu.build import compile_binaries, pack_folder, toolchains
    from ..tools.rumoca import codegen_fmi2

    try:
        import rumoca
    except ImportError as exc:
        raise CosimError(f"{source}: compiling Modelica components needs Rumoca; pip install --only-binary rumoca "
                         '"rumoca>=0.9.9,<0.10", or give an FMU') from exc
    tools = toolchains(platforms)
    try:
        generated = codegen_fmi2(rumoca, source.read_text(encoding="utf-8"), model)  # not the cwd's other .mo files
    except (rumoca.RumocaError, RuntimeError, OSError) as exc:
        raise CosimError(f"{source}: Rumoca cannot compile model {model}: {exc}; fix the model") from exc
    with tempfile.TemporaryDirectory(prefix="nhbridge-cosim-mo-") as tmp:
        folder = Path(tmp)
        generated.save_all(str(folder))
        declare_sources(folder)  # <SourceFiles>: the FMU (also inside an SSP package) can be rebuilt from sources/
        try:
            compile_binaries(folder, model, sorted((folder / "sources").glob("*.c")), [], 2, tools,
                             f"Rumoca's C for {model}")
        except ExportError as exc:
            raise CosimError(f"{source}: {exc}") from exc
        return pack_folder(path, folder)


def build_component(spec: ComponentSpec, folder: Path, cache: dict[tuple, Path] | None = None,
                    platforms: Sequence[str] | None = None) -> Path:
    """Return the FMU of ``spec``: the given file, or one built into ``folder``.

    An FMU is built once per distinct source, with the binaries of ``platforms`` (default the host's).
    """
    if spec.kind == "fmu":
        return spec.source
    platforms = tuple(platforms) if platforms else None
    key = (spec.kind, str(spec.source), spec.model, spec.method, spec.fmi_version, platforms)
    if cache is not None and key in cache:
        return cache[key]
    digest = hashlib.sha256(repr(key).encode()).hexdigest()[:10]
    if spec.kind == "system":
        from ..derivation.methods import derive
        from ..fmu.build import build_fmu
        from ..model.loader import load_system

        system = load_system(spec.source)
        path = build_fmu(derive(system, spec.method), folder / f"{system.name}-{digest}.fmu", spec.fmi_version,
                         platforms=platforms)
    else:
        path = build_modelica_fmu(spec.source, spec.model, folder / f"{spec.model}-{digest}.fmu", platforms)
    if cache is not None:
        cache[key] = path
    return path
