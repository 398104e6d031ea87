"""Switched elements in Modelica: Coulomb friction and diodes as the MSL writes them, with a mode state.

Every switched element (:func:`bridge.derivation.efforts.switched`) is an unknown ``u`` of the dynamic system
``M z = F`` (the friction force ``F``, generalized force ``+F`` on its coordinate q_j; the diode voltage ``v``,
``-v`` on its charge q_j), whose row depends on the element's mode (:func:`~bridge.derivation.efforts.element_row`).
The model keeps the dynamics rows as exported (``u`` in row j with a constant coefficient) and writes the
element's row as one *mode row*, per mode:

* a holding mode (stick; blocking of an ideal diode): the acceleration-level condition
  ``dw/dt = dw/dq'*q'' + dw/dq*q' + dw/dt = 0`` (w the relative velocity, or the current);
* any other mode: row j with ``u`` replaced by its value in that mode (``-f`` sliding, ``V_f + R_on*i``
  conducting), so that row j then determines ``u``.

Each unknown is then solved from a row that holds it in every mode: ``u`` from row j (coefficient ``+-1``), the
acceleration q_j'' from the mode row (coefficient ``dw/dq_j'`` or ``M_jj``). The MSL's own arrangement
(``PartialFriction``: ``a_rel = if locked then 0 else sa - f0_max``, ``f = if locked then sa else f0``) makes
the row that determines its path parameter ``sa`` lose it in one of the modes; Rumoca 0.9 solves the rows one
by one and stops there (``docs/compiler-defects/FrictionRumocaCurveParameter.mo``).

Entering a holding mode, ``reinit`` moves the velocities onto ``w = 0`` (least change along ``dw/dq'``), as the
native simulation projects (:mod:`bridge.simulation.events`). The modes change by ``pre()`` as in the MSL
(:mod:`bridge.modelica.friction`, :mod:`bridge.modelica.diode`): pymoca 0.12 has neither ``pre`` nor ``when``
(``docs/compiler-defects/SwitchedPymocaWhen.mo``), so only a diode with ``off_conductance > 0`` (the MSL's
``IdealDiode``, relations only) is a model for it.
"""

from __future__ import annotations

import sympy as sp

from ..derivation.efforts import switched
from ..errors import ExportError
from ..model.efforts import Diode
from .switched_rows import acceleration_row, column, coordinate_row, projection, row_with  # noqa: F401

#: why pymoca cannot compile a model with a mode state (the documented limitation)
PYMOCA_NO_WHEN = ("pymoca 0.12 has no when-equations and no pre() (its CasADi generator: 'Unknown function pre'; "
                  "docs/compiler-defects/SwitchedPymocaWhen.mo), which the mode state of {what} needs")
#: why IDAS fails on pymoca's model of a diode with off_conductance > 0 (the documented defect)

def elements(system) -> tuple:
    """Return the switched elements (friction switched by events, then the diodes), in the order of their unknowns."""
    return switched(system)


def with_mode_state(system) -> list[str]:
    """Return the elements written with a mode state (``when``/``pre``).

    Friction switched by events and ideal diodes (``off_conductance = 0``); a diode with ``off_conductance > 0`` is the
    MSL's IdealDiode (relations only).
    """
    return [el.name for el in elements(system) if not isinstance(el, Diode) or el.off_conductance <= 0]


def pymoca_limitation(system) -> str | None:
    """Return why pymoca cannot compile the model of ``system`` (a mode state), or None."""
    names = with_mode_state(system)
    if not names:
        return None
    return PYMOCA_NO_WHEN.format(what=", ".join(names))


def check_exportable(eom) -> None:
    """Raise an ExportError for what the text cannot express.

    Equations whose element rows are not the derived ones (the form ``variables-normal`` mixes every row into every
    other), or a friction element whose sticking row ``dv_r/dt = 0`` shares no acceleration with its coordinate's row
    (no unknown of the mode row is in it in both modes).
    """
    from ..derivation.efforts import element_row, first_mode

    system = eom.system
    els = elements(system)
    if not els:
        return
    size = eom.mass_matrix.shape[0]
    for k, el in enumerate(els):
        row, rhs = element_row(eom, el, len(system.efforts) + k, size, first_mode(el))
        if list(eom.mass_matrix.row(size - len(els) + k)) != row or eom.forcing[size - len(els) + k] != rhs:
            raise ExportError(f"{system.name}: the equations are not in the form derived (the block of accelerations "
                              f"is rewritten, e.g. as normal equations), so the mode rows of {el.name} cannot be "
                              "written; export the form implicit or variables (--form auto)")
        if isinstance(el, Diode):
            continue
        j = coordinate_row(eom, el)
        shared = [c.name for c, v in zip(system.coordinates, system.qd)
                  if sp.diff(el.relative_velocity, v) != 0 and v in eom.u and eom.mass_matrix[j, eom.u.index(v)] != 0]
        if not shared:
            raise ExportError(f"{system.source}: friction.{el.name}: no acceleration appears both in the sticking "
                              f"condition d/dt({el.relative_velocity}) = 0 and in the equation of motion of "
                              f"{el.coordinate}, on which the friction force acts, so no variable is solved from the "
                              "same row while sticking and while sliding (Modelica tools solve a fixed pairing); write "
                              "the relative velocity of the surfaces the force acts between (it contains "
                              f"der({el.coordinate}))")


def declarations(writer) -> list[str]:
    """Return the variables of every switched element."""
    from . import diode, friction

    out = []
    for el in elements(writer.eom.system):
        out += diode.declarations(writer, el) if isinstance(el, Diode) else friction.declarations(writer, el)
    return out


def equations(writer) -> list[str]:
    """Return the equations of every switched element."""
    from . import diode, friction

    check_exportable(writer.eom)
    out = []
    for el in elements(writer.eom.system):
        out += diode.equations(writer, el) if isinstance(el, Diode) else friction.equations(writer, el)
    return out


def documentation(eom) -> list[str]:
    """Return HTML paragraphs stating the law and the modes of every switched element (the model's Documentation)."""
    import html

    out = []
    for el in elements(eom.system):
        name = html.escape(el.name, quote=False)
        if isinstance(el, Diode):
            kind = ("the MSL's IdealDiode (curve parameter <code>nhb_{0}_s</code>, <code>nhb_{0}_off = nhb_{0}_s &lt; "
                    "0</code>)" if el.off_conductance > 0 else "an ideal diode (off_conductance 0): blocking holds "
                    "<code>der(der({1}))</code> = 0, <code>reinit</code> sets the current to 0 as it starts to block")
            out.append(f"<p>Diode <b>{name}</b> on the current <code>der({el.coordinate})</code>, voltage "
                       f"<code>{name}</code> (generalized force <code>-{name}</code>): conducting "
                       f"<code>{name} = {el.forward_voltage:g} + {el.on_resistance:g}*i</code> until the current "
                       f"falls to 0, blocking until the voltage reaches {el.forward_voltage:g} V; written as "
                       + kind.format(name, el.coordinate) + ".</p>")
        else:
            out.append(f"<p>Coulomb friction <b>{name}</b> on <code>{el.coordinate}</code> (force <code>{name}</code>, "
                       f"relative velocity <code>{html.escape(str(el.relative_velocity), quote=False)}</code>): it "
                       f"sticks while the force that keeps the relative velocity at 0 is within mu_static*N = "
                       f"{el.mu_static:g}*N, else slides with {name} = -{el.mu_kinetic:g}*N*sign(v_rel); written with "
                       "the variables and mode logic of Modelica.Mechanics.Translational.Interfaces.PartialFriction "
                       f"(<code>nhb_{name}_mode</code>, <code>nhb_{name}_locked</code>, ...), <code>reinit</code> "
                       "moving the velocities onto v_rel = 0 as it starts to stick.</p>")
    return out
