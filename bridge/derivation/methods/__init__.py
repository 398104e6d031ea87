"""Derivation methods, each registered in :data:`METHODS` under its name."""

from . import lagrange, reduced  # noqa: F401  (registration)

# isort: split
from . import kane  # noqa: F401  (registered after the energy methods)
from .base import METHODS, Method, derive

__all__ = ["METHODS", "Method", "derive"]
