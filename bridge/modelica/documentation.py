"""The equations of a system in the ``Documentation`` of its exported model, as HTML.

The model's documentation lists what the model was derived from, in the notation of the system file
(``der(x)`` for a velocity): the kinetic energy ``T``, the potential ``V``, the dissipation function ``D``,
the generalized forces ``Q``, the constraints and the ports, then the form of the equations of motion.
Every expression is printed by :class:`ModelicaCodePrinter` and HTML-escaped. Large systems are bounded:
an expression longer than :data:`MAX_EXPRESSION` characters is cut, and the list stops after
:data:`MAX_TOTAL` characters, each saying so (the model's equation section always holds everything).
"""

from __future__ import annotations

import html

import sympy as sp

from ..model.ports import PORT_KINDS, port_name
from .printer import ModelicaCodePrinter

MAX_EXPRESSION = 1000
MAX_TOTAL = 20000


def _printer(system) -> ModelicaCodePrinter:
    names: dict[sp.Symbol, str] = {}
    for c in system.coordinates:
        names[c.symbol] = c.name
        names[c.velocity_symbol] = f"der({c.name})"
        names[c.acceleration_symbol] = f"der(der({c.name}))"
    for p in (*system.parameters, *system.inputs):
        names[p.symbol] = p.name
    return ModelicaCodePrinter(names)


def _expression(printer: ModelicaCodePrinter, expr) -> str:
    text = printer.doprint(expr)
    if len(text) > MAX_EXPRESSION:
        text = text[:MAX_EXPRESSION] + f" ... ({len(text)} characters; cut here)"
    return f"<code>{html.escape(text, quote=False)}</code>"


def _form(eom, level: str) -> str:
    """Return the equations of motion in words and symbols, for the form the model has."""
    if eom.is_reduced:
        return ("<p>Form: the reduced equations (no multipliers) in the independent velocities u = "
                f"{html.escape(', '.join(eom.independent), quote=False)}: with the kinematic relations "
                "<code>der(q) = B*u + beta</code> from the constraints, "
                "<code>B^T*(d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) - Q) = 0</code>; "
                "the mass matrix stays implicit (<code>M*der(u) = F</code>, solved by the tool).</p>")
    constraints = ("as written (the tool reduces the index)" if level == "given"
                   else "differentiated to acceleration level (index 1)")
    return ("<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q + A^T*lambda</code> "
            "with the multipliers <code>lambda</code>, the constraints "
            f"{constraints}; <code>A</code> is the Jacobian of the velocity-level constraints "
            "<code>A*der(q) + a0 = 0</code>.</p>" if eom.multipliers else
            "<p>Form: <code>d/dt(dT/d(der(q))) - dT/dq + dV/dq + dD/d(der(q)) = Q</code> "
            "(mass matrix implicit: <code>M*der(der(q)) = F</code>, solved by the tool).</p>")


def equations_html(eom, level: str) -> list[str]:
    """Return HTML paragraphs with the energies, forces, constraints, ports and the form of the equations."""
    system = eom.system
    printer = _printer(system)
    items: list[str] = [f"T = {_expression(printer, system.kinetic)}"]
    if system.potential != 0:
        items.append(f"V = {_expression(printer, system.potential)}")
    if system.dissipation != 0:
        items.append(f"D = {_expression(printer, system.dissipation)}")
    for name, force in system.forces.items():
        items.append(f"Q<sub>{html.escape(name, quote=False)}</sub> = {_expression(printer, force)}")
    for entry, expr in system.constraints:
        items.append(f"{html.escape(entry, quote=False)}: {_expression(printer, expr)} = 0")
    for name, kind in system.ports.items():
        spec = PORT_KINDS[kind]
        flange = port_name(name)
        items.append(f"port {flange} ({kind}): <code>{flange}.{spec.potential} = {name}</code>, "
                     f"<code>{flange}.{spec.flow}</code> added to Q<sub>{name}</sub>")
    out, total = ["<p>Equations (in the notation of the system file):</p>", "<ul>"], 0
    for k, item in enumerate(items):
        if total + len(item) > MAX_TOTAL:
            out.append(f"<li>... {len(items) - k} more not listed here (more than {MAX_TOTAL} characters); "
                       "the equation section holds them all</li>")
            break
        out.append(f"<li>{item}</li>")
        total += len(item)
    return [*out, "</ul>", _form(eom, level)]
