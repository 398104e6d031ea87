r"""The Modelica text of a reduced method that re-partitions its velocities where the split turns singular.

The export form ``repartition`` (:func:`bridge.modelica.forms.target_form`) of the reduced methods (maggi, appell,
chaplygin), written from the split-free form (:func:`bridge.derivation.split_free.split_free_form`) as the FMU
holds it: the split is data, a discrete ``Integer nhb_split`` numbering the candidate splits of the velocities,
never a choice made at export time. The text:

* states: the coordinates ``q`` and every velocity ``der_q`` (continuous through a split change: nothing to
  re-initialise, so no ``reinit``, which Rumoca 0.9 evaluates with the values after the event,
  ``docs/compiler-defects/RumocaReinitIterates.mo``, ``RumocaReinitPreAlgebraic.mo``);
* the velocity basis of the current split, ``C`` (``n x dof``, scalars ``nhb_C_<j>_<k>``), ``C = [A; S] \ [0; I]``
  (``S``: the selection of the independent velocities), and the accelerations
  ``der(v) = [A; C^T M] \ [-(A' v + a0'); C^T h]``: the method's equations ``C^T (M q'' - h) = 0`` projected
  with the current split, with the constraints at acceleration level. Both by ``nhb_solve``, a Modelica function
  doing LU with partial pivoting at each evaluation (:func:`solve_function`), so the model is an explicit ODE
  (Rumoca 0.9 solves algebraic blocks row by row, ``RumocaCoupledLinearBlock.mo``, and picks derivative rows
  greedily at the start values, ``RumocaImplicitCoupledRow.mo``); one call for each column of ``C`` and one for
  the accelerations, each into an array variable (Rumoca inlines every call it meets: a call per scalar costs
  ``n`` times the work);
* the health of every candidate split ``c``, ``nhb_health<c> = det(A_c) / (|A_c|_F^(m-1) |A|_F)`` (``A_c``: the
  columns of its dependent coordinates; a lower bound of the FMU's ``sigma_min(A_c) / sigma_max(A)``, equal to it,
  signed, for one constraint), a function of the state alone: a ``when`` on its crossings of ``+-1e-3`` stays
  true after the event (Rumoca 0.9 fails on a when-condition that the event turns false,
  ``SwitchedRumocaWhenIteration.mo``);
* at such a crossing of the current split, the new split by the native rule (health at least 1e-2 first, then the
  number of cyclic dependent coordinates, then the health), unrolled as if-expressions whose relations are
  ``noEvent``: the ranking is read at the health events only, and two candidates of equal health (the cart's
  splits that differ in which wheel angle is independent) would make a relation whose two sides are always
  equal, an event at every step for Rumoca (``SwitchedRumocaRestingRelation.mo``); where no candidate has a
  health of at least 1e-3 an ``assert``
  stops the run with the native run's message (the time and the constraint rows).

pymoca 0.12 has no ``when`` (``docs/compiler-defects/SwitchedPymocaWhen.mo``) and parses no indexed function
call: its target keeps the build-time split (:func:`bridge.modelica.forms.target_form`).
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from ..codegen.numbers import value_literal as _num
from ..codegen.strings import modelica_text
from ..derivation.eom import EquationsOfMotion
from ..derivation.split_free import repartitions, split_free_form
from ..errors import ExportError
from .dimensions import velocity_unit
from .export import ModelicaWriter
from .forms import Candidate, candidates, start_values
from .printer import modelica_ident as _ident

#: the health below which the current split is replaced (the FMU's and the native run's)
THRESHOLD = 1e-3
#: the health from which a candidate split counts as healthy in the ranking
HEALTHY = 1e-2
#: the prefix of the names inside :func:`solve_function` (``nhb_`` is reserved for the export's own names)
LOCAL = "nhb_lu_"


def _modifiers(**items) -> str:
    parts = [f"{k}={v}" for k, v in items.items() if v not in (None, "")]
    return f"({', '.join(parts)})" if parts else ""


def _unit(unit: str) -> str | None:
    return f'"{modelica_text(unit)}"' if unit else None


def solve_function(name: str, n: int) -> list[str]:
    r"""Return the Modelica function ``x = A \ b`` (``n x n``) by LU with partial pivoting, every index a constant.

    Rumoca 0.9 lowers no assignment to an element with a variable index (``M[p, j] := ...``), so the row swaps
    are unrolled (``if p == i then ... end if``); the right-hand side is a vector (Rumoca indexes a matrix
    result of a function call column by column, ``docs/compiler-defects/RumocaFunctionMatrixResult.mo``).
    Every input, output and local is named with the prefix :data:`LOCAL` (reserved: no system names a
    coordinate or parameter so): Rumoca 0.9 reads a model variable of the same name in place of a function's
    local after the start (``docs/compiler-defects/RumocaFunctionLocalCapture.mo``). The pivot comparisons are
    ``noEvent``: Rumoca 0.9 keeps the start value of a relation in a function's if-statement for the whole run
    (``docs/compiler-defects/RumocaFunctionRelationFrozen.mo``).
    """
    A, b, x, M, r, t, f, best, p = (f"{LOCAL}{s}" for s in ("A", "b", "x", "M", "r", "t", "f", "best", "p"))
    o = [f'  function {name} "x = A\\b by LU with partial pivoting ({n} x {n})"',
         f"    input Real {A}[{n}, {n}];", f"    input Real {b}[{n}];", f"    output Real {x}[{n}];", "  protected",
         f"    Real {M}[{n}, {n}];", f"    Real {r}[{n}];", f"    Real {t};", f"    Real {f};", f"    Real {best};",
         f"    Integer {p};",
         "  algorithm", f"    {M} := {A};", f"    {r} := {b};"]
    for k in range(1, n):
        o += [f"    {p} := {k};", f"    {best} := abs({M}[{k}, {k}]);"]
        for i in range(k + 1, n + 1):
            o += [f"    if noEvent(abs({M}[{i}, {k}]) > {best}) then", f"      {p} := {i};",
                  f"      {best} := abs({M}[{i}, {k}]);", "    end if;"]
        for i in range(k + 1, n + 1):
            o.append(f"    if {p} == {i} then")
            for j in range(k, n + 1):
                o += [f"      {t} := {M}[{k}, {j}];", f"      {M}[{k}, {j}] := {M}[{i}, {j}];",
                      f"      {M}[{i}, {j}] := {t};"]
            o += [f"      {t} := {r}[{k}];", f"      {r}[{k}] := {r}[{i}];", f"      {r}[{i}] := {t};", "    end if;"]
        for i in range(k + 1, n + 1):
            o.append(f"    {f} := {M}[{i}, {k}]/{M}[{k}, {k}];")
            o += [f"    {M}[{i}, {j}] := {M}[{i}, {j}] - {f}*{M}[{k}, {j}];" for j in range(k + 1, n + 1)]
            o.append(f"    {r}[{i}] := {r}[{i}] - {f}*{r}[{k}];")
    for i in range(n, 0, -1):
        terms = "".join(f" - {M}[{i}, {j}]*{x}[{j}]" for j in range(i + 1, n + 1))
        o.append(f"    {x}[{i}] := ({r}[{i}]{terms})/{M}[{i}, {i}];")
    o.append(f"  end {name};")
    return o


class RepartitionWriter(ModelicaWriter):
    """Writes the ``repartition`` text of a reduced method (see the module docstring)."""

    def __init__(self, eom: EquationsOfMotion):
        if not repartitions(eom):
            raise ExportError(f"{eom.system.name}: method {eom.method} has no split to re-partition; the form "
                              "repartition applies to maggi, appell and chaplygin with dependent velocities")
        super().__init__(eom, "index1", accelerations="implicit")
        self.form_reason = ("repartition: the split of the velocities is discrete data, changed in a when-clause "
                            "where its health falls below 1e-3")
        self.split = split_free_form(eom)
        self.candidates = candidates(eom)
        system = eom.system
        self.n, self.m = system.n, len(eom.dependent)
        self.dof = self.n - self.m
        self.C = [[sp.Symbol(f"nhb_C_{j + 1}_{k + 1}") for k in range(self.dof)] for j in range(self.n)]
        self.ind = [sp.Symbol(f"nhb_ind_{j + 1}") for j in range(self.n)]
        self.sel = [[sp.Symbol(f"nhb_sel_{k + 1}_{j + 1}") for j in range(self.n)] for k in range(self.dof)]
        self.health = [sp.Symbol(f"nhb_health{c + 1}") for c in range(len(self.candidates))]
        for sym in [*itertools.chain.from_iterable(self.C), *self.ind, *itertools.chain.from_iterable(self.sel),
                    *self.health]:
            self.printer.names[sym] = sym.name
        for c in system.coordinates:  # the accelerations of the velocity states
            self.printer.names[c.acceleration_symbol] = f"der({self.velocity(c.name)})"

    # -- the candidate splits -----------------------------------------------------------------------
    def _independent(self, cand: Candidate) -> list[int]:
        return [j for j in range(self.n) if j not in cand.dependent]

    def _when_split(self, numbers: list[int]) -> str:
        """Return ``1.0`` where the current split is one of ``numbers`` (1-based), else ``0.0``, as Modelica text."""
        if not numbers:
            return "0.0"
        if len(numbers) == len(self.candidates):
            return "1.0"
        test = " or ".join(f"nhb_split == {c}" for c in numbers)
        return f"if {test} then 1.0 else 0.0"

    def _health_expressions(self) -> list[sp.Expr]:
        """Return ``det(A_c) / (|A_c|_F^(m-1) |A|_F)`` of every candidate ``c``.

        A lower bound of the FMU's ``sigma_min(A_c) / sigma_max(A)`` (``|det| <= sigma_min |A_c|_F^(m-1)``,
        ``sigma_max <= |A|_F``), equal to it, signed, for one constraint; zero exactly where ``A_c`` is singular.
        """
        A = sp.Matrix(self.m, self.n, self.split.A)
        norm = sp.sqrt(sum((e**2 for e in self.split.A), sp.Integer(0)))
        out = []
        for c in self.candidates:
            block = A[:, list(c.dependent)]
            scale = sp.sqrt(sum((e**2 for e in block), sp.Integer(0))) ** (self.m - 1)
            out.append(block.det() / (scale * norm))
        return out

    # -- the text ---------------------------------------------------------------------------------------
    def _start_velocities(self) -> dict[str, float]:
        """Return every velocity's start value.

        The independent ones as given, the dependent ones from the constraints at the start state.
        """
        system = self.eom.system

        values = start_values(self.eom)
        A = np.array([[float(sp.N(e.xreplace(values))) for e in self.split.A[r * self.n:(r + 1) * self.n]]
                      for r in range(self.m)])
        a0 = np.array([float(sp.N(e.xreplace(values))) for e in self.split.a0])
        names = [c.name for c in system.coordinates]
        dep = [names.index(d) for d in self.eom.dependent]
        ind = [j for j in range(self.n) if j not in dep]
        v = np.array([c.velocity for c in system.coordinates], dtype=float)
        v[dep] = np.linalg.solve(A[:, dep], -(A[:, ind] @ v[ind] + a0))
        return {c.name: float(v[j]) for j, c in enumerate(system.coordinates)}

    def _declarations(self, repl: list[tuple[sp.Symbol, sp.Expr]]) -> list[str]:
        system = self.eom.system
        out = [*self._parameter_and_input_declarations(),
               *self._coordinate_declarations({c.name for c in system.coordinates}),
               "  // generalized velocities: states, held on the constraints A*der(q) + a0 = 0 by the accelerations"]
        starts = self._start_velocities()
        for c in system.coordinates:
            mods = _modifiers(start=_num(starts[c.name]), fixed="true", unit=_unit(velocity_unit(c.unit)))
            out.append(f'  Real {self.velocity(c.name)}{mods} "velocity der({c.name})";')
        out += self._result_declarations()
        out.append(f'  discrete Integer nhb_split(start=1, fixed=true) "the current split of the velocities '
                   f'(1 to {len(self.candidates)}, see Documentation)";')
        out.append('  discrete Integer nhb_old(start=1, fixed=true) "the split before the last event";')
        out.append('  discrete Boolean nhb_regular(start=true, fixed=true) "some split of the velocities is '
                   'regular";')
        out.append("protected")
        out += [f'  Real nhb_cse{k + 1} "common subexpression";' for k in range(len(repl))]
        out += [f'  Real {h.name} "health of split {c + 1}: det(A_dep)/(|A_dep|^{self.m - 1} |A|)";'
                for c, h in enumerate(self.health)]
        out += [f'  Real {s.name} "1 where coordinate {j + 1} is independent in the current split";'
                for j, s in enumerate(self.ind)]
        out += [f'  Real {s.name} "1 where coordinate {j + 1} is independent velocity {k + 1} of the split";'
                for k, row in enumerate(self.sel) for j, s in enumerate(row)]
        out += [f'  Real {s.name} "velocity basis C of the split: der(q) = C*u + c0";'
                for k in range(self.dof) for j, s in enumerate(s_row[k] for s_row in self.C)]
        return out

    def _split_equations(self) -> list[str]:
        """Return the selection of the current split and its basis ``C`` from ``(A^T A + S^T S) C = S^T``."""
        out = ["  // the current split: which velocities are independent (data, changed at an event)"]
        numbered = list(enumerate(self.candidates, start=1))
        for j in range(self.n):
            out.append(f"  {self.ind[j].name} = "
                       f"{self._when_split([c for c, cand in numbered if j in self._independent(cand)])};")
        for k in range(self.dof):
            for j in range(self.n):
                chosen = [c for c, cand in numbered if self._independent(cand)[k] == j]
                out.append(f"  {self.sel[k][j].name} = {self._when_split(chosen)};")
        return out

    def _coefficients(self) -> dict[str, list[sp.Expr]]:
        """Return the expressions free of unknowns the model is made of, for one CSE pass.

        ``A`` (m x n, row-major), ``rest = A' v + a0'`` (m), ``M`` (n x n), ``h`` (n) and the candidates' health.
        """
        n, m = self.n, self.m
        v = [c.velocity_symbol for c in self.eom.system.coordinates]
        rest = [sp.Add(*[self.split.A_dot[r * n + j] * v[j] for j in range(n)]) + self.split.a0_dot[r]
                for r in range(m)]
        return {"A": list(self.split.A), "rest": rest, "M": list(self.split.mass), "h": list(self.split.rhs),
                "health": self._health_expressions()}

    @staticmethod
    def _matrix(rows: list[list[str]]) -> str:
        return "{" + ", ".join("{" + ", ".join(row) + "}" for row in rows) + "}"

    def _solved(self, part: dict[str, list[sp.Expr]]) -> tuple[list[str], list[str]]:
        r"""Return the declarations and equations of the basis ``C`` and the accelerations, solved by LU.

        ``C = [A; S] \ [0; I]`` and ``der(v) = [A; C^T M] \ [-(A' v + a0'); C^T h]`` through
        :func:`solve_function` (pivoted LU at every evaluation, nothing inverted symbolically).
        """
        n, m, dof = self.n, self.m, self.dof
        A, M, h = part["A"], part["M"], part["h"]
        declarations, equations = [], ["  // the constraint matrix A and A' v + a0'"]
        a_names = [[f"nhb_A_{r + 1}_{j + 1}" if A[r * n + j] != 0 else "0" for j in range(n)] for r in range(m)]
        for r in range(m):
            for j in range(n):
                if A[r * n + j] != 0:
                    declarations.append(f'  Real {a_names[r][j]} "constraint matrix A";')
                    equations.append(f"  {a_names[r][j]} = {self.code(A[r * n + j])};")
            declarations.append(f'  Real nhb_b_{r + 1} "-(A\' v + a0\'), row {r + 1}";')
            equations.append(f"  nhb_b_{r + 1} = {self.code(-part['rest'][r])};")
        sel = [[self.sel[k][j].name for j in range(n)] for k in range(dof)]
        matrix = self._matrix(a_names + sel)
        equations.append("  // velocity basis of the split: C = [A; S] \\ [0; I] (LU with partial pivoting), a call a "
                         "column")
        for k in range(dof):
            unit = "{" + ", ".join("1" if i == m + k else "0" for i in range(n)) + "}"
            declarations.append(f'  Real nhb_column{k + 1}[{n}] "column {k + 1} of the velocity basis C";')
            equations.append(f"  nhb_column{k + 1} = nhb_solve({matrix}, {unit});")
            equations += [f"  {self.C[j][k].name} = nhb_column{k + 1}[{j + 1}];" for j in range(n)]
        equations.append("  // projected inertia C^T M and forces C^T h")
        P = [[f"nhb_P_{k + 1}_{j + 1}" for j in range(n)] for k in range(dof)]
        for k in range(dof):
            for j in range(n):
                declarations.append(f'  Real {P[k][j]} "projected inertia C^T M";')
                expr = sp.Add(*[self.C[i][k] * M[i * n + j] for i in range(n) if M[i * n + j] != 0])
                equations.append(f"  {P[k][j]} = {self.code(expr)};")
            declarations.append(f'  Real nhb_f_{k + 1} "projected force C^T h";')
            equations.append(f"  nhb_f_{k + 1} = {self.code(sp.Add(*[self.C[i][k] * h[i] for i in range(n)]))};")
        rhs = "{" + ", ".join([f"nhb_b_{r + 1}" for r in range(m)] + [f"nhb_f_{k + 1}" for k in range(dof)]) + "}"
        dynamics = f"nhb_solve({self._matrix(a_names + P)}, {rhs})"
        equations.append(f"  // dynamics: {self.eom.method}, [A; C^T M] der(v) = [-(A' v + a0'); C^T h] (LU with "
                         "partial pivoting)")
        declarations.append(f'  Real nhb_acceleration[{n}] "the accelerations der(der_q)";')
        equations.append(f"  nhb_acceleration = {dynamics};")
        equations += [f"  der({self.velocity(c.name)}) = nhb_acceleration[{j + 1}];"
                      for j, c in enumerate(self.eom.system.coordinates)]
        return declarations, equations


    def _choice(self) -> list[str]:
        """Return the when-clause on the health crossings: the new split by the native rule, and the assert."""
        K = len(self.candidates)
        h = [s.name for s in self.health]
        weight = 2 * (self.m + 1)  # a healthy split ranks before any number of cyclic coordinates
        score = [f"(if noEvent(abs({h[c]}) >= {_num(HEALTHY)}) then {weight} else 0) + {2 * cand.cyclic} + abs({h[c]})"
                 for c, cand in enumerate(self.candidates)]
        best = []
        for c in range(K - 1):
            beats = " and ".join(f"noEvent(nhb_score{c + 1} >= nhb_score{d + 1})"
                                 for d in range(c + 1, K))
            best.append(f"{'if' if c == 0 else 'elseif'} {beats} then {c + 1}")
        best_text = " ".join(best) + f" else {K}" if K > 1 else "1"
        current = " ".join(f"{'if' if c == 0 else 'elseif'} pre(nhb_split) == {c + 1} then {h[c]}"
                           for c in range(K - 1)) + f" else {h[K - 1]}" if K > 1 else h[0]
        crossings = ", ".join(f"{x} < {_num(THRESHOLD)}, {x} > {_num(-THRESHOLD)}" for x in h)
        names = [c.name for c in self.eom.system.coordinates]
        olds = [", ".join(names[j] for j in self._independent(cand)) for cand in self.candidates]
        rows = ", ".join(entry for entry, _ in self.eom.system.constraints)
        out = ["  // the health of every split (a function of the state: its crossings of +-1e-3 make the events)"]
        out += [f"  nhb_score{c + 1} = {s};" for c, s in enumerate(score)]
        largest = f"max({{{', '.join(f'abs({x})' for x in h)}}})"
        out += ["  // re-partitioning where the current split's health falls below 1e-3: the native rule",
                f"  nhb_best = {best_text};",
                f"  when {{{crossings}}} then",
                f"    nhb_split = if abs({current}) < {_num(2 * THRESHOLD)} then nhb_best else pre(nhb_split);",
                f"    nhb_regular = abs({current}) >= {_num(2 * THRESHOLD)} or {largest} >= {_num(THRESHOLD)};",
                "    nhb_old = pre(nhb_split);",
                "  end when;"]
        out += [f'  assert(nhb_regular or nhb_old <> {c + 1}, "at t = " + String(time) + " the split with independent '
                f'{old} becomes singular and no split of the velocities is regular (health below 0.001 for every '
                f'choice): the constraint rows {rows} are dependent there, a singular configuration of the '
                'constraints; check the constraints and the start state");' for c, old in enumerate(olds)]
        return out

    def source(self, within: str | None = None) -> str:
        """Return the model text; ``within`` adds a within clause (``""``: the top level)."""
        part = self._coefficients()
        keys = list(part)
        flat = [e for key in keys for e in part[key]]
        repl, flat = sp.cse(flat, symbols=sp.numbered_symbols("nhb_cse", start=1), order="canonical")
        at = 0
        for key in keys:
            part[key], at = flat[at:at + len(part[key])], at + len(part[key])
        solved_declarations, solved = self._solved(part)
        K = len(self.candidates)
        declarations = self._declarations(repl) + solved_declarations
        declarations += [f'  Real nhb_score{c + 1} "rank of split {c + 1}";' for c in range(K)]
        declarations.append('  Integer nhb_best "the best split here";')
        equations = ["  // kinematics"]
        equations += [f"  der({self.ident(c.name)}) = {self.velocity(c.name)};" for c in self.eom.system.coordinates]
        equations += self._cse_equations(repl)
        equations += self._split_equations()
        equations += solved
        equations += [f"  {h.name} = {self.code(e)};" for h, e in zip(self.health, part["health"])]
        equations += self._choice()
        equations += self._residual_and_output_equations()
        functions = solve_function("nhb_solve", self.n)
        out = [*self._head(within), *functions, *declarations, "equation", *equations, *self._annotation(),
               f"end {_ident(self.eom.system.name)};"]
        return "\n".join(out) + "\n"

    def _linear_in_states_code(self, expr) -> str:
        """Return a residual's expression with every velocity written ``der(q)``.

        Every velocity is a state here: Rumoca 0.9 takes an equation in the states alone as one defining a
        state ("structurally singular", ``docs/compiler-defects/RumocaLinearOutputOfState.mo``).
        """
        return self._output_code(expr)

    def documentation(self) -> str:
        """Return the HTML of the model's ``Documentation``: the ModelicaWriter's, with the candidate splits."""
        names = [c.name for c in self.eom.system.coordinates]
        items = "".join(f"<li>{k + 1}: independent {', '.join(names[j] for j in self._independent(c))}</li>"
                        for k, c in enumerate(self.candidates))
        text = super().documentation()
        extra = (f"<p>Splits of the velocities (<code>nhb_split</code>; the export's is 1):</p><ul>{items}</ul>")
        return text.replace("</html>", extra + "\n</html>")


def repartition_source(eom: EquationsOfMotion, within: str | None = None) -> str:
    """Return the ``repartition`` Modelica text of a reduced method (see the module docstring).

    Parameters
    ----------
    eom : EquationsOfMotion
        Equations of maggi, appell or chaplygin with dependent velocities.
    within : str, optional
        A within clause.

    Returns
    -------
    str
        The model text.

    Raises
    ------
    ExportError
        When the method has no split, or the system has too many splits to enumerate.
    """
    return RepartitionWriter(eom).source(within)


__all__ = ["RepartitionWriter", "repartition_source"]
