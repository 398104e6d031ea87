"""The symbol table of a system file being read.

It holds the declared coordinates, parameters, inputs and other symbols, the definitions, and the expression
entries parsed against them (:func:`parse_expression` with this table's names and ``der()``), each problem
recorded at its entry.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import sympy as sp
from sympy.core.function import AppliedUndef

from ..errors import ProblemCollector
from . import symbols as S
from .expressions import (
    FUNCTIONS,
    MAX_TREE_SIZE,
    ExpressionError,
    caret,
    literal_value,
    parse_expression,
    tree_size,
)
from .kinks import diff
from .mechanics import to_se
from .numeric import evaluate_once
from .system import Coordinate, Input, Parameter, finite, total_derivative
from .table_reader import close_match

__all__ = ["ReportedElsewhere", "SymbolTable"]


class ReportedElsewhere(ExpressionError):
    """A broken definition used elsewhere: its problem is reported once, at the definition."""


class SymbolTable:
    """The names an expression of the file may use, and the parser of expression entries.

    Parameters
    ----------
    problems : ProblemCollector
        Where every problem of an entry is recorded.
    """

    def __init__(self, problems: ProblemCollector):
        self.problems = problems
        self.symbols: dict[str, sp.Expr] = {}
        self.coordinates: list[Coordinate] = []
        self.parameters: list[Parameter] = []
        self.inputs: list[Input] = []
        #: the auxiliary coordinates (time integrals of the dynamic variables), by name
        self.auxiliary: list[str] = []
        #: symbols whose value (a parameter's, a start value) was refused: checks computed from them are skipped
        self.refused: set[sp.Symbol] = set()
        self.definition_text: dict[str, Any] = {}
        self.definitions: dict[str, sp.Expr] = {}
        self._defining: list[str] = []

    # -- declarations ----------------------------------------------------------------------------------------
    def add_coordinate(self, coordinate: Coordinate, *, auxiliary: bool = False) -> None:
        """Declare a coordinate (``auxiliary``: the time integral of a dynamic variable)."""
        self.coordinates.append(coordinate)
        self.symbols[coordinate.name] = coordinate.symbol
        if auxiliary:
            self.auxiliary.append(coordinate.name)

    def add_parameter(self, parameter: Parameter) -> None:
        """Declare a parameter."""
        self.parameters.append(parameter)
        self.symbols[parameter.name] = parameter.symbol

    def add_input(self, signal: Input) -> None:
        """Declare an input."""
        self.inputs.append(signal)
        self.symbols[signal.name] = signal.symbol

    def add_symbol(self, name: str, symbol: sp.Expr) -> None:
        """Declare another name an expression may use (an effort, a friction force, a dynamic variable)."""
        self.symbols[name] = symbol

    def refuse(self, *symbols: sp.Symbol) -> None:
        """Mark the values of ``symbols`` as refused (reported where they are given)."""
        self.refused.update(symbols)

    def known(self, exprs) -> bool:
        """Whether the expressions' values can be checked: none depends on a value refused already."""
        return not any(e.free_symbols & self.refused for e in exprs)

    def add_definition(self, name: str, text: Any) -> None:
        """Declare a definition, parsed on first use (:meth:`resolve_definitions`).

        Definitions may refer to each other in any order.
        """
        self.definition_text[name] = text

    # -- symbols of the declared names ------------------------------------------------------------------------
    def coordinate_names(self) -> list[str]:
        """Return the coordinates' names, in declaration order."""
        return [c.name for c in self.coordinates]

    def position_symbols(self) -> set[sp.Symbol]:
        """Return the coordinates' symbols q."""
        return {c.symbol for c in self.coordinates}

    def velocity_symbols(self) -> set[sp.Symbol]:
        """Return the velocities' symbols q'."""
        return {c.velocity_symbol for c in self.coordinates}

    def acceleration_symbols(self) -> set[sp.Symbol]:
        """Return the accelerations' symbols q''."""
        return {c.acceleration_symbol for c in self.coordinates}

    def input_symbols(self) -> set[sp.Symbol]:
        """Return the inputs' symbols."""
        return {u.symbol for u in self.inputs}

    def start_values(self, exprs, perturb: np.ndarray | None = None) -> np.ndarray:
        """Evaluate the expressions at the start state (coordinates shifted by ``perturb``), parameters and inputs."""
        coords = self.coordinates
        args = [S.t, *[c.symbol for c in coords], *[c.velocity_symbol for c in coords],
                *[p.symbol for p in self.parameters], *[u.symbol for u in self.inputs]]
        q0 = np.array([c.start for c in coords]) + (0 if perturb is None else perturb)
        vals = [0.0, *q0, *[c.velocity for c in coords], *[p.value for p in self.parameters],
                *[u.start for u in self.inputs]]
        return evaluate_once(args, list(exprs), vals)

    # -- the parser's names ------------------------------------------------------------------------------------
    def resolve(self, name: str, pos: int | None) -> sp.Expr:
        """Return the expression a name stands for (the parser's name lookup)."""
        if name in self.symbols:
            return self.symbols[name]
        if name in self.definition_text:
            expr = self.definition(name)
            if expr is sp.nan:
                raise ReportedElsewhere(f"the definition {name!r} is broken (reported there)", pos)
            return expr
        if name == "t":
            return S.t
        hint = close_match(name, list(self.symbols) + list(self.definition_text))
        raise ExpressionError(f"unknown name {name!r}", pos,
                              hint or "declare it under [coordinates], [parameters], [inputs] or [definitions]")

    def der(self, expr: sp.Expr, pos: int | None) -> sp.Expr:
        """Return the time derivative of ``expr`` (the parser's ``der()``)."""
        inputs = [u.symbol for u in self.inputs if u.symbol in expr.free_symbols]
        if inputs:
            raise ExpressionError(f"der() of the input {inputs[0]} is not available", pos,
                                  "inputs are external signals without a known derivative; "
                                  "add its rate as another input")
        if expr.free_symbols & self.acceleration_symbols():
            raise ExpressionError("der() of an acceleration (third derivative) is not supported", pos)
        coords = self.coordinates
        return total_derivative(expr, [c.symbol for c in coords], [c.velocity_symbol for c in coords],
                                [c.acceleration_symbol for c in coords])

    def definition(self, name: str) -> sp.Expr:
        """Return the parsed definition ``name`` (parsed now if it was not yet); ExpressionError on a cycle."""
        if name in self.definitions:
            return self.definitions[name]
        if name in self._defining:
            cycle = " -> ".join([*self._defining[self._defining.index(name):], name])
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
                raise ReportedElsewhere("reported", None)
        finally:
            self._defining.pop()
        self.definitions[name] = expr
        return expr

    def resolve_definitions(self) -> None:
        """Parse every definition; a broken one is reported and becomes nan, which later checks pass over."""
        for name in list(self.definition_text):
            try:
                self.definition(name)
            except ReportedElsewhere:
                self.definitions[name] = sp.nan
            except ExpressionError as exc:
                raw = self.definition_text[name]
                self.problems.add(f"definitions.{name}",
                                  f"{exc.message}{caret(raw, exc.position) if isinstance(raw, str) else ''}",
                                  exc.hint)
                self.definitions[name] = sp.nan
            except RecursionError:
                self.problems.add(f"definitions.{name}", "definitions are nested too deep", "simplify them")
                self.definitions[name] = sp.nan

    # -- expression entries ------------------------------------------------------------------------------------
    def parse(self, entry: str, text: Any, nested: bool = False) -> sp.Expr | None:
        """Parse one expression entry; on error record a problem and return None."""
        if isinstance(text, sp.Basic):
            return self._check_sympy(entry, text)
        if isinstance(text, (int, float)) and not isinstance(text, bool) and finite(text):
            try:
                return literal_value(text)
            except ExpressionError as exc:
                self.problems.add(entry, exc.message, exc.hint)
                return None
        if not isinstance(text, str):
            self.problems.add(entry, f"expected an expression string, got {type(text).__name__}",
                              'write the expression in quotes, e.g. "m*g*y"')
            return None
        try:
            return parse_expression(text, self.resolve, self.der)
        except ReportedElsewhere:
            if nested:
                raise
            return None
        except ExpressionError as exc:
            if nested:
                raise
            self.problems.add(entry, f"{exc.message}{caret(text, exc.position)}", exc.hint)
            return None
        except RecursionError:
            self.problems.add(entry, "expression is nested too deep", "split it with [definitions]")
            return None

    def _check_sympy(self, entry: str, expr: sp.Basic) -> sp.Expr | None:
        if tree_size(expr) > MAX_TREE_SIZE:
            self.problems.add(entry, f"the expression is too large (more than {MAX_TREE_SIZE} operations)",
                              "simplify it or split the model")
            return None
        known = set(self.symbols.values()) | {S.t} | self.velocity_symbols() | self.acceleration_symbols()
        unknown = [s for s in expr.free_symbols if s not in known]
        if unknown:
            self.problems.add(entry, f"unknown symbol(s) {', '.join(sorted(map(str, unknown)))}",
                              "use bridge.symbols.q/qd for coordinates and Symbol(name) for declared parameters")
            return None
        return self._sympy_language(entry, expr)

    def _sympy_language(self, entry: str, expr: sp.Basic) -> sp.Expr | None:
        """Check that a sympy expression stays within the language of the files: its functions, finite reals.

        Returns the expression, or None with a problem recorded at ``entry``.
        """
        allowed = (*(type(f(*[sp.Symbol("a")] * lo)) for f, lo, _ in FUNCTIONS.values() if lo == 1),
                   sp.Min, sp.Max, sp.atan2)
        dynamic = sorted(str(f) for f in expr.atoms(AppliedUndef) if f.args == (S.t,))
        if dynamic:
            self.problems.add(entry, f"{dynamic[0]} is a function of time (a sympy.physics.mechanics "
                              "dynamicsymbol), not a symbol of a system", "use bridge.symbols.q(name) and qd(name) "
                              "for coordinates and velocities in build_system; import KanesMethod, LagrangesMethod "
                              "or System objects with bridge.from_mechanics")
            return None
        for node in sp.preorder_traversal(expr):
            if isinstance(node, (sp.Function, sp.Derivative, sp.Integral, sp.Subs)) and not isinstance(node, allowed):
                self.problems.add(entry, f"{type(node).__name__} is not part of the expression language",
                                  "use the functions of the system-file language: " + ", ".join(FUNCTIONS))
                return None
            if node in (sp.zoo, sp.nan, sp.oo, -sp.oo, sp.I) or (node.is_Float and not math.isfinite(node)):
                self.problems.add(entry, f"the expression contains {node}, which is not a finite real number",
                                  "check for a division by zero or a value outside a function's domain")
                return None
            if node.is_Relational or (node.is_Boolean and not node.is_Atom):
                self.problems.add(entry, "conditions are not part of the expression language",
                                  "use abs, sign, min or max")
                return None
        return expr

    def variables_allowed(self, entry: str, expr: sp.Expr, *, velocities: bool, inputs_ok: bool, what: str,
                          accelerations: str = " (der(der(...)))",
                          hints: tuple[str, str, str] = (
                              "write it in terms of coordinates and velocities",
                              "velocity-dependent terms belong in [forces] or the dissipation function",
                              "inputs may appear in [forces], the potential energy and [outputs]")) -> bool:
        """Check the variables of ``expr``: no accelerations, velocities and inputs only where allowed.

        Velocities are allowed only if ``velocities``, inputs only if ``inputs_ok``. A violation records a
        problem (``hints``: how to fix each of the three) and gives False.
        """
        free = expr.free_symbols
        if free & self.acceleration_symbols():
            self.problems.add(entry, f"{what} must not contain accelerations{accelerations}", hints[0])
            return False
        qd, inputs = free & self.velocity_symbols(), free & self.input_symbols()
        if not velocities and qd:
            names = ", ".join(sorted(str(s) for s in qd))
            self.problems.add(entry, f"{what} must not depend on velocities, but contains {names}", hints[1])
            return False
        if not inputs_ok and inputs:
            self.problems.add(entry, f"{what} must not depend on inputs "
                              f"({', '.join(sorted(str(s) for s in inputs))})", hints[2])
            return False
        return True

    def expression(self, entry: str, text: Any, *, velocities: bool, inputs_ok: bool, what: str) -> sp.Expr | None:
        """Parse an entry and check its variables and its finiteness.

        q and t are allowed always, q' only if ``velocities``, inputs only if ``inputs_ok``, q'' never. On a
        problem, record it and return None.
        """
        expr = self.parse(entry, text)
        if expr is None:
            return None
        if expr.has(sp.nan):
            return None  # a broken definition was already reported
        if not self.variables_allowed(entry, expr, velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        if expr.has(sp.zoo) or expr.has(sp.oo):
            self.problems.add(entry, f"{what} is infinite", "check for a division by zero")
            return None
        return expr

    def check_velocity_form(self, entry: str, expr: sp.Expr) -> None:
        """Check that a nonholonomic constraint contains a velocity and is affine in the velocities.

        Affine: no first derivative d/dq'_i of it contains a velocity.
        """
        qd = self.velocity_symbols()
        vel = expr.free_symbols & qd
        if not vel:
            self.problems.add(entry, "the constraint contains no velocity der(...)",
                              "a constraint in coordinates only belongs under holonomic")
            return
        se_expr = to_se(expr)
        se_vel = {to_se(v) for v in qd}
        bad = [v for v in vel if diff(se_expr, to_se(v)).free_symbols & se_vel]
        if bad:
            self.problems.add(entry, "the nonholonomic constraint is not linear in the velocities "
                              f"(it is non-linear in {bad[0]})",
                              "nhbridge handles constraints A(q,t)*der(q) + a0(q,t) = 0; "
                              "rewrite it linearly or use a holonomic form")
