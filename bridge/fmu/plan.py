"""Plan a native FMU: everything the generated ``model.c`` and ``modelDescription.xml`` share, computed once.

The plan is passed to :mod:`.model_c`, :mod:`.jacobian` and :mod:`.model_description`. A :class:`CModelPlan`
holds the equations, the :class:`~.layout.FmuLayout` (value references, kinds, whether the Jacobian code is
generated) and the GUID, and gives the C names of the bridge's symbols and the statements that solve the
auxiliary placeholders ``Z`` of the reduced methods (used by ``nhb_rhs``, ``nhb_outputs`` and ``nhb_jacobian``
alike).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

import sympy as sp

from ..codegen.c import NhbCPrinter, c_assignments, c_names, cse_block
from ..derivation.eom import EquationsOfMotion
from .layout import FmuLayout, layout

#: the generated code stops with an error when min |pivot| of A_dep / max |[A_dep, A_ind]| falls below this: the
#: split chosen at build time is (nearly) singular there (the native simulation re-partitions at the same health
#: of sigma_min(A_dep) / |A|, bridge.simulation.simulate.SPLIT_THRESHOLD)
SPLIT_HEALTH_MIN = 1e-3


@dataclass(frozen=True)
class CModelPlan:
    """The equations, the layout and the GUID of one native FMU."""

    eom: EquationsOfMotion
    layout: FmuLayout
    guid: str

    @property
    def fmi_version(self) -> int:
        """FMI version of the FMU (2 or 3), as the layout's."""
        return self.layout.fmi_version

    def names(self) -> dict[sp.Symbol, str]:
        """Return a fresh map of the C names of the bridge's symbols, the auxiliary placeholders as ``Z[k]``.

        A printer adds its temporaries to the map it gets, hence a new map per call.
        """
        return model_names(self.eom)

    def auxiliary_c(self, prefix: str) -> list[str]:
        """Return the statements computing ``Z``: see :func:`auxiliary_c`."""
        return auxiliary_c(self.eom, prefix)


def build_plan(eom: EquationsOfMotion, fmi_version: int = 2, jacobian: bool | str | None = "auto") -> CModelPlan:
    """Plan ``eom``'s FMU: its layout and a GUID derived from the equations (the same equations give the same GUID).

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    fmi_version : int
        2 or 3.
    jacobian : bool, str or None
        Whether to generate the Jacobian code (``"auto"``: :func:`~bridge.fmu.features.jacobian_enabled`).

    Returns
    -------
    CModelPlan
    """
    lay = layout(eom, fmi_version, jacobian)
    jac = ":jacobian" if lay.jacobian else ""
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL,
                                f"nhbridge:{eom.system.name}:{eom.method}:{model_hash(eom)}{jac}")) + "}"
    return CModelPlan(eom, lay, guid)


def model_hash(eom: EquationsOfMotion) -> str:
    """Hash the method, the equations, the parameter names and the switched elements to 16 hex digits.

    The equations are the mass matrix, forcing and kinematics, hashed by their structure (each node's class
    and its arguments' hashes, every shared subexpression once) rather than by their printed text, which
    sympy orders term by term at a cost that grows with the system.
    """
    from ..derivation.efforts import switched

    memo: dict = {}
    h = hashlib.sha256()
    for part in (eom.method, *[p.name for p in eom.system.parameters], *map(str, switched(eom.system))):
        h.update(part.encode() + b"\0")
    for expr in (*eom.mass_matrix, *eom.forcing, *eom.kinematics):
        h.update(_structure_digest(sp.sympify(expr), memo))
    return h.hexdigest()[:16]


def _structure_digest(expr: sp.Basic, memo: dict) -> bytes:
    """SHA-256 of ``expr``'s tree: the class name and, for an atom, its text, else its arguments' digests."""
    known = memo.get(expr)
    if known is not None:
        return known
    h = hashlib.sha256(type(expr).__name__.encode() + b"(")
    if expr.args:
        for arg in expr.args:
            h.update(_structure_digest(arg, memo))
    else:
        h.update(str(expr).encode())
    memo[expr] = out = h.digest()
    return out


def model_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
    """Return the C names of the bridge's symbols, with the auxiliary placeholders as ``Z[k]``."""
    names = c_names(eom)
    names.update({z: f"Z[{k}]" for k, z in enumerate(eom.auxiliary_symbols)})
    return names


def auxiliary_c(eom: EquationsOfMotion, prefix: str) -> list[str]:
    """Emit the C statements computing ``Z`` (the auxiliary placeholders) stage by stage.

    Stage k solves ``L_k Z_k = R_k`` by LU with partial pivoting (one CSE pass per stage); a (nearly)
    singular split returns 3 with a message naming the time and the split's health
    ``min |pivot of A_dep| / max |[A_dep, A_ind]|``, which must exceed ``SPLIT_HEALTH_MIN``.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations (no auxiliary block: no statements).
    prefix : str
        Prefix of the CSE temporaries, distinct per generated function.

    Returns
    -------
    list of str
        The C lines.
    """
    if not eom.auxiliary:
        return []
    lines = [f"    double Z[{len(eom.auxiliary_symbols)}];"]
    offset = 0
    split = f"independent {', '.join(eom.independent)}; dependent {', '.join(eom.dependent)}"
    for k, stage in enumerate(eom.auxiliary):
        r, c = stage.unknowns.shape
        temps, vals = cse_block(NhbCPrinter(model_names(eom)), list(stage.matrix) + list(stage.rhs),
                                 f"{prefix}{k}")
        lines += ["    {", f"    double L[{r * r}], R[{r * c}];", *temps, *c_assignments("L", vals[:r * r]),
                  *c_assignments("R", vals[r * r:])]
        if k == 0:
            lines += [
                "    double amax = 0.0, pmin = HUGE_VAL;",
                f"    for (int i = 0; i < {r * r}; ++i) amax = fmax(amax, fabs(L[i]));",
                f"    for (int i = 0; i < {r * c}; ++i) amax = fmax(amax, fabs(R[i]));",
            ]
        lines += [f"    int bad = nhb_lu_solve_many({r}, L, {c}, R);"]
        if k == 0:
            lines += [
                f"    for (int i = 0; i < {r}; ++i) pmin = fmin(pmin, fabs(L[i * {r} + i]));",
                f"    if (bad || !(pmin > {SPLIT_HEALTH_MIN!r} * amax)) {{",
                '        snprintf(msg, msg_len, "the split of the velocities chosen at build time (%s) is singular at '
                't = %.17g (health min|pivot|/max|A| = %.3g < %g): this FMU of a reduced method cannot re-partition; '
                'export the lagrange form or choose other independent coordinates", '
                f'"{split}", t, bad ? 0.0 : pmin / amax, {SPLIT_HEALTH_MIN!r});',
                "        return 3;",
                "    }",
            ]
        else:
            lines += ["    if (bad) {",
                      '        snprintf(msg, msg_len, "the constraints cannot be solved for the dependent velocities '
                      'at t = %.17g (pivot %d)", t, bad);',
                      "        return 3;",
                      "    }"]
        lines += [f"    for (int i = 0; i < {r * c}; ++i) Z[{offset} + i] = R[i];", "    }"]
        offset += r * c
    return lines


__all__ = ["SPLIT_HEALTH_MIN", "CModelPlan", "auxiliary_c", "build_plan", "model_hash", "model_names"]
