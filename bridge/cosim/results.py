"""Co-simulation results: recorded signals at the communication points, CSV, plot and progress."""

from __future__ import annotations

import csv
import io
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np

from ..atomic import atomic_file, write_text
from ..errors import ExportError


@dataclass(frozen=True)
class CosimResult:
    """Recorded signals (columns ``component.variable``) at every accepted communication point."""

    time: np.ndarray
    names: tuple[str, ...]
    values: np.ndarray                      # (len(time), len(names))
    stats: Mapping[str, float | int | str] = field(default_factory=dict)

    def columns(self) -> dict[str, np.ndarray]:
        """Return the recorded signals as columns, ``time`` first.

        Returns
        -------
        dict of str to numpy.ndarray
            ``{"time": t, "component.variable": values, ...}``.
        """
        cols = {"time": self.time}
        for i, name in enumerate(self.names):
            cols[name] = self.values[:, i]
        return cols

    def __getitem__(self, name: str) -> np.ndarray:
        return self.values[:, self.names.index(name)]

    def to_csv(self) -> str:
        """Return the result as CSV text: a header ``time,component.variable,...`` and full-precision rows.

        Returns
        -------
        str
            The CSV text, one line per communication point.
        """
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["time", *self.names])
        for t, row in zip(self.time, self.values):
            w.writerow([repr(float(t)), *(repr(float(v)) for v in row)])
        return buf.getvalue()

    def write_csv(self, path: str | Path) -> Path:
        """Write the result as CSV (see :meth:`to_csv`), atomically.

        Parameters
        ----------
        path : str or pathlib.Path
            The file to write.

        Returns
        -------
        pathlib.Path
            The written file.
        """
        return write_text(path, self.to_csv())

    def plot(self, path: str | Path, title: str = "") -> Path:
        """Plot one panel per recorded signal against time, written atomically (format from the suffix)."""
        plt = pyplot()
        path = Path(path)
        n = len(self.names)
        fig, axes = plt.subplots(max(n, 1), 1, sharex=True, figsize=(8, 1.3 + 1.6 * max(n, 1)), squeeze=False)
        for ax, name in zip(axes[:, 0], self.names):
            ax.plot(self.time, self[name], lw=1.0)
            ax.set_ylabel(name, rotation=0, ha="right", va="center", fontsize=8)
            ax.grid(True, lw=0.3)
        axes[-1, 0].set_xlabel("time [s]")
        if title:
            fig.suptitle(title, fontsize=10)
        fig.tight_layout()
        fmt = path.suffix.lstrip(".") or "png"
        try:
            with atomic_file(path) as tmp:
                fig.savefig(tmp, format=fmt, dpi=110)
        except ValueError as exc:  # unknown format
            raise ExportError(f"{path}: cannot write a plot in this format ({exc}); use .png, .pdf or .svg") from exc
        finally:
            plt.close(fig)
        return path


def pyplot():
    """Return Matplotlib's pyplot on the non-interactive Agg backend, or a clear error where it is not installed."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ExportError('plotting needs matplotlib (a dependency of nhbridge): pip install matplotlib, '
                          "or leave out --plot") from exc
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


class Progress:
    """A one-line progress report on stderr, refreshed at most every ``every`` seconds."""

    def __init__(self, enabled: bool, t0: float, t1: float, stream: TextIO | None = None, every: float = 0.25):
        self.enabled, self.t0, self.t1 = enabled, t0, t1
        self.stream = stream or sys.stderr
        self.every = every
        self.started = time.perf_counter()
        self.last = 0.0
        self.shown = False

    def update(self, t: float, steps: int, force: bool = False) -> None:
        """Show the time reached and the steps taken, at most every ``every`` seconds.

        Parameters
        ----------
        t : float
            The simulated time reached.
        steps : int
            The communication steps taken so far.
        force : bool, optional
            Show it even when the last update is recent.
        """
        if not self.enabled:
            return
        now = time.perf_counter()
        if not force and now - self.last < self.every:
            return
        self.last = now
        elapsed = max(now - self.started, 1e-9)
        frac = (t - self.t0) / (self.t1 - self.t0) if self.t1 > self.t0 else 1.0
        self.stream.write(f"\rcosim: t = {t:.6g} s of {self.t1:g} s ({100 * frac:5.1f} %), {steps} steps, "
                          f"{steps / elapsed:,.0f} steps/s ")
        self.stream.flush()
        self.shown = True

    def finish(self, t: float, steps: int) -> None:
        """Show the final time and number of steps and end the progress line.

        Parameters
        ----------
        t : float
            The simulated time reached.
        steps : int
            The communication steps taken.
        """
        if self.enabled:
            self.update(t, steps, force=True)
            self.stream.write("\n")
            self.stream.flush()
