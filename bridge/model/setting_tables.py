"""Readers of the tables of settings.

``[method]`` (independent velocities, fixed split), ``[simulation]`` and ``[ports]``.
"""

from __future__ import annotations

from .ports import PORT_KINDS, port_name
from .read_context import ReadContext
from .table_reader import close_match
from .units import compatible

__all__ = [
    "METHOD_KEYS",
    "SIMULATION_KEYS",
    "read_fixed_split",
    "read_independent",
    "read_ports",
    "read_simulation",
]

METHOD_KEYS = {"independent", "fixed_split"}
SIMULATION_KEYS = {"stop_time", "interval", "rtol", "atol"}


def read_independent(ctx: ReadContext, m: int, m_known: bool = True) -> tuple[str, ...] | None:
    """Read the independent velocities chosen for the reduced methods (n - m coordinate names), if given.

    They are followed by the auxiliary coordinates (the integrals of the dynamic variables are always
    independent); None when not given. ``m_known``: False when the constraints of the body tables are unknown
    (their problem is reported): the count is not checked.
    """
    method = ctx.tables.table("method")
    ctx.tables.check_keys("method", method, METHOD_KEYS)
    independent = method.get("independent")
    if independent is None:
        return None
    if not isinstance(independent, list) or not all(isinstance(x, str) for x in independent):
        ctx.tables.add("method.independent", "expected a list of coordinate names", 'write ["x", "theta"]')
        return None
    _check_independent(ctx, independent, m, m_known)
    return (*independent, *ctx.symbols.auxiliary)


def _check_independent(ctx: ReadContext, independent: list[str], m: int, m_known: bool) -> None:
    """Each name a coordinate, listed once, and n - m of them for m constraints."""
    coord_names = ctx.symbols.coordinate_names()
    for nm in independent:
        if nm not in coord_names:
            ctx.tables.add("method.independent", f"{nm!r} is not a coordinate",
                           close_match(nm, coord_names) or "list coordinate names")
    if len(set(independent)) != len(independent):
        ctx.tables.add("method.independent", "a coordinate is listed twice", "list each name once")
    n = len(coord_names) - len(ctx.symbols.auxiliary)  # dynamic variables' integrals
    if len(independent) != n - m and m_known:
        given, free = len(independent), n - m  # m: rows after dropping repeated generated ones (rank)
        ctx.tables.add("method.independent",
                       f"{given} independent velocit{'y' if given == 1 else 'ies'} given, but the system has "
                       f"{n} coordinates and {m} independent constraint{'' if m == 1 else 's'}, so exactly "
                       f"{free} {'is' if free == 1 else 'are'} independent", "list that many coordinates")


def read_fixed_split(ctx: ReadContext) -> bool:
    """Read ``[method] fixed_split``: whether the reduced methods keep the start split (never re-partition)."""
    value = ctx.tables.table("method").get("fixed_split", False)
    if not isinstance(value, bool):
        ctx.tables.add("method.fixed_split", f"expected true or false, got {value!r}",
                       "write fixed_split = true to keep the start split for the whole run")
        return False
    return value


def read_ports(ctx: ReadContext) -> dict[str, str]:
    """Read ``[ports]``: coordinate name -> port kind (:data:`bridge.model.ports.PORT_KINDS`).

    Each coordinate's unit is the kind's (or none), and the connector's name ``flange_<coordinate>`` is not
    taken by another name.
    """
    tables = ctx.tables
    ports: dict[str, str] = {}
    coords = {c.name: c for c in ctx.symbols.coordinates}
    kinds = ", ".join(f'"{k}"' for k in PORT_KINDS)
    for cname, kind in tables.table("ports").items():
        entry = f"ports.{cname}"
        if cname not in coords:
            tables.add(entry, f"{cname!r} is not a coordinate, so it cannot be a port",
                       close_match(cname, coords) or f"name a coordinate: {', '.join(coords) or '(none declared)'}")
            continue
        if not isinstance(kind, str) or kind not in PORT_KINDS:
            hint = close_match(kind, PORT_KINDS) if isinstance(kind, str) else ""
            tables.add(entry, f"unknown port kind {kind!r}", (hint + "; " if hint else "") +
                       f"write {cname} = one of {kinds}")
            continue
        spec, unit = PORT_KINDS[kind], coords[cname].unit
        if unit and not compatible(unit, spec.unit):
            tables.add(entry, f"a {kind} port needs a coordinate in {spec.unit} (its flange's {spec.potential} "
                       f"is in {spec.unit}), but {cname} is in {unit}",
                       f"declare {cname} in {spec.unit}, or choose the port kind of its unit ({kinds})")
            continue
        if port_name(cname) in tables.names:
            tables.add(entry, f"the port's connector would be named {port_name(cname)}, which is already "
                       f"declared as a {tables.names[port_name(cname)]}", "rename that one")
            continue
        ports[cname] = kind
    return ports


def read_simulation(ctx: ReadContext) -> tuple[float, dict[str, float]]:
    """Read ``[simulation]``: the stop time (default 10 s) and the interval and tolerances given (each positive)."""
    tables = ctx.tables
    sim = tables.table("simulation")
    tables.check_keys("simulation", sim, SIMULATION_KEYS)
    stop_time = tables.number("simulation.stop_time", sim.get("stop_time"), required=False, default=10.0)
    if stop_time <= 0:
        tables.add("simulation.stop_time", f"stop_time must be positive, got {stop_time}",
                   "give the simulated duration in seconds, e.g. 10.0")
    settings: dict[str, float] = {}
    for key in ("interval", "rtol", "atol"):
        if key in sim:
            value = tables.number(f"simulation.{key}", sim[key])
            if value <= 0:
                tables.add(f"simulation.{key}", f"{key} must be positive", "give a positive number")
            settings[key] = value
    return stop_time, settings
