"""Derivation: a ``System`` -> one immutable ``EquationsOfMotion`` by a method from the registry.

Every method produces the same implicit form ``q' = K(q, u, t)``, ``M(q, u, t) [u'; lambda] = F(q, u, t)``;
``EquationsOfMotion.numeric`` evaluates it with a pivoted LU solve at each call.
"""

from .eom import EquationsOfMotion
from .methods import METHODS, Method, derive

__all__ = ["METHODS", "EquationsOfMotion", "Method", "derive"]
