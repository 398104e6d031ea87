"""Ports: coordinates that an exported Modelica model offers as flanges with the MSL's structure.

A system file may name coordinates under ``[ports]`` (``phi = "rotational"``, ``x = "translational"``).
The exported model then has one connector per port, a copy of the Modelica Standard Library's flange:

* rotational:    ``phi`` (rad, potential) and ``flow tau`` (N.m), ``Modelica.Mechanics.Rotational.Interfaces``;
* translational: ``s`` (m, potential) and ``flow f`` (N), ``Modelica.Mechanics.Translational.Interfaces``.

The flange's potential variable equals the coordinate, and its flow variable (the torque or force the
connected components apply on this one, positive into it) is added to the generalized force ``Q_i`` of that
coordinate. The native simulation and the FMUs have no connectors: there the flow is zero (an unconnected
flange), i.e. ports do not change the equations of the system on its own.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PORT_KINDS", "PortKind", "port_name"]


@dataclass(frozen=True)
class PortKind:
    """One kind of flange: the potential and flow variables with their MSL types and units."""

    kind: str
    potential: str
    flow: str
    unit: str        # the unit of the potential variable (the coordinate's unit)
    flow_unit: str
    quantity: str    # the MSL's quantity of the potential variable (SI.Angle, SI.Position)
    flow_quantity: str
    potential_text: str  # the MSL's descriptions
    flow_text: str
    library: str     # Rotational / Translational

    @property
    def msl_package(self) -> str:
        """The MSL package of the port's connectors, e.g. ``Modelica.Mechanics.Rotational.Interfaces``."""
        return f"Modelica.Mechanics.{self.library}.Interfaces"


PORT_KINDS: dict[str, PortKind] = {
    "rotational": PortKind("rotational", "phi", "tau", "rad", "N.m", "Angle", "Torque",
                           "Absolute rotation angle of flange", "Cut torque in the flange", "Rotational"),
    "translational": PortKind("translational", "s", "f", "m", "N", "Length", "Force",
                              "Absolute position of flange", "Cut force directed into flange", "Translational"),
}


def port_name(coordinate: str) -> str:
    """Return the connector's component name in the exported model: ``flange_<coordinate>``."""
    return f"flange_{coordinate}"
