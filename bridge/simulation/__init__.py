"""Native simulation: ``EquationsOfMotion`` integrated by scipy (DOP853), re-partitioning singular splits."""

from .result import SimulationResult
from .simulate import simulate

__all__ = ["SimulationResult", "simulate"]
