"""Decide from the equations alone what a native FMU of a system offers.

That is the Jacobian code (directional derivatives) and whether the outputs read the efforts solved with the
accelerations. The layout, the generated C and ``modelDescription.xml`` all ask these questions; the answers live here,
below all of them.
"""

from __future__ import annotations

from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError

#: ``jacobian="auto"`` generates the Jacobian code for systems with at most this many states (also named
#: in the help of ``nhbridge fmu --jacobian``). It keeps automatic builds quick: the Jacobian code lengthens the
#: build the more, the more states a system has (gcc -O2 on the generated code dominates); docs/guide/fmu.md
#: lists measured build times.
JACOBIAN_MAX_STATES = 14


def jacobian_enabled(eom: EquationsOfMotion, option: bool | str | None = "auto") -> bool:
    """Decide whether the FMU gets the Jacobian code: ``True``/``False``, or ``"auto"``/``None`` by the state count.

    Raises
    ------
    ExportError
        An option other than True, False, "auto" or None.
    """
    if option in (None, "auto"):
        return eom.system.n + len(eom.u) <= JACOBIAN_MAX_STATES
    if isinstance(option, bool):
        return option
    raise ExportError(f"jacobian must be True, False or 'auto', got {option!r}")


def outputs_use_efforts(eom: EquationsOfMotion) -> bool:
    """Tell whether an output contains an effort (then ``nhb_outputs`` reads ``lam``: ``NHB_OUTPUTS_USE_LAM``)."""
    efforts = set(eom.efforts)
    return any(expr.free_symbols & efforts for expr in eom.system.outputs.values())


__all__ = ["JACOBIAN_MAX_STATES", "jacobian_enabled", "outputs_use_efforts"]
