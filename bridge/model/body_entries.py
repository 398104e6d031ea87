"""The entries of the body tables (:mod:`.bodies`).

The declared frames, points, bodies and particles, the vector expressions'
:class:`~bridge.model.vectors.Context` over them, and the parser and checks of an entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from . import symbols as S
from .expressions import MAX_TREE_SIZE, ExpressionError, caret, parse_expression, tree_size
from .frames import INERTIAL, Frame
from .multibody import Vector
from .names import suggest as _suggest
from .read_context import ReadContext
from .symbol_table import ReportedElsewhere
from .values import positive_problem
from .vectors import parse_scalar, parse_vector

__all__ = ["BodyEntries"]


class _Broken(ExpressionError):
    """A reference to an entry whose problem is reported at that entry."""



class BodyEntries:
    """The state and the entry parser shared by the readers of the body tables.

    It holds the reading's context (names, scalar parser, problems) and is the vector expressions'
    :class:`~bridge.model.vectors.Context`.

    Parameters
    ----------
    ctx : ReadContext
        The tables, the symbol table and the problems of the file being read.
    """

    def __init__(self, ctx: ReadContext):
        self.tables = ctx.tables
        self.symbols = ctx.symbols
        self.p = ctx.problems
        self.reported = (ReportedElsewhere, _Broken)
        self.frames: dict[str, Frame | None] = {"N": INERTIAL}
        self.frame_specs: dict[str, dict] = {}
        self.located: dict[str, tuple[str, str, Any]] = {}  # name -> (entry, key, text) of a position
        self.positions: dict[str, Vector | None] = {}
        self._locating: list[str] = []
        self.body_frame: dict[str, str] = {}
        self.positive: list[tuple[str, str, sp.Expr]] = []  # constants checked positive besides masses
        self.rotation_watch: list[tuple[str, sp.ImmutableMatrix]] = []  # dcm frames not proven orthonormal
        self.body_names: set[str] = set()      # declared under [bodies] (whether or not their entries hold)
        self.particle_names: set[str] = set()  # declared under [particles]

    # -- the vector expressions' context ------------------------------------------------
    def frame_matrix(self, name: str, pos: int) -> sp.Matrix | None:
        """Return the direction cosines ``R`` (``v_N = R v_F``) of frame ``name``, None if it is not a frame.

        A frame whose own entry is broken raises (the problem is reported at that entry).
        """
        if name not in self.frames:
            return None
        frame = self.frames[name]
        if frame is None:
            raise _Broken(f"the frame {name!r} is broken (reported there)", pos)
        return frame.rotation

    def point(self, name: str, pos: int) -> Vector | None:
        """Return the position of point/body ``name`` (N components), None if it is not a point.

        Positions are parsed on first use, so that they may refer to each other in any order; a cycle raises
        :class:`~bridge.model.expressions.ExpressionError`.
        """
        if name in self.positions:
            v = self.positions[name]
            if v is None:
                raise _Broken(f"{name!r} is broken (reported there)", pos)
            return v
        if name not in self.located:
            return None
        if name in self._locating:
            cycle = " -> ".join([*self._locating[self._locating.index(name):], name])
            raise ExpressionError(f"positions refer to each other in a cycle: {cycle}", pos,
                                  "define one of them without the others")
        entry, _key, text = self.located[name]
        self._locating.append(name)
        try:
            self.positions[name] = self.vector(entry, text, what="a position")
        finally:
            self._locating.pop()
        return self.point(name, pos)

    def scalar(self, text: str, offset: int) -> sp.Expr:
        """Parse the scalar span ``text``, which starts at ``offset`` of the whole expression.

        An error's position is shifted by ``offset``, so that it points into the whole expression.
        """
        try:
            return parse_expression(text, self.symbols.resolve, self.symbols.der)
        except self.reported:
            raise
        except ExpressionError as exc:
            if exc.position is not None:
                exc.position += offset
            raise

    def der(self, expr: sp.Expr, pos: int) -> sp.Expr:
        """Return the total time derivative of ``expr`` (the symbol table's ``der()``)."""
        return self.symbols.der(expr, pos)

    def frame_names(self) -> list[str]:
        """Return the declared frames (N first), for did-you-mean hints."""
        return list(self.frames)

    def not_a_body(self, name: Any, what: str = "a rigid body") -> tuple[str, str]:
        """Return (message, hint) for a reference ``name`` that is not a usable body.

        The name is that of a body whose own entry has errors (reported there), a particle, or an unknown name
        (the hint then names the closest declared body).
        """
        if isinstance(name, str) and name in self.body_names:
            return (f"{name!r} has errors above (bodies.{name})", "fix that entry; this reference is then checked")
        if isinstance(name, str) and name in self.particle_names:
            return (f"{name!r} is a particle, not {what}", f"declare {name} under [bodies] with a frame and an "
                    "inertia tensor")
        return (f"{name!r} is not {what}",
                _suggest(str(name), sorted(self.body_names)) or "name a body of [bodies] (it needs a frame)")

    # -- entries -------------------------------------------------------------------------
    def parse_entry(self, entry: str, text: Any, parse, what: str):
        """Parse ``text`` with ``parse(text, self)``; None, with a problem recorded at ``entry``, if it fails.

        Problems reported elsewhere (a broken frame, point or definition it refers to) give None without a
        new problem.
        """
        if not isinstance(text, str):
            self.p.add(entry, f"expected an expression string, got {type(text).__name__}",
                       f'write {what} in quotes, e.g. "[0, 0, -g]" for a vector or "m" for a scalar')
            return None
        try:
            return parse(text, self)
        except self.reported:
            return None
        except ExpressionError as exc:
            self.p.add(entry, f"{exc.message}{caret(text, exc.position)}", exc.hint)
            return None
        except RecursionError:
            self.p.add(entry, "expression is nested too deep", "split it into [points] or [definitions]")
            return None

    def check_entry(self, entry: str, exprs, *, velocities: bool, inputs_ok: bool, what: str) -> bool:
        """Tree size, finiteness and the allowed variables of parsed components."""
        for e in exprs:
            if e.has(sp.nan):
                return False  # a broken definition, reported there
            if tree_size(e) > MAX_TREE_SIZE:
                self.p.add(entry, f"{what} is too large (more than {MAX_TREE_SIZE} operations)",
                           "simplify it or split the model")
                return False
            if e.has(sp.zoo) or e.has(sp.oo) or e.has(sp.I):
                self.p.add(entry, f"{what} is not a finite real number", "check for a division by zero")
                return False
            if not self.symbols.variables_allowed(
                    entry, e, velocities=velocities, inputs_ok=inputs_ok, what=what, accelerations="",
                    hints=("write it with positions and velocities",
                           "positions and angles are functions of the coordinates and time only",
                           "inputs may appear in loads and [forces]")):
                return False
        return True

    def vector(self, entry: str, text: Any, *, velocities: bool = False, inputs_ok: bool = False,
               what: str = "the vector") -> Vector | None:
        """Read a vector entry: parsed, then checked (:meth:`check_entry`); None on a problem."""
        v = self.parse_entry(entry, text, parse_vector, what)
        if v is None or not self.check_entry(entry, v, velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        return v

    def scalar_entry(self, entry: str, text: Any, *, velocities: bool = False, inputs_ok: bool = False,
                     what: str = "the expression") -> sp.Expr | None:
        """Read a scalar entry (a number or an expression string): parsed, then checked; None on a problem."""
        if isinstance(text, (int, float)) and not isinstance(text, bool):
            text = repr(text)
        e = self.parse_entry(entry, text, parse_scalar, what)
        if e is None or not self.check_entry(entry, [e], velocities=velocities, inputs_ok=inputs_ok, what=what):
            return None
        return e

    def constant(self, entry: str, text: Any, what: str, positive: bool = True) -> sp.Expr | None:
        """Read a constant (parameters only) scalar, positive at the parameter values when ``positive``."""
        e = self.scalar_entry(entry, text, what=what)
        if e is None:
            return None
        if e.free_symbols & (self.symbols.position_symbols() | {S.t}):
            self.p.add(entry, f"{what} must be a constant (parameters only)", "remove coordinates and t from it")
            return None
        if positive and not self.known([e]):
            return None  # its value is refused where it is given
        if positive:
            problem = positive_problem(what, float(self.values([e])[0]))
            if problem:
                self.p.add(entry, *problem)
                return None
            if what != "the mass":  # masses are checked again from the bodies themselves
                self.positive.append((entry, what, e))
        return e

    def known(self, exprs) -> bool:
        """Whether the expressions' values can be checked: none depends on a value refused already."""
        return self.symbols.known(exprs)

    def values(self, exprs, perturb: np.ndarray | None = None) -> np.ndarray:
        """Evaluate the expressions at the start state (coordinates shifted by ``perturb``), parameters and inputs."""
        return self.symbols.start_values(exprs, perturb)

    # -- tables --------------------------------------------------------------------------
    def table(self, key: str) -> dict:
        """Return the table ``[key]`` of the file ({} when missing)."""
        return self.tables.table(key)

    def entries(self, key: str, keys: set[str], declare: str | None) -> dict[str, dict]:
        """Return the entries of a table as dicts (a string value means ``{first key = value}``)."""
        out: dict[str, dict] = {}
        for name, spec in self.table(key).items():
            entry = f"{key}.{name}"
            if isinstance(spec, str) and key == "points":
                spec = {"position": spec}
            if not isinstance(spec, dict):
                self.p.add(entry, "expected an inline table", f"write {name} = {{ ... }} with keys "
                           + ", ".join(sorted(keys)))
                continue
            self.tables.check_keys(entry, spec, keys)
            own_frame = declare == "body" and name in self.frame_specs and spec.get("frame") == name
            if declare is None or own_frame or self.tables.declare(entry, name, declare):
                out[name] = spec
        return out
