"""Checking exported Modelica with real Modelica compilers.

Each tool's run (:mod:`bridge.tools`) is compared with the native simulation.

* Rumoca (``pip install "rumoca>=0.9.9,<0.10"``): parse, balance (``structure().is_balanced``),
  simulate, and compare every coordinate with nhbridge's native simulation.
* pymoca (``pip install "pymoca==0.12.*" "casadi<3.7"``): Modelica -> CasADi, integrated with IDAS from
  consistent initial values (:mod:`bridge.tools.pymoca`), compared the same way.
* OpenModelica through OMPython: ``loadFile``, ``checkModel`` and ``simulate`` in ``omc``; where
  ``omc`` is not installed the check says so and stops.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..backends.openmodelica import model_session
from ..backends.pymoca import simulate_switched_pymoca
from ..backends.rumoca import simulate_rumoca
from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError, ValidationError
from ..kept import kept
from ..modelica.export import model_source
from ..modelica.forms import FORMS, choose_form, in_form, regular_horizon, require_expressible
from ..modelica.ports import library_files
from ..simulation.simulate import simulate
from ..tools.openmodelica import check_model, simulate_model
from ..tools.pymoca import simulate_pymoca
from ..tools.rumoca import require_rumoca, run_text
from .switched_times import tool_report

OMC_MISSING = ("OpenModelica's omc was not found on PATH or in OPENMODELICAHOME; install OpenModelica "
               "(https://openmodelica.org) or use --check rumoca")


@dataclass(frozen=True)
class CheckReport:
    """Outcome of compiling and simulating one exported model."""

    tool: str
    model: str
    balanced: bool
    states: int = 0
    algebraics: int = 0
    errors: dict[str, float] = field(default_factory=dict)  # max |tool - native| / range, per coordinate
    seconds: float = 0.0
    messages: str = ""
    form: str = "implicit"
    switching: str = ""  # switched elements: the switching times against native (bridge.validation.switched_times)
    horizon: str = ""  # where the comparison ends before the stop time, and why
    compared_until: float = 0.0  # the end of the compared run (s)

    @property
    def max_error(self) -> float:
        """The largest relative error of any coordinate (``|tool - native| / range``; 0 without errors)."""
        return max(self.errors.values()) if self.errors else 0.0

    def summary(self) -> str:
        """Return a one-line summary: balance, sizes, time and the largest deviation (and the coordinate)."""
        worst = max(self.errors, key=self.errors.get) if self.errors else "-"
        return (f"{self.tool}: {self.model} {'balanced' if self.balanced else 'NOT balanced'} "
                f"({self.states} states, {self.algebraics} algebraic, {self.form} form), "
                f"simulated in {self.seconds:.2f} s; "
                f"largest deviation from the native simulation {self.max_error:.2e} of the range ({worst})"
                + (f"; {self.switching}" if self.switching else "")
                + (f"; {self.horizon}" if self.horizon else ""))


#: a coordinate whose range is below this (relative to max(1, |q|), in its own units) is constant: its error is
#: measured against max(1, |q|), not against a range made of round-off
ROUNDOFF_RANGE = 1e-9


def compare(eom: EquationsOfMotion, tool: str, time_tool: np.ndarray, signal, stop_time: float, interval: float,
            rtol: float) -> tuple[dict[str, float], str]:
    """Compare a tool's run with one native simulation on the grid of ``interval``.

    ``signal(name)`` gives the tool's values at ``time_tool``. Returns every coordinate's largest error over
    its range, and the switching times of switched elements
    (:func:`bridge.validation.switched_times.tool_report`, "" without).
    """
    time_tool = np.asarray(time_tool, dtype=float)
    native = native_reference(eom, stop_time, interval, rtol)
    return (_relative_errors(eom, time_tool, signal, native),
            tool_report(eom, tool, time_tool, signal, stop_time, interval, rtol, native))


def native_reference(eom: EquationsOfMotion, stop_time: float, interval: float, rtol: float):
    """Return the native simulation every tool's run of ``eom`` is compared with (atol ``rtol / 100``).

    One run per equations object and (stop, interval, rtol): checking the same equations with several compilers
    (``nhbridge modelica --check rumoca --check pymoca``) integrates the reference once. The equations are
    immutable; the runs are kept on them (a run refers to its equations, so a table outside them would keep both
    alive) and go with them.
    """
    return kept(eom, ("native_reference", float(stop_time), float(interval), float(rtol)),
                lambda: simulate(eom, stop_time, interval=interval, rtol=rtol, atol=rtol * 1e-2))


def _relative_errors(eom: EquationsOfMotion, time_tool: np.ndarray, signal, native) -> dict[str, float]:
    errors = {}
    for i, c in enumerate(eom.system.coordinates):
        ref = native.q[:, i]
        tool = np.interp(native.time, time_tool, np.asarray(signal(c.name), dtype=float))
        span = float(np.ptp(ref))
        if span <= ROUNDOFF_RANGE * max(1.0, float(np.abs(ref).max())):  # constant up to round-off (e.g. 1e-14)
            span = max(1.0, float(np.abs(ref).max()))
        errors[c.name] = float(np.abs(tool - ref).max() / span)
    return errors


def check_rumoca(eom: EquationsOfMotion, level: str = "auto", stop_time: float | None = None,
                 rtol: float = 1e-10) -> CheckReport:
    """Compile the exported model with Rumoca, simulate it and compare it with the native simulation.

    The simulation is :func:`simulate_rumoca`'s; the report says which text was simulated.
    """
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    dt = T / 500
    run = simulate_rumoca(eom, level, T, dt, rtol)
    result, structure = run.result, run.structure
    errors, switching = compare(eom, "rumoca", result.time, lambda n, r=result: r[n], T, dt, rtol)
    return CheckReport("rumoca", system.name, bool(structure.is_balanced), structure.n_states,
                       structure.n_algebraic, errors, run.seconds, "; ".join(run.failures), run.form, switching,
                       compared_until=T)


def check_pymoca(eom: EquationsOfMotion, level: str = "auto", stop_time: float | None = None,
                 rtol: float = 1e-10) -> CheckReport:
    """Compile the exported model with pymoca, integrate it with CasADi's IDAS and compare with native.

    Every coordinate is compared, by its largest error over the range. A reduced method's model keeps the split
    it was exported with, and pymoca 0.12 has no when-equations to change it: its reduced ODE ends where that
    split turns singular (where the native run re-partitions), so the run and the comparison end at
    :func:`~bridge.modelica.forms.regular_horizon` (0.9 of that time) and the report says so.
    """
    require_expressible(eom, level, "pymoca")
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    horizon = regular_horizon(eom, T)
    note = "" if horizon >= T else (
        f"compared up to t = {horizon:.4g} s of {T:g} s: 0.9 of the time where the exported split turns singular "
        f"(the native run re-partitions there; pymoca has no when-equations to follow it)")
    dt = horizon / 500
    run = simulate_switched_pymoca(eom, model_source(eom, level), horizon, dt, rtol)
    errors, switching = compare(eom, "pymoca", run.time, run.__getitem__, horizon, dt, rtol)
    form = choose_form(eom).form if level in ("auto", "index1") else level
    return CheckReport("pymoca", system.name, True, run.states, run.algebraics, errors, run.seconds, form=form,
                       switching=switching, horizon=note, compared_until=horizon)


def check_openmodelica(eom: EquationsOfMotion, level: str = "index1", stop_time: float | None = None,
                       rtol: float = 1e-8) -> CheckReport:
    """Load the model in omc through OMPython, run checkModel, simulate, and compare with native."""
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    with model_session(eom, level, OMC_MISSING, ValidationError) as (omc, _):
        check, balanced = check_model(omc, system.name, ValidationError)
        col, seconds = simulate_model(omc, system.name, T, 500, rtol, ValidationError)
        errors, _ = compare(eom, "openmodelica", col["time"], lambda n: col[n], T, T / 500, rtol)
    return CheckReport("openmodelica", system.name, balanced, errors=errors, seconds=seconds, messages=str(check),
                       compared_until=T)


# -- running one form through one compiler ---------------------------------------------------------------
def simulate_form(eom: EquationsOfMotion, form: str, tool: str, stop_time: float, rtol: float = 1e-10):
    """Export ``eom`` in ``form``, compile and simulate it with ``tool`` (``rumoca`` or ``pymoca``).

    The run to ``stop_time`` is compared, every coordinate, with the native simulation: a
    :class:`CheckReport`, with the switching times of switched elements; no fallback to another form.
    """
    spec = FORMS[form]
    source = model_source(in_form(eom, form), spec.level, accelerations=spec.accelerations)
    name = eom.system.name
    dt = stop_time / 500
    if tool == "pymoca":
        run = simulate_pymoca(source, name, stop_time, dt, rtol, library_files(eom))
        errors, switching = compare(eom, "pymoca", run.time, run.__getitem__, stop_time, dt, rtol)
        return CheckReport("pymoca", name, True, run.states, run.algebraics, errors, run.seconds, form=form,
                           switching=switching, compared_until=stop_time)
    if tool != "rumoca":
        raise ExportError(f"unknown compiler {tool!r}; choose rumoca or pymoca")
    rumoca = require_rumoca()
    try:  # the connectors of ports beside the model
        result, structure, seconds = run_text(rumoca, source, name, library_files(eom), stop_time, dt, rtol)
    except rumoca.RumocaError as exc:
        raise ValidationError(f"Rumoca could not simulate {name} ({form} form): {exc}") from exc
    errors, switching = compare(eom, "rumoca", result.time, lambda n, r=result: r[n], stop_time, dt, rtol)
    return CheckReport("rumoca", name, bool(structure.is_balanced), structure.n_states, structure.n_algebraic,
                       errors, seconds, form=form, switching=switching, compared_until=stop_time)


CHECKERS = {"rumoca": check_rumoca, "pymoca": check_pymoca, "openmodelica": check_openmodelica}
