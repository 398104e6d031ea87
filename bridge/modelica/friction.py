"""Coulomb friction with stick and slip in Modelica, as the MSL's ``PartialFriction``.

A friction element ``F`` on the coordinate q_j (:class:`bridge.model.efforts.Friction`: relative velocity
``v_r(q, q', t)``, normal force ``N >= 0``, generalized force ``+F`` on q_j) is written with the variables and
the mode logic of ``Modelica.Mechanics.Translational.Interfaces.PartialFriction`` (prefixed ``nhb_<name>_``):
``v_rel = v_r``, ``a_rel = dv_r/dt``, ``f0 = mu_kinetic N``, ``f0_max = mu_static N``, the path parameter ``sa``
(dimensionless), the Booleans ``startForward``, ``startBackward``, ``locked`` and the Integer ``mode``
(-1 backward sliding, 0 stuck, 1 forward sliding, 3 unknown before the start). ``f`` is the friction force
opposing ``v_rel`` (the MSL's sign: ``F = -f``); while sliding it is ``+-f0``, while stuck ``sa``:

* ``startForward = pre(mode) == 0 and (sa > f0_max or pre(startForward) and sa > f0) or initial() and v_rel > 0``
  (backward mirrored); ``locked = not (pre(mode) == 1 or startForward or pre(mode) == -1 or startBackward)``;
* ``mode = if (pre(mode) == 1 or startForward) and v_rel > 0 then 1 else if (pre(mode) == -1 or startBackward)
  and v_rel < 0 then -1 else 0``;
* the path parameter: ``sa = f`` (stuck), ``sa = a_rel + f0_max`` (forward), ``a_rel - f0_max`` (backward), in
  units of 1 (``unitForce``, ``unitAcceleration`` as the MSL's).

The MSL's ``w_small`` (a direct reversal without passing through ``stuck``, off by default) is left out. The
continuous rows (:mod:`bridge.modelica.switched`): row j of the dynamics holds ``F``; the mode row is
``a_rel = 0`` when locked, else row j with ``F = -f``. Entering ``locked`` the velocities are moved onto
``v_rel = 0`` (``reinit``). This is the native simulation's law: stick while the force that keeps ``v_rel = 0``
is within ``mu_static N`` (``|sa| <= f0_max``), slip against it otherwise.
"""

from __future__ import annotations

import sympy as sp

from ..model.dimensions import mul
from ..model.efforts import Friction
from .dimensions import Dimensions, unit_text
from .switched_rows import acceleration_row, projection, row_with

SUFFIXES = ("v_rel", "v_sliding", "a_rel", "f0", "f0_max", "f", "sa", "startForward", "startBackward", "locked", "mode",
            "unitForce", "unitAcceleration", "unitVelocity")


def names(el: Friction) -> dict[str, str]:
    """Return the Modelica names of the element's variables (``nhb_<name>_<suffix>``; ``nhb_`` is reserved)."""
    return {s: f"nhb_{el.name}_{s}" for s in SUFFIXES}


def units(writer, el: Friction) -> tuple[str, str, str]:
    """Return the (force, relative velocity, relative acceleration) units.

    The force from the normal force, else the generalized force on the coordinate (kinetic energy / coordinate, rad as
    1); "" where unknown.
    """
    dims = Dimensions(writer.eom)
    system = writer.eom.system
    force = dims.text(el.normal)
    if not force:
        energy = dims.of(system.kinetic, keep_rad=False)
        coordinate = dims.of(next(c.symbol for c in system.coordinates if c.name == el.coordinate), keep_rad=False)
        force = unit_text(mul(energy, coordinate, -1)) if energy is not None and coordinate is not None else ""
    return force, dims.text(el.relative_velocity), dims.text(acceleration_row(writer.eom, el.relative_velocity))


def _mods(unit: str) -> str:
    return f'(unit="{unit}")' if unit else ""


def declarations(writer, el: Friction) -> list[str]:
    """Return the friction force and the PartialFriction variables of the element."""
    n = names(el)
    force, velocity, acceleration = units(writer, el)
    from ..codegen.strings import modelica_text

    what = modelica_text(el.description or f"Coulomb friction {el.name}")
    mods = _mods(force)
    return [
        f'  Real {writer.ident(el.name)}{mods} "friction force on {el.coordinate} (generalized force): {what}";',
        f'  Real {n["v_rel"]}{_mods(velocity)} "relative velocity of the '
        f'friction {el.name}";',
        f'  Real {n["v_sliding"]}{_mods(velocity)} "relative velocity of the friction {el.name} while it is not '
        'locked (one unit while locked)";',
        f'  Real {n["a_rel"]}{_mods(acceleration)} "relative acceleration '
        f'of the friction {el.name}";',
        f'  Real {n["f0"]}{mods} "sliding friction force mu_kinetic*N of {el.name}";',
        f'  Real {n["f0_max"]}{mods} "largest sticking force mu_static*N of {el.name}";',
        f'  Real {n["f"]}{mods} "friction force of {el.name} opposing the relative velocity (f = -{el.name})";',
        f'  Real {n["sa"]}(unit="1") "path parameter of the friction characteristic of {el.name}";',
        f'  Boolean {n["startForward"]}(start=false, fixed=true) "{el.name}: v_rel = 0 and start of forward '
        'sliding";',
        f'  Boolean {n["startBackward"]}(start=false, fixed=true) "{el.name}: v_rel = 0 and start of backward '
        'sliding";',
        f'  Boolean {n["locked"]}(start=false) "{el.name}: v_rel = 0 and not sliding (stuck)";',
        f'  Integer {n["mode"]}(min=-1, max=3, start=3, fixed=true) "{el.name}: -1 backward sliding, 0 stuck, '
        '1 forward sliding, 3 unknown (before the start)";',
        f'  constant Real {n["unitForce"]}{mods} = 1 "one unit of the '
        f'friction force of {el.name}";',
        f'  constant Real {n["unitAcceleration"]}{_mods(acceleration)} = 1 '
        f'"one unit of the relative acceleration of {el.name}";',
        f'  constant Real {n["unitVelocity"]}{_mods(velocity)} = 1 "one unit of the relative velocity of {el.name}";',
    ]


def equations(writer, el: Friction) -> list[str]:
    """Return the element's equations: its characteristic and modes as PartialFriction, the mode row, the projection."""
    n = names(el)
    sym = {k: sp.Symbol(v) for k, v in n.items()}
    a_rel = acceleration_row(writer.eom, el.relative_velocity)
    mode_row = sp.Piecewise((a_rel, sym["locked"]), (row_with(writer, el, -sym["f"]), True))
    force = writer.ident(el.name)
    pre_mode = f"pre({n['mode']})"
    sliding = (f"if {n['startForward']} then {{p}} else if {n['startBackward']} then -{{p}} else if "
               f"{pre_mode} == 1 then {{p}} else -{{p}}")
    return [
        f"  // friction.{el.name}: Coulomb friction with stick and slip, as "
        "Modelica.Mechanics.Translational.Interfaces.PartialFriction",
        f"  {n['v_rel']} = {writer.code(el.relative_velocity)};",
        f"  {n['a_rel']} = {writer.code(a_rel)};",
        f"  {n['f0']} = {writer.code(sp.Float(el.mu_kinetic) * el.normal)};",
        f"  {n['f0_max']} = {writer.code(sp.Float(el.mu_static) * el.normal)};",
        f"  {n['startForward']} = {pre_mode} == 0 and ({n['sa']} > {n['f0_max']}/{n['unitForce']} or "
        f"pre({n['startForward']}) and {n['sa']} > {n['f0']}/{n['unitForce']}) or initial() and "
        f"noEvent({n['v_rel']} > 0);",
        f"  {n['startBackward']} = {pre_mode} == 0 and ({n['sa']} < -{n['f0_max']}/{n['unitForce']} or "
        f"pre({n['startBackward']}) and {n['sa']} < -{n['f0']}/{n['unitForce']}) or initial() and "
        f"noEvent({n['v_rel']} < 0);",
        f"  {n['locked']} = not ({pre_mode} == 1 or {n['startForward']} or {pre_mode} == -1 or "
        f"{n['startBackward']});",
        f"  {n['f']} = {sliding.format(p=n['f0'])};",
        "  // the friction force from its coordinate's row; that acceleration from the mode row: a_rel = 0 while "
        f"locked, else the row with {force} = -{n['f']}",
        f"  0 = {writer.code(mode_row)};",
        f"  {n['sa']} = if {n['locked']} then -{force}/{n['unitForce']} else {n['a_rel']}/{n['unitAcceleration']} "
        f"+ ({sliding.format(p=n['f0_max'])})/{n['unitForce']};",
        f"  {n['v_sliding']} = if {n['locked']} then {n['unitVelocity']} else {n['v_rel']};",
        f"  {n['mode']} = if ({pre_mode} == 1 or {n['startForward']}) and {n['v_sliding']} > 0 then 1 else if "
        f"({pre_mode} == -1 or {n['startBackward']}) and {n['v_sliding']} < 0 then -1 else 0;",
        f"  when {n['locked']} then  // sticking starts: the velocities onto v_rel = 0",
        *projection(writer, el, sym["v_rel"], el.relative_velocity),
        "  end when;",
    ]
