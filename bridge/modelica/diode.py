"""Diodes in Modelica, as the MSL's ``Modelica.Electrical.Analog.Ideal.IdealDiode``.

A diode d on the charge q (current ``i = der(q)``, voltage ``d``, generalized force ``-d`` on q; knee voltage
``V_f``, ``R_on``, ``G_off``; :class:`bridge.model.efforts.Diode`):

* ``G_off > 0``: the MSL's equations, a curve parameter ``nhb_d_s`` and ``nhb_d_off = nhb_d_s < 0``::

      d   = nhb_d_s*(if nhb_d_off then 1 else R_on) + V_f;
      der_q = nhb_d_s*(if nhb_d_off then G_off else 1) + G_off*V_f;

  both branches meet at ``s = 0``, so the tool's relation switches it without memory;
* ``G_off = 0`` (ideal): the blocking branch would fix the state ``der(q)`` to 0, which no index-1 form holds;
  it is written as the native simulation holds it, ``der(der(q)) = 0`` with ``reinit(der_q, 0)`` entering it,
  and a mode state switched by ``pre()``: ``nhb_d_off = if pre(nhb_d_off) then d < V_f else der_q < 0``
  (blocking until the voltage reaches ``V_f``, conducting until the current falls to 0). The dynamics row of q
  holds ``d``; the mode row is ``der(der(q)) = 0`` blocking, else that row with ``d = V_f + R_on*der_q``
  (:mod:`bridge.modelica.switched`). It starts blocking unless the start current is positive (the first event
  iteration turns it on where the blocking voltage exceeds ``V_f``).
"""

from __future__ import annotations

import sympy as sp

from ..errors import ExportError
from ..model.efforts import Diode
from .switched_rows import projection, row_with


def _coordinate(writer, d: Diode):
    return next(c for c in writer.eom.system.coordinates if c.name == d.coordinate)


def declarations(writer, d: Diode) -> list[str]:
    """Return the diode voltage, the curve parameter and the blocking state, with the MSL's unit constants."""
    from ..codegen.strings import modelica_text
    from .dimensions import velocity_unit

    c = _coordinate(writer, d)
    current = velocity_unit(c.unit)
    out = [f'  Real {writer.ident(d.name)}(unit="V") "voltage of the diode {d.name}'
           + (f': {modelica_text(d.description)}' if d.description else "") + '";',
           f'  Real nhb_{d.name}_s(start=0.0, unit="1") "curve parameter of the diode {d.name} (as IdealDiode.s)";',
           f'  constant Real nhb_{d.name}_unitVoltage(unit="V") = 1 "one volt";',
           f'  constant Real nhb_{d.name}_unitCurrent{f"(unit={chr(34)}{current}{chr(34)})" if current else ""} = 1 '
           f'"one unit of the current der({d.coordinate})";']
    if d.off_conductance > 0:
        return [*out, f'  Boolean nhb_{d.name}_off(start=true) "the diode {d.name} blocks";']
    if c.velocity < 0:
        raise ExportError(f"{writer.eom.system.source}: diodes.{d.name}: the start current der({d.coordinate}) = "
                          f"{c.velocity:g} is negative; an ideal diode (off_conductance = 0) blocks it: natively it "
                          "is projected onto 0 at t = 0, which the Modelica model does not do; give the coordinate "
                          f"{d.coordinate} a start velocity >= 0")
    return [*out, f'  Boolean nhb_{d.name}_off(start={str(not c.velocity > 0).lower()}, fixed=true) "the diode '
                  f'{d.name} blocks (its current is held at 0)";']


def equations(writer, d: Diode) -> list[str]:
    """Return the diode's equations: the MSL's IdealDiode (``G_off > 0``) or the mode row with pre() and reinit."""
    s, off, v = f"nhb_{d.name}_s", f"nhb_{d.name}_off", writer.ident(d.name)
    volt, amp = f"nhb_{d.name}_unitVoltage", f"nhb_{d.name}_unitCurrent"
    ron, goff, vf = (sp.Float(x) if x else sp.Integer(0) for x in (d.on_resistance, d.off_conductance,
                                                                    d.forward_voltage))
    c = writer.code
    current = writer.velocity(d.coordinate)
    if d.off_conductance > 0:
        return [f"  // diodes.{d.name} (as Modelica.Electrical.Analog.Ideal.IdealDiode)",
                f"  {off} = {s} < 0;",
                f"  {v} = ({s}*{amp})*(if {off} then 1 else {c(ron)}) + {c(vf)};",
                f"  {current} = ({s}*{volt})*(if {off} then {c(goff)} else 1) + {c(goff * vf)};"]
    coordinate = _coordinate(writer, d)
    i = coordinate.velocity_symbol
    mode_row = sp.Piecewise((coordinate.acceleration_symbol, sp.Symbol(off)), (row_with(writer, d, vf + ron * i), True))
    return [f"  // diodes.{d.name} (as Modelica.Electrical.Analog.Ideal.IdealDiode with Goff = 0: blocking holds "
            f"der({current}) = 0)",
            f"  {off} = {s} < 0;",
            f"  {s} = if {off} then ({v} - {c(vf)})/{amp} else if pre({off}) then 0 else {current}/{volt};",
            f"  // the voltage from its charge's row; the current's rate from the mode row: 0 blocking, else the row "
            f"with {v} = {c(vf + ron * sp.Symbol(current))}",
            f"  0 = {c(mode_row)};",
            f"  when {off} then  // blocking starts: the current onto 0",
            *projection(writer, d, i, i),
            "  end when;"]
