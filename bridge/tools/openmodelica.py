"""OpenModelica's omc through OMPython: finding omc and a session holding the exported model, loaded."""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError, ExportError
from ..modelica.export import model_source
from ..modelica.ports import library_files


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
def omc_session(eom: EquationsOfMotion, level: str, missing: str, error: type[BridgeError]):
    """Open an omc session (OMPython) in a temporary directory holding the exported model, loaded.

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
    name = eom.system.name
    with tempfile.TemporaryDirectory(prefix="nhbridge-omc-") as tmp:
        path = Path(tmp) / f"{name}.mo"
        path.write_text(model_source(eom, level), encoding="utf-8")
        for relative, text in library_files(eom).items():  # the connectors of ports, loaded first
            (Path(tmp) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / relative).write_text(text, encoding="utf-8")
        omc = OMCSessionZMQ(omhome=str(Path(omc_path).parent.parent))
        try:
            omc.sendExpression(f'cd("{Path(tmp).as_posix()}")')
            for relative in library_files(eom):
                if relative.endswith(".mo"):
                    omc.sendExpression(f'loadFile("{(Path(tmp) / relative).as_posix()}")')
            if not omc.sendExpression(f'loadFile("{path.as_posix()}")'):
                raise error(f"omc could not load {path.name}: {omc.sendExpression('getErrorString()')}")
            yield omc, Path(tmp)
        finally:
            with contextlib.suppress(Exception):  # the session is gone either way
                omc.sendExpression("quit()")
