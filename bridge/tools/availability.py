"""Whether a Modelica compiler nhbridge drives is installed, and the install command when it is not."""

from __future__ import annotations

from ..errors import ExportError
from .pymoca import require_pymoca
from .rumoca import RUMOCA_MISSING


def missing_compiler(tool: str) -> str | None:
    """``None`` when ``tool`` (``rumoca`` or ``pymoca``) can be imported, else what is missing with the install
    command (a check with it is then a skip, not a failure).
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
