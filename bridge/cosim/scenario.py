"""The co-simulation scenario: components, connections, master settings and recorded signals.

A scenario file is TOML (parsed with ``tomllib``; every value is checked, nothing is evaluated)::

    name = "HydropulsatorMotors"
    connections = [                   # top-level keys come before the first [table]
        "pulsator.w_r -> motor_r.w",
        { from = "motor_r.tau", to = "pulsator.Mr", gain = 1.0, offset = 0.0 },
    ]
    record = ["pulsator.phi", "pulsator.w_r", "motor_r.tau"]   # default: every output
    [components.pulsator]
    system = "pulsator.toml"          # an nhbridge system file, built into an FMU for the run
    parameters = { hr = 0.1 }
    [components.motor_r]
    modelica = "Motor.mo"             # a Modelica model compiled by Rumoca (model = "Motor" by default: the file stem)
    parameters = { M0 = 5.0, w0 = 50.0 }
    [components.other]
    fmu = "controller.fmu"            # or any FMI 2.0/3.0 Co-Simulation FMU
    [master]
    step = 0.005                      # communication step h
    stop_time = 2.0
    algorithm = "gauss-seidel"        # or "jacobi"

:func:`parse_scenario` collects every problem of the file and raises them together; whether the
variables exist and fit is checked later against the FMUs (:mod:`bridge.cosim.checks`).
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ProblemCollector
from .errors import CosimError

ALGORITHMS = ("jacobi", "gauss-seidel")
KINDS = ("fmu", "system", "modelica")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
TOP_KEYS = ("name", "description", "components", "connections", "master", "record")
COMPONENT_KEYS = (*KINDS, "model", "method", "fmi_version", "parameters", "start", "description")
CONNECTION_KEYS = ("from", "to", "gain", "offset", "ignore_units")
MASTER_KEYS = ("step", "stop_time", "start_time", "algorithm", "order", "adaptive", "tolerance", "min_step",
               "max_step", "fmu_tolerance", "record")


@dataclass(frozen=True)
class ComponentSpec:
    """One component: where its FMU comes from and the values set before initialization."""

    name: str
    kind: str                                   # "fmu", "system" or "modelica"
    source: Path                                # the .fmu, system file or .mo file
    model: str = ""                             # Modelica model name (kind "modelica")
    method: str = "lagrange"                    # derivation method (kind "system")
    fmi_version: int = 2                        # FMI version of the built FMU (kind "system")
    parameters: tuple[tuple[str, float], ...] = ()
    start: tuple[tuple[str, float], ...] = ()   # start values of states and inputs
    description: str = ""


@dataclass(frozen=True)
class Connection:
    """``target.input = gain * source.output + offset``, exchanged at every communication point."""

    source: str
    output: str
    target: str
    input: str
    gain: float = 1.0
    offset: float = 0.0
    ignore_units: bool = False
    entry: str = "connections"

    @property
    def text(self) -> str:
        """The connection written ``source.output -> target.input`` for messages."""
        return f"{self.source}.{self.output} -> {self.target}.{self.input}"


@dataclass(frozen=True)
class MasterSettings:
    """Communication step and ordering; with ``adaptive`` the step is controlled by step doubling."""

    step: float
    stop_time: float
    start_time: float = 0.0
    algorithm: str = "jacobi"
    order: tuple[str, ...] = ()                 # Gauss-Seidel order (default: from the connections)
    adaptive: bool = False
    tolerance: float = 1e-4                     # adaptive: local error per step on each coupling signal
    min_step: float | None = None
    max_step: float | None = None
    fmu_tolerance: float = 1e-8                 # relative tolerance passed to every FMU's own solver


@dataclass(frozen=True)
class Scenario:
    """A co-simulation scenario (frozen); paths are absolute."""

    name: str
    components: tuple[ComponentSpec, ...]
    connections: tuple[Connection, ...]
    master: MasterSettings
    record: tuple[str, ...] = ()                # "component.variable"; empty: every output
    description: str = ""
    source: str = "<scenario>"
    folder: Path = field(default=Path("."), compare=False)

    def component(self, name: str) -> ComponentSpec:
        """Return the component named ``name``.

        Parameters
        ----------
        name : str
            The component's name in the scenario.

        Returns
        -------
        ComponentSpec
            The component.

        Raises
        ------
        KeyError
            When the scenario has no such component.
        """
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)

    def with_master(self, **changes: Any) -> Scenario:
        """Return the same scenario with some master settings replaced (None values are ignored)."""
        changes = {k: v for k, v in changes.items() if v is not None}
        return replace(self, master=replace(self.master, **changes)) if changes else self


def split_signal(text: str) -> tuple[str, str] | None:
    """Split ``"motor.tau"`` into ``("motor", "tau")``; the variable may itself contain dots and brackets."""
    comp, dot, var = text.strip().partition(".")
    if not dot or not IDENTIFIER.match(comp) or not var.strip():
        return None
    return comp, var.strip()


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _unknown_keys(pc: ProblemCollector, entry: str, table: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for key in table:
        if key not in allowed:
            close = difflib.get_close_matches(str(key), allowed, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed keys: {', '.join(allowed)}"
            pc.add(f"{entry}.{key}" if entry else str(key), "unknown key", hint)


def _values(pc: ProblemCollector, entry: str, table: Any) -> tuple[tuple[str, float], ...]:
    if not isinstance(table, Mapping):
        pc.add(entry, "must be a table of variable names and numbers", 'write e.g. { M0 = 5.0, w0 = 50.0 }')
        return ()
    out = []
    for name, value in table.items():
        if not _number(value):
            pc.add(f"{entry}.{name}", f"must be a finite number, got {value!r}",
                   "write a number; expressions are not evaluated")
            continue
        out.append((str(name), float(value)))
    return tuple(out)


def _component(pc: ProblemCollector, name: str, data: Any, folder: Path) -> ComponentSpec | None:
    entry = f"components.{name}"
    if not IDENTIFIER.match(name):
        pc.add(entry, "a component name must be an identifier (letters, digits, _)", "rename the component")
        return None
    if not isinstance(data, Mapping):
        pc.add(entry, "must be a table", 'write [components.NAME] with fmu = "...", system = "..." or modelica = "..."')
        return None
    _unknown_keys(pc, entry, data, COMPONENT_KEYS)
    kinds = [k for k in KINDS if k in data]
    if len(kinds) != 1:
        pc.add(entry, "needs exactly one of fmu, system, modelica" + (f" (has {', '.join(kinds)})" if kinds else ""),
               'give the FMU (fmu = "x.fmu"), an nhbridge system file (system = "x.toml") or a Modelica file '
               '(modelica = "x.mo")')
        return None
    kind = kinds[0]
    raw = data[kind]
    if not isinstance(raw, str) or not raw.strip():
        pc.add(f"{entry}.{kind}", "must be a file path", "write a path relative to the scenario file")
        return None
    source = (folder / raw).resolve()
    suffix = {"fmu": ".fmu", "system": ".toml", "modelica": ".mo"}[kind]
    ok = True
    if source.suffix != suffix:
        pc.add(f"{entry}.{kind}", f"{raw!r} does not end in {suffix}", f"give a {suffix} file")
        ok = False
    elif not source.is_file():
        pc.add(f"{entry}.{kind}", f"file {raw!r} not found (looked for {source})",
               "paths are relative to the scenario file's folder")
        ok = False
    model = data.get("model", source.stem if kind == "modelica" else "")
    if "model" in data and (kind != "modelica" or not isinstance(model, str) or not IDENTIFIER.match(model)):
        pc.add(f"{entry}.model", "is the Modelica model name of a modelica component (an identifier)",
               "remove it or correct it")
        ok = False
    method = data.get("method", "lagrange")
    if "method" in data:
        from ..derivation.methods import METHODS

        if kind != "system" or method not in METHODS:
            pc.add(f"{entry}.method", f"is the derivation method of a system component, one of {', '.join(METHODS)}",
                   "remove it or correct it")
            ok = False
    version = data.get("fmi_version", 2)
    if "fmi_version" in data and (kind != "system" or version not in (2, 3) or isinstance(version, bool)):
        pc.add(f"{entry}.fmi_version", "is the FMI version (2 or 3) nhbridge builds a system component with",
               "write 2 or 3; for an FMU the version is read from the FMU")
        ok = False
    params = _values(pc, f"{entry}.parameters", data.get("parameters", {}))
    start = _values(pc, f"{entry}.start", data.get("start", {}))
    description = data.get("description", "")
    if not isinstance(description, str):
        pc.add(f"{entry}.description", "must be a string", "quote it")
        description = ""
    if not ok:
        return None
    return ComponentSpec(name, kind, source, model, method, int(version), params, start, description)


def _endpoint(pc: ProblemCollector, entry: str, text: Any) -> tuple[str, str] | None:
    parsed = split_signal(text) if isinstance(text, str) else None
    if parsed is None:
        pc.add(entry, f"{text!r} is not of the form component.variable", 'write e.g. "motor_r.tau"')
    return parsed


def _connection(pc: ProblemCollector, entry: str, item: Any) -> Connection | None:
    if isinstance(item, str):
        left, arrow, right = item.partition("->")
        if not arrow:
            pc.add(entry, f"{item!r} has no '->'", 'write "source.output -> target.input"')
            return None
        a, b = _endpoint(pc, entry, left), _endpoint(pc, entry, right)
        return Connection(*a, *b, entry=entry) if a and b else None
    if not isinstance(item, Mapping):
        pc.add(entry, "must be a string or a table", 'write "a.y -> b.u" or { from = "a.y", to = "b.u", gain = 2.0 }')
        return None
    _unknown_keys(pc, entry, item, CONNECTION_KEYS)
    if "from" not in item or "to" not in item:
        pc.add(entry, "needs both 'from' and 'to'", 'write { from = "a.y", to = "b.u" }')
        return None
    a, b = _endpoint(pc, f"{entry}.from", item["from"]), _endpoint(pc, f"{entry}.to", item["to"])
    gain, offset = item.get("gain", 1.0), item.get("offset", 0.0)
    good = True
    for key, value in (("gain", gain), ("offset", offset)):
        if not _number(value):
            pc.add(f"{entry}.{key}", f"must be a finite number, got {value!r}", "write a number; expressions are "
                   "not evaluated")
            good = False
    ignore = item.get("ignore_units", False)
    if not isinstance(ignore, bool):
        pc.add(f"{entry}.ignore_units", "must be true or false", "write true or false")
        good = False
    if not (a and b and good):
        return None
    return Connection(*a, *b, float(gain), float(offset), ignore, entry)


def _positive(pc: ProblemCollector, entry: str, value: Any, required: bool) -> float | None:
    if value is None:
        if required:
            pc.add(entry, "is missing", "give a positive number of seconds")
        return None
    if not _number(value) or not value > 0:
        pc.add(entry, f"must be a positive number, got {value!r}", "give a positive number of seconds")
        return None
    return float(value)


def _master(pc: ProblemCollector, data: Any) -> tuple[MasterSettings | None, Any]:
    if not isinstance(data, Mapping):
        pc.add("master", "is missing or not a table", "add [master] with step and stop_time")
        return None, None
    _unknown_keys(pc, "master", data, MASTER_KEYS)
    step = _positive(pc, "master.step", data.get("step"), required=True)
    stop = _positive(pc, "master.stop_time", data.get("stop_time"), required=True)
    start = data.get("start_time", 0.0)
    if not _number(start):
        pc.add("master.start_time", f"must be a number, got {start!r}", "give the start time in seconds")
        start = 0.0
    if stop is not None and not stop > start:
        pc.add("master.stop_time", f"must be after start_time ({start})", "give a later stop time")
    algorithm = data.get("algorithm", "jacobi")
    if algorithm not in ALGORITHMS:
        pc.add("master.algorithm", f"unknown algorithm {algorithm!r}", f"use one of {', '.join(ALGORITHMS)}")
    order = data.get("order", [])
    if not isinstance(order, list) or not all(isinstance(o, str) for o in order):
        pc.add("master.order", "must be a list of component names", 'write e.g. ["pulsator", "motor_r"]')
        order = []
    adaptive = data.get("adaptive", False)
    if not isinstance(adaptive, bool):
        pc.add("master.adaptive", "must be true or false", "write true or false")
        adaptive = False
    tol = _positive(pc, "master.tolerance", data.get("tolerance", 1e-4), required=False) or 1e-4
    fmu_tol = _positive(pc, "master.fmu_tolerance", data.get("fmu_tolerance", 1e-8), required=False) or 1e-8
    min_step = _positive(pc, "master.min_step", data.get("min_step"), required=False)
    max_step = _positive(pc, "master.max_step", data.get("max_step"), required=False)
    if min_step and max_step and min_step > max_step:
        pc.add("master.min_step", f"is larger than max_step ({max_step})", "swap them")
    if step is None or stop is None:
        return None, data.get("record")
    return MasterSettings(step, stop, float(start), algorithm, tuple(order), adaptive, tol, min_step, max_step,
                          fmu_tol), data.get("record")


def parse_scenario(text: str, source: str = "<scenario>", folder: Path | None = None) -> Scenario:
    """Check a scenario given as TOML text; relative paths are resolved against ``folder``."""
    folder = (folder or Path(".")).resolve()
    pc = ProblemCollector(source)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        pc.add("", f"not valid TOML: {exc}", "fix the syntax")
        pc.raise_if_any(CosimError)
    _unknown_keys(pc, "", data, TOP_KEYS)
    name = data.get("name", Path(source).stem if source != "<scenario>" else "Cosim")
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        pc.add("name", f"{name!r} is not an identifier", "use letters, digits and _")
        name = "Cosim"
    description = data.get("description", "")
    if not isinstance(description, str):
        pc.add("description", "must be a string", "quote it")
        description = ""
    comps_data = data.get("components")
    components = _components(pc, comps_data, folder)
    connections = _connections(pc, data.get("connections", []))
    master, master_record = _master(pc, data.get("master"))
    record = _record(pc, data.get("record", master_record or []))
    names = {c.name for c in components}
    known = names | {str(n) for n in (comps_data or {})} if isinstance(comps_data, Mapping) else names
    _check_references(pc, known, connections, record, master)
    pc.raise_if_any(CosimError)
    return Scenario(name, tuple(components), tuple(connections), master, tuple(record), description, source, folder)


def _components(pc: ProblemCollector, comps_data: Any, folder: Path) -> list[ComponentSpec]:
    """Return the checked components of the ``[components]`` tables."""
    components: list[ComponentSpec] = []
    if not isinstance(comps_data, Mapping) or not comps_data:
        pc.add("components", "no components", "add [components.NAME] tables")
    else:
        for cname, cdata in comps_data.items():
            comp = _component(pc, str(cname), cdata, folder)
            if comp:
                components.append(comp)
    return components


def _connections(pc: ProblemCollector, conns_data: Any) -> list[Connection]:
    """Return the checked connections of the ``connections`` list."""
    connections: list[Connection] = []
    if not isinstance(conns_data, list):
        pc.add("connections", "must be a list", 'write connections = ["a.y -> b.u", ...]')
    else:
        for i, item in enumerate(conns_data):
            conn = _connection(pc, f"connections[{i + 1}]", item)
            if conn:
                connections.append(conn)
    return connections


def _record(pc: ProblemCollector, record: Any) -> list[str]:
    """Return the recorded signals (each ``component.variable``); none if ``record`` is not a list of strings."""
    if not isinstance(record, list) or not all(isinstance(r, str) for r in record):
        pc.add("record", "must be a list of signals", 'write record = ["pulsator.phi", "motor_r.tau"]')
        record = []
    for r in record:
        if split_signal(r) is None:
            pc.add("record", f"{r!r} is not of the form component.variable", 'write e.g. "pulsator.phi"')
    return record


def _check_references(pc: ProblemCollector, known: set[str], connections: list[Connection], record: list[str],
                      master: MasterSettings | None) -> None:
    """Check that the connections, the recorded signals and the master's order name known components."""
    for conn in connections:
        for comp in (conn.source, conn.target):
            if comp not in known:
                pc.add(conn.entry, f"{conn.text}: no component {comp!r}",
                       f"components are: {', '.join(sorted(known)) or 'none'}")
    for r in record:
        parsed = split_signal(r)
        if parsed and parsed[0] not in known:
            pc.add("record", f"{r!r}: no component {parsed[0]!r}", f"components are: {', '.join(sorted(known))}")
    if master is not None:
        for o in master.order:
            if o not in known:
                pc.add("master.order", f"no component {o!r}", f"components are: {', '.join(sorted(known))}")
        if master.order and sorted(master.order) != sorted(known):
            pc.add("master.order", "must name every component exactly once", f"components are: "
                   f"{', '.join(sorted(known))}")


def load_scenario(path: str | Path) -> Scenario:
    """Read a TOML scenario file."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CosimError(f"{path}: cannot read the scenario file ({exc}); check the path") from exc
    return parse_scenario(text, str(path), path.parent)
