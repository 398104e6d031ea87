"""Reading and checking system files.

Every problem found is collected and reported at once as a :class:`SystemFileError`,
one paragraph per problem naming the file, the entry and the fix.
"""

from __future__ import annotations

import difflib
import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from ..errors import Problem, ProblemCollector, SystemFileError
from . import symbols as S
from .bodies import TABLES as BODY_TABLES
from .bodies import merge_bodies, uses_bodies
from .efforts import EffortTables, dynamic_outputs, effort_jacobian_problems, friction_normal_problems
from .expressions import (
    FUNCTIONS,
    MAX_TREE_SIZE,
    SPECIAL_NAMES,
    ExpressionError,
    caret,
    literal_value,
    parse_expression,
    tree_size,
)
from .kinks import diff
from .mechanics import (
    SINGULAR_SPLIT,
    Differentiator,
    independent_from_names,
    split_health,
    to_se,
    velocity_constraints,
)
from .multibody import Multibody
from .numeric import compile_exprs
from .system import Coordinate, Input, Parameter, System, finite, total_derivative
from .unit_check import unit_problems
from .units import si_problem, unit_problem
from .values import check_values

MODELICA_KEYWORDS = frozenset("""
algorithm and annotation assert block break class connect connector constant constrainedby der
discrete each else elseif elsewhen encapsulated end enumeration equation expandable extends external
false final flow for function if import impure in initial inner input loop model not operator or outer
output package parameter partial protected public pure record redeclare replaceable return stream then
true type when while within time
""".split())
C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile
while _Bool _Complex _Imaginary bool true false NULL main
""".split())
#: Modelica's predefined types, built-in operators and functions, and the standard library's top-level names
MODELICA_BUILTINS = frozenset("""
Real Integer Boolean String StateSelect ExternalObject AssertionLevel Connections Clock Subtask Modelica
ModelicaServices Complex abs sign sqrt div mod rem ceil floor integer log10 initial terminal noEvent smooth
sample pre edge change reinit delay cardinality homotopy semiLinear inStream actualStream getInstanceName
spatialDistribution ndims size scalar vector matrix identity diagonal zeros ones fill linspace transpose
outerProduct symmetric cross skew product sum cat array assert terminate previous hold subSample superSample
shiftSample backSample noClock interval firstTick
""".split())
MAX_NAME_LENGTH = 64
#: names the exporters generate (velocity variables der_<q>, multipliers, residuals, temporaries)
GENERATED_NAMES = frozenset({"lambda", "residual"})
RESERVED_PREFIXES = ("der_", "nhb_", "fmi")
RESERVED = (MODELICA_KEYWORDS | MODELICA_BUILTINS | C_KEYWORDS | frozenset(FUNCTIONS) | frozenset(SPECIAL_NAMES)
            | GENERATED_NAMES)
IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")

TOP_LEVEL = {"name", "description", "coordinates", "parameters", "inputs", "definitions", "energy",
             "forces", "constraints", "outputs", "method", "simulation", "reference", "validation",
             "efforts", "dynamic", "friction", "diodes"}
# [ports] coordinate = "rotational" | "translational" (bridge.model.ports); [animation]: points bridge.animation draws
TOP_LEVEL |= {"ports", "animation"}
TOP_LEVEL |= set(BODY_TABLES)  # [frames], [points], [bodies], [particles], [gravity], [loads], [contacts]
COORDINATE_KEYS = {"start", "velocity", "unit", "description", "nominal"}
PARAMETER_KEYS = {"value", "unit", "description"}
INPUT_KEYS = {"start", "unit", "description"}
OUTPUT_KEYS = {"expr", "unit", "description"}
ENERGY_KEYS = {"kinetic", "potential", "dissipation"}
CONSTRAINT_KEYS = {"holonomic", "nonholonomic"}
METHOD_KEYS = {"independent", "fixed_split"}
SIMULATION_KEYS = {"stop_time", "interval", "rtol", "atol"}
START_TOL = 1e-9


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else ""


def load_system(path: str | Path, overrides: Mapping[str, Any] | None = None) -> System:
    """The system in ``path``; ``overrides`` (name -> value, as ``--set``) applied by :mod:`bridge.model.overrides`."""
    if overrides:
        from .overrides import apply_overrides

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
    """The system of a mapping in the file format; ``multibody``: the bodies its energies were computed from when
    they are not tables of the mapping (``from_mechanics``), so that their masses and inertias are checked (and
    named) before the kinetic energy made of them."""
    builder = _Builder(data, source)
    builder.given_multibody = multibody
    return builder.build()


class _Reported(ExpressionError):
    """A broken definition used elsewhere: its problem is reported once, at the definition."""


class _Builder:
    """One pass over the mapping; collects problems instead of stopping at the first."""

    def __init__(self, data: Mapping[str, Any], source: str):
        self.data = data
        self.source = source
        self.p = ProblemCollector(source)
        self.names: dict[str, str] = {}  # name -> kind
        self.symbols: dict[str, sp.Expr] = {}
        self.definition_text: dict[str, Any] = {}
        self.definitions: dict[str, sp.Expr] = {}
        self._defining: list[str] = []
        self.coords: list[Coordinate] = []
        self.params: list[Parameter] = []
        self.inputs: list[Input] = []
        self.output_units: dict[str, str] = {}
        self.output_descriptions: dict[str, str] = {}
        self.given_multibody: Multibody | None = None
        #: symbols whose value (a parameter's, a start value) was refused: checks computed from them are skipped
        self.bad_values: set[sp.Symbol] = set()

    # -- small helpers -------------------------------------------------------------
    def table(self, key: str, required: bool = False) -> dict:
        value = self.data.get(key, {})
        if key not in self.data and required:
            self.p.add(key, f"the [{key}] table is missing", f"add a [{key}] table")
            return {}
        if not isinstance(value, dict):
            self.p.add(key, f"{key} must be a table, not {type(value).__name__}", f"write it as [{key}]")
            return {}
        return value

    def check_keys(self, entry: str, value: dict, allowed: set[str]) -> None:
        for key in value:
            if key not in allowed:
                hint = _suggest(key, allowed) or "allowed keys: " + ", ".join(sorted(allowed))
                self.p.add(f"{entry}.{key}" if entry else key, f"unknown key {key!r}", hint)

    def declare(self, entry: str, name: str, kind: str) -> bool:
        if not isinstance(name, str) or not name.isascii():
            self.p.add(entry, f"name {name!r} contains non-ASCII characters",
                       "use ASCII letters, digits and underscores, e.g. theta instead of \u03b8")
            return False
        if not IDENTIFIER.match(name):
            self.p.add(entry, f"{name!r} is not a valid identifier",
                       "names start with a letter and contain only letters, digits and underscores")
            return False
        if len(name) > MAX_NAME_LENGTH:
            self.p.add(entry, f"the name {name[:20]}... is {len(name)} characters long (at most {MAX_NAME_LENGTH})",
                       "use a shorter name; it becomes a Modelica, C and file name")
            return False
        if name in RESERVED or name.startswith(RESERVED_PREFIXES):
            what = ("a Modelica keyword" if name in MODELICA_KEYWORDS else "a C keyword" if name in C_KEYWORDS
                    else "a predefined Modelica type, operator or library name" if name in MODELICA_BUILTINS
                    else "a reserved name of the expression language" if name in FUNCTIONS or name in SPECIAL_NAMES
                    else "reserved for generated code")
            self.p.add(entry, f"{name!r} is {what} and cannot be used as a name",
                       f"rename it, e.g. {name}_")
            return False
        if name in self.names:
            self.p.add(entry, f"{name!r} is already declared as a {self.names[name]}",
                       "every name must be unique across coordinates, parameters, inputs, definitions and outputs")
            return False
        self.names[name] = kind
        return True

    def number(self, entry: str, value: Any, required: bool = True, default: float = 0.0) -> float:
        if value is None:
            if required:
                self.p.add(entry, "value is missing", "give a number")
            return default
        if not finite(value):
            self.p.add(entry, f"expected a finite number, got {value!r}", "write a number like 1.5 (no quotes)")
            return default
        return float(value)

    def text(self, entry: str, value: Any, lines: bool = True) -> str:
        """A description: printable text, with line breaks and tabs when ``lines`` (a TOML ``\"\"\"...\"\"\"``
        string; CR LF becomes LF); no other control characters, which XML and C cannot carry."""
        if value is None:
            return ""
        if not isinstance(value, str):
            self.p.add(entry, f"expected a string, got {type(value).__name__}", 'write it in quotes, e.g. "m"')
            return ""
        if lines:
            value = value.replace("\r\n", "\n")
        allowed = "\n\t" if lines else ""
        bad = next((ch for ch in value if not ch.isprintable() and ch not in allowed), None)
        if bad is not None:
            self.p.add(entry, f"the text contains the control or non-character U+{ord(bad):04X}",
                       "remove it; descriptions are printable text (line breaks and tabs allowed), names and "
                       "units printable text on one line")
            return ""
        return value

    def unit(self, entry: str, value: Any) -> str:
        """A unit string in the Modelica/FMI unit syntax (e.g. "N.m", "rad/s", "kg.m2"), or ""."""
        text = self.text(entry, value, lines=False)
        problem = unit_problem(text)
        if problem:
            self.p.add(entry, problem, 'write units like "m", "rad/s", "N.m.s/rad", "kg.m2" or "m/s2" '
                       "(factors joined by '.', one '/', integer exponents, SI symbols and prefixes)")
            return ""
        not_si = si_problem(text)
        if not_si:
            self.p.add(entry, *not_si)
            return ""
        return text

    def coordinate_unit(self, entry: str, value: Any) -> str:
        """A coordinate's unit: its velocity and acceleration get ``<unit>/s`` and ``<unit>/s2`` (as the MSL's
        ``m/s``, ``rad/s2``), so it is a product of factors (``m``, ``rad``, ``m.rad-1``), without ``/``."""
        unit = self.unit(entry, value)
        if unit and unit_problem(f"{unit}/s2"):
            self.p.add(entry, f"the coordinate unit {unit!r} cannot be extended to the velocity's unit "
                       f"({unit}/s)", "write it as a product with negative exponents, e.g. m.rad-1 for m/rad")
            return ""
        return unit

    # -- expression parsing --------------------------------------------------------
    def resolve(self, name: str, pos: int) -> sp.Expr:
        if name in self.symbols:
            return self.symbols[name]
        if name in self.definition_text:
            expr = self.definition(name)
            if expr is sp.nan:
                raise _Reported(f"the definition {name!r} is broken (reported there)", pos)
            return expr
        if name == "t":
            return S.t
        hint = _suggest(name, list(self.symbols) + list(self.definition_text))
        raise ExpressionError(f"unknown name {name!r}", pos,
                              hint or "declare it under [coordinates], [parameters], [inputs] or [definitions]")

    def der(self, expr: sp.Expr, pos: int) -> sp.Expr:
        inputs = [u.symbol for u in self.inputs if u.symbol in expr.free_symbols]
        if inputs:
            raise ExpressionError(f"der() of the input {inputs[0]} is not available", pos,
                                  "inputs are external signals without a known derivative; "
                                  "add its rate as another input")
        qdd = {c.acceleration_symbol for c in self.coords}
        if expr.free_symbols & qdd:
            raise ExpressionError("der() of an acceleration (third derivative) is not supported", pos)
        q = [c.symbol for c in self.coords]
        return total_derivative(expr, q, [c.velocity_symbol for c in self.coords],
                                [c.acceleration_symbol for c in self.coords])

    def definition(self, name: str) -> sp.Expr:
        if name in self.definitions:
            return self.definitions[name]
        if name in self._defining:
            cycle = " -> ".join(self._defining[self._defining.index(name):] + [name])
            raise ExpressionError(f"definitions refer to each other in a cycle: {cycle}", None,
                                  "remove the cycle")
        self._defining.append(name)
        try:
            text = self.definition_text[name]
            if not isinstance(text, (str, int, float, sp.Basic)) or isinstance(text, bool):
                raise ExpressionError(f"expected an expression string, got {type(text).__name__}", None,
                                      'write the expression in quotes, e.g. "m*g*y"')
            expr = self.parse(f"definitions.{name}", text, nested=True)
            if expr is None:  # a problem is recorded already
                raise _Reported("reported", None)
        finally:
            self._defining.pop()
        self.definitions[name] = expr
        return expr

    def parse(self, entry: str, text: Any, nested: bool = False) -> sp.Expr | None:
        """Parse one expression entry; on error record a problem and return None."""
        if isinstance(text, sp.Basic):
            return self.check_sympy(entry, text)
        if isinstance(text, (int, float)) and not isinstance(text, bool) and finite(text):
            try:
                return literal_value(text)
            except ExpressionError as exc:
                self.p.add(entry, exc.message, exc.hint)
                return None
        if not isinstance(text, str):
            self.p.add(entry, f"expected an expression string, got {type(text).__name__}",
                       'write the expression in quotes, e.g. "m*g*y"')
            return None
        try:
            return parse_expression(text, self.resolve, self.der)
        except _Reported:
            if nested:
                raise
            return None
        except ExpressionError as exc:
            if nested:
                raise
            self.p.add(entry, f"{exc.message}{caret(text, exc.position)}", exc.hint)
            return None
        except RecursionError:
            self.p.add(entry, "expression is nested too deep", "split it with [definitions]")
            return None

    def check_sympy(self, entry: str, expr: sp.Basic) -> sp.Expr | None:
        if tree_size(expr) > MAX_TREE_SIZE:
            self.p.add(entry, f"the expression is too large (more than {MAX_TREE_SIZE} operations)",
                       "simplify it or split the model")
            return None
        known = set(self.symbols.values()) | {S.t} | {c.velocity_symbol for c in self.coords} | {
            c.acceleration_symbol for c in self.coords}
        unknown = [s for s in expr.free_symbols if s not in known]
        if unknown:
            self.p.add(entry, f"unknown symbol(s) {', '.join(sorted(map(str, unknown)))}",
                       "use bridge.symbols.q/qd for coordinates and Symbol(name) for declared parameters")
            return None
        return self._sympy_language(entry, expr)

    def _sympy_language(self, entry: str, expr: sp.Basic) -> sp.Expr | None:
        """A sympy expression stays within the language of the files: its functions, finite real numbers."""
        allowed = tuple(type(f(*[sp.Symbol("a")] * lo)) for f, lo, _ in FUNCTIONS.values() if lo == 1) + (
            sp.Min, sp.Max, sp.atan2)
        dynamic = sorted(str(f) for f in expr.atoms(AppliedUndef) if f.args == (S.t,))
        if dynamic:
            self.p.add(entry, f"{dynamic[0]} is a function of time (a sympy.physics.mechanics dynamicsymbol), not "
                       "a symbol of a system", "use bridge.symbols.q(name) and qd(name) for coordinates and "
                       "velocities in build_system; import KanesMethod, LagrangesMethod or System objects with "
                       "bridge.from_mechanics")
            return None
        for node in sp.preorder_traversal(expr):
            if isinstance(node, (sp.Function, sp.Derivative, sp.Integral, sp.Subs)) and not isinstance(node, allowed):
                self.p.add(entry, f"{type(node).__name__} is not part of the expression language",
                           "use the functions of the system-file language: " + ", ".join(FUNCTIONS))
                return None
            if node in (sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I) or (node.is_Float and not math.isfinite(node)):
                self.p.add(entry, f"the expression contains {node}, which is not a finite real number",
                           "check for a division by zero or a value outside a function's domain")
                return None
            if node.is_Relational or node.is_Boolean and not node.is_Atom:
                self.p.add(entry, "conditions are not part of the expression language",
                           "use abs, sign, min or max")
                return None
        return expr

    # -- symbols of the declared names -----------------------------------------------
    def coordinate_names(self) -> list[str]:
        return [c.name for c in self.coords]

    def position_symbols(self) -> set[sp.Symbol]:
        return {c.symbol for c in self.coords}

    def velocity_symbols(self) -> set[sp.Symbol]:
        return {c.velocity_symbol for c in self.coords}

    def acceleration_symbols(self) -> set[sp.Symbol]:
        return {c.acceleration_symbol for c in self.coords}

    def input_symbols(self) -> set[sp.Symbol]:
        return {u.symbol for u in self.inputs}

    def variables_allowed(self, entry: str, expr: sp.Expr, *, velocities: bool, inputs_ok: bool, what: str,
                          accelerations: str = " (der(der(...)))",
                          hints: tuple[str, str, str] = (
                              "write it in terms of coordinates and velocities",
                              "velocity-dependent terms belong in [forces] or the dissipation function",
                              "inputs may appear in [forces], the potential energy and [outputs]")) -> bool:
        """No accelerations ever, velocities only if ``velocities``, inputs only if ``inputs_ok``; a problem is
        recorded (``hints``: how to fix each of the three) and gives False."""
        free = expr.free_symbols
        if free & self.acceleration_symbols():
            self.p.add(entry, f"{what} must not contain accelerations{accelerations}", hints[0])
            return False
        qd, inputs = free & self.velocity_symbols(), free & self.input_symbols()
        if not velocities and qd:
            names = ", ".join(sorted(str(s) for s in qd))
            self.p.add(entry, f"{what} must not depend on velocities, but contains {names}", hints[1])
            return False
        if not inputs_ok and inputs:
            self.p.add(entry, f"{what} must not depend on inputs ({', '.join(sorted(str(s) for s in inputs))})",
                       hints[2])
            return False
        return True

    def expression(self, entry: str, text: Any, *, velocities: bool, inputs_ok: bool, what: str) -> sp.Expr | None:
        """Parse an entry and check its variables: q and t always, q' only if ``velocities``, inputs only if
        ``inputs_ok``, never q''; finite. On a problem record it and return None."""
        expr = self.parse(entry, text)
        if expr is None:
            return None
        if expr.has(sp.nan):
            return None  # a broken definition was already reported
        if not self.variables_allowed(entry, expr, velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        if expr.has(sp.zoo) or expr.has(sp.oo):
            self.p.add(entry, f"{what} is infinite", "check for a division by zero")
            return None
        return expr

    # -- the sections --------------------------------------------------------------
    def build(self) -> System:
        """Read the sections in file-format order, report all problems at once, then check the start state."""
        self._top_level()
        name = self._name()
        description = self.text("description", self.data.get("description", ""))
        self._coordinates()
        self._parameters()
        self._inputs()
        effort_tables = EffortTables(self)
        effort_tables.declare()
        self._definitions()
        T, V, D = self._energy()
        forces = self._forces()
        holonomic, nonholonomic = self._constraints()
        T, V, forces, holonomic, nonholonomic, multibody, labels = merge_bodies(
            self, _Reported, T, V, forces, holonomic, nonholonomic)
        outputs = self._outputs()
        efforts, dynamic = effort_tables.parse(
            {"energy.kinetic": T, "energy.potential": V, "energy.dissipation": D}, forces,
            {f"constraints.{kind}[{i + 1}]": e for kind, es in (("holonomic", holonomic),
                                                                 ("nonholonomic", nonholonomic))
             for i, e in enumerate(es)}, outputs)
        friction = effort_tables.friction(forces)
        effort_tables.substitute_smooth(forces, outputs)
        diodes = effort_tables.diodes()
        dyn_out, dyn_units, dyn_text = dynamic_outputs(dynamic)
        outputs.update(dyn_out)
        self.output_units.update(dyn_units)
        self.output_descriptions.update(dyn_text)
        independent = self._method(len(holonomic) + len(nonholonomic))
        if independent is not None:  # the integrals of the dynamic variables are always independent
            independent += tuple(getattr(self, "auxiliary_coordinates", ()))
        fixed_split = self._fixed_split()
        stop_time, settings = self._simulation()
        ports = self._ports()
        self.p.raise_if_any()

        system = System(
            name=name, description=description, coordinates=tuple(self.coords), parameters=tuple(self.params),
            inputs=tuple(self.inputs), kinetic=T, potential=V, dissipation=D, forces=forces,
            holonomic=tuple(holonomic), nonholonomic=tuple(nonholonomic), outputs=outputs,
            output_units=self.output_units, output_descriptions=self.output_descriptions,
            definitions=dict(self.definitions), independent=independent, fixed_split=fixed_split,
            ports=ports,
            stop_time=stop_time, source=self.source, **settings, efforts=efforts, dynamic=dynamic,
            friction=friction, diodes=diodes,
            multibody=multibody if multibody is not None else self.given_multibody, constraint_labels=labels,
        )
        check_values(system, self.p)
        for entry, message, hint in unit_problems(system):
            self.p.add(entry, message, hint)
        system = check_start(system, self.p)
        for entry, message, hint in [*effort_jacobian_problems(system), *friction_normal_problems(system)]:
            self.p.add(entry, message, hint)
        self.p.raise_if_any()
        return system

    def _top_level(self) -> None:
        """Report top-level entries that are not part of the format."""
        for key in self.data:
            if key not in TOP_LEVEL:
                self.p.add(key, f"unknown entry [{key}]", _suggest(key, TOP_LEVEL)
                           or "allowed: " + ", ".join(sorted(TOP_LEVEL)))

    def _name(self) -> str:
        """The model name, declared like every other name; "Model" when missing or not a string."""
        name = self.data.get("name")
        if name is None:
            self.p.add("name", "the model name is missing", 'add name = "MyModel" at the top of the file')
            return "Model"
        if not isinstance(name, str):
            self.p.add("name", "the model name must be a string", 'write name = "MyModel"')
            return "Model"
        self.declare("name", name, "model name")
        return name

    def _coordinates(self) -> None:
        """The generalized coordinates q with start positions q(0) and velocities q'(0); at least one."""
        for cname, spec in self.table("coordinates", required=True).items():
            entry = f"coordinates.{cname}"
            if not isinstance(spec, dict):
                self.p.add(entry, "expected an inline table", f"write {cname} = {{ start = 0.0, velocity = 0.0 }}")
                continue
            self.check_keys(entry, spec, COORDINATE_KEYS)
            if self.declare(entry, cname, "coordinate"):
                self._coordinate(entry, cname, spec)
        if not self.coords and "coordinates" in self.data:
            self.p.add("coordinates", "no coordinates are declared", "declare at least one coordinate")

    def _coordinate(self, entry: str, cname: str, spec: dict) -> None:
        nominal = self._nominal(entry, spec)
        before = len(self.p.problems)
        start = self.number(f"{entry}.start", spec.get("start"))
        velocity = self.number(f"{entry}.velocity", spec.get("velocity"), required=False)
        c = Coordinate(cname, start, velocity, self.coordinate_unit(f"{entry}.unit", spec.get("unit")),
                       self.text(f"{entry}.description", spec.get("description")), nominal)
        if len(self.p.problems) > before:
            self.bad_values |= {c.symbol, c.velocity_symbol}
        self.coords.append(c)
        self.symbols[cname] = c.symbol

    def _nominal(self, entry: str, spec: dict) -> float | None:
        """The coordinate's typical magnitude (> 0); None when not given or invalid."""
        if "nominal" not in spec:
            return None
        nominal = self.number(f"{entry}.nominal", spec["nominal"], default=1.0)
        if nominal <= 0:
            self.p.add(f"{entry}.nominal", f"nominal must be positive, got {nominal}",
                       "give the typical magnitude of the coordinate, e.g. 0.01")
            return None
        return nominal

    def _parameters(self) -> None:
        """Constant parameters, as ``name = value`` or an inline table."""
        for pname, spec in self.table("parameters").items():
            entry = f"parameters.{pname}"
            if not isinstance(spec, dict):
                spec = {"value": spec}
            self.check_keys(entry, spec, PARAMETER_KEYS)
            if self.declare(entry, pname, "parameter"):
                before = len(self.p.problems)
                par = Parameter(pname, self.number(f"{entry}.value", spec.get("value")),
                                self.unit(f"{entry}.unit", spec.get("unit")),
                                self.text(f"{entry}.description", spec.get("description")))
                if len(self.p.problems) > before:
                    self.bad_values.add(par.symbol)
                self.params.append(par)
                self.symbols[pname] = par.symbol

    def _inputs(self) -> None:
        """External input signals u(t) with their start values."""
        for uname, spec in self.table("inputs").items():
            entry = f"inputs.{uname}"
            if not isinstance(spec, dict):
                self.p.add(entry, "expected an inline table", f"write {uname} = {{ start = 0.0, unit = \"N\" }}")
                continue
            self.check_keys(entry, spec, INPUT_KEYS)
            if self.declare(entry, uname, "input"):
                before = len(self.p.problems)
                u = Input(uname, self.number(f"{entry}.start", spec.get("start"), required=False),
                          self.unit(f"{entry}.unit", spec.get("unit")),
                          self.text(f"{entry}.description", spec.get("description")))
                if len(self.p.problems) > before:
                    self.bad_values.add(u.symbol)
                self.inputs.append(u)
                self.symbols[uname] = u.symbol

    def _definitions(self) -> None:
        """Declare all definitions first (they may refer to each other in any order), then parse each."""
        for dname, text in self.table("definitions").items():
            if self.declare(f"definitions.{dname}", dname, "definition"):
                self.definition_text[dname] = text
        for dname in list(self.definition_text):
            self._resolve_definition(dname)

    def _resolve_definition(self, dname: str) -> None:
        """Parse one definition; a broken one is reported and becomes nan, which later checks pass over."""
        try:
            self.definition(dname)
        except _Reported:
            self.definitions[dname] = sp.nan
        except ExpressionError as exc:
            raw = self.definition_text[dname]
            self.p.add(f"definitions.{dname}",
                       f"{exc.message}{caret(raw, exc.position) if isinstance(raw, str) else ''}", exc.hint)
            self.definitions[dname] = sp.nan
        except RecursionError:
            self.p.add(f"definitions.{dname}", "definitions are nested too deep", "simplify them")
            self.definitions[dname] = sp.nan

    def _energy(self) -> tuple[sp.Expr | None, sp.Expr | None, sp.Expr | None]:
        """Kinetic energy T(q, q', t), potential V(q, t, u) and dissipation function D(q, q', t, u); V, D default 0."""
        bodies = uses_bodies(self.data)  # then [energy] is optional and adds to the bodies' energies
        energy = self.table("energy", required=not bodies)
        self.check_keys("energy", energy, ENERGY_KEYS)
        if "energy" in self.data and "kinetic" not in energy and not bodies:
            self.p.add("energy.kinetic", "the kinetic energy is missing",
                       'add kinetic = "m/2*der(x)^2" (an expression in coordinates and der(coordinates))')
        T = self.expression("energy.kinetic", energy.get("kinetic", "0"),
                            velocities=True, inputs_ok=False, what="the kinetic energy")
        V = self.expression("energy.potential", energy.get("potential", "0"),
                            velocities=False, inputs_ok=True, what="the potential energy")
        D = self.expression("energy.dissipation", energy.get("dissipation", "0"),
                            velocities=True, inputs_ok=True, what="the dissipation function")
        if T is not None and self.coords and not bodies and not (T.free_symbols & self.velocity_symbols()):
            self.p.add("energy.kinetic", "the kinetic energy does not depend on any velocity",
                       "write T in terms of der(<coordinate>)")
        return T, V, D

    def _forces(self) -> dict[str, sp.Expr]:
        """Generalized forces Q_i(q, q', t, u) by coordinate name."""
        forces: dict[str, sp.Expr] = {}
        coord_names = self.coordinate_names()
        for fname, text in self.table("forces").items():
            entry = f"forces.{fname}"
            if fname not in coord_names:
                self.p.add(entry, f"{fname!r} is not a coordinate",
                           _suggest(fname, coord_names) or "forces are given per coordinate name")
                continue
            f = self.expression(entry, text, velocities=True, inputs_ok=True, what="the force")
            if f is not None:
                forces[fname] = f
        return forces

    def _constraints(self) -> tuple[list[sp.Expr], list[sp.Expr]]:
        """Holonomic phi(q, t) = 0 and nonholonomic A(q, t) q' + a0(q, t) = 0; a broken entry counts as nan."""
        cons = self.table("constraints")
        self.check_keys("constraints", cons, CONSTRAINT_KEYS)
        return self._constraint_list(cons, "holonomic"), self._constraint_list(cons, "nonholonomic")

    def _constraint_list(self, cons: dict, kind: str) -> list[sp.Expr]:
        items = cons.get(kind, [])
        if isinstance(items, str):
            items = [items]
        if not isinstance(items, list):
            self.p.add(f"constraints.{kind}", "expected a list of expression strings", f'write {kind} = ["..."]')
            return []
        return [self._constraint(f"constraints.{kind}[{i + 1}]", kind, text) for i, text in enumerate(items)]

    def _constraint(self, entry: str, kind: str, text: Any) -> sp.Expr:
        expr = self.expression(entry, text, velocities=kind == "nonholonomic", inputs_ok=False,
                               what=f"a {kind} constraint")
        if expr is None:
            return sp.nan
        if kind == "holonomic":
            if not (expr.free_symbols & self.position_symbols()):
                self.p.add(entry, "the constraint does not depend on any coordinate",
                           "a holonomic constraint is phi(q, t) = 0 in the coordinates")
        else:
            self._check_velocity_form(entry, expr)
        return expr

    def _check_velocity_form(self, entry: str, expr: sp.Expr) -> None:
        """A nonholonomic constraint contains a velocity and is affine in the velocities:
        no first derivative d/dq'_i of it contains a velocity."""
        qd = self.velocity_symbols()
        vel = expr.free_symbols & qd
        if not vel:
            self.p.add(entry, "the constraint contains no velocity der(...)",
                       "a constraint in coordinates only belongs under holonomic")
            return
        se_expr = to_se(expr)
        se_vel = {to_se(v) for v in qd}
        bad = [v for v in vel if diff(se_expr, to_se(v)).free_symbols & se_vel]
        if bad:
            self.p.add(entry, "the nonholonomic constraint is not linear in the velocities "
                       f"(it is non-linear in {bad[0]})",
                       "nhbridge handles constraints A(q,t)*der(q) + a0(q,t) = 0; "
                       "rewrite it linearly or use a holonomic form")

    def _outputs(self) -> dict[str, sp.Expr]:
        """Output expressions y(q, q', t, u); their units and descriptions go to ``output_units``/``_descriptions``."""
        outputs: dict[str, sp.Expr] = {}
        for oname, text in self.table("outputs").items():
            entry = f"outputs.{oname}"
            if isinstance(text, dict):  # { expr = "...", unit = "rad/s", description = "..." }
                if not self._output_details(entry, oname, text):
                    continue
                entry, text = f"{entry}.expr", text["expr"]
            if self.declare(f"outputs.{oname}", oname, "output"):
                o = self.expression(entry, text, velocities=True, inputs_ok=True, what="an output")
                if o is not None:
                    outputs[oname] = o
        return outputs

    def _output_details(self, entry: str, oname: str, spec: dict) -> bool:
        """Record the unit and description of an output table; False when it has no expression."""
        self.check_keys(entry, spec, OUTPUT_KEYS)
        if "expr" not in spec:
            self.p.add(f"{entry}.expr", "the expression is missing",
                       f'write {oname} = {{ expr = "...", unit = "..." }} or {oname} = "..."')
            return False
        unit = self.unit(f"{entry}.unit", spec.get("unit"))
        description = self.text(f"{entry}.description", spec.get("description"))
        if unit:
            self.output_units[oname] = unit
        if description:
            self.output_descriptions[oname] = description
        return True

    def _method(self, m: int) -> tuple[str, ...] | None:
        """The independent velocities chosen for the reduced methods (n - m coordinate names), if given."""
        method = self.table("method")
        self.check_keys("method", method, METHOD_KEYS)
        independent = method.get("independent")
        if independent is None:
            return None
        if not isinstance(independent, list) or not all(isinstance(x, str) for x in independent):
            self.p.add("method.independent", "expected a list of coordinate names", 'write ["x", "theta"]')
            return None
        self._check_independent(independent, m)
        return tuple(independent)

    def _fixed_split(self) -> bool:
        """``[method] fixed_split``: whether the reduced methods keep the start split (never re-partition)."""
        value = self.table("method").get("fixed_split", False)
        if not isinstance(value, bool):
            self.p.add("method.fixed_split", f"expected true or false, got {value!r}",
                       "write fixed_split = true to keep the start split for the whole run")
            return False
        return value

    def _check_independent(self, independent: list[str], m: int) -> None:
        """Each name a coordinate, listed once, and n - m of them for m constraints."""
        coord_names = self.coordinate_names()
        for nm in independent:
            if nm not in coord_names:
                self.p.add("method.independent", f"{nm!r} is not a coordinate",
                           _suggest(nm, coord_names) or "list coordinate names")
        if len(set(independent)) != len(independent):
            self.p.add("method.independent", "a coordinate is listed twice", "list each name once")
        n = len(self.coords) - len(getattr(self, "auxiliary_coordinates", ()))  # dynamic variables' integrals
        if len(independent) != n - m and not getattr(self, "bodies_broken", False):  # m unknown: reported there
            given, free = len(independent), n - m  # m: rows after dropping repeated generated ones (rank)
            self.p.add("method.independent",
                       f"{given} independent velocit{'y' if given == 1 else 'ies'} given, but the system has "
                       f"{n} coordinates and {m} independent constraint{'' if m == 1 else 's'}, so exactly "
                       f"{free} {'is' if free == 1 else 'are'} independent", "list that many coordinates")

    def _ports(self) -> dict[str, str]:
        """``[ports]``: coordinate name -> port kind (:data:`bridge.model.ports.PORT_KINDS`), each coordinate's unit
        the kind's (or none), the connector's name ``flange_<coordinate>`` not taken by another name."""
        from .ports import PORT_KINDS, port_name
        from .units import compatible

        ports: dict[str, str] = {}
        coords = {c.name: c for c in self.coords}
        kinds = ", ".join(f'"{k}"' for k in PORT_KINDS)
        for cname, kind in self.table("ports").items():
            entry = f"ports.{cname}"
            if cname not in coords:
                self.p.add(entry, f"{cname!r} is not a coordinate, so it cannot be a port",
                           _suggest(cname, coords) or f"name a coordinate: {', '.join(coords) or '(none declared)'}")
                continue
            if not isinstance(kind, str) or kind not in PORT_KINDS:
                hint = _suggest(kind, PORT_KINDS) if isinstance(kind, str) else ""
                self.p.add(entry, f"unknown port kind {kind!r}",
                           (hint + "; " if hint else "") + f"write {cname} = one of {kinds}")
                continue
            spec, unit = PORT_KINDS[kind], coords[cname].unit
            if unit and not compatible(unit, spec.unit):
                self.p.add(entry, f"a {kind} port needs a coordinate in {spec.unit} (its flange's {spec.potential} "
                           f"is in {spec.unit}), but {cname} is in {unit}",
                           f"declare {cname} in {spec.unit}, or choose the port kind of its unit ({kinds})")
                continue
            if port_name(cname) in self.names:
                self.p.add(entry, f"the port's connector would be named {port_name(cname)}, which is already "
                           f"declared as a {self.names[port_name(cname)]}", "rename that one")
                continue
            ports[cname] = kind
        return ports

    def _simulation(self) -> tuple[float, dict[str, float]]:
        """The stop time (default 10 s) and the interval and tolerances given (each positive)."""
        sim = self.table("simulation")
        self.check_keys("simulation", sim, SIMULATION_KEYS)
        stop_time = self.number("simulation.stop_time", sim.get("stop_time"), required=False, default=10.0)
        if stop_time <= 0:
            self.p.add("simulation.stop_time", f"stop_time must be positive, got {stop_time}",
                       "give the simulated duration in seconds, e.g. 10.0")
        settings: dict[str, float] = {}
        for key in ("interval", "rtol", "atol"):
            if key in sim:
                value = self.number(f"simulation.{key}", sim[key])
                if value <= 0:
                    self.p.add(f"simulation.{key}", f"{key} must be positive", "give a positive number")
                settings[key] = value
        return stop_time, settings


class _StartConstraints:
    """The constraints compiled for the start checks, at t = 0: phi(q) and A(q), a0(q) of A q' + a0 = 0.

    The holonomic rows of A come first; they are the Jacobian d phi/dq.
    """

    def __init__(self, system: System):
        _, A_rows, a0_sym = velocity_constraints(system, Differentiator(system))
        args = [S.t, *system.q, *system.parameter_values]
        self.par = list(system.parameter_values.values())
        self.m, self.n = system.m, system.n
        self.mh = len(system.holonomic)
        self._fA = compile_exprs(args, [x for row in A_rows for x in row] + a0_sym)
        self._fphi = compile_exprs(args, list(system.holonomic)) if system.holonomic else None

    def velocity_form(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(A, a0) at q."""
        flat = np.asarray(self._fA(np.concatenate([[0.0], q, self.par])), dtype=float).ravel()
        m, n = self.m, self.n
        return flat[: m * n].reshape(m, n), flat[m * n:]

    def holonomic(self, q: np.ndarray) -> np.ndarray:
        """phi at q (empty without holonomic constraints)."""
        if self._fphi is None:
            return np.zeros(0)
        return np.asarray(self._fphi(np.concatenate([[0.0], q, self.par])), dtype=float).ravel()


def check_start(system: System, problems: ProblemCollector) -> System:
    """Check the constraints at the start state: independent and satisfied.

    With ``[method] independent`` the dependent positions (Newton on phi = 0) and velocities
    (solving A q' = -a0 for the dependent ones) are computed instead of checked.
    """
    if system.m == 0:
        return system
    constraints = _StartConstraints(system)
    q0 = np.array([c.start for c in system.coordinates])
    v0 = np.array([c.velocity for c in system.coordinates])
    names = [entry for entry, _ in system.constraints]
    A, a0 = constraints.velocity_form(q0)
    _check_finite(A, a0, problems)
    _check_independent_rows(A, names, problems)
    if system.independent is None:
        _check_start_positions(constraints, q0, names, problems)
        _check_start_velocities(A, a0, v0, names, problems)
        problems.raise_if_any()
        return system
    return _complete_start(system, constraints, q0, v0, A, problems)


def _check_finite(A: np.ndarray, a0: np.ndarray, problems: ProblemCollector) -> None:
    if not np.all(np.isfinite(A)) or not np.all(np.isfinite(a0)):
        problems.add("constraints", "the constraints cannot be evaluated at the start state (not finite)",
                     "check the start values against the constraint expressions")
        problems.raise_if_any()


def _check_independent_rows(A: np.ndarray, names: list[str], problems: ProblemCollector) -> None:
    for entry, message, hint in independent_rows_problems(A, names):
        problems.add(entry, message, hint)
    problems.raise_if_any()


def dependent_constraint_problems(system: System) -> list[tuple[str, str, str]]:
    """(entry, message, hint) of the constraints of ``system`` dependent on those before them at its start state
    (:func:`independent_rows_problems`)."""
    if system.m == 0:
        return []
    A, _a0 = _StartConstraints(system).velocity_form(np.array([c.start for c in system.coordinates], dtype=float))
    return independent_rows_problems(A, [entry for entry, _ in system.constraints])


def independent_rows_problems(A: np.ndarray, names: list[str]) -> list[tuple[str, str, str]]:
    """(entry, message, hint) of the constraint rows of A that are dependent on those before them (rows added one
    at a time: the first that adds no rank), or of too many constraints (m < n must remain).

    The rows are normalised to unit length, so that the rank test does not depend on the units.
    """
    m, n = A.shape
    norms = np.linalg.norm(A, axis=1)
    An = A / np.where(norms > 0, norms, 1.0)[:, None]
    rank = 0
    out = []
    for k in range(m):
        r = np.linalg.matrix_rank(An[: k + 1], tol=1e-9)
        if r == rank:
            out.append((names[k], "this constraint is dependent on (redundant with) the constraints before it "
                        "at the start state", "remove it, or check the start state is not a singular configuration"))
        rank = r
    if not out and m >= n:
        out.append(("constraints", f"{m} independent constraints on {n} coordinates leave no degree of freedom",
                    "remove constraints or add coordinates"))
    return out


def _check_start_positions(constraints: _StartConstraints, q0: np.ndarray, names: list[str],
                           problems: ProblemCollector) -> None:
    """|phi_k(q0)| <= START_TOL * max(1, max |q0|)."""
    for k, value in enumerate(constraints.holonomic(q0)):
        if abs(value) > START_TOL * max(1.0, float(np.abs(q0).max())):
            problems.add(names[k], f"the start positions violate this constraint (residual {value:.6g})",
                         "correct the start values, or list the independent coordinates under "
                         "[method] independent to have the dependent ones computed")


def _check_start_velocities(A: np.ndarray, a0: np.ndarray, v0: np.ndarray, names: list[str],
                            problems: ProblemCollector) -> None:
    """|(A v0 + a0)_k| <= START_TOL * max(1, sum |A_k v0| + |a0_k|)."""
    for k, value in enumerate(A @ v0 + a0):
        size = max(1.0, float(np.abs(A[k] * v0).sum() + abs(a0[k])))
        if abs(value) > START_TOL * size:
            problems.add(names[k], f"the start velocities violate this constraint (residual {value:.6g})",
                         "correct the start velocities, or list the independent coordinates under "
                         "[method] independent to have the dependent ones computed")


def _complete_start(system: System, constraints: _StartConstraints, q0: np.ndarray, v0: np.ndarray, A: np.ndarray,
                    problems: ProblemCollector) -> System:
    """The start state with the dependent positions and velocities computed from the independent ones."""
    indep = list(independent_from_names(system, system.independent))
    dep = [i for i in range(system.n) if i not in indep]
    if split_health(A, dep) < SINGULAR_SPLIT:
        problems.add("method.independent", "with these independent coordinates the constraints cannot be "
                     "solved for the dependent velocities at the start state", "choose another set")
        problems.raise_if_any()
    qv = _dependent_positions(constraints, q0, dep, problems)
    vv = _dependent_velocities(constraints, qv, v0, indep, dep)
    names_q = [c.name for c in system.coordinates]
    adjusted = [names_q[i] for i in dep if abs(qv[i] - q0[i]) > 0]
    adjusted += [f"der({names_q[i]})" for i in dep if abs(vv[i] - v0[i]) > 0]
    return system.with_start(dict(zip(names_q, qv)), dict(zip(names_q, vv)), tuple(adjusted))


def _dependent_positions(constraints: _StartConstraints, q0: np.ndarray, dep: list[int],
                         problems: ProblemCollector) -> np.ndarray:
    """Newton on phi(q) = 0 in the dependent positions: q_dep += lstsq(d phi/dq_dep, -phi)."""
    qv = q0.copy()
    if constraints.mh == 0:
        return qv
    for _ in range(50):
        phi = constraints.holonomic(qv)
        if np.abs(phi).max() < 1e-14 * max(1.0, np.abs(qv).max()):
            return qv
        Ah, _a = constraints.velocity_form(qv)
        qv[dep] += np.linalg.lstsq(Ah[: constraints.mh][:, dep], -phi, rcond=None)[0]
    problems.add("method.independent", "the dependent start positions could not be found from the "
                 "holonomic constraints (Newton did not converge)", "give start values closer to a solution")
    problems.raise_if_any()
    return qv


def _dependent_velocities(constraints: _StartConstraints, q: np.ndarray, v0: np.ndarray, indep: list[int],
                          dep: list[int]) -> np.ndarray:
    """q'_dep = A_dep^-1 (-(a0 + A_ind q'_ind)) at q, the independent velocities kept."""
    A, a0 = constraints.velocity_form(q)
    vv = v0.copy()
    vv[dep] = np.linalg.solve(A[:, dep], -(a0 + A[:, indep] @ v0[indep]))
    return vv
