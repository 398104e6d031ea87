"""The rows of a switched element's equations (:mod:`bridge.modelica.switched`).

Its column and coordinate row in ``M z = F``, the row with its unknown replaced, and the velocity projection
of a mode change; shared by :mod:`bridge.modelica.friction` and :mod:`bridge.modelica.diode`.
"""

from __future__ import annotations

import sympy as sp

from ..model import symbols as S


def column(eom, el) -> int:
    """Return the column of the element's unknown in ``M z = F``."""
    return list(eom.unknowns).index(el.symbol)


def coordinate_row(eom, el) -> int:
    """Return the dynamics row of the element's coordinate (the row its unknown enters)."""
    return list(eom.u).index(S.qd(el.coordinate))


def row_with(writer, el, value: sp.Expr) -> sp.Expr:
    """Return the residual of the element's coordinate row j with its unknown u replaced by ``value``.

    The residual is ``sum_(c != u) M_jc z_c + M_ju value - F_j`` (``F_j`` with the port flows, as the
    dynamics row is written).
    """
    from . import ports as _ports

    eom = writer.eom
    j, col = coordinate_row(eom, el), column(eom, el)
    z = list(eom.unknowns)
    forcing = eom.forcing[j] + _ports.port_forces(eom, len(eom.u))[j]
    lhs = sp.Add(*[eom.mass_matrix[j, c] * z[c] for c in range(len(z)) if c != col and eom.mass_matrix[j, c] != 0])
    return lhs + eom.mass_matrix[j, col] * value - forcing


def acceleration_row(eom, w: sp.Expr) -> sp.Expr:
    """``dw/dt`` in the accelerations (``dw/dq' q'' + dw/dq q' + dw/dt``), for a w of positions and velocities."""
    from ..model.system import total_derivative

    system = eom.system
    return total_derivative(w, system.q, system.qd, system.qdd)


def projection(writer, el, w: sp.Symbol, gradient_of: sp.Expr) -> list[str]:
    """Return the ``reinit`` of every velocity along ``g = dw/dq'`` that makes ``w = 0`` with the least change.

    Each velocity becomes ``v_k := v_k - w g_k/|g|^2``, as the native simulation projects entering a holding
    mode; ``w`` is the variable holding the current w.
    """
    system = writer.eom.system
    g = [sp.diff(gradient_of, v) for v in system.qd]
    norm = sp.Add(*[gk**2 for gk in g])
    out = []
    for c, gk in zip(system.coordinates, g):
        if gk != 0:
            velocity = c.velocity_symbol
            out.append(f"    reinit({writer.velocity(c.name)}, {writer.code(velocity - w * gk / norm)});")
    return out
