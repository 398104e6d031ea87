"""Errors of the co-simulation: bad scenarios (exit 2) and failed runs (exit 1)."""

from __future__ import annotations

from ..errors import BridgeError, SimulationError


class CosimError(BridgeError):
    """The scenario or SSP package is invalid, or its components do not fit together; found before the run."""


class CosimRunError(SimulationError):
    """A component failed during the run (rejected a step, failed to initialize)."""


class CosimInterrupted(KeyboardInterrupt):
    """The run was interrupted (Ctrl-C, SIGTERM); ``result`` holds the communication steps finished before."""

    def __init__(self, result):
        super().__init__("co-simulation interrupted")
        self.result = result
