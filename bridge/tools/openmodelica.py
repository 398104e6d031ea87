"""OpenModelica's omc through OMPython: finding omc, a session holding a model's text, loaded, and FMU builds."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

from ..errors import BridgeError, ExportError


def find_omc() -> str | None:
    """Return the omc executable from PATH or $OPENMODELICAHOME/bin, or None."""
    found = shutil.which("omc")
    if found:
        return found
    home = os.environ.get("OPENMODELICAHOME")
    if home:
        candidate = Path(home) / "bin" / "omc"
        if candidate.exists():
            return str(candidate)
    return None


@contextmanager
def omc_session(name: str, source: str, library: Mapping[str, str], missing: str, error: type[BridgeError]):
    """Open an omc session (OMPython) in a temporary directory holding the model ``name`` of ``source``, loaded.

    ``library`` holds the other files the model needs (path -> text; its ``.mo`` files are loaded first).
    ``missing`` is the message when omc is not installed; load failures raise ``error``.
    Yields ``(omc, directory)``; the session is closed afterwards.
    """
    omc_path = find_omc()
    if omc_path is None:
        raise ExportError(missing)
    try:
        from OMPython import OMCSessionZMQ
    except ImportError as exc:
        raise ExportError("OMPython is not installed; pip install OMPython (OpenModelica's Python API)") from exc
    with tempfile.TemporaryDirectory(prefix="nhbridge-omc-") as tmp:
        path = Path(tmp) / f"{name}.mo"
        path.write_text(source, encoding="utf-8")
        for relative, text in library.items():  # the connectors of ports, loaded first
            (Path(tmp) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / relative).write_text(text, encoding="utf-8")
        omc = OMCSessionZMQ(omhome=str(Path(omc_path).parent.parent))
        try:
            omc.sendExpression(f'cd("{Path(tmp).as_posix()}")')
            for relative in library:
                if relative.endswith(".mo"):
                    omc.sendExpression(f'loadFile("{(Path(tmp) / relative).as_posix()}")')
            if not omc.sendExpression(f'loadFile("{path.as_posix()}")'):
                raise error(f"omc could not load {path.name}: {omc.sendExpression('getErrorString()')}")
            yield omc, Path(tmp)
        finally:
            with contextlib.suppress(Exception):  # the session is gone either way
                omc.sendExpression("quit()")


def build_model_fmu(omc, name: str, fmi_version: int) -> Path:
    """Build the FMU (Model Exchange and Co-Simulation) of the loaded model ``name`` in an omc session.

    Returns the FMU omc wrote in the session's folder; an :class:`~bridge.errors.ExportError` with omc's message
    when it wrote none.
    """
    built = omc.sendExpression(f'buildModelFMU({name}, version="{fmi_version}.0", fmuType="me_cs")')
    if not built or not Path(str(built)).exists():
        raise ExportError(f"omc could not build an FMU for {name}: {omc.sendExpression('getErrorString()')}")
    return Path(str(built))


__all__ = ["build_model_fmu", "find_omc", "omc_session"]
