"""Derivation methods, each registered in :data:`METHODS` under its name."""

from . import lagrange, reduced  # noqa: F401  (registration)
from .base import METHODS, Method, derive

__all__ = ["METHODS", "Method", "derive"]
