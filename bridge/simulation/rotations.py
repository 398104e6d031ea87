"""The direction cosines of ``[frames]`` that could not be shown to be a rotation for every state.

Watched along a native run: the run stops where ``max |C^T C - 1|`` exceeds :data:`ROTATION_TOLERANCE`.

The check runs at the output samples only (one compiled evaluation of the 9 entries per sample), so it costs far
less than the integration.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import SimulationError
from ..model import symbols as S
from ..model.numeric import compile_exprs
from ..model.system import System

#: largest ``|C^T C - 1|`` accepted along a run (the start state is checked to 1e-9 when the file is read)
ROTATION_TOLERANCE = 1e-6


def check_rotations(system: System, time: np.ndarray, q: np.ndarray,
                    parameters: Mapping[str, float] | None = None) -> None:
    """Raise :class:`SimulationError` where a watched direction-cosine matrix is not a rotation.

    The message names the frame, the first sampled time and the error there (``time``: samples, ``q``: coordinates,
    one row per sample).
    """
    mb = system.multibody
    watch = mb.rotation_watch if mb is not None else ()
    if not watch or len(time) == 0:
        return
    values = {p.name: p.value for p in system.parameters} | dict(parameters or {})
    par = [float(values[p.name]) for p in system.parameters]
    args = [S.t, *system.q, *[p.symbol for p in system.parameters]]
    f = compile_exprs(args, [x for _, C in watch for x in C])
    for t, row in zip(time, q):
        flat = np.asarray(f(np.concatenate([[t], row, par])), dtype=float).ravel()
        for k, (name, _) in enumerate(watch):
            C = flat[9 * k: 9 * k + 9].reshape(3, 3)
            error = float(np.abs(C.T @ C - np.eye(3)).max()) if np.all(np.isfinite(C)) else np.inf
            if not error <= ROTATION_TOLERANCE:
                state = ", ".join(f"{c.name} = {v:.6g}" for c, v in zip(system.coordinates, row))
                raise SimulationError(
                    f"frames.{name}.dcm: the direction cosines are no longer a rotation at t = {t:.9g} "
                    f"(max |C^T C - 1| = {error:.3g}, above {ROTATION_TOLERANCE:g}; {state}). The matrix is "
                    "orthonormal at the start state only: give C in sines and cosines of angles (or as rotations "
                    "about the frame's axes) so that it stays a rotation")
