"""What a native FMU of a system offers, decided from the equations alone: the Jacobian code (directional
derivatives) and whether the outputs read the efforts solved with the accelerations.

The layout, the generated C and ``modelDescription.xml`` all ask these questions; the answers live here,
below all of them.
"""

from __future__ import annotations

from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError

#: ``jacobian="auto"`` generates the Jacobian code for systems with at most this many states (also named
#: in the help of ``nhbridge fmu --jacobian``). It keeps every automatic build under 2 s on the reference
#: machine: the seed examples (2-10 states) gain < 0.05 s; the wheeled snake with 12 / 14 / 16 / 20 / 36
#: states builds in 1.3 / 1.8 / 2.3 / 3.7 / 19.7 s with the Jacobian and 1.0 / 1.3 / 1.4 / 1.9 / 7.0 s
#: without (gcc -O2 on the generated code dominates), see README "FMU export".
JACOBIAN_MAX_STATES = 14


def jacobian_enabled(eom: EquationsOfMotion, option: bool | str | None = "auto") -> bool:
    """Whether the FMU gets the Jacobian code: ``True``/``False``, or ``"auto"``/``None`` by the state count."""
    if option in (None, "auto"):
        return eom.system.n + len(eom.u) <= JACOBIAN_MAX_STATES
    if isinstance(option, bool):
        return option
    raise ExportError(f"jacobian must be True, False or 'auto', got {option!r}")


def outputs_use_efforts(eom: EquationsOfMotion) -> bool:
    """Whether an output contains an effort (then ``nhb_outputs`` reads ``lam``: ``NHB_OUTPUTS_USE_LAM``)."""
    efforts = set(eom.efforts)
    return any(expr.free_symbols & efforts for expr in eom.system.outputs.values())


__all__ = ["JACOBIAN_MAX_STATES", "jacobian_enabled", "outputs_use_efforts"]
