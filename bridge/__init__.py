"""nhbridge: equations of motion of nonholonomic systems, from analytical mechanics to Modelica and FMI."""

from .eom import EquationsOfMotion
from .errors import BridgeError, DerivationError, ExportError, SimulationError, SystemFileError, ValidationError
from .methods import METHODS, derive
from .simulate import SimulationResult, simulate
from .system import System, build_system, load_system, parse_system

__version__ = "0.1.0"
__all__ = ["METHODS", "BridgeError", "DerivationError", "EquationsOfMotion", "ExportError", "SimulationError",
           "SimulationResult", "System", "SystemFileError", "ValidationError", "build_system", "derive",
           "load_system", "parse_system", "simulate"]
