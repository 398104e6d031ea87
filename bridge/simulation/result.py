"""The result of a native simulation: trajectories on the output grid, as columns, CSV, pandas or a plot."""

from __future__ import annotations

import csv
import difflib
import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..atomic import write_text
from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError
from .plot import plot_result


@dataclass(frozen=True)
class SimulationResult:
    """Trajectories on the output grid, one row per output time.

    Columns as in the CSV: ``time``, the coordinates, their velocities ``der(q)``, the outputs, the multipliers
    ``lambda[k]`` (methods that keep them) and the effort variables and switched forces; ``result[name]`` gives one
    column, :meth:`to_pandas` a DataFrame, :meth:`write_csv` the file.

    Examples
    --------
    >>> import bridge
    >>> text = '''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... '''
    >>> result = bridge.simulate(bridge.derive(bridge.parse_system(text), "lagrange"), 1.0, interval=0.5)
    >>> result.keys(), len(result.time)
    (['time', 'x', 'der(x)'], 3)
    >>> round(float(result["der(x)"][-1]), 6)  # -0.2 sin(2 t) at t = 1
    -0.181859
    """

    eom: EquationsOfMotion
    time: np.ndarray
    q: np.ndarray                 # (N, n)
    qd: np.ndarray                # (N, n)
    outputs: np.ndarray           # (N, number of outputs)
    multipliers: np.ndarray       # (N, m) (empty for reduced methods)
    residuals: np.ndarray         # (N, number of constraints): [phi; A q' + a0]
    repartitions: tuple[tuple[float, tuple[str, ...]], ...] = ()
    nfev: int = 0
    settings: Mapping[str, float] = field(default_factory=dict)
    efforts: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))  # (N, number of effort variables)
    events: tuple = ()  # friction switches (bridge.simulation.events.Event), in time order

    @property
    def names(self) -> list[str]:
        """The coordinates' names, in the order of the columns of ``q`` and ``qd``."""
        return [c.name for c in self.eom.system.coordinates]

    @property
    def max_residual(self) -> float:
        """The largest absolute constraint residual over the run (0 without constraints)."""
        return float(np.abs(self.residuals).max()) if self.residuals.size else 0.0

    def columns(self) -> dict[str, np.ndarray]:
        """Return the signals by CSV column name, in column order.

        ``time``, the coordinates, their velocities ``der(q)``, the outputs, the multipliers ``lambda[k]``,
        then the effort variables and friction forces.
        """
        cols = {"time": self.time}
        for i, nm in enumerate(self.names):
            cols[nm] = self.q[:, i]
        for i, nm in enumerate(self.names):
            cols[f"der({nm})"] = self.qd[:, i]
        for i, nm in enumerate(self.eom.outputs):
            cols[nm] = self.outputs[:, i]
        for i in range(self.multipliers.shape[1]):
            cols[f"lambda[{i + 1}]"] = self.multipliers[:, i]
        for i, eff in enumerate(self.eom.efforts):  # effort variables, then friction forces
            cols[str(eff)] = self.efforts[:, i]
        return cols

    def __getitem__(self, name: str) -> np.ndarray:
        """One signal by its CSV column name: ``time``, a coordinate, ``der(q)``, an output, ``lambda[k]``."""
        cols = self.columns()
        if name not in cols:
            close = difflib.get_close_matches(str(name), list(cols), n=1)
            raise KeyError(f"no signal {name!r} in the result of {self.eom.system.name}"
                           + (f"; did you mean {close[0]!r}?" if close else f"; signals: {', '.join(cols)}"))
        return cols[name]

    def __contains__(self, name: object) -> bool:
        return name in self.columns()

    def keys(self) -> list[str]:
        """Return the signal names, in CSV column order."""
        return list(self.columns())

    def __repr__(self) -> str:
        system = self.eom.system
        span = f"t = {self.time[0]:g} .. {self.time[-1]:g} s" if self.time.size else "no samples"
        return (f"<SimulationResult {system.name}, method {self.eom.method}: {len(self.time)} samples, {span}, "
                f"{system.n} coordinates, {self.outputs.shape[1]} outputs, "
                f"max constraint residual {self.max_residual:.2g}>")

    def _repr_html_(self) -> str:
        from ..model.display import result_html

        return result_html(self)

    def to_pandas(self):
        """Return the signals as a ``pandas.DataFrame`` indexed by time (needs pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise BridgeError("to_pandas() needs pandas: pip install pandas (or use result.columns(), a dict of "
                              "numpy arrays)") from exc
        cols = self.columns()
        return pd.DataFrame({k: v for k, v in cols.items() if k != "time"}, index=pd.Index(cols["time"], name="time"))

    def plot(self, path: str | Path) -> Path:
        """Plot coordinates, velocities, outputs and constraint residuals against time, grouped by unit.

        Needs matplotlib. The format (png, pdf, svg) follows the suffix; the file is written atomically.
        """
        return plot_result(self, path)

    def to_csv(self) -> str:
        """Return the signals as CSV text: a header of column names, then one row per time."""
        cols = self.columns()
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(list(cols))
        data = np.column_stack(list(cols.values()))
        for row in data:
            w.writerow([repr(float(v)) for v in row])
        return buf.getvalue()

    def write_csv(self, path: str | Path) -> Path:
        """Write :meth:`to_csv` to ``path`` atomically; return the path."""
        return write_text(path, self.to_csv())
