"""The runs a validation compares: native methods, the Modelica model in Rumoca and pymoca, FMUs in fmpy.

Every runner returns a :class:`Trajectory` (time and named signals: ``x``, ``der(x)``, outputs) on
the campaign's output grid, or raises :class:`RunFailure` with a one-line reason. FMUs are simulated
in a child process, so an FMU that crashes (e.g. a segmentation fault in its binary) is reported
as a failed run instead of taking the validator down.
"""

from __future__ import annotations

import shutil
import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError, SplitLimitError
from ..model.units import compatible
from .reference import unknowns

FMU_TIMEOUT = 600.0


class RunFailure(Exception):
    """A run could not be carried out or its output cannot be compared; ``input`` marks bad user input."""

    def __init__(self, reason: str, input: bool = False):
        super().__init__(reason)
        self.reason = reason
        self.input = input


class RunNotApplicable(Exception):
    """The run's method cannot represent this motion (e.g. a Chaplygin split that turns singular)."""


@dataclass(frozen=True)
class Trajectory:
    """A run's signals on its time grid (coordinates, velocities and outputs by name), with notes."""

    time: np.ndarray
    signals: Mapping[str, np.ndarray]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunSpec:
    """One planned run: ``id`` is unique within a system, ``run_type`` selects the tolerance."""

    id: str
    run_type: str
    label: str
    execute: Callable[[], Trajectory] | None = None
    skip_reason: str = ""
    group: str = ""
    input_error: bool = False  # skipped because an input (an FMU given by the user) is bad
    share: str = ""  # runs with the same key share their work (a method's equations, an FMU): run them together


# -- native ----------------------------------------------------------------------------------------
def native_run(eom: EquationsOfMotion, stop: float, step: float, rtol: float = 1e-10,
               atol: float | None = None) -> Trajectory:
    """Return the native simulation of ``eom`` on the output grid, multipliers left out.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations of motion.
    stop : float
        Stop time.
    step : float
        Output interval.
    rtol : float, optional
        Relative tolerance of the integrator.
    atol : float, optional
        Absolute tolerance (default ``rtol * 1e-2``).

    Returns
    -------
    Trajectory
        The signals, with a note for every re-partition of a reduced method's split.
    """
    from ..simulation.simulate import simulate

    res = simulate(eom, stop, interval=step, rtol=rtol, atol=atol if atol is not None else rtol * 1e-2)
    cols = res.columns()
    signals = {k: v for k, v in cols.items() if k != "time" and not k.startswith("lambda[")}
    notes = tuple(f"re-partitioned at t = {t:.6g}: independent {', '.join(ind)}" for t, ind in res.repartitions)
    return Trajectory(res.time, signals, notes)


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "(version unknown)"


# -- Modelica through Rumoca ---------------------------------------------------------------------
def rumoca_modelica_run(eom: EquationsOfMotion, stop: float, step: float, rtol: float = 1e-10) -> Trajectory:
    """Simulate the exported model with Rumoca (:func:`bridge.backends.rumoca.simulate_rumoca`)."""
    from ..backends.rumoca import simulate_rumoca
    from .switched_times import tool_report

    system = eom.system
    run = simulate_rumoca(eom, "index1", stop, step, rtol)
    result = run.result
    available = set(result.names)
    signals = {}
    for c in system.coordinates:
        for name, tool in ((c.name, c.name), (f"der({c.name})", f"der_{c.name}")):
            if tool in available:
                signals[name] = np.asarray(result[tool], dtype=float)
    for name in [*system.outputs, *unknowns(system)]:  # efforts, friction forces, diode voltages: their own names
        if name in available:
            signals[name] = np.asarray(result[name], dtype=float)
    notes = (f"Rumoca {_version('rumoca')}, {run.form} form",)
    switching = tool_report(eom, "rumoca", np.asarray(result.time, dtype=float), lambda n: result[n], stop, step, rtol)
    return Trajectory(np.asarray(result.time, dtype=float), signals, notes + ((switching,) if switching else ()))


# -- Modelica through pymoca and CasADi's IDAS ----------------------------------------------------
def pymoca_modelica_run(eom: EquationsOfMotion, stop: float, step: float, rtol: float = 1e-10) -> Trajectory:
    """Compile the exported model with pymoca and integrate it with IDAS (:mod:`bridge.tools.pymoca`)."""
    from ..backends.pymoca import simulate_switched_pymoca
    from ..modelica.export import model_source
    from ..tools.pymoca import DocumentedLimitation
    from .switched_times import tool_report

    system = eom.system
    try:
        run = simulate_switched_pymoca(eom, model_source(eom, "index1"), stop, step, rtol)
    except DocumentedLimitation as exc:  # e.g. a mode state (when/pre), which pymoca cannot compile
        raise RunNotApplicable(str(exc)) from exc
    signals = {}
    for c in system.coordinates:
        for name, tool in ((c.name, c.name), (f"der({c.name})", f"der_{c.name}")):
            if tool in run.signals:
                signals[name] = run.signals[tool]
    signals.update({name: run.signals[name] for name in [*system.outputs, *unknowns(system)] if name in run.signals})
    notes = (f"pymoca {_version('pymoca')}, CasADi {_version('casadi')} IDAS",)
    switching = tool_report(eom, "pymoca", run.time, run.__getitem__, stop, step, rtol)
    return Trajectory(run.time, signals, notes + ((switching,) if switching else ()))


# -- FMUs ------------------------------------------------------------------------------------------
def _file_key(path: str | Path) -> tuple:
    """Return what identifies a file's content within a process: its resolved path, size and modification time."""
    stat = Path(path).stat()
    return str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns


_DESCRIBED: dict[tuple, object] = {}  # describe_fmu's model description by FMU file (_file_key)


def describe_fmu(path: str | Path):
    """Return fmpy's model description, or RunFailure(input=True) naming what is wrong with the file.

    Read once per file in a process (the Model Exchange and the Co-Simulation run of one FMU describe the same
    file; a rewritten file is read anew); the description is shared, not to be changed.
    """
    path = Path(path)
    if not path.is_file():
        raise RunFailure(f"{path}: no such FMU file", input=True)
    key = _file_key(path)
    if key not in _DESCRIBED:
        if len(_DESCRIBED) >= 64:  # a long campaign keeps the last files only
            _DESCRIBED.clear()
        _DESCRIBED[key] = _describe(path)
    return _DESCRIBED[key]


def _describe(path: Path):
    import fmpy

    from ..fmu.archive import ArchiveError, check_archive, check_identifiers

    try:
        check_archive(path)  # sizes, ratios and names, before fmpy reads modelDescription.xml from it
    except ArchiveError as exc:
        raise RunFailure(f"{path}: not a loadable FMU ({str(exc).removeprefix(f'{path}: ')})", input=True) from exc
    try:
        md = fmpy.read_model_description(str(path), validate=False)
    except Exception as exc:  # fmpy raises plain Exceptions for broken archives and XML
        raise RunFailure(f"{path}: not a loadable FMU ({str(exc).splitlines()[0] if str(exc) else exc})",
                         input=True) from exc
    try:
        check_identifiers(md, None, str(path))
    except ArchiveError as exc:
        raise RunFailure(str(exc), input=True) from exc
    return md


def fmu_interfaces(md) -> list[str]:
    """Return the FMI interfaces a model description declares.

    Parameters
    ----------
    md : fmpy.model_description.ModelDescription
        The model description.

    Returns
    -------
    list of str
        ``ModelExchange`` and/or ``CoSimulation``.
    """
    kinds = []
    if md.modelExchange is not None:
        kinds.append("ModelExchange")
    if md.coSimulation is not None:
        kinds.append("CoSimulation")
    return kinds


def check_variables(md, wanted: Sequence[str], units: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """Return the present signals of ``wanted``, and problems: missing variables and differing units."""
    variables = {v.name: v for v in md.modelVariables}
    present = [n for n in wanted if n in variables]
    problems = []
    missing = [n for n in wanted if n not in variables]
    if missing:
        problems.append(f"lacks the variable(s) {', '.join(missing)}")
    for name in present:
        v = variables[name]
        unit = v.unit or (v.declaredType.unit if v.declaredType is not None else None) or ""
        ours = units.get(name, "")
        if unit and ours and not compatible(unit, ours):
            problems.append(f"{name} has unit {unit!r}, the system file says {ours!r}")
    return present, problems


def _simulate_child(conn, path: str, kwargs: dict) -> None:
    import sys

    errors: list[str] = []

    def logger(*args) -> None:
        """Record the FMU's log messages; Error and Fatal ones go into the reason of a failed call.

        FMI 2 passes component, instance, status, category, message; FMI 3 environment, status, category, message.
        """
        status, text = args[-3], args[-1]
        if status >= 3:
            errors.append(" ".join((text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)).split()))

    sys.unraisablehook = lambda _: None  # fmpy's CVode callback re-raises the failed call as "ignored": the
    try:  # reason below says it once
        import fmpy

        result = fmpy.simulate_fmu(path, logger=logger, **kwargs)
        conn.send(("ok", {n: np.asarray(result[n], dtype=float) for n in result.dtype.names}))
    except BaseException as exc:  # report everything to the parent; it decides
        message = str(exc).strip().splitlines()
        logged = f"; the FMU logged: {errors[0]}" if errors else ""
        conn.send(("error", f"{type(exc).__name__}: {(message[-1] if message else '').rstrip('.')}{logged}",
                   traceback.format_exc(limit=3)))
    finally:
        conn.close()


class SimulationFailed(RunFailure):
    """fmpy's simulate_fmu raised (the FMU returned an error); the reason is the exception's last line."""


def simulate_isolated(path: str | Path, **kwargs) -> dict[str, np.ndarray]:
    """Run ``fmpy.simulate_fmu(path, **kwargs)`` in a child process: time and the signals as arrays.

    ``path`` is an FMU file (unpacked here within the archive limits of :mod:`bridge.fmu.archive`, never by
    fmpy) or an unpacked FMU folder. Raises :class:`SimulationFailed` when simulate_fmu raises, RunFailure when
    the process crashes or times out, and RunFailure(input=True) when the FMU cannot be unpacked.
    """
    from ..atomic import temp_folder

    if Path(path).is_dir():
        message = isolated(_simulate_child, str(path), kwargs)
    else:
        folder = temp_folder("fmu")
        try:
            message = isolated(_simulate_child, str(unpack(path, folder)), kwargs)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    if message[0] != "ok":
        raise SimulationFailed(message[1])
    return message[1]


def unpack_to(path: str | Path, target: Path) -> Path:
    """Return the FMU ``path`` unpacked (:func:`unpack`) into the new folder ``target``, whole or not at all.

    It is unpacked beside ``target`` and renamed to it, so a folder found at ``target`` is complete: the runs of
    one FMU (Model Exchange and Co-Simulation, in any process) unpack it once and run it from there.
    """
    import os
    import tempfile

    target = Path(target)
    part = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        unpack(path, part)
        os.rename(part, target)
    finally:
        shutil.rmtree(part, ignore_errors=True)  # gone after the rename; what is left of a failure
    return target


def unpack(path: str | Path, folder: str | Path) -> Path:
    """Return the FMU unpacked into ``folder`` within the archive limits, its identifiers checked.

    Raise RunFailure(input=True) when the FMU cannot be unpacked or its identifiers are not safe.
    """
    import fmpy

    from ..fmu.archive import ArchiveError, check_identifiers, unpack_fmu

    try:
        unzipdir = unpack_fmu(path, folder)
        check_identifiers(fmpy.read_model_description(str(unzipdir), validate=False), unzipdir, str(path),
                          fmpy.platform)
    except ArchiveError as exc:
        raise RunFailure(str(exc), input=True) from exc
    return unzipdir


def isolated(target: Callable, *args, timeout: float = FMU_TIMEOUT):
    """Run ``target(conn, *args)`` in a child process (:func:`bridge.tools.sandbox.isolated`).

    Returns its message, or raises RunFailure for a crash or timeout. An interruption of the caller is raised
    again as it came.
    """
    from ..tools.sandbox import ChildFailure, ChildInterrupted
    from ..tools.sandbox import isolated as run_isolated

    try:
        return run_isolated(target, *args, timeout=timeout)
    except ChildInterrupted as exc:
        raise exc.interrupt from None
    except ChildFailure as exc:
        if exc.kind == "timeout":
            raise RunFailure(f"no result within {timeout:g} s; the run was stopped") from None
        raise RunFailure(f"the FMU crashed the simulation process ({exc.signal})") from None


_VALIDATED: dict[tuple, list[str]] = {}  # validate_fmu's problems by FMU file (path, size, modification time)


def validation_problems(path: str | Path) -> list[str]:
    """Return ``fmpy.validation.validate_fmu``'s problems of the FMU file, checked once per file in a process.

    The Model Exchange and the Co-Simulation run of one FMU check the same file; a rewritten file (other size or
    modification time) is checked anew.
    """
    from fmpy.validation import validate_fmu

    key = _file_key(path)
    if key not in _VALIDATED:
        if len(_VALIDATED) >= 64:  # a long campaign keeps the last files only
            _VALIDATED.clear()
        _VALIDATED[key] = validate_fmu(str(path))
    return list(_VALIDATED[key])


def fmu_run(path: str | Path, kind: str, stop: float, step: float, names: Sequence[str], units: Mapping[str, str],
            rtol: float = 1e-10, start_values: Mapping[str, float] | None = None, validate: bool = True,
            strict_names: bool = True, invalid_fails: bool = False,
            aliases: Mapping[str, str] | None = None, unpacked: Callable[[], Path] | None = None) -> Trajectory:
    """Simulate an FMU with fmpy (ME: CVode; CS: its own integrator at communication step ``step``).

    Signals are looked up by name, or by ``aliases[name]`` (the FMU's name for our signal). Missing
    variables and differing units fail the run (``strict_names``); problems found by
    ``fmpy.validation.validate_fmu`` fail it with ``invalid_fails`` and are otherwise noted. ``unpacked``
    returns the FMU's folder unpacked by :func:`unpack_to` (shared by its runs); without it the FMU is unpacked
    for this run.
    """
    md = describe_fmu(path)
    if kind not in fmu_interfaces(md):
        raise RunFailure(f"the FMU has no {kind} interface (it provides {', '.join(fmu_interfaces(md)) or 'none'})")
    theirs = {n: (aliases or {}).get(n, n) for n in names}
    ours = {v: k for k, v in theirs.items()}
    present, problems = check_variables(md, list(theirs.values()),
                                        {theirs[n]: u for n, u in units.items() if n in theirs})
    if problems and strict_names:
        raise RunFailure("; ".join(problems))
    notes = []
    if validate:
        found = validation_problems(path)
        if found and invalid_fails:
            raise RunFailure(f"fmpy.validation.validate_fmu reports {len(found)} problem(s): "
                             + "; ".join(p.splitlines()[0] for p in found))
        if found:
            notes.append(f"fmpy validation: {len(found)} problem(s): " + "; ".join(p.splitlines()[0] for p in found))
            validate = False
    kw = dict(fmi_type=kind, stop_time=float(stop), output_interval=float(step), output=list(present),
              start_values=dict(start_values or {}), relative_tolerance=float(rtol), validate=validate)
    if kind == "ModelExchange":
        kw["solver"] = "CVode"
    try:
        data = simulate_isolated(unpacked() if unpacked else path, **kw)
    except SimulationFailed as exc:
        raise RunFailure(f"the FMU failed during the run: {exc.reason}") from None
    signals = {ours[n]: data[n] for n in present if n in data}
    return Trajectory(data["time"], signals, tuple(notes + problems))


def guard(fn: Callable[[], Trajectory]) -> Callable[[], Trajectory]:
    """Turn nhbridge's own errors into RunFailure (one line)."""

    def run() -> Trajectory:
        try:
            return fn()
        except SplitLimitError as exc:
            raise RunNotApplicable(str(exc).replace("\n", " ")) from exc
        except BridgeError as exc:
            raise RunFailure(str(exc).replace("\n", " ")) from exc

    return run
