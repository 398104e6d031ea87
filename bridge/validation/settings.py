"""Validation settings: tolerances per run type, tube test, energy and residual limits.

Defaults can be overridden per system (a ``[validation]`` table in the system file) and per
campaign (command-line options); the campaign's values win.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..errors import ProblemCollector

#: run types and the default bound on ``max |run - reference| / scale``, per signal
RUN_TYPES: dict[str, float] = {
    "native": 1e-7,       # another derivation method, scipy DOP853 at rtol 1e-10
    "modelica": 1e-6,     # the exported .mo simulated by Rumoca
    "fmu-me": 1e-5,       # an FMU in Model Exchange, fmpy CVode at rtol 1e-10 (CVode's global error)
    "fmu-cs": 1e-6,       # an FMU in Co-Simulation at the communication step
    "external": 1e-4,     # an FMU made by another tool (--fmu)
}
DEFAULT_TUBE = 0.002           # tube half-width as a fraction of the signal's range (csv-compare style)
DEFAULT_TIME_TOLERANCE = 1e-3  # tube time tolerance as a fraction of the stop time
DEFAULT_ENERGY = 1e-6          # |h(t) - h(0)| / energy scale, for conservative systems
DEFAULT_RESIDUAL = 1e-6        # largest |phi| or |A q' + a0| along a run
DEFAULT_STEP = 0.01            # communication / output step (s)
REFERENCE_RTOL = 1e-12


@dataclass(frozen=True)
class Settings:
    """Everything that decides pass or fail, in one place (reported with the results)."""

    tolerances: Mapping[str, float] = field(default_factory=lambda: dict(RUN_TYPES))
    tube: float = DEFAULT_TUBE
    time_tolerance: float = DEFAULT_TIME_TOLERANCE
    energy: float = DEFAULT_ENERGY
    residual: float = DEFAULT_RESIDUAL
    step: float | None = None
    stop_time: float | None = None

    def tolerance(self, run_type: str) -> float:
        """Return the relative tolerance of a run type (``native``, ``fmu-me``, ...).

        Parameters
        ----------
        run_type : str
            The run type.

        Returns
        -------
        float
            The tolerance.
        """
        return float(self.tolerances[run_type])

    def merged(self, overrides: Mapping[str, Any]) -> Settings:
        """Return these settings with ``overrides`` (already checked) applied."""
        if not overrides:
            return self
        tol = dict(self.tolerances)
        tol.update(overrides.get("tolerances", {}))
        rest = {k: v for k, v in overrides.items() if k != "tolerances"}
        return replace(self, tolerances=tol, **rest)

    def as_dict(self) -> dict[str, Any]:
        """Return the settings as a dict (for the reports)."""
        return {"tolerances": dict(self.tolerances), "tube": self.tube, "time_tolerance": self.time_tolerance,
                "energy": self.energy, "residual": self.residual, "step": self.step, "stop_time": self.stop_time}


SCALARS = {"tube": "tube half-width (fraction of the signal's range)",
           "time_tolerance": "tube time tolerance (fraction of the stop time)",
           "energy": "energy drift bound", "residual": "constraint residual bound",
           "step": "communication and output step (s)", "stop_time": "stop time (s)"}


def _positive(problems: ProblemCollector, entry: str, value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value != value:
        problems.add(entry, f"expected a positive number, got {value!r}", "write e.g. 1e-6")
        return None
    return float(value)


def parse_overrides(table: Any, problems: ProblemCollector, entry: str = "validation") -> dict[str, Any]:
    """Check a ``[validation]`` table: ``tolerance = {fmu-cs = 1e-5, ...}``, ``tube``, ``time_tolerance``, ..."""
    out: dict[str, Any] = {}
    if table is None:
        return out
    if not isinstance(table, Mapping):
        problems.add(entry, "expected a table", "write [validation] with keys tolerance, " + ", ".join(SCALARS))
        return out
    for key, value in table.items():
        where = f"{entry}.{key}"
        if key == "tolerance":
            if not isinstance(value, Mapping):
                problems.add(where, "expected a table of run types",
                             "write e.g. tolerance = { fmu-cs = 1e-5 }; run types: " + ", ".join(RUN_TYPES))
                continue
            tol = {}
            for kind, v in value.items():
                if kind not in RUN_TYPES:
                    problems.add(f"{where}.{kind}", "unknown run type", "run types: " + ", ".join(RUN_TYPES))
                    continue
                number = _positive(problems, f"{where}.{kind}", v)
                if number is not None:
                    tol[kind] = number
            out["tolerances"] = tol
        elif key in SCALARS:
            number = _positive(problems, where, value)
            if number is not None:
                out[key] = number
        else:
            problems.add(where, "unknown key", "allowed: tolerance, " + ", ".join(SCALARS))
    return out
