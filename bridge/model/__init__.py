"""Model input: system files (TOML, or a mapping of sympy expressions) -> a checked, immutable ``System``.

The whitelisting expression parser, the symbols of the state, units, and the constraint kinematics
(``A(q, t) q' + a0 = 0``, splits into dependent and independent velocities) that the loader checks.
"""

from .loader import build_system, load_system, parse_system
from .system import System

__all__ = ["System", "build_system", "load_system", "parse_system"]
