"""OpenModelica's omc through OMPython: finding omc, a session holding a model's text, loaded, and FMU builds."""

from __future__ import annotations

import contextlib
import csv
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path

import numpy as np

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


def check_model(omc, name: str, error: type[BridgeError]) -> tuple[str, bool]:
    """Run omc's ``checkModel`` on the loaded model ``name``.

    Returns omc's message and whether it counted equations and variables (a balanced model); ``error`` when omc
    reports an error.
    """
    check = omc.sendExpression(f"checkModel({name})")
    balanced = "has" in str(check) and "equation(s) and" in str(check)
    if "Error" in str(omc.sendExpression("getErrorString()")):
        raise error(f"omc checkModel failed for {name}: {check}")
    return str(check), balanced


def simulate_model(omc, name: str, stop_time: float, intervals: int, rtol: float,
                   error: type[BridgeError]) -> tuple[dict[str, np.ndarray], float]:
    """Simulate the loaded model ``name`` with omc from 0 to ``stop_time`` in ``intervals`` output intervals.

    Returns every variable of omc's CSV result by name (``time`` included) and the seconds the simulation took;
    ``error`` when omc wrote no result.
    """
    start = time.perf_counter()
    sim = omc.sendExpression(f"simulate({name}, stopTime={stop_time}, numberOfIntervals={intervals}, "
                             f"tolerance={rtol}, outputFormat=\"csv\")")
    seconds = time.perf_counter() - start
    result_file = sim.get("resultFile", "") if isinstance(sim, dict) else ""
    if not result_file:
        raise error(f"omc could not simulate {name}: {sim}")
    with open(result_file, newline="") as fh:
        rows = list(csv.reader(fh))
    header = [h.strip('"') for h in rows[0]]
    data = np.array(rows[1:], dtype=float)
    return {h: data[:, k] for k, h in enumerate(header)}, seconds


def build_model_fmu(omc, name: str, fmi_version: int) -> Path:
    """Build the FMU (Model Exchange and Co-Simulation) of the loaded model ``name`` in an omc session.

    Returns the FMU omc wrote in the session's folder; an :class:`~bridge.errors.ExportError` with omc's message
    when it wrote none.
    """
    built = omc.sendExpression(f'buildModelFMU({name}, version="{fmi_version}.0", fmuType="me_cs")')
    if not built or not Path(str(built)).exists():
        raise ExportError(f"omc could not build an FMU for {name}: {omc.sendExpression('getErrorString()')}")
    return Path(str(built))


__all__ = ["build_model_fmu", "check_model", "find_omc", "omc_session", "simulate_model"]
