"""nhbridge: equations of motion of nonholonomic systems, from analytical mechanics to Modelica and FMI."""

__version__ = "0.1.0"

from . import modelica_export  # noqa: E402,I001  (after the methods it uses)
from .eom import EquationsOfMotion  # noqa: E402
from .errors import (  # noqa: E402
    BridgeError,
    DerivationError,
    ExportError,
    SimulationError,
    SystemFileError,
    ValidationError,
)
from .methods import METHODS, derive  # noqa: E402
from .simulate import SimulationResult, simulate  # noqa: E402
from .system import System, build_system, load_system, parse_system  # noqa: E402

__all__ = ["METHODS", "BridgeError", "DerivationError", "EquationsOfMotion", "ExportError", "SimulationError",
           "SimulationResult", "System", "SystemFileError", "ValidationError", "build_system", "derive",
           "load_system", "modelica_export", "parse_system", "simulate"]
