"""SSP 1.0 packages (System Structure and Parameterization): write a scenario as ``.ssp``, read one back.

Written: ``SystemStructure.ssd`` and ``resources/<model>.fmu`` (each distinct FMU once). The SSD has

- one ``ssd:Component`` per component (``source="resources/..."``) with a connector for every input and
  output of its FMU and for every parameter it sets (``ssc:Real`` with the unit), and the parameter and
  start values as an inline ``ssv:ParameterSet`` in ``ssd:ParameterBindings``, every component's set named
  after the scenario (one name selects all of them in importers that apply one named set, such as Ecos);
- one ``ssd:Connection`` per connection, with ``ssc:LinearTransformation`` when gain or offset is not
  (1, 0) and ``suppressUnitConversion="true"`` for ``ignore_units``;
- ``ssd:Units`` (base-unit exponents, :mod:`.units`) and ``ssd:DefaultExperiment`` (start and stop time);
- the master settings and recorded signals, which SSP 1.0 has no element for, in an
  ``ssc:Annotation type="org.nhbridge.cosim"`` that other tools ignore; and the step once more in
  OMSimulator's ``org.openmodelica`` annotation of the system (``oms:FixedStepMaster``).

Read: a flat system of FMU components as written above, also from other tools: parameter sets inline or
as ``.ssv`` files in the package, with an optional ``prefix``; connections between components with an
optional linear transformation. Not supported (reported as errors): nested systems, connectors of the
system itself, parameter mappings, signal dictionaries, non-FMU components. The XML is parsed without
entity resolution or network access, and FMU sources must lie inside the package.
"""

from __future__ import annotations

import hashlib
import io
import math
import posixpath
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import ProblemCollector
from ..fmu.archive import ArchiveError, open_archive, read_member, stream_member, write_zip
from ..model.units import parse_unit
from ..version import __version__
from .checks import Plan, check_names
from .components import ModelInfo, VariableInfo, read_model_info
from .errors import CosimError
from .scenario import ALGORITHMS, IDENTIFIER, ComponentSpec, Connection, MasterSettings, Scenario, split_signal

NS = {
    "ssd": "http://ssp-standard.org/SSP1/SystemStructureDescription",
    "ssc": "http://ssp-standard.org/SSP1/SystemStructureCommon",
    "ssv": "http://ssp-standard.org/SSP1/SystemStructureParameterValues",
    "ssm": "http://ssp-standard.org/SSP1/SystemStructureParameterMapping",
    "ssb": "http://ssp-standard.org/SSP1/SystemStructureSignalDictionary",
}
NHB = "urn:nhbridge:cosim:1"
OMS = "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd"
ANNOTATION = "org.nhbridge.cosim"
FMU_TYPE = "application/x-fmu-sharedlibrary"


def _q(prefix: str, tag: str) -> str:
    return f"{{{NS[prefix] if prefix != 'nhb' else NHB}}}{tag}"


def _num(x: float) -> str:
    return repr(float(x))


# -- writing ------------------------------------------------------------------------------------------
def _set_unit(el, unit: str, units: dict[str, dict[str, str]]) -> None:
    """Give ``el`` the ``unit`` when it parses, and note its base-unit exponents in ``units`` for ``ssd:Units``."""
    base = parse_unit(unit) if unit else None
    if base is not None:
        units[unit] = base.attributes()
        el.set("unit", unit)


def _ssd_root(scenario: Scenario):
    """Return the ``ssd:SystemStructureDescription`` element with its ``ssd:System``; both named after the scenario."""
    from lxml import etree

    root = etree.Element(_q("ssd", "SystemStructureDescription"),
                         nsmap={"ssd": NS["ssd"], "ssc": NS["ssc"], "ssv": NS["ssv"]})
    root.set("version", "1.0")
    root.set("name", scenario.name)
    root.set("generationTool", f"nhbridge {__version__}")
    system = etree.SubElement(root, _q("ssd", "System"), name=scenario.name)
    if scenario.description:
        system.set("description", scenario.description)
    return root, system


def _connector_variables(spec: ComponentSpec, info: ModelInfo) -> list[VariableInfo]:
    """Return the FMU's inputs, outputs and the parameters the component sets.

    Inputs first, then outputs, parameters.
    """
    bound = {n for n, _ in spec.parameters}
    connectors = [v for v in info.variables.values()
                  if v.causality in ("input", "output") or (v.causality == "parameter" and v.name in bound)]
    kinds = ("input", "output", "parameter")
    connectors.sort(key=lambda v: (kinds.index(v.causality), list(info.variables).index(v.name)))
    return connectors


def _add_connectors(comp, connectors: list[VariableInfo], units: dict[str, dict[str, str]]) -> None:
    """Add ``ssd:Connectors``: one ``ssd:Connector`` per variable, real ones typed ``ssc:Real`` with their unit."""
    from lxml import etree

    if not connectors:
        return
    cons = etree.SubElement(comp, _q("ssd", "Connectors"))
    for v in connectors:
        con = etree.SubElement(cons, _q("ssd", "Connector"), name=v.name, kind=v.causality)
        if v.type in ("Real", "Float64", "Float32"):
            _set_unit(etree.SubElement(con, _q("ssc", "Real")), v.unit, units)


def _add_parameter_bindings(comp, spec: ComponentSpec, info: ModelInfo, units: dict[str, dict[str, str]],
                            set_name: str) -> None:
    """Add the component's parameter and start values as one inline ``ssv:ParameterSet`` named ``set_name``.

    No element is added when there are none.

    Every component's set has the same name (the scenario's): an importer that applies only the sets of one name
    chosen at start-up (Ecos) then applies all of them, like one that applies every set (libcosim, nhbridge).
    """
    from lxml import etree

    values = [*spec.parameters, *spec.start]
    if not values:
        return
    binding = etree.SubElement(etree.SubElement(comp, _q("ssd", "ParameterBindings")), _q("ssd", "ParameterBinding"))
    pset = etree.SubElement(etree.SubElement(binding, _q("ssd", "ParameterValues")),
                            _q("ssv", "ParameterSet"), version="1.0", name=set_name)
    params = etree.SubElement(pset, _q("ssv", "Parameters"))
    for name, value in values:
        real = etree.SubElement(etree.SubElement(params, _q("ssv", "Parameter"), name=name),
                                _q("ssv", "Real"), value=_num(value))
        _set_unit(real, info.variables[name].unit, units)


def _add_components(system, plan: Plan, sources: dict[str, str], units: dict[str, dict[str, str]]) -> None:
    """Add ``ssd:Elements``: one FMU ``ssd:Component`` per component, with its connectors and values."""
    from lxml import etree

    elements = etree.SubElement(system, _q("ssd", "Elements"))
    for spec in plan.scenario.components:
        info = plan.infos[spec.name]
        comp = etree.SubElement(elements, _q("ssd", "Component"), name=spec.name, type=FMU_TYPE,
                                source=sources[spec.name])
        if spec.description:
            comp.set("description", spec.description)
        _add_connectors(comp, _connector_variables(spec, info), units)
        _add_parameter_bindings(comp, spec, info, units, plan.scenario.name)


def _add_connections(system, connections: tuple[Connection, ...]) -> None:
    """Add ``ssd:Connections``; a ``ssc:LinearTransformation`` where gain or offset is not (1, 0)."""
    from lxml import etree

    if not connections:
        return
    conns = etree.SubElement(system, _q("ssd", "Connections"))
    for c in connections:
        el = etree.SubElement(conns, _q("ssd", "Connection"), startElement=c.source, startConnector=c.output,
                              endElement=c.target, endConnector=c.input)
        if c.ignore_units:
            el.set("suppressUnitConversion", "true")
        if c.gain != 1.0 or c.offset != 0.0:
            etree.SubElement(el, _q("ssc", "LinearTransformation"), factor=_num(c.gain), offset=_num(c.offset))


def _add_oms_annotation(system, m: MasterSettings) -> None:
    """Add OMSimulator's annotation of its fixed-step master, as OMSimulator writes it (other tools ignore it)."""
    from lxml import etree

    oms = etree.SubElement(etree.SubElement(etree.SubElement(system, _q("ssd", "Annotations")), _q("ssc", "Annotation"),
                                            type="org.openmodelica"), f"{{{OMS}}}Annotations", nsmap={"oms": OMS})
    etree.SubElement(etree.SubElement(oms, f"{{{OMS}}}SimulationInformation"), f"{{{OMS}}}FixedStepMaster",
                     description="oms-ma", stepSize=_num(m.step), relativeTolerance=_num(m.fmu_tolerance))


def _add_units(root, units: dict[str, dict[str, str]]) -> None:
    """Add ``ssd:Units``: each unit used, sorted by name, with its base-unit exponents (none: no element)."""
    from lxml import etree

    if not units:
        return
    ul = etree.SubElement(root, _q("ssd", "Units"))
    for name in sorted(units):
        etree.SubElement(etree.SubElement(ul, _q("ssc", "Unit"), name=name), _q("ssc", "BaseUnit"), **units[name])


def _add_nhbridge_annotation(root, scenario: Scenario) -> None:
    """Add nhbridge's ``nhb:Master`` annotation: the master settings and the recorded signals."""
    from lxml import etree

    m = scenario.master
    ann = etree.SubElement(etree.SubElement(root, _q("ssd", "Annotations")), _q("ssc", "Annotation"), type=ANNOTATION)
    master = etree.SubElement(ann, _q("nhb", "Master"), nsmap={"nhb": NHB}, step=_num(m.step), algorithm=m.algorithm,
                              adaptive=str(m.adaptive).lower(), tolerance=_num(m.tolerance),
                              fmuTolerance=_num(m.fmu_tolerance))
    if m.order:
        master.set("order", " ".join(m.order))
    if m.min_step is not None:
        master.set("minStep", _num(m.min_step))
    if m.max_step is not None:
        master.set("maxStep", _num(m.max_step))
    for signal in scenario.record:
        etree.SubElement(master, _q("nhb", "Record"), signal=signal)


def ssd_document(plan: Plan, sources: dict[str, str]) -> bytes:
    """Return ``SystemStructure.ssd`` for a checked scenario; ``sources`` maps component -> path inside the package."""
    from lxml import etree

    scenario, m = plan.scenario, plan.scenario.master
    units: dict[str, dict[str, str]] = {}  # unit -> base-unit exponents, filled by the connectors and values
    root, system = _ssd_root(scenario)
    _add_components(system, plan, sources, units)
    _add_connections(system, scenario.connections)
    _add_oms_annotation(system, m)
    _add_units(root, units)
    etree.SubElement(root, _q("ssd", "DefaultExperiment"), startTime=_num(m.start_time), stopTime=_num(m.stop_time))
    _add_nhbridge_annotation(root, scenario)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")


def write_ssp(plan: Plan, fmus: dict[str, Path], path: str | Path) -> Path:
    """Write the checked scenario with its FMUs as an SSP package, atomically.

    The archive is deterministic (fixed member order, time stamps and modes; :func:`bridge.fmu.archive.write_zip`):
    the same FMUs give the same bytes. A scenario with duplicate or unknown component names is refused.
    """
    path = Path(path)
    if path.suffix != ".ssp":
        raise CosimError(f"{path}: an SSP package must end in .ssp")
    check_names(plan.scenario)
    resources: dict[str, str] = {}     # content hash -> member name
    sources: dict[str, str] = {}
    payload: dict[str, bytes] = {}
    for spec in plan.scenario.components:
        data = Path(fmus[spec.name]).read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest not in resources:
            stem = re.sub(r"[^A-Za-z0-9_.-]", "_", plan.infos[spec.name].model_name) or spec.name
            member, k = f"resources/{stem}.fmu", 1
            while member in payload:
                k += 1
                member = f"resources/{stem}_{k}.fmu"
            resources[digest] = member
            payload[member] = data
        sources[spec.name] = resources[digest]
    ssd = ssd_document(plan, sources)
    return write_zip(path, [("SystemStructure.ssd", ssd), *sorted(payload.items())])


# -- reading ------------------------------------------------------------------------------------------
def _parse_xml(data: bytes, what: str):
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True, huge_tree=False)
    try:
        return etree.parse(io.BytesIO(data), parser).getroot()
    except etree.XMLSyntaxError as exc:
        raise CosimError(f"{what}: not well-formed XML ({exc}); fix or regenerate the package") from exc


def _member(name: str) -> str | None:
    """Return a safe member name inside the package for a relative URI, or None (absolute, a scheme, or '..')."""
    if not name or re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", name) or name.startswith(("/", "\\")) or "\\" in name:
        return None
    norm = posixpath.normpath(name)
    if norm.startswith("..") or norm.startswith("/"):
        return None
    return norm


def _float(pc: ProblemCollector, entry: str, text: str | None, default: float | None = None) -> float | None:
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        pc.add(entry, f"{text!r} is not a finite number", "fix the value")
        return default
    return value


def _parameter_set(pc: ProblemCollector, entry: str, pset, prefix: str) -> list[tuple[str, float]]:
    values = []
    for p in pset.findall("ssv:Parameters/ssv:Parameter", NS):
        name = p.get("name", "")
        if prefix:
            if not name.startswith(prefix):
                continue
            name = name[len(prefix):]
        real = p.find("ssv:Real", NS)
        if real is None:
            pc.add(f"{entry}: parameter {name!r}", "only Real parameter values are supported",
                   "give the value as ssv:Real")
            continue
        value = _float(pc, f"{entry}: parameter {name!r}", real.get("value"))
        if value is not None:
            values.append((name, value))
    return values


@dataclass
class _Package:
    """An open SSP package: its members, and the FMUs unpacked from it into ``folder`` (each member once)."""

    path: Path
    zf: zipfile.ZipFile
    folder: Path
    names: set[str] = field(init=False)
    extracted: dict[str, Path] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.names = set(self.zf.namelist())

    def member(self, uri: str) -> str | None:
        """Return the member a relative URI names, or None when it is no safe name of a file in the package."""
        member = _member(uri)
        return member if member is not None and member in self.names else None

    def xml(self, member: str):
        """Return the root element of an XML member (size-limited), parsed safely."""
        try:
            data = read_member(self.zf, member, f"{self.path}")
        except ArchiveError as exc:
            raise CosimError(str(exc)) from exc
        return _parse_xml(data, f"{self.path}: {member}")

    def unpack(self, member: str) -> Path:
        """Return the member streamed into ``folder`` as ``ssp-<hash of its name>-<file name>``, once."""
        if member not in self.extracted:
            target = self.folder / f"ssp-{hashlib.sha256(member.encode()).hexdigest()[:8]}-{Path(member).name}"
            try:
                stream_member(self.zf, self.zf.getinfo(member), target, str(self.path))
            except ArchiveError as exc:
                target.unlink(missing_ok=True)
                raise CosimError(str(exc)) from exc
            self.extracted[member] = target
        return self.extracted[member]


def _open_package(path: Path) -> zipfile.ZipFile:
    """Return the package as a zip file within the archive limits (nothing decompressed yet); CosimError otherwise."""
    try:
        return open_archive(path, f"{path} (SSP package)")
    except ArchiveError as exc:
        raise CosimError(str(exc)) from exc


def _system_structure(package: _Package):
    """Return the root of ``SystemStructure.ssd`` and its ``ssd:System``; CosimError when either is missing or wrong."""
    path = package.path
    if "SystemStructure.ssd" not in package.names:
        raise CosimError(f"{path}: no SystemStructure.ssd in the package; an SSP package must contain it")
    root = package.xml("SystemStructure.ssd")
    if root.tag != _q("ssd", "SystemStructureDescription"):
        raise CosimError(f"{path}: SystemStructure.ssd is not an SSP 1.0 system structure description "
                         f"(root element {root.tag})")
    system = root.find("ssd:System", NS)
    if system is None:
        raise CosimError(f"{path}: SystemStructure.ssd has no ssd:System")
    return root, system


def _scenario_name(root, system, path: Path) -> str:
    """Return the name of the description, else of the system, else of the file, made an identifier."""
    name = root.get("name") or system.get("name") or path.stem
    if not IDENTIFIER.match(name):
        name = re.sub(r"\W", "_", name).lstrip("0123456789") or "Cosim"
    return name


def _check_flat_system(pc: ProblemCollector, system) -> None:
    """Report what a flat system of components cannot have: nested systems, signal dictionaries, own connectors."""
    if system.find("ssd:Elements/ssd:System", NS) is not None:
        pc.add("ssd:System", "nested systems are not supported", "flatten the system into one level")
    if system.find("ssd:SignalDictionaries", NS) is not None or \
            system.find("ssd:Elements/ssd:SignalDictionaryReference", NS) is not None:
        pc.add("ssd:System", "signal dictionaries are not supported", "connect the components directly")
    if system.find("ssd:Connectors", NS) is not None:
        pc.add("ssd:System", "connectors of the system itself are not supported (no external inputs)",
               "connect the components to each other only")


def _binding_values(pc: ProblemCollector, package: _Package, comp, entry: str) -> list[tuple[str, float]]:
    """Return the values of a component's parameter bindings: from ``.ssv`` members and inline parameter sets."""
    values: list[tuple[str, float]] = []
    for binding in comp.findall("ssd:ParameterBindings/ssd:ParameterBinding", NS):
        if binding.find("ssd:ParameterMapping", NS) is not None:
            pc.add(entry, "parameter mappings are not supported", "give the values directly")
        prefix = binding.get("prefix", "")
        source = binding.get("source")
        if source is not None:
            ssv = package.member(source)
            if ssv is None:
                pc.add(entry, f"parameter set {source!r} is not a file inside the package",
                       "put the .ssv file into the package")
                continue
            values += _parameter_set(pc, f"{entry}: {ssv}", package.xml(ssv), prefix)
        for pset in binding.findall("ssd:ParameterValues/ssv:ParameterSet", NS):
            values += _parameter_set(pc, entry, pset, prefix)
    return values


def _read_component(pc: ProblemCollector, package: _Package, comp) -> ComponentSpec | None:
    """Read one FMU component, its FMU unpacked, with all its binding values; None (reported) when unusable."""
    cname = comp.get("name", "")
    entry = f"Component {cname!r}"
    if not IDENTIFIER.match(cname):
        pc.add(entry, "the component name is not an identifier", "rename it (letters, digits, _)")
        return None
    ctype = comp.get("type", FMU_TYPE)
    if ctype != FMU_TYPE:
        pc.add(entry, f"component type {ctype!r} is not supported", f"use FMUs ({FMU_TYPE})")
        return None
    member = package.member(comp.get("source", ""))
    if member is None:
        pc.add(entry, f"source {comp.get('source')!r} is not a file inside the package",
               "put the FMU into the package (resources/) and refer to it relatively")
        return None
    source = package.unpack(member)
    return ComponentSpec(cname, "fmu", source, parameters=tuple(_binding_values(pc, package, comp, entry)),
                         description=comp.get("description", ""))


def _read_components(pc: ProblemCollector, package: _Package, system) -> list[ComponentSpec]:
    """Return the usable components of the system, in document order; a name used twice is reported."""
    components = []
    seen: set[str] = set()
    for comp in system.findall("ssd:Elements/ssd:Component", NS):
        name = comp.get("name", "")
        if name in seen:
            pc.add(f"Component {name!r}", "the component name is used twice", "give every component its own name")
            continue
        seen.add(name)
        spec = _read_component(pc, package, comp)
        if spec is not None:
            components.append(spec)
    return components


def _linear_transformation(pc: ProblemCollector, entry: str, c) -> tuple[float, float]:
    """Return the gain and offset of a connection's linear transformation (``ssc:`` or ``ssd:``); (1, 0) without one."""
    gain, offset = 1.0, 0.0
    for tag in ("ssc:LinearTransformation", "ssd:LinearTransformation"):
        t = c.find(tag, NS)
        if t is not None:
            gain = _float(pc, entry, t.get("factor"), 1.0)
            offset = _float(pc, entry, t.get("offset"), 0.0)
    return gain, offset


def _read_connection(pc: ProblemCollector, entry: str, c) -> Connection | None:
    """Read one connection between components; None (reported) for a connection to the system's connectors."""
    if not c.get("startElement") or not c.get("endElement"):
        pc.add(entry, "connections to the system's own connectors are not supported", "connect components directly")
        return None
    gain, offset = _linear_transformation(pc, entry, c)
    for tag in ("BooleanMappingTransformation", "IntegerMappingTransformation", "EnumerationMappingTransformation"):
        if c.find(f"ssc:{tag}", NS) is not None:
            pc.add(entry, f"{tag} is not supported", "connect Real signals")
    return Connection(c.get("startElement"), c.get("startConnector", ""), c.get("endElement"),
                      c.get("endConnector", ""), gain, offset,
                      c.get("suppressUnitConversion", "false") in ("true", "1"), f"SystemStructure.ssd: {entry}")


def _read_connections(pc: ProblemCollector, system) -> list[Connection]:
    """Return the usable connections of the system, in document order (entries ``Connection <k>``, from 1)."""
    connections = []
    for k, c in enumerate(system.findall("ssd:Connections/ssd:Connection", NS)):
        connection = _read_connection(pc, f"Connection {k + 1}", c)
        if connection is not None:
            connections.append(connection)
    return connections


def _experiment_times(pc: ProblemCollector, root) -> tuple[float, float | None]:
    """Start (default 0) and stop time (default None) of ``ssd:DefaultExperiment``."""
    exp = root.find("ssd:DefaultExperiment", NS)
    start = _float(pc, "DefaultExperiment", exp.get("startTime") if exp is not None else None, 0.0)
    stop = _float(pc, "DefaultExperiment", exp.get("stopTime") if exp is not None else None, None)
    return start, stop


def _split_start_values(components: list[ComponentSpec]) -> tuple[ComponentSpec, ...]:
    """Return the components with their values split by causality, as a TOML scenario has them.

    Parameters (also names the FMU does not know) and start values (everything else).
    """
    final = []
    for spec in components:
        info = read_model_info(spec.source)
        params = tuple((n, v) for n, v in spec.parameters if getattr(info.variables.get(n), "causality", "parameter")
                       == "parameter")
        starts = tuple((n, v) for n, v in spec.parameters if (n, v) not in params)
        final.append(ComponentSpec(spec.name, "fmu", spec.source, parameters=params, start=starts,
                                   description=spec.description))
    return tuple(final)


def read_ssp(path: str | Path, folder: str | Path) -> Scenario:
    """Read an SSP package into a :class:`Scenario`; its FMUs are unpacked into ``folder``."""
    path, folder = Path(path), Path(folder)
    pc = ProblemCollector(str(path))
    with _open_package(path) as zf:
        package = _Package(path, zf, folder)
        root, system = _system_structure(package)
        name, description = _scenario_name(root, system, path), system.get("description", "")
        _check_flat_system(pc, system)
        components = _read_components(pc, package, system)
        connections = _read_connections(pc, system)
        start, stop = _experiment_times(pc, root)
        master, record = _master(pc, root, start, stop)
    named = {c.get("name", "") for c in system.findall("ssd:Elements/ssd:Component", NS)}
    for c in connections:
        for end in (c.source, c.target):
            if end not in named:
                pc.add(c.entry.removeprefix("SystemStructure.ssd: "), f"{c.text}: no component {end!r}",
                       f"components are: {', '.join(sorted(named)) or 'none'}")
    for r in record:
        if split_signal(r) is not None and split_signal(r)[0] not in named:
            pc.add("nhbridge annotation", f"recorded signal {r!r}: no component {split_signal(r)[0]!r}",
                   f"components are: {', '.join(sorted(named)) or 'none'}")
    pc.raise_if_any(CosimError)
    return Scenario(name, _split_start_values(components), tuple(connections), master, record, description, str(path),
                    path.parent)


def _master(pc: ProblemCollector, root, start: float, stop: float | None) -> tuple[MasterSettings, tuple[str, ...]]:
    """Return the master settings from nhbridge's annotation; without it: Jacobi with (stop - start) / 1000 steps."""
    el = root.find(f"ssd:Annotations/ssc:Annotation[@type='{ANNOTATION}']/{{{NHB}}}Master", NS)
    stop = stop if stop is not None else start + 1.0
    if not stop > start:
        pc.add("DefaultExperiment", f"stopTime {stop} is not after startTime {start}", "fix the times")
        stop = start + 1.0
    if el is None:
        return MasterSettings(step=(stop - start) / 1000, stop_time=stop, start_time=start), ()
    entry = "nhbridge annotation"
    step = _float(pc, entry, el.get("step"), (stop - start) / 1000)
    algorithm = el.get("algorithm", "jacobi")
    if algorithm not in ALGORITHMS:
        pc.add(entry, f"unknown algorithm {algorithm!r}", f"use one of {', '.join(ALGORITHMS)}")
        algorithm = "jacobi"
    record = tuple(r.get("signal", "") for r in el.findall(f"{{{NHB}}}Record"))
    for r in record:
        if split_signal(r) is None:
            pc.add(entry, f"recorded signal {r!r} is not of the form component.variable", "fix it")
    settings = MasterSettings(step=step if step and step > 0 else (stop - start) / 1000, stop_time=stop,
                              start_time=start, algorithm=algorithm, order=tuple(el.get("order", "").split()),
                              adaptive=el.get("adaptive", "false") in ("true", "1"),
                              tolerance=_float(pc, entry, el.get("tolerance"), 1e-4),
                              min_step=_float(pc, entry, el.get("minStep"), None),
                              max_step=_float(pc, entry, el.get("maxStep"), None),
                              fmu_tolerance=_float(pc, entry, el.get("fmuTolerance"), 1e-8))
    return settings, record
