"""Rumoca on Modelica text: loading a model from its text alone, simulating it, generating an FMU's C.

Everything here takes Modelica text (and the library files it needs); which text of an exported model is
given to Rumoca is :mod:`bridge.backends.rumoca`'s.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ExportError, ValidationError

RUMOCA_MISSING = 'Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"'


class RumocaSimulationFailed(ValidationError):
    """Rumoca compiled the model but its integrator failed (the message is Rumoca's)."""


def require_rumoca():
    """Return the rumoca module, or an :class:`~bridge.errors.ExportError` with the install command."""
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError(RUMOCA_MISSING) from exc
    return rumoca


def load_alone(rumoca, source: str, name: str, library: Mapping[str, str] | None = None):
    """Rumoca's model ``name`` compiled from ``source`` alone, wherever the process runs.

    Given a file name that exists in the working directory, Rumoca 0.9 also loads the other ``.mo`` files of
    that folder ('Duplicate class ... with non-identical definition' when one declares the same class); the
    source is named as a file in an empty temporary folder instead, with no source roots.
    """
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        roots = []
        if library:  # the other files the model needs (the connectors of ports): a source root beside it
            roots = [str(Path(tmp) / "library")]
            for relative, text in library.items():
                (Path(roots[0]) / relative).parent.mkdir(parents=True, exist_ok=True)
                (Path(roots[0]) / relative).write_text(text, encoding="utf-8")
        return rumoca.loads(source, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=roots)


def codegen_fmi2(rumoca, source: str, name: str, library: Mapping[str, str] | None = None):
    """Return Rumoca's FMI 2.0 code generation of the model ``name`` of ``source`` (``save_all(folder)`` writes it).

    Rumoca's own errors (``rumoca.RumocaError``, a template's ``RuntimeError``) reach the caller unchanged.
    """
    return load_alone(rumoca, source, name, library).codegen("fmi2")


def _timed_simulation(rumoca, model, stop_time: float, dt: float, rtol: float) -> tuple[Any, float]:
    """Simulate a loaded model from 0 to ``stop_time`` (absolute tolerance ``rtol / 100``); result and seconds.

    Rumoca chooses its solver (``auto``, its BDF). Measured at rtol 1e-10 on the chosen form of every example and
    test model by lagrange and by a reduced method (2 s or up to the split's singular time): ``bdf``,
    ``esdirk34`` and ``trbdf2`` give Rumoca 0.9.13's BDF run, the same trajectory to the last digit and the same
    CPU; ``rk-like`` ends 10-100 times closer to the native run but takes 1.1-2.4 times the CPU (car by maggi
    1.12 s instead of 0.46 s, the rolling wheel by lagrange 5.1 s instead of 2.6 s), is faster only on the 3-link
    snake by lagrange (16.2 s instead of 21.6 s over 0.25 s) and refuses DAEs outside its explicit class (the
    turntable ball by lagrange). The output step ``dt`` hardly matters (the snake over 0.1 s: 10.4 s at
    ``dt`` 5e-4, 11.0 s at 2e-3), and an absolute tolerance of ``rtol`` instead of ``rtol / 100`` saves 5-20 %
    while moving the run up to 6 times further from the native one.
    """
    start = time.perf_counter()
    result = model.simulate((0.0, stop_time), config=rumoca.SimConfig(rtol=rtol, atol=rtol * 1e-2, dt=dt))
    return result, time.perf_counter() - start


def run_text(rumoca, source: str, name: str, library: Mapping[str, str] | None, stop_time: float, dt: float,
             rtol: float) -> tuple[Any, Any, float]:
    """Compile the model ``name`` of ``source`` with Rumoca and simulate it; Rumoca's errors reach the caller.

    As :func:`simulate_text`, but a ``rumoca.RumocaError`` of the compilation or the simulation is raised as it is.
    """
    model = load_alone(rumoca, source, name, library)
    structure = model.structure()
    result, seconds = _timed_simulation(rumoca, model, stop_time, dt, rtol)
    return result, structure, seconds


def simulate_text(rumoca, source: str, name: str, library: Mapping[str, str] | None, stop_time: float, dt: float,
                  rtol: float) -> tuple[Any, Any, float]:
    """Compile the model ``name`` of ``source`` with Rumoca and simulate it from 0 to ``stop_time``.

    Parameters
    ----------
    rumoca : module
        The rumoca module (:func:`require_rumoca`).
    source : str
        The Modelica text.
    name : str
        The model.
    library : mapping of str to str, optional
        Other files the model needs, path -> text.
    stop_time, dt, rtol : float
        The end time, the output step and the relative tolerance (absolute: ``rtol / 100``).

    Returns
    -------
    tuple
        Rumoca's result, its ``structure()`` and the seconds the simulation took.

    Raises
    ------
    ValidationError
        Rumoca rejects the model; :class:`RumocaSimulationFailed` when its integrator fails.
    """
    try:
        model = load_alone(rumoca, source, name, library)
        structure = model.structure()
    except rumoca.RumocaError as exc:
        raise ValidationError(f"Rumoca rejected the exported model {name}: {exc}") from exc
    try:
        result, seconds = _timed_simulation(rumoca, model, stop_time, dt, rtol)
    except rumoca.RumocaError as exc:
        raise RumocaSimulationFailed(str(exc)) from exc
    return result, structure, seconds


__all__ = ["RUMOCA_MISSING", "RumocaSimulationFailed", "codegen_fmi2", "load_alone", "require_rumoca", "run_text",
           "simulate_text"]
