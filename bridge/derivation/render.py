"""Human-readable renderings of equations of motion: text, LaTeX and JSON.

Display never blocks. By default every expression gets a cheap, exact tidy-up within a time budget
for the whole rendering (:data:`DEFAULT_BUDGET`): expand, collect the terms by the velocities and
unknowns, contract ``sin a cos b ± cos a sin b`` into ``sin(a ± b)`` and the like (sympy's ``TR10i``)
and pull out common factors; the result is kept where it is smaller. Expressions larger than
:data:`TIDY_SIZE` nodes, and all that remain once the budget is spent, are printed as derived; in the main
thread the tidy-up of one expression is interrupted when the budget runs out (:mod:`.deadline`).
``simplify=True`` (``nhbridge derive --simplify``) runs sympy's ``trigsimp`` on every expression
instead, which may take long on large systems.
"""

from __future__ import annotations

import json
import time

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.simplify.fu import TR10i

from .deadline import DerivationTimeout, deadline
from .efforts import event_friction
from .eom import EquationsOfMotion
from .methods import METHODS
from .symengine_forms import convert_graph

DEFAULT_BUDGET = 1.0  # seconds of cheap simplification per rendering
TIDY_SIZE = 4000      # expression tree nodes above which an expression is printed as derived


def _size(expr: sp.Basic, limit: int) -> int:
    """Count the tree nodes of ``expr`` up to ``limit + 1``."""
    count = 0
    for _ in sp.preorder_traversal(expr):
        count += 1
        if count > limit:
            break
    return count


class Tidy:
    """Display simplification of one rendering, within a time budget (exact: the value never changes)."""

    def __init__(self, eom: EquationsOfMotion, simplify: bool = False, budget: float = DEFAULT_BUDGET):
        self.simplify = simplify
        self.deadline = time.monotonic() + budget
        self.collect_by = list(eom.system.qd) + list(eom.unknowns)

    def cheap(self, expr: sp.Expr) -> sp.Expr:
        """Expand, collect by velocities and unknowns, contract trigonometric sums, factor each coefficient."""
        terms = sp.collect(sp.expand(expr), self.collect_by, evaluate=False)
        return sp.Add(*[sp.factor_terms(TR10i(coeff)) * key for key, coeff in terms.items()])

    def __call__(self, expr):
        """Return ``expr`` (or each entry of a matrix) tidied for display, within the remaining budget.

        Parameters
        ----------
        expr : sympy.Expr or sympy.MatrixBase
            The expression.

        Returns
        -------
        sympy.Expr or sympy.MatrixBase
            An equal expression, shorter where the budget allowed; ``expr`` itself when the budget is spent.
        """
        if isinstance(expr, sp.MatrixBase):
            return expr.applyfunc(self)
        if not isinstance(expr, sp.Expr) or expr.is_Atom:
            return expr
        if self.simplify:
            return sp.trigsimp(expr)
        left = self.deadline - time.monotonic()
        size = _size(expr, TIDY_SIZE)
        if left <= 0 or size > TIDY_SIZE:
            return expr
        try:
            with deadline(left, "display"):
                tidied = self.cheap(expr)
        except DerivationTimeout:
            return expr
        return tidied if _size(tidied, size) < size else expr


def _str(expr) -> str:
    """Return the text form (symengine's printer: on large systems sympy's takes seconds per megabyte)."""
    if isinstance(expr, sp.MatrixBase):
        return sp.sstr(expr.applyfunc(lambda e: sp.Symbol(_str(e))))
    return str(convert_graph(expr))  # each shared subexpression converted once


def latex_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
    """Return the LaTeX names of the velocities (dotted), accelerations (double-dotted) and multipliers of ``eom``.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.

    Returns
    -------
    dict of sympy.Symbol to str
        Symbol -> LaTeX.
    """
    names: dict[sp.Symbol, str] = {}
    for c in eom.system.coordinates:
        base = sp.latex(sp.Symbol(c.name))
        names[c.velocity_symbol] = rf"\dot{{{base}}}"
        names[c.acceleration_symbol] = rf"\ddot{{{base}}}"
    for k, lam in enumerate(eom.multipliers):
        names[lam] = rf"\lambda_{{{k + 1}}}"
    return names


class _Latex(LatexPrinter):
    """sympy's LaTeX printer, terms in stored order.

    Remembering what it printed for every subexpression (on large systems the same subexpressions recur many thousands
    of times; a node's LaTeX does not depend on its parent, which adds brackets around it).
    """

    def __init__(self, names: dict[sp.Symbol, str]):
        super().__init__({"symbol_names": names, "order": "none"})
        self._memo: dict[sp.Basic, str] = {}

    def _print(self, expr, **kwargs) -> str:
        if kwargs or not isinstance(expr, sp.Basic):
            return super()._print(expr, **kwargs)
        text = self._memo.get(expr)
        if text is None:
            text = self._memo[expr] = super()._print(expr)
        return text


def to_latex(eom: EquationsOfMotion, simplify: bool = False, budget: float = DEFAULT_BUDGET) -> str:
    """Return the equations of motion as a LaTeX ``align`` environment.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    simplify : bool, optional
        Simplify every entry with ``trigsimp`` (slow on large systems).
    budget : float, optional
        Seconds for the display simplification; entries left over are printed as derived.

    Returns
    -------
    str
        The LaTeX text: kinematics of the dependent coordinates (reduced methods), then one row per equation.
    """
    printer = _Latex(latex_names(eom))
    tidy = Tidy(eom, simplify, budget)

    def tex(e) -> str:
        return printer.doprint(tidy(e))

    lines = [f"% {eom.system.name}: {METHODS[eom.method].title} (nhbridge)"]
    if eom.is_reduced:
        lines.append(f"% independent velocities: {', '.join(eom.independent)}; "
                     f"dependent: {', '.join(eom.dependent)}")
    lines.append(r"\begin{align}")
    body = []
    M = eom.mass_matrix
    x = sp.Matrix(eom.unknowns)
    lhs = printer.doprint(tidy(M)) + " " + printer.doprint(x)   # not a MatMul: its printer multiplies it out
    body.append(lhs + " &= " + tex(eom.forcing))
    if eom.is_reduced:
        for i, c in enumerate(eom.system.coordinates):
            if c.name in eom.dependent:
                body.append(tex(c.velocity_symbol) + " &= " + tex(eom.kinematics[i]))
    for name, value in eom.forms:
        body.append(rf"\text{{{name.replace('_', ' ')}}} &= " + tex(value))
    lines.append(" \\\\\n".join(body))
    lines.append(r"\end{align}")
    return "\n".join(lines) + "\n"


def to_text(eom: EquationsOfMotion, simplify: bool = False, budget: float = DEFAULT_BUDGET) -> str:
    """Return the equations of motion as plain text.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    simplify : bool, optional
        Simplify every entry with ``trigsimp`` (slow on large systems).
    budget : float, optional
        Seconds for the display simplification.

    Returns
    -------
    str
        The unknowns, the rows of ``mass matrix * unknowns = forcing`` and the constraints.
    """
    tidy = Tidy(eom, simplify, budget)
    title = METHODS[eom.method].title
    out = [f"{eom.system.name} — {title}"]
    if eom.is_reduced:
        out.append(f"independent velocities: {', '.join(eom.independent)}; dependent: {', '.join(eom.dependent)}")
        out.append("kinematics:")
        for i, c in enumerate(eom.system.coordinates):
            if c.name in eom.dependent:
                out.append(f"  der({c.name}) = {_str(tidy(eom.kinematics[i]))}")
    out.append(f"unknowns: {', '.join(map(str, eom.unknowns))}")
    out.append("equations (mass matrix * unknowns = forcing):")
    M, x = eom.mass_matrix, eom.unknowns
    for i in range(M.shape[0]):
        lhs = sp.Add(*[M[i, j] * x[j] for j in range(M.shape[1]) if M[i, j] != 0])
        out.append(f"  [{i + 1}] {_str(tidy(lhs))} = {_str(tidy(eom.forcing[i]))}")
    if eom.multipliers:
        out.append("constraints (velocity level, = 0):")
        for g in eom.velocity_constraints:
            out.append(f"  {_str(tidy(g))}")
    out += _effort_lines(eom, tidy)
    return "\n".join(out) + "\n"


def _effort_lines(eom: EquationsOfMotion, tidy) -> list[str]:
    """Return the dynamic variables with their rates and the effort constraints Gamma = 0 as written."""
    system, out = eom.system, []
    if system.dynamic:
        out.append("dynamic variables (s = der(<s>_integral); the row of <s>_integral is der(s) = rate):")
        out += [f"  der({d.name}) = {_str(tidy(d.rate))}   [s = {d.symbol}]" for d in system.dynamic]
    if system.efforts:
        out.append("effort constraints (Gamma(q, der(q), e, s, t) = 0, kept algebraic; rows after the multipliers):")
        out += [f"  {e.name}: {_str(tidy(e.constraint))} = 0" for e in system.efforts]
    switched = [*event_friction(system), *system.diodes]
    inert = [f.name for f in system.friction if f.inert]
    if inert:
        out.append(f"friction elements without force (stick limit mu_static*N identically 0): {', '.join(inert)}")
    if switched:
        out.append("switched elements (their row by mode; the equations above hold the first; switches by events):")
    for el in switched:
        if hasattr(el, "mu_static"):
            vr, N = _str(tidy(el.relative_velocity)), _str(tidy(el.normal))
            out += [f"  {el.name} (Coulomb friction force on {el.coordinate}, v_r = {vr}, N = {N}):",
                    f"    stick: der(v_r) = 0 while |{el.name}| <= {el.mu_static:g}*N",
                    f"    slip:  {el.name} = -{el.mu_kinetic:g}*N*sign(v_r) until v_r = 0"]
        else:
            i, vf = f"der({el.coordinate})", f"{el.forward_voltage:g}"
            blocking = (f"{i} = {el.off_conductance:g}*{el.name}" if el.off_conductance
                        else f"{i} = 0, kept as der({i}) = 0")
            out += [f"  {el.name} (diode voltage, generalized force -{el.name} on {el.coordinate}):",
                    f"    conducting: {el.name} = {vf} + {el.on_resistance:g}*({i} - {el.off_conductance:g}*{vf}) "
                    f"until {i} - {el.off_conductance:g}*{vf} falls to 0",
                    f"    blocking:   {blocking} until {el.name} rises to {vf}"]
    return out


def to_json(eom: EquationsOfMotion, simplify: bool = False, budget: float = DEFAULT_BUDGET) -> str:
    """Return the equations of motion as JSON.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    simplify : bool, optional
        Simplify every entry with ``trigsimp`` (slow on large systems).
    budget : float, optional
        Seconds for the display simplification.

    Returns
    -------
    str
        A JSON object: name, method, coordinates, speeds, unknowns, kinematics, mass matrix, forcing, constraints.
    """
    tidy = Tidy(eom, simplify, budget)
    M = tidy(eom.mass_matrix)
    data = {
        "name": eom.system.name,
        "method": eom.method,
        "coordinates": [c.name for c in eom.system.coordinates],
        "speeds": [str(s) for s in eom.u],
        "unknowns": [str(s) for s in eom.unknowns],
        "independent": list(eom.independent),
        "dependent": list(eom.dependent),
        "kinematics": [_str(tidy(e)) for e in eom.kinematics],
        "mass_matrix": [[_str(M[i, j]) for j in range(M.shape[1])] for i in range(M.shape[0])],
        "forcing": [_str(tidy(e)) for e in eom.forcing],
        "forms": {name: _str(tidy(value)) for name, value in eom.forms},
    }
    return json.dumps(data, indent=2) + "\n"


FORMATS = {"text": to_text, "latex": to_latex, "json": to_json}
