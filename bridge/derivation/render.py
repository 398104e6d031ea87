"""Human-readable renderings of equations of motion: text, LaTeX and JSON."""

from __future__ import annotations

import json

import sympy as sp

from .eom import EquationsOfMotion
from .methods import METHODS

TIDY_LIMIT = 150


def tidy(expr):
    """Trigonometric simplification for display, for expressions small enough to simplify quickly."""
    if isinstance(expr, sp.MatrixBase):
        return expr.applyfunc(tidy)
    if sp.count_ops(expr) > TIDY_LIMIT:
        return expr
    return sp.trigsimp(expr)


def latex_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
    names: dict[sp.Symbol, str] = {}
    for c in eom.system.coordinates:
        base = sp.latex(sp.Symbol(c.name))
        names[c.velocity_symbol] = rf"\dot{{{base}}}"
        names[c.acceleration_symbol] = rf"\ddot{{{base}}}"
    for k, lam in enumerate(eom.multipliers):
        names[lam] = rf"\lambda_{{{k + 1}}}"
    return names


def to_latex(eom: EquationsOfMotion) -> str:
    names = latex_names(eom)

    def tex(e) -> str:
        return sp.latex(tidy(e), symbol_names=names)

    lines = [f"% {eom.system.name}: {METHODS[eom.method].title} (nhbridge)"]
    if eom.is_reduced:
        lines.append(f"% independent velocities: {', '.join(eom.independent)}; "
                     f"dependent: {', '.join(eom.dependent)}")
    lines.append(r"\begin{align}")
    body = []
    M = eom.mass_matrix
    x = sp.Matrix(eom.unknowns)
    body.append(tex(sp.MatMul(M, x, evaluate=False)) + " &= " + tex(eom.forcing))
    if eom.is_reduced:
        for i, c in enumerate(eom.system.coordinates):
            if c.name in eom.dependent:
                body.append(tex(c.velocity_symbol) + " &= " + tex(eom.kinematics[i]))
    for name, value in eom.forms:
        body.append(rf"\text{{{name.replace('_', ' ')}}} &= " + tex(value))
    lines.append(" \\\\\n".join(body))
    lines.append(r"\end{align}")
    return "\n".join(lines) + "\n"


def to_text(eom: EquationsOfMotion) -> str:
    title = METHODS[eom.method].title
    out = [f"{eom.system.name} — {title}"]
    if eom.is_reduced:
        out.append(f"independent velocities: {', '.join(eom.independent)}; dependent: {', '.join(eom.dependent)}")
        out.append("kinematics:")
        for i, c in enumerate(eom.system.coordinates):
            if c.name in eom.dependent:
                out.append(f"  der({c.name}) = {sp.sstr(eom.kinematics[i])}")
    out.append(f"unknowns: {', '.join(map(str, eom.unknowns))}")
    out.append("equations (mass matrix * unknowns = forcing):")
    for i, eq in enumerate(eom.equations()):
        out.append(f"  [{i + 1}] {sp.sstr(tidy(eq.lhs))} = {sp.sstr(tidy(eq.rhs))}")
    if eom.multipliers:
        out.append("constraints (velocity level, = 0):")
        for g in eom.velocity_constraints:
            out.append(f"  {sp.sstr(g)}")
    return "\n".join(out) + "\n"


def to_json(eom: EquationsOfMotion) -> str:
    data = {
        "name": eom.system.name,
        "method": eom.method,
        "coordinates": [c.name for c in eom.system.coordinates],
        "speeds": [str(s) for s in eom.u],
        "unknowns": [str(s) for s in eom.unknowns],
        "independent": list(eom.independent),
        "dependent": list(eom.dependent),
        "kinematics": [sp.sstr(e) for e in eom.kinematics],
        "mass_matrix": [[sp.sstr(eom.mass_matrix[i, j]) for j in range(eom.mass_matrix.shape[1])]
                        for i in range(eom.mass_matrix.shape[0])],
        "forcing": [sp.sstr(e) for e in eom.forcing],
        "forms": {name: sp.sstr(value) for name, value in eom.forms},
    }
    return json.dumps(data, indent=2) + "\n"


FORMATS = {"text": to_text, "latex": to_latex, "json": to_json}
