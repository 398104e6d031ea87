"""The normal forces of regularised friction elements, checked in the generated ``nhb_rhs``.

A regularised friction element (``regularization > 0``) is a smooth force without modes or event indicators; its
normal force N must stay >= 0 all the same (:mod:`bridge.simulation.normal_watch` watches it natively). In an FMU
every evaluation of the equations checks it: where N < 0, ``nhb_rhs`` returns an error whose message names the
element, the time and the value, and the FMU ends the run with an Error (Model Exchange: at the importer's first
evaluation past the crossing; Co-Simulation: at the first stage of ``doStep``'s integrator past it, so the
reported time is at most one integration step after the crossing, and the value a small negative number).
Coulomb elements' normal forces are located exactly instead (their event indicators, ``fmu/README.md``).
"""

from __future__ import annotations

import sympy as sp

from ..derivation.eom import EquationsOfMotion
from ..model.efforts import NEGATIVE_NORMAL_HINT
from ..simulation.normal_watch import regularized_friction


def guarded_normals(eom: EquationsOfMotion) -> list[sp.Expr]:
    """Return the normal forces N of the regularised friction elements, in the order of :func:`guard_lines`."""
    return [el.normal for el in regularized_friction(eom.system)]


def _c_text(text: str) -> str:
    """``text`` inside a C format string literal."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%")


def guard_lines(eom: EquationsOfMotion, values: list[str]) -> list[str]:
    """Return the C lines of ``nhb_rhs`` that stop the run where a normal force is negative.

    They return 1 with the message where a printed normal force (``values``, from the function's CSE pass) is
    negative.
    """
    lines = []
    for element, value in zip(regularized_friction(eom.system), values):
        lines += [f"    if (({value}) < 0.0) {{",
                  f'        snprintf(msg, msg_len, "the normal force of the friction element {_c_text(element.name)} '
                  f'turns negative at t = %.12g (N = %g there); {_c_text(NEGATIVE_NORMAL_HINT)}", t, '
                  f"(double)({value}));",
                  "        return 1;",
                  "    }"]
    return lines
