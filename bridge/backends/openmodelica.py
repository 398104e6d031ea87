"""OpenModelica's omc on the exported Modelica: a session holding the exported model, loaded."""

from __future__ import annotations

from contextlib import contextmanager

from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError, ExportError
from ..modelica.export import model_source
from ..modelica.ports import library_files
from ..tools.openmodelica import find_omc, omc_session


@contextmanager
def model_session(eom: EquationsOfMotion, level: str, missing: str, error: type[BridgeError]):
    """Open an omc session (OMPython) in a temporary directory holding the exported model, loaded.

    The model is exported at ``level`` with the connectors of its ports beside it
    (:func:`bridge.tools.openmodelica.omc_session` runs omc). ``missing`` is the message when omc is not
    installed; load failures raise ``error``. Yields ``(omc, directory)``; the session is closed afterwards.
    """
    if find_omc() is None:  # before the export: a missing omc is said first
        raise ExportError(missing)
    with omc_session(eom.system.name, model_source(eom, level), library_files(eom), missing, error) as session:
        yield session


__all__ = ["model_session"]
