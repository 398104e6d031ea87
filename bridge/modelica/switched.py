"""Switched elements in Modelica: diodes as the MSL's ``Modelica.Electrical.Analog.Ideal.IdealDiode``.

A diode d on the charge q (current ``i = der(q)``, voltage d, the generalized force ``-d`` on q, see
:class:`bridge.model.efforts.Diode`) gets a curve parameter ``nhb_d_s`` and a Boolean ``nhb_d_off``:

    nhb_d_off = nhb_d_s < 0;
    d     = nhb_d_s*(if nhb_d_off then 1 else R_on) + V_f;
    der_q = nhb_d_s*(if nhb_d_off then G_off else 1) + G_off*V_f;

so that the tool's event handling switches it at ``s = 0``, where both branches meet. The blocking branch
needs ``G_off > 0`` (the MSL's default is 1e-5): with ``G_off = 0`` it would fix the state ``der(q)`` to 0,
which no index-1 form holds. Coulomb friction with stick and slip is not exported yet.
"""

from __future__ import annotations

from ..errors import ExportError


def check_exportable(system) -> None:
    """An ExportError for what the Modelica export cannot write yet."""
    friction = [f.name for f in system.friction if f.regularization == 0]
    if friction:
        raise ExportError(f"{system.name}: the Modelica export does not handle Coulomb friction with stick/slip "
                          f"events yet ({', '.join(friction)}); simulate it natively, or give each [friction] "
                          "element a regularization velocity for the smooth law")
    ideal = [d.name for d in system.diodes if d.off_conductance <= 0]
    if ideal:
        raise ExportError(f"{system.name}: the diode(s) {', '.join(ideal)} have off_conductance = 0; the Modelica "
                          "export writes diodes as the MSL's IdealDiode, whose blocking branch needs a positive "
                          "off_conductance (the MSL's default is 1e-5)")


def declarations(writer) -> list[str]:
    """The diode voltages, curve parameters and blocking states."""
    out = []
    for d in writer.eom.system.diodes:
        out += [f'  Real {writer.ident(d.name)}(unit="V") "voltage of the diode {d.name}";',
                f'  Real nhb_{d.name}_s(start=0.0) "curve parameter of the diode {d.name}";',
                f'  Boolean nhb_{d.name}_off(start=true) "the diode {d.name} blocks";']
    return out


def equations(writer) -> list[str]:
    """The MSL IdealDiode's equations of every diode."""
    out = []
    for d in writer.eom.system.diodes:
        s, off, v = f"nhb_{d.name}_s", f"nhb_{d.name}_off", writer.ident(d.name)
        ron, goff, vf = (repr(float(x)) for x in (d.on_resistance, d.off_conductance, d.forward_voltage))
        out += [f"  // diodes.{d.name} (as Modelica.Electrical.Analog.Ideal.IdealDiode)",
                f"  {off} = {s} < 0;",
                f"  {v} = {s}*(if {off} then 1 else {ron}) + {vf};",
                f"  {writer.velocity(d.coordinate)} = {s}*(if {off} then {goff} else 1) + {goff}*{vf};"]
    return out
