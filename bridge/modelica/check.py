"""Checking exported Modelica with real Modelica compilers.

* Rumoca (``pip install "rumoca>=0.9.9,<0.10"``): parse, balance (``structure().is_balanced``),
  simulate, and compare every coordinate with nhbridge's native simulation.
* pymoca (``pip install "pymoca==0.12.*" "casadi<3.7"``): Modelica -> CasADi, integrated with IDAS from
  consistent initial values (:mod:`bridge.modelica.pymoca_backend`), compared the same way.
* OpenModelica through OMPython: ``loadFile``, ``checkModel`` and ``simulate`` in ``omc``; where
  ``omc`` is not installed the check says so and stops.
"""

from __future__ import annotations

import csv
import os
import shutil
import tempfile
import time
from collections.abc import Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError, ExportError, ValidationError
from ..simulation.simulate import simulate
from .export import model_source
from .ports import library_files
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
    switching: str = ""  # switched elements: the switching times against native (bridge.modelica.switched_times)

    @property
    def max_error(self) -> float:
        return max(self.errors.values()) if self.errors else 0.0

    def summary(self) -> str:
        worst = max(self.errors, key=self.errors.get) if self.errors else "-"
        return (f"{self.tool}: {self.model} {'balanced' if self.balanced else 'NOT balanced'} "
                f"({self.states} states, {self.algebraics} algebraic, {self.form} form), "
                f"simulated in {self.seconds:.2f} s; "
                f"largest deviation from the native simulation {self.max_error:.2e} of the range ({worst})"
                + (f"; {self.switching}" if self.switching else ""))


#: a coordinate whose range is below this (relative to max(1, |q|), in its own units) is constant: its error is
#: measured against max(1, |q|), not against a range made of round-off
ROUNDOFF_RANGE = 1e-9


def compare(eom: EquationsOfMotion, tool: str, time_tool: np.ndarray, signal, stop_time: float, interval: float,
            rtol: float) -> tuple[dict[str, float], str]:
    """A tool's run (``signal(name)`` its values at ``time_tool``) against one native simulation on the grid of
    ``interval``: every coordinate's largest error over its range, and the switching times of switched elements
    (:func:`bridge.modelica.switched_times.tool_report`, "" without)."""
    time_tool = np.asarray(time_tool, dtype=float)
    native = simulate(eom, stop_time, interval=interval, rtol=rtol, atol=rtol * 1e-2)
    return (_relative_errors(eom, time_tool, signal, native),
            tool_report(eom, tool, time_tool, signal, stop_time, interval, rtol, native))


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


@dataclass(frozen=True)
class RumocaRun:
    """The exported model as Rumoca compiled and simulated it."""

    result: Any            # rumoca.Result: time and every variable by name
    structure: Any         # rumoca's structure(): balance, states, algebraic variables
    form: str              # the form (bridge.modelica.forms.FORMS) of the text that simulated
    seconds: float
    failures: tuple[str, ...] = ()  # the forms tried before, with Rumoca's message


def load_alone(rumoca, source: str, name: str, library: Mapping[str, str] | None = None):
    """Rumoca's model ``name`` compiled from ``source`` alone, wherever the process runs.

    Given a file name that exists in the working directory, Rumoca 0.9 also loads the other ``.mo`` files of
    that folder ('Duplicate class ... with non-identical definition' when one declares the same class); the
    source is named as a file in an empty temporary folder instead, with no source roots.
    """
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        roots = []
        if library:  # the other files the model needs (the connectors of ports): a source root beside it
            roots = [str(Path(tmp) / "library")]
            for relative, text in library.items():
                (Path(roots[0]) / relative).parent.mkdir(parents=True, exist_ok=True)
                (Path(roots[0]) / relative).write_text(text, encoding="utf-8")
        return rumoca.loads(source, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=roots)


def simulate_rumoca(eom: EquationsOfMotion, level: str, stop_time: float, dt: float, rtol: float) -> RumocaRun:
    """Compile the exported model with Rumoca and simulate it from 0 to ``stop_time`` (output step ``dt``).

    The model as exported (the form :func:`bridge.modelica.forms.choose_form` picks) is tried first; where
    Rumoca's integrator fails on it, the same equations with the accelerations as variables, then (a split with
    a coupled block) with the split as normal equations. Inputs keep their start values (Rumoca 0.9 has no
    inputs= yet).
    """
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError('Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"') \
            from exc
    from .forms import FORMS, applicable_forms, choose_form, in_form, require_expressible

    require_expressible(eom, level, "rumoca")
    name = eom.system.name
    automatic = level in ("auto", "index1")
    chosen = choose_form(eom).form if automatic else "implicit"
    others = [f for f in ("variables", "normal") if f != chosen and f in applicable_forms(eom)]
    failures = []
    for form in [chosen, *others]:
        if form == chosen:  # the text as exported (its Documentation says why this form)
            text = model_source(eom, level, accelerations="auto")
        else:
            text = model_source(in_form(eom, form), FORMS[form].level if automatic else level,
                                accelerations=FORMS[form].accelerations)
        try:
            model = load_alone(rumoca, text, name, library_files(eom))
            structure = model.structure()
        except rumoca.RumocaError as exc:
            raise ValidationError(f"Rumoca rejected the exported model {name}: {exc}") from exc
        start = time.perf_counter()
        try:
            result = model.simulate((0.0, stop_time), config=rumoca.SimConfig(rtol=rtol, atol=rtol * 1e-2, dt=dt))
        except rumoca.RumocaError as exc:
            failures.append(f"{form} form: {exc}")
            continue
        return RumocaRun(result, structure, form, time.perf_counter() - start, tuple(failures))
    raise ValidationError(f"Rumoca could not simulate {name}: " + "; ".join(failures))


def check_rumoca(eom: EquationsOfMotion, level: str = "auto", stop_time: float | None = None,
                 rtol: float = 1e-10) -> CheckReport:
    """Compile the exported model with Rumoca, simulate it (:func:`simulate_rumoca`), and compare it with the
    native simulation; the report says which text was simulated."""
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    dt = T / 500
    run = simulate_rumoca(eom, level, T, dt, rtol)
    result, structure = run.result, run.structure
    errors, switching = compare(eom, "rumoca", result.time, lambda n, r=result: r[n], T, dt, rtol)
    return CheckReport("rumoca", system.name, bool(structure.is_balanced), structure.n_states,
                       structure.n_algebraic, errors, run.seconds, "; ".join(run.failures), run.form, switching)


def check_pymoca(eom: EquationsOfMotion, level: str = "auto", stop_time: float | None = None,
                 rtol: float = 1e-10) -> CheckReport:
    """Compile the exported model with pymoca, integrate it with CasADi's IDAS and compare with the native
    simulation (every coordinate, max error over the range)."""
    from .forms import choose_form, require_expressible
    from .switched import simulate_switched_pymoca

    require_expressible(eom, level, "pymoca")
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    dt = T / 500
    run = simulate_switched_pymoca(eom, model_source(eom, level), T, dt, rtol)
    errors, switching = compare(eom, "pymoca", run.time, run.__getitem__, T, dt, rtol)
    form = choose_form(eom).form if level in ("auto", "index1") else level
    return CheckReport("pymoca", system.name, True, run.states, run.algebraics, errors, run.seconds, form=form,
                       switching=switching)


def find_omc() -> str | None:
    """The omc executable from PATH or $OPENMODELICAHOME/bin, or None."""
    found = shutil.which("omc")
    if found:
        return found
    home = os.environ.get("OPENMODELICAHOME")
    if home:
        candidate = Path(home) / "bin" / "omc"
        if candidate.exists():
            return str(candidate)
    return None


@contextmanager
def omc_session(eom: EquationsOfMotion, level: str, missing: str, error: type[BridgeError]):
    """An omc session (OMPython) in a temporary directory holding the exported model, loaded.

    ``missing`` is the message when omc is not installed; load failures raise ``error``.
    Yields ``(omc, directory)``; the session is closed afterwards.
    """
    omc_path = find_omc()
    if omc_path is None:
        raise ExportError(missing)
    try:
        from OMPython import OMCSessionZMQ
    except ImportError as exc:
        raise ExportError("OMPython is not installed; pip install OMPython (OpenModelica's Python API)") from exc
    name = eom.system.name
    with tempfile.TemporaryDirectory(prefix="nhbridge-omc-") as tmp:
        path = Path(tmp) / f"{name}.mo"
        path.write_text(model_source(eom, level), encoding="utf-8")
        for relative, text in library_files(eom).items():  # the connectors of ports, loaded first
            (Path(tmp) / relative).parent.mkdir(parents=True, exist_ok=True)
            (Path(tmp) / relative).write_text(text, encoding="utf-8")
        omc = OMCSessionZMQ(omhome=str(Path(omc_path).parent.parent))
        try:
            omc.sendExpression(f'cd("{Path(tmp).as_posix()}")')
            for relative in library_files(eom):
                if relative.endswith(".mo"):
                    omc.sendExpression(f'loadFile("{(Path(tmp) / relative).as_posix()}")')
            if not omc.sendExpression(f'loadFile("{path.as_posix()}")'):
                raise error(f"omc could not load {path.name}: {omc.sendExpression('getErrorString()')}")
            yield omc, Path(tmp)
        finally:
            try:
                omc.sendExpression("quit()")
            except Exception:  # noqa: BLE001 - the session is gone either way
                pass


def check_openmodelica(eom: EquationsOfMotion, level: str = "index1", stop_time: float | None = None,
                       rtol: float = 1e-8) -> CheckReport:
    """Load the model in omc through OMPython, run checkModel, simulate, and compare with native."""
    system = eom.system
    T = float(stop_time if stop_time is not None else system.stop_time)
    with omc_session(eom, level, OMC_MISSING, ValidationError) as (omc, _):
        check = omc.sendExpression(f"checkModel({system.name})")
        balanced = "has" in str(check) and "equation(s) and" in str(check)
        if "Error" in str(omc.sendExpression("getErrorString()")):
            raise ValidationError(f"omc checkModel failed for {system.name}: {check}")
        start = time.perf_counter()
        sim = omc.sendExpression(f"simulate({system.name}, stopTime={T}, numberOfIntervals=500, "
                                 f"tolerance={rtol}, outputFormat=\"csv\")")
        seconds = time.perf_counter() - start
        result_file = sim.get("resultFile", "") if isinstance(sim, dict) else ""
        if not result_file:
            raise ValidationError(f"omc could not simulate {system.name}: {sim}")
        with open(result_file, newline="") as fh:
            rows = list(csv.reader(fh))
        header = [h.strip('"') for h in rows[0]]
        data = np.array(rows[1:], dtype=float)
        col = {h: data[:, k] for k, h in enumerate(header)}
        errors, _ = compare(eom, "openmodelica", col["time"], lambda n: col[n], T, T / 500, rtol)
    return CheckReport("openmodelica", system.name, balanced, errors=errors, seconds=seconds, messages=str(check))


CHECKERS = {"rumoca": check_rumoca, "pymoca": check_pymoca, "openmodelica": check_openmodelica}
