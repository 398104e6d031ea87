"""Readers of the tables that declare the names of a system file.

The top level and ``name``, ``[coordinates]``, ``[parameters]``, ``[inputs]`` and ``[definitions]``; each
declared symbol goes to the context's symbol table.
"""

from __future__ import annotations

from .bodies import TABLES as BODY_TABLES
from .read_context import ReadContext
from .system import Coordinate, Input, Parameter
from .table_reader import close_match

__all__ = [
    "COORDINATE_KEYS",
    "INPUT_KEYS",
    "PARAMETER_KEYS",
    "TOP_LEVEL",
    "read_coordinates",
    "read_definitions",
    "read_inputs",
    "read_name",
    "read_parameters",
    "read_top_level",
]

TOP_LEVEL = {"name", "description", "coordinates", "parameters", "inputs", "definitions", "energy",
             "forces", "constraints", "outputs", "method", "simulation", "reference", "validation",
             "efforts", "dynamic", "friction", "diodes"}
# [ports] coordinate = "rotational" | "translational" (bridge.model.ports); [animation]: points bridge.animation draws
TOP_LEVEL |= {"ports", "animation"}
TOP_LEVEL |= set(BODY_TABLES)  # [frames], [points], [bodies], [particles], [gravity], [loads], [contacts]
COORDINATE_KEYS = {"start", "velocity", "unit", "description", "nominal"}
PARAMETER_KEYS = {"value", "unit", "description"}
INPUT_KEYS = {"start", "unit", "description"}


def read_top_level(ctx: ReadContext) -> None:
    """Report top-level entries that are not part of the format."""
    for key in ctx.tables.data:
        if key not in TOP_LEVEL:
            ctx.tables.add(key, f"unknown entry [{key}]", close_match(key, TOP_LEVEL)
                           or "allowed: " + ", ".join(sorted(TOP_LEVEL)))


def read_name(ctx: ReadContext) -> str:
    """Read the model name, declared like every other name; "Model" when missing or not a string."""
    name = ctx.tables.data.get("name")
    if name is None:
        ctx.tables.add("name", "the model name is missing", 'add name = "MyModel" at the top of the file')
        return "Model"
    if not isinstance(name, str):
        ctx.tables.add("name", "the model name must be a string", 'write name = "MyModel"')
        return "Model"
    ctx.tables.declare("name", name, "model name")
    return name


def read_coordinates(ctx: ReadContext) -> None:
    """Read the generalized coordinates q with start positions q(0) and velocities q'(0); at least one."""
    tables = ctx.tables
    for cname, spec in tables.table("coordinates", required=True).items():
        entry = f"coordinates.{cname}"
        if not isinstance(spec, dict):
            tables.add(entry, "expected an inline table", f"write {cname} = {{ start = 0.0, velocity = 0.0 }}")
            continue
        tables.check_keys(entry, spec, COORDINATE_KEYS)
        if tables.declare(entry, cname, "coordinate"):
            _coordinate(ctx, entry, cname, spec)
    if not ctx.symbols.coordinates and "coordinates" in tables.data:
        tables.add("coordinates", "no coordinates are declared", "declare at least one coordinate")


def _coordinate(ctx: ReadContext, entry: str, cname: str, spec: dict) -> None:
    tables = ctx.tables
    nominal = _nominal(ctx, entry, spec)
    before = tables.count()
    start = tables.number(f"{entry}.start", spec.get("start"))
    velocity = tables.number(f"{entry}.velocity", spec.get("velocity"), required=False)
    c = Coordinate(cname, start, velocity, tables.coordinate_unit(f"{entry}.unit", spec.get("unit")),
                   tables.text(f"{entry}.description", spec.get("description")), nominal)
    if tables.count() > before:
        ctx.symbols.refuse(c.symbol, c.velocity_symbol)
    ctx.symbols.add_coordinate(c)


def _nominal(ctx: ReadContext, entry: str, spec: dict) -> float | None:
    """Read the coordinate's typical magnitude (> 0); None when not given or invalid."""
    if "nominal" not in spec:
        return None
    nominal = ctx.tables.number(f"{entry}.nominal", spec["nominal"], default=1.0)
    if nominal <= 0:
        ctx.tables.add(f"{entry}.nominal", f"nominal must be positive, got {nominal}",
                       "give the typical magnitude of the coordinate, e.g. 0.01")
        return None
    return nominal


def read_parameters(ctx: ReadContext) -> None:
    """Constant parameters, as ``name = value`` or an inline table."""
    tables = ctx.tables
    for pname, spec in tables.table("parameters").items():
        entry = f"parameters.{pname}"
        if not isinstance(spec, dict):
            spec = {"value": spec}
        tables.check_keys(entry, spec, PARAMETER_KEYS)
        if tables.declare(entry, pname, "parameter"):
            before = tables.count()
            par = Parameter(pname, tables.number(f"{entry}.value", spec.get("value")),
                            tables.unit(f"{entry}.unit", spec.get("unit")),
                            tables.text(f"{entry}.description", spec.get("description")))
            if tables.count() > before:
                ctx.symbols.refuse(par.symbol)
            ctx.symbols.add_parameter(par)


def read_inputs(ctx: ReadContext) -> None:
    """External input signals u(t) with their start values."""
    tables = ctx.tables
    for uname, spec in tables.table("inputs").items():
        entry = f"inputs.{uname}"
        if not isinstance(spec, dict):
            tables.add(entry, "expected an inline table", f"write {uname} = {{ start = 0.0, unit = \"N\" }}")
            continue
        tables.check_keys(entry, spec, INPUT_KEYS)
        if tables.declare(entry, uname, "input"):
            before = tables.count()
            u = Input(uname, tables.number(f"{entry}.start", spec.get("start"), required=False),
                      tables.unit(f"{entry}.unit", spec.get("unit")),
                      tables.text(f"{entry}.description", spec.get("description")))
            if tables.count() > before:
                ctx.symbols.refuse(u.symbol)
            ctx.symbols.add_input(u)


def read_definitions(ctx: ReadContext) -> None:
    """Declare all definitions first (they may refer to each other in any order), then parse each."""
    for dname, text in ctx.tables.table("definitions").items():
        if ctx.tables.declare(f"definitions.{dname}", dname, "definition"):
            ctx.symbols.add_definition(dname, text)
    ctx.symbols.resolve_definitions()
