"""Whether a Modelica compiler nhbridge drives is installed, and the install command when it is not."""

from __future__ import annotations

from ..errors import ExportError
from .pymoca import require_pymoca
from .rumoca import RUMOCA_MISSING


def missing_compiler(tool: str) -> str | None:
    """Say what is missing for ``tool`` (``rumoca`` or ``pymoca``), with the install command; None if importable.

    A check with a missing tool is a skip, not a failure.
    """
    if tool == "rumoca":
        try:
            import rumoca  # noqa: F401
        except ImportError:
            return RUMOCA_MISSING
    elif tool == "pymoca":
        try:
            require_pymoca()
        except ExportError as exc:
            return str(exc)
    return None
