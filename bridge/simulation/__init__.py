"""Native simulation: ``EquationsOfMotion`` integrated by scipy (DOP853), re-partitioning singular splits.

The public names are imported on first use (:func:`bridge.lazy.attach`): the command line imports this package to
add its subcommands, and the integration loads scipy, which ``nhbridge --help`` has no use for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy import attach

if TYPE_CHECKING:
    from .result import SimulationResult
    from .simulate import simulate

__all__ = ["SimulationResult", "simulate"]
__getattr__ = attach(__name__, {"result": ["SimulationResult"], "simulate": ["simulate"]})
