"""Reading and checking system files.

Every problem found is collected and reported at once as a :class:`SystemFileError`,
one paragraph per problem naming the file, the entry and the fix. Each table has its reader
(:mod:`.state_tables`, :mod:`.equation_tables`, :mod:`.effort_reader`, :mod:`.bodies`, :mod:`.setting_tables`),
given the :class:`~bridge.model.read_context.ReadContext` of the reading; the start state is checked by
:mod:`.start_state`.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import Problem, ProblemCollector, SystemFileError
from .bodies import merge_bodies
from .effort_checks import effort_jacobian_problems, friction_normal_problems
from .effort_reader import EffortTables
from .efforts import dynamic_outputs
from .equation_tables import read_constraints, read_energy, read_forces, read_outputs
from .multibody import Multibody
from .overrides import apply_overrides
from .read_context import ReadContext
from .reserved_names import (
    C_KEYWORDS,
    GENERATED_NAMES,
    IDENTIFIER,
    MAX_NAME_LENGTH,
    MODELICA_BUILTINS,
    MODELICA_KEYWORDS,
    RESERVED,
    RESERVED_PREFIXES,
)
from .setting_tables import read_fixed_split, read_independent, read_ports, read_simulation
from .start_state import START_TOL, check_start, dependent_constraint_problems, independent_rows_problems
from .state_tables import (
    TOP_LEVEL,
    read_coordinates,
    read_definitions,
    read_inputs,
    read_name,
    read_parameters,
    read_top_level,
)
from .system import System
from .unit_check import unit_problems
from .values import check_values

__all__ = [
    "C_KEYWORDS",
    "GENERATED_NAMES",
    "IDENTIFIER",
    "MAX_NAME_LENGTH",
    "MODELICA_BUILTINS",
    "MODELICA_KEYWORDS",
    "RESERVED",
    "RESERVED_PREFIXES",
    "START_TOL",
    "TOP_LEVEL",
    "build_system",
    "check_start",
    "dependent_constraint_problems",
    "independent_rows_problems",
    "load_system",
    "parse_system",
]


def load_system(path: str | Path, overrides: Mapping[str, Any] | None = None) -> System:
    """Read the system in ``path``, with ``overrides`` (name -> value, as ``--set``) applied.

    Parameters
    ----------
    path : str or Path
        The system file (TOML, UTF-8).
    overrides : mapping of str to value, optional
        Parameters, start positions ``q``, start velocities ``der(q)`` or input start values; the start state is
        then made consistent with the constraints (:mod:`bridge.model.overrides`) and every check runs again.

    Returns
    -------
    System

    Raises
    ------
    SystemFileError
        Every problem of the file (or of the overrides) at once.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from bridge import load_system
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
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "oscillator.toml"
    ...     _ = path.write_text(text)
    ...     system = load_system(path, overrides={"k": 18.0})
    >>> [(p.name, p.value) for p in system.parameters]
    [('m', 2.0), ('k', 18.0)]
    """
    if overrides:
        return apply_overrides(load_system(path), overrides)
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SystemFileError(f"{path}: cannot read the system file ({exc.strerror or exc})") from exc
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SystemFileError(f"{path}: the file is not UTF-8 text (byte {exc.start}); save it as UTF-8") from exc
    return parse_system(text, str(path))


def parse_system(text: str, source: str = "<string>") -> System:
    r"""Read the system of a system file's text (TOML).

    Parameters
    ----------
    text : str
        The file's text.
    source : str
        The name the messages give the text.

    Returns
    -------
    System

    Raises
    ------
    SystemFileError
        Malformed TOML, or every problem of the system at once.

    Examples
    --------
    >>> from bridge import parse_system
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
    >>> system = parse_system(text)
    >>> system.name, system.n, system.dof
    ('Oscillator', 1, 1)
    >>> parse_system('name = "Bad"\n[coordinates]\nx = { start = "a" }', source="bad.toml")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bridge.errors.SystemFileError: bad.toml: ...
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        col = ProblemCollector(source)
        col.add("toml", f"malformed TOML ({exc})",
                "check quotes, brackets and that each key appears once; see the format in README.md")
        raise SystemFileError(col.problems) from exc
    except RecursionError as exc:
        raise SystemFileError(Problem("toml", "the TOML is nested too deep",
                                      "a system file needs only a few levels of tables", source)) from exc
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise SystemFileError(Problem("toml", "a number in the file has too many digits to be read",
                                      "write numbers with at most 100 digits", source)) from exc
    return build_system(data, source)


def build_system(data: Mapping[str, Any], source: str = "<python>", multibody: Multibody | None = None) -> System:
    """Build the system of a mapping in the file format.

    Parameters
    ----------
    data : mapping
        The tables of a system file; expressions may be strings (read by the whitelisting parser) or sympy
        expressions over :mod:`bridge.symbols`.
    source : str
        The name the messages give the mapping.
    multibody : Multibody, optional
        The bodies its energies were computed from when they are not tables of the mapping (``from_mechanics``),
        so that their masses and inertias are checked (and named) before the kinetic energy made of them.

    Returns
    -------
    System

    Raises
    ------
    SystemFileError
        Every problem of the mapping at once.

    Examples
    --------
    >>> from bridge import build_system, symbols
    >>> m, k, x = symbols.q("m"), symbols.q("k"), symbols.q("x")
    >>> system = build_system({"name": "Oscillator", "coordinates": {"x": {"start": 0.1}},
    ...                        "parameters": {"m": 2.0, "k": 8.0},
    ...                        "energy": {"kinetic": "1/2*m*der(x)^2", "potential": k * x**2 / 2}})
    >>> system.potential
    k*x**2/2
    """
    return _assemble(ReadContext.of(data, source), multibody)


def _assemble(ctx: ReadContext, given_multibody: Multibody | None) -> System:
    """Read the tables in file-format order, report all problems at once, then check the system.

    The checks cover the values, the units and the start state.
    """
    tables, symbols, problems = ctx.tables, ctx.symbols, ctx.problems
    read_top_level(ctx)
    name = read_name(ctx)
    description = tables.text("description", tables.data.get("description", ""))
    read_coordinates(ctx)
    read_parameters(ctx)
    read_inputs(ctx)
    effort_tables = EffortTables(ctx)
    effort_tables.declare()
    read_definitions(ctx)
    T, V, D = read_energy(ctx)
    forces = read_forces(ctx)
    holonomic, nonholonomic = read_constraints(ctx)
    merged = merge_bodies(ctx, T, V, forces, holonomic, nonholonomic)
    T, V, forces, holonomic, nonholonomic = (merged.kinetic, merged.potential, merged.forces, merged.holonomic,
                                             merged.nonholonomic)
    outputs = read_outputs(ctx)
    efforts, dynamic = effort_tables.parse(
        {"energy.kinetic": T, "energy.potential": V, "energy.dissipation": D}, forces,
        {f"constraints.{kind}[{i + 1}]": e for kind, es in (("holonomic", holonomic),
                                                             ("nonholonomic", nonholonomic))
         for i, e in enumerate(es)}, outputs.expressions)
    friction = effort_tables.friction(forces)
    effort_tables.substitute_smooth(forces, outputs.expressions)
    diodes = effort_tables.diodes()
    dyn_out, dyn_units, dyn_text = dynamic_outputs(dynamic)
    outputs.expressions.update(dyn_out)
    outputs.units.update(dyn_units)
    outputs.descriptions.update(dyn_text)
    independent = read_independent(ctx, len(holonomic) + len(nonholonomic), m_known=not merged.broken)
    fixed_split = read_fixed_split(ctx)
    stop_time, settings = read_simulation(ctx)
    ports = read_ports(ctx)
    problems.raise_if_any()

    system = System(
        name=name, description=description, coordinates=tuple(symbols.coordinates),
        parameters=tuple(symbols.parameters), inputs=tuple(symbols.inputs), kinetic=T, potential=V, dissipation=D,
        forces=forces, holonomic=tuple(holonomic), nonholonomic=tuple(nonholonomic), outputs=outputs.expressions,
        output_units=outputs.units, output_descriptions=outputs.descriptions,
        definitions=dict(symbols.definitions), independent=independent, fixed_split=fixed_split,
        ports=ports,
        stop_time=stop_time, source=tables.source, interval=settings.get("interval"), rtol=settings.get("rtol"),
        atol=settings.get("atol"), efforts=efforts, dynamic=dynamic,
        friction=friction, diodes=diodes,
        multibody=merged.multibody if merged.multibody is not None else given_multibody,
        constraint_labels=merged.labels,
    )
    check_values(system, problems)
    for entry, message, hint in unit_problems(system):
        problems.add(entry, message, hint)
    system = check_start(system, problems)
    for entry, message, hint in [*effort_jacobian_problems(system), *friction_normal_problems(system)]:
        problems.add(entry, message, hint)
    problems.raise_if_any()
    return system
