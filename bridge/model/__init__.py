"""Model input: system files (TOML, or a mapping of sympy expressions) -> a checked, immutable ``System``.

The whitelisting expression parser, the symbols of the state, units, and the constraint kinematics
(``A(q, t) q' + a0 = 0``, splits into dependent and independent velocities) that the loader checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import attach

if TYPE_CHECKING:
    from .loader import build_system, load_system, parse_system
    from .system import System

__all__ = ["System", "build_system", "load_system", "parse_system"]
#: imported on first use (:func:`bridge.lazy.attach`): a module of this package (units, the expression parser)
#: can be imported without the loader, which loads sympy
__getattr__ = attach(__name__, {"loader": ["build_system", "load_system", "parse_system"], "system": ["System"]})
