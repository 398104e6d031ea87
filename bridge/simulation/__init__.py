"""Native simulation: ``EquationsOfMotion`` integrated by scipy (DOP853), re-partitioning singular splits."""

from .simulate import SimulationResult, simulate

__all__ = ["SimulationResult", "simulate"]
