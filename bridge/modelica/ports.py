"""Flanges of an exported model: the ``[ports]`` of a system as connectors with the MSL's structure.

For a port on coordinate ``q_i`` of kind ``k`` (:data:`bridge.model.ports.PORT_KINDS`) the model has a
component ``flange_<q>`` of the connector class ``Flange_a`` (``Modelica.Mechanics.<Rotational|Translational>.
Interfaces`` with ``msl=True``, otherwise the identical local copy in the package :data:`LIBRARY` shipped with
nhbridge) and the equations

    flange_q.phi = q                        (the potential: the coordinate itself)
    Q_i  ->  Q_i + flange_q.tau             (the flow: what the connected components apply, positive into the model)

The flow enters the dynamic rows as a generalized force does. Every method writes the rows as the projection
of d'Alembert's principle on the independent velocities ``u``, so a force ``F_i`` on coordinate ``i`` adds
``(dK_i/du_k) F_i`` to row ``k`` (``K`` the kinematics ``q' = K(q, u, t)``; the identity for the full methods,
the split ``B`` for the reduced ones); the acceleration-level constraint rows get nothing.
"""

from __future__ import annotations

import sympy as sp

from ..derivation.eom import EquationsOfMotion
from ..model.ports import PORT_KINDS, PortKind, port_name

#: the local package holding copies of the MSL's flanges (the top-level ``modelica/`` folder of nhbridge)
LIBRARY = "NHBridge"


def connector_class(kind: str, msl: bool) -> str:
    """Return the full class name of the flange ``Flange_a`` of a port kind: the MSL's, or the local copy."""
    spec = PORT_KINDS[kind]
    root = spec.msl_package if msl else f"{LIBRARY}.Mechanics.{spec.library}.Interfaces"
    return f"{root}.Flange_a"


def flow_symbol(coordinate: str) -> sp.Symbol:
    """Return the placeholder of the flange's flow variable in the dynamic rows (printed as ``flange_<q>.tau``)."""
    return sp.Symbol(f"nhb_port_{coordinate}")


def port_forces(eom: EquationsOfMotion, rows: int) -> list[sp.Expr]:
    """Return the terms the ports add to the first ``rows`` forcing rows.

    ``sum_i (dK_i/du_k) F_i`` for the dynamic rows ``k < len(u)``, nothing for the constraint rows after them.
    """
    system = eom.system
    out = [sp.Integer(0)] * rows
    index = {c.name: i for i, c in enumerate(system.coordinates)}
    for name in system.ports:
        i, flow = index[name], flow_symbol(name)
        for k, u in enumerate(eom.u[:rows]):
            coefficient = sp.diff(eom.kinematics[i], u)
            if coefficient != 0:
                out[k] += coefficient * flow
    return out


def flow_names(eom: EquationsOfMotion, ident) -> dict[sp.Symbol, str]:
    """Return placeholder -> ``flange_<q>.<flow>`` in the model text.

    ``ident`` spells a user name as the writer does.
    """
    return {flow_symbol(name): f"{ident(port_name(name))}.{PORT_KINDS[kind].flow}"
            for name, kind in eom.system.ports.items()}


def _placement(k: int, n: int) -> str:
    """Place the flanges on the left border of the icon, top to bottom (the MSL's flange_a is at the left)."""
    y = round(100 - 200 * (k + 1) / (n + 1))
    return f"annotation(Placement(transformation(extent={{{{-110,{y - 10}}},{{-90,{y + 10}}}}})))"


def port_declarations(eom: EquationsOfMotion, ident, msl: bool) -> list[str]:
    """Return one ``Flange_a`` component per port, described by the equations it adds, placed on the icon."""
    ports = eom.system.ports
    if not ports:
        return []
    out = ["  // ports: flanges with the MSL's structure"]
    for k, (name, kind) in enumerate(ports.items()):
        spec = PORT_KINDS[kind]
        text = f"{kind} port of {name}: {spec.potential} = {name}, {spec.flow} adds to its generalized force"
        out.append(f'  {connector_class(kind, msl)} {ident(port_name(name))} "{text}" {_placement(k, len(ports))};')
    return out


def port_equations(eom: EquationsOfMotion, ident) -> list[str]:
    """Return ``flange_<q>.<potential> = q`` for every port."""
    ports = eom.system.ports
    if not ports:
        return []
    return ["  // ports: the flange's potential variable is the coordinate"] + [
        f"  {ident(port_name(name))}.{PORT_KINDS[kind].potential} = {ident(name)};" for name, kind in ports.items()]


#: the icon of an exported model, as the MSL draws a component: a framed box with the instance name above it
ICON = ('Icon(coordinateSystem(preserveAspectRatio=false, extent={{-100,-100},{100,100}}), graphics={'
        'Rectangle(extent={{-100,100},{100,-100}}, lineColor={0,0,0}, fillColor={255,255,255}, '
        'fillPattern=FillPattern.Solid), Text(extent={{-150,150},{150,110}}, textString="%name", '
        'lineColor={0,0,255})})')


def uses_annotation(eom: EquationsOfMotion, msl: bool) -> str:
    """Return the annotations before ``experiment``.

    ``uses(Modelica(version="4.0.0"))`` where the model refers to the MSL's flanges, and the icon (:data:`ICON`).
    """
    uses = 'uses(Modelica(version="4.0.0")),\n    ' if msl and eom.system.ports else ""
    return uses + ICON


def library_files(eom: EquationsOfMotion | None = None, msl: bool = False) -> dict[str, str]:
    """Return the files of the local connector package (path relative to a library root -> text).

    None where the model uses no local connector (no ports, or the MSL's). Without ``eom``: the whole package.
    """
    if eom is not None and (msl or not eom.system.ports):
        return {}
    return {f"{LIBRARY}/package.mo": library_source(), f"{LIBRARY}/package.order": "Mechanics\n"}


def _connector(spec: PortKind, side: str, indent: str) -> list[str]:
    """Return ``Flange_a``/``Flange_b`` as in the MSL.

    ``SI.<quantity> <potential>`` and ``flow SI.<quantity> <flow>`` with the types' final quantity and unit spelled out
    (the same structure, so the two connect).
    """
    filled = side == "a"
    what = (f"One-dimensional {spec.kind} flange ({'filled' if filled else 'non-filled'} "
            f"{'circle' if spec.kind == 'rotational' else 'square'} icon)")
    display = ', displayUnit="deg"' if spec.kind == "rotational" else ""
    fill = "{95,95,95}" if filled else "{255,255,255}"
    shape = "Ellipse" if spec.kind == "rotational" else "Rectangle"
    return [
        f'{indent}connector Flange_{side} "{what}"',
        f'{indent}  Real {spec.potential}(final quantity="{spec.quantity}", final unit="{spec.unit}"{display}) '
        f'"{spec.potential_text}";',
        f'{indent}  flow Real {spec.flow}(final quantity="{spec.flow_quantity}", final unit="{spec.flow_unit}") '
        f'"{spec.flow_text}";',
        f'{indent}  annotation(defaultComponentName="flange_{side}", Icon(coordinateSystem(preserveAspectRatio=true, '
        f'extent={{{{-100,-100}},{{100,100}}}}), graphics={{{shape}(extent={{{{-100,100}},{{100,-100}}}}, '
        f'lineColor={{0,0,0}}, fillColor={fill}, fillPattern=FillPattern.Solid)}}),',
        f'{indent}    Documentation(info="<html><p>A copy of <code>{spec.msl_package}.Flange_{side}</code> '
        f'with the same variables ({spec.potential} in {spec.unit}, flow {spec.flow} in {spec.flow_unit}), '
        f'so that the two connect.</p></html>"));',
        f"{indent}end Flange_{side};",
    ]


def library_source() -> str:
    """Return the text of ``package NHBridge``, the local copy of the MSL's flange connectors.

    ``Mechanics.Rotational.Interfaces`` and ``Mechanics.Translational.Interfaces`` with ``Flange_a`` and ``Flange_b``,
    structurally identical to the MSL's.
    """
    out = ["within;", f'package {LIBRARY} "Connectors of the models nhbridge exports: copies of the MSL\'s flanges"',
           '  package Mechanics "Flanges of one-dimensional mechanical systems"']
    for spec in PORT_KINDS.values():
        out += [f'    package {spec.library} "{spec.kind.capitalize()} flanges"',
                f'      package Interfaces "Flange_a and Flange_b of {spec.msl_package}"']
        for side in ("a", "b"):
            out += _connector(spec, side, "        ")
        out += ["      end Interfaces;", f"    end {spec.library};"]
    out += ["  end Mechanics;",
            '  annotation(Documentation(info="<html><p>The flanges of exported models with <code>[ports]</code> '
            "when they are exported without <code>--msl</code>: the same variables, units and flow prefixes as "
            "the Modelica Standard Library's, so that they connect to MSL components.</p></html>\"));",
            f"end {LIBRARY};"]
    return "\n".join(out) + "\n"



def with_ports(writer, declarations: list[str], equations: list[str]) -> tuple[list[str], list[str]]:
    """Return the model's declarations and equations with the ports' flanges and potential equations.

    The flanges come before the coordinates, their potential equations first in the equation section; unchanged without
    ports.
    """
    eom = writer.eom
    if not eom.system.ports:
        return declarations, equations
    flanges = port_declarations(eom, writer.ident, writer.msl)
    at = declarations.index("  // generalized coordinates") if "  // generalized coordinates" in declarations else 0
    return declarations[:at] + flanges + declarations[at:], port_equations(eom, writer.ident) + equations
