"""The direction cosines of ``[frames]`` that could not be shown to be a rotation for every state.

Watched along a native run: the run stops where ``max |C^T C - 1|`` exceeds :data:`ROTATION_TOLERANCE`.

The check runs at the output samples only (one compiled evaluation of the 9 entries of every sample together,
compiled once per system), so it costs far less than the integration.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import SimulationError
from ..kept import kept
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
    par = np.array([float(values[p.name]) for p in system.parameters])
    N = len(time)
    rows = np.hstack([np.reshape(time, (N, 1)), np.reshape(q, (N, system.n)), np.broadcast_to(par, (N, len(par)))])
    flat = np.asarray(_watch_function(system)(rows), dtype=float).reshape(N, len(watch), 3, 3)  # one call: all
    with np.errstate(invalid="ignore", over="ignore"):
        errors = np.abs(np.swapaxes(flat, -1, -2) @ flat - np.eye(3)).max(axis=(-2, -1))  # per sample and frame
    errors[~np.isfinite(flat).all(axis=(-2, -1))] = np.inf
    bad = ~(errors <= ROTATION_TOLERANCE)
    if not bad.any():
        return
    i, k = (int(v) for v in np.argwhere(bad)[0])  # the first sample, then the first frame there
    name, t, row, error = watch[k][0], time[i], q[i], float(errors[i, k])
    state = ", ".join(f"{c.name} = {v:.6g}" for c, v in zip(system.coordinates, row))
    raise SimulationError(
        f"frames.{name}.dcm: the direction cosines are no longer a rotation at t = {t:.9g} "
        f"(max |C^T C - 1| = {error:.3g}, above {ROTATION_TOLERANCE:g}; {state}). The matrix is "
        "orthonormal at the start state only: give C in sines and cosines of angles (or as rotations "
        "about the frame's axes) so that it stays a rotation")


def _watch_function(system: System):
    """Return the compiled 9 entries per watched matrix from ``[t, q, parameters]``, compiled once per system."""
    args = [S.t, *system.q, *[p.symbol for p in system.parameters]]
    return kept(system, "rotation_watch",
                lambda: compile_exprs(args, [x for _, C in system.multibody.rotation_watch for x in C]))
