"""Plots of a native simulation: coordinates, velocities, outputs and constraint residuals against time.

One panel per kind of signal and unit (``position [m]``, ``position [rad]``, ``velocity [m/s]``, ...), so
that a system of 20 coordinates still gives a handful of readable panels. matplotlib is imported here
only, on the non-interactive Agg backend.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

import numpy as np

from ..atomic import atomic_file
from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError


class Trajectories(Protocol):
    """What a plot reads of a result (:class:`bridge.simulation.result.SimulationResult`)."""

    @property
    def eom(self) -> EquationsOfMotion:
        """The equations of motion simulated (their system names the coordinates, units and outputs)."""
        ...
    @property
    def time(self) -> np.ndarray:
        """The output grid, shape (N,)."""
        ...
    @property
    def q(self) -> np.ndarray:
        """The coordinates, shape (N, n)."""
        ...
    @property
    def qd(self) -> np.ndarray:
        """The velocities q', shape (N, n)."""
        ...
    @property
    def outputs(self) -> np.ndarray:
        """The outputs, shape (N, number of outputs)."""
        ...
    @property
    def residuals(self) -> np.ndarray:
        """The constraint residuals ``[phi; A q' + a0]``, shape (N, number of constraints)."""
        ...
    @property
    def max_residual(self) -> float:
        """The largest absolute constraint residual (0 without constraints)."""
        ...

FORMATS = ("png", "pdf", "svg")


def pyplot():
    """Matplotlib's pyplot on the Agg backend, or a clear error where it is not installed."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ExportError("plotting needs matplotlib: pip install matplotlib, or leave out --plot") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def check_plot_path(path: str | Path) -> Path:
    """Check that a plot file name ends in .png, .pdf or .svg (before a run, so nothing is computed in vain)."""
    path = Path(path)
    if path.suffix.lstrip(".").lower() not in FORMATS:
        raise ExportError(f"{path}: a plot file must end in .png, .pdf or .svg")
    if path.is_dir():
        raise ExportError(f"{path}: is a folder; give a file name")
    return path


def rate_unit(unit: str) -> str:
    """Return the unit of the time derivative: m -> m/s, rad -> rad/s, m/s -> m/s2, '' -> 1/s."""
    if not unit or unit == "1":
        return "1/s"
    if "/" not in unit:
        return f"{unit}/s"
    num, den = unit.split("/", 1)
    if den == "s":
        return f"{num}/s2"
    return f"{num}/({den}.s)"


def _groups(result: Trajectories) -> list[tuple[str, list[tuple[str, np.ndarray]]]]:
    """Return (axis label, [(legend name, values)]) per panel.

    The panels are positions and velocities by unit, outputs by unit, and the constraint residuals.
    """
    system = result.eom.system
    panels: dict[str, list[tuple[str, np.ndarray]]] = {}

    def add(label: str, name: str, values: np.ndarray) -> None:
        panels.setdefault(label, []).append((name, values))

    for i, c in enumerate(system.coordinates):
        add(f"position [{c.unit or '1'}]", c.name, result.q[:, i])
    for i, c in enumerate(system.coordinates):
        add(f"velocity [{rate_unit(c.unit)}]", f"der({c.name})", result.qd[:, i])
    for k, name in enumerate(result.eom.outputs):
        unit = system.output_units.get(name, "")
        add(f"output [{unit}]" if unit else "output (no unit given)", name, result.outputs[:, k])
    for k, (entry, _) in enumerate(system.constraints):
        add("constraint residual", entry.removeprefix("constraints."), result.residuals[:, k])
    return list(panels.items())


def plot_result(result: Trajectories, path: str | Path) -> Path:
    """Write the plot of ``result`` to ``path`` (format from the suffix), atomically."""
    path = check_plot_path(path)
    plt = pyplot()
    panels = _groups(result)
    fig, axes = plt.subplots(len(panels), 1, sharex=True, figsize=(9, 1.2 + 2.0 * len(panels)), squeeze=False)
    for ax, (label, lines) in zip(axes[:, 0], panels):
        for name, values in lines:
            ax.plot(result.time, values, lw=1.0, label=name)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(True, lw=0.3)
        ax.legend(fontsize=7, loc="upper right", ncol=max(1, (len(lines) + 5) // 6))
    axes[-1, 0].set_xlabel("time [s]")
    system = result.eom.system
    fig.suptitle(f"{system.name} (method {result.eom.method}), max constraint residual {result.max_residual:.2g}",
                 fontsize=10)
    fig.tight_layout()
    try:
        with atomic_file(path) as tmp:
            fig.savefig(tmp, format=path.suffix.lstrip(".").lower(), dpi=110)
    finally:
        plt.close(fig)
    return path
