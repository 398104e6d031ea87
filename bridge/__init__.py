"""nhbridge: equations of motion of nonholonomic systems, from analytical mechanics to Modelica and FMI.

The pipeline, one subpackage per stage, imports running one way:
``model`` (system files) -> ``derivation`` (``EquationsOfMotion``) -> ``simulation`` -> ``modelica``, ``fmu``
-> ``validation``, ``cosim`` -> ``cli``. The names below are loaded on first use, so ``import bridge`` stays
light (no sympy, matplotlib, fmpy or lxml until they are needed).

Examples
--------
A system from TOML text (:func:`parse_system`; :func:`load_system` reads a file, :func:`build_system` takes a
mapping whose expressions may be strings or sympy expressions), its equations (:func:`derive`) and a simulation
(:func:`simulate`, a :class:`SimulationResult`): a mass on a spring, ``x(t) = 0.1 cos(2 t)``.

>>> import tempfile
>>> from pathlib import Path
>>> import bridge
>>> text = '''
... name = "Oscillator"
... [coordinates]
... x = { start = 0.1, velocity = 0.0, unit = "m" }
... [parameters]
... m = { value = 2.0, unit = "kg" }
... k = { value = 8.0, unit = "N/m" }
... [energy]
... kinetic = "1/2*m*der(x)^2"
... potential = "1/2*k*x^2"
... '''
>>> system = bridge.parse_system(text)
>>> system  # doctest: +ELLIPSIS
<System Oscillator from <string>: 1 coordinates (x), 0 holonomic + 0 nonholonomic constraints, ...>
>>> same = bridge.build_system({"name": "Oscillator", "coordinates": {"x": {"start": 0.1}},
...                             "parameters": {"m": {"value": 2.0}, "k": {"value": 8.0}},
...                             "energy": {"kinetic": "1/2*m*der(x)^2", "potential": "1/2*k*x^2"}})
>>> same.kinetic == system.kinetic
True
>>> with tempfile.TemporaryDirectory() as folder:
...     path = Path(folder) / "oscillator.toml"
...     _ = path.write_text(text)
...     loaded = bridge.load_system(path, overrides={"k": 18.0})
>>> loaded.parameter_values[loaded.parameters[1].symbol]
18.0
>>> eom = bridge.derive(system, "lagrange")
>>> result = bridge.simulate(eom, 1.0, interval=0.25)
>>> isinstance(result, bridge.SimulationResult)
True
>>> result.keys()
['time', 'x', 'der(x)']
>>> result.time.tolist()
[0.0, 0.25, 0.5, 0.75, 1.0]
>>> [round(float(v), 8) for v in result["x"]]
[0.1, 0.08775826, 0.05403023, 0.00707372, -0.04161468]

An FMU (FMI 2.0, Model Exchange and Co-Simulation, a binary for the host) with :func:`build_fmu`, run by fmpy:

>>> from fmpy import simulate_fmu
>>> with tempfile.TemporaryDirectory() as folder:
...     fmu = bridge.build_fmu(eom, Path(folder) / "Oscillator.fmu")
...     run = simulate_fmu(str(fmu), stop_time=1.0, output=["x"])
>>> fmu.name, round(float(run["x"][-1]), 6)
('Oscillator.fmu', -0.041615)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (
    BridgeError,
    DerivationError,
    ExportError,
    SimulationError,
    SystemFileError,
    ValidationError,
)
from .version import __version__  # noqa: F401  (the package version)

# public name -> (module, attribute); attribute None: the module itself
_LAZY: dict[str, tuple[str, str | None]] = {
    "System": ("bridge.model.system", "System"),
    "load_system": ("bridge.model.loader", "load_system"),
    "parse_system": ("bridge.model.loader", "parse_system"),
    "build_system": ("bridge.model.loader", "build_system"),
    "from_mechanics": ("bridge.model.from_mechanics", "from_mechanics"),
    "EquationsOfMotion": ("bridge.derivation.eom", "EquationsOfMotion"),
    "METHODS": ("bridge.derivation.methods", "METHODS"),
    "derive": ("bridge.derivation.methods", "derive"),
    "SimulationResult": ("bridge.simulation.result", "SimulationResult"),
    "simulate": ("bridge.simulation.simulate", "simulate"),
    "read_inputs": ("bridge.simulation.inputs", "read_inputs"),
    "write_modelica": ("bridge.modelica.export", "write_model"),
    "build_fmu": ("bridge.fmu.build", "build_fmu"),
    "validate": ("bridge.validation.campaign", "validate"),
    "linearize": ("bridge.linearization.linearize", "linearize"),
    "LinearModel": ("bridge.linearization.model", "LinearModel"),
    "modelica_export": ("bridge.modelica.export", None),
    "symbols": ("bridge.model.symbols", None),
}

__all__ = [
    "METHODS",
    "BridgeError",
    "DerivationError",
    "EquationsOfMotion",
    "ExportError",
    "LinearModel",
    "SimulationError",
    "SimulationResult",
    "System",
    "SystemFileError",
    "ValidationError",
    "build_fmu",
    "build_system",
    "derive",
    "from_mechanics",
    "linearize",
    "load_system",
    "modelica_export",
    "parse_system",
    "read_inputs",
    "simulate",
    "symbols",
    "validate",
    "write_modelica",
]


def __getattr__(name: str) -> Any:
    try:
        module, attr = _LAZY[name]
    except KeyError:
        raise AttributeError(f"module 'bridge' has no attribute {name!r}") from None
    value = importlib.import_module(module)
    if attr is not None:
        value = getattr(value, attr)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_LAZY])


if TYPE_CHECKING:
    from .derivation.eom import EquationsOfMotion
    from .derivation.methods import METHODS, derive
    from .fmu.build import build_fmu
    from .linearization.linearize import linearize
    from .linearization.model import LinearModel
    from .model import symbols
    from .model.from_mechanics import from_mechanics
    from .model.loader import build_system, load_system, parse_system
    from .model.system import System
    from .modelica import export as modelica_export
    from .modelica.export import write_model as write_modelica
    from .simulation.inputs import read_inputs
    from .simulation.result import SimulationResult
    from .simulation.simulate import simulate
    from .validation.campaign import validate
