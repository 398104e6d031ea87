"""A validation campaign: every system file against its reference, every run type, one verdict.

For each system: the reference is the native simulation (method ``lagrange``, DOP853 at rtol
1e-12) on a uniform grid of step ``h``; signals with a closed form in ``[reference]`` take the
closed form instead. Each run is compared signal by signal (:mod:`.metrics`); besides, along every
run the constraint residuals ``phi(q, t)`` and ``A(q, t) q' + a0(q, t)`` are evaluated from the
run's own ``q, q'``, and for conservative systems the Jacobi integral
``h = sum q'_i dT/dq'_i - T + V`` (the energy) is checked for drift.

A run passes when every signal passes its tolerance and tube, the residual stays below its bound
and (conservative systems) the energy drift too. Exit status of a campaign: 2 when some input was
bad (system file, ``[reference]``, an FMU that does not load, an output path), else 1 when a run
failed, else 0.
"""

from __future__ import annotations

import tempfile
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from ..atomic import interrupt_pending
from ..derivation.eom import EquationsOfMotion
from ..errors import BridgeError, DerivationError, ProblemCollector, SplitLimitError
from ..model import symbols as S
from ..model.numeric import compile_exprs
from ..model.system import System
from .metrics import SignalMetrics, compare
from .reference import ClosedForm, parse_reference, signal_names
from .runs import (
    RunFailure,
    RunNotApplicable,
    RunSpec,
    Trajectory,
    describe_fmu,
    fmu_interfaces,
    fmu_run,
    guard,
    native_run,
    pymoca_modelica_run,
    rumoca_modelica_run,
    unpack_to,
)
from .settings import DEFAULT_STEP, REFERENCE_RTOL, Settings, parse_overrides
from .shared import built_once, remembered, run_together

#: how an FMU's log says that its split turned singular where it could not go on (fmu/nhb_split.c, model_c.py)
SPLIT_STOPS = ("cannot re-partition", "has no other usable split", "no split of the velocities is regular")
MAX_ROWS = 10**7          # output rows per run accepted without --yes
MIN_STEP_RATIO = 1e-12    # the step must be at least stop_time * MIN_STEP_RATIO
GROUPS = ("methods", "modelica", "pymoca", "fmu", "openmodelica", "rumoca-fmu")
DEFAULT_GROUPS = ("methods", "modelica", "pymoca", "fmu", "openmodelica")


def parse_groups(text: str) -> tuple[str, ...]:
    """Parse ``"methods,fmu"`` or ``"all"`` into run groups; ValueError naming the unknown ones."""
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if items == ("all",):
        return GROUPS
    bad = [x for x in items if x not in GROUPS]
    if bad or not items:
        raise ValueError(f"unknown run group(s) {', '.join(bad) or '(none)'}; choose from {', '.join(GROUPS)} or all")
    return items
PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
RUMOCA_FMU_OPT_IN = ("not requested (--runs rumoca-fmu): Rumoca 0.9's fmi2 FMUs fail fmpy's modelDescription "
                     "validation, and its Co-Simulation is fixed-step explicit Euler (see README)")


@dataclass
class RunResult:
    """The result of one run of a system: status, reason and the metrics of every compared signal."""

    id: str
    run_type: str
    label: str
    status: str
    reason: str = ""
    tolerance: float = 0.0
    metrics: list[SignalMetrics] = field(default_factory=list)
    residual: float | None = None
    energy_drift: float | None = None
    seconds: float = 0.0
    notes: tuple[str, ...] = ()
    input_error: bool = False
    trajectory: Trajectory | None = None
    residual_series: np.ndarray | None = None
    energy_series: np.ndarray | None = None

    @property
    def worst(self) -> SignalMetrics | None:
        """The signal with the largest relative error, or None without metrics."""
        return max(self.metrics, key=lambda m: m.max_rel) if self.metrics else None


@dataclass
class SystemValidation:
    """The validation of one system file: its problems, its runs and the reference they were compared with."""

    source: str
    name: str = ""
    problems: list[str] = field(default_factory=list)  # bad input: reported, exit code 2
    runs: list[RunResult] = field(default_factory=list)
    reference: Trajectory | None = None
    reference_label: str = ""
    closed_forms: dict[str, str] = field(default_factory=dict)
    energy_unchecked: str = ""  # why the energy is not checked (the system is not conservative); empty: checked
    settings: Settings = field(default_factory=Settings)
    stop_time: float = 0.0
    step: float = 0.0
    interrupted: bool = False
    no_compiler: str = ""  # why the runs that build an FMU were skipped (no C compiler); exit code 2

    @property
    def status(self) -> str:
        """``error`` for bad input, ``failed`` when a run failed, else ``passed``."""
        if self.problems or any(r.input_error for r in self.runs):
            return ERROR
        if any(r.status in (FAILED, ERROR) for r in self.runs):
            return FAILED
        return PASSED


@dataclass
class Campaign:
    """The validation of several system files, with the time it took and its problems of output."""

    systems: list[SystemValidation]
    seconds: float = 0.0
    output_problems: list[str] = field(default_factory=list)
    interrupted: bool = False  # Ctrl-C: the systems and runs finished before it

    @property
    def exit_code(self) -> int:
        """The exit code of ``nhbridge validate``: 2 for bad input, 1 when a run failed, else 0."""
        if self.output_problems or self.no_compiler or any(s.status == ERROR for s in self.systems):
            return 2
        return 1 if any(s.status == FAILED for s in self.systems) else 0

    def __repr__(self) -> str:
        runs = [r.status for s in self.systems for r in s.runs]
        counts = ", ".join(f"{runs.count(k)} {k}" for k in (PASSED, FAILED, ERROR, SKIPPED) if k in runs)
        return (f"<Campaign {len(self.systems)} systems ({', '.join(s.name or s.source for s in self.systems[:4])}"
                f"{', ...' if len(self.systems) > 4 else ''}): {len(runs)} runs{': ' + counts if counts else ''}; "
                f"exit code {self.exit_code}>")

    @property
    def no_compiler(self) -> str:
        """Why the FMU runs were skipped when there is no C compiler (the same for every system), else empty."""
        return next((s.no_compiler for s in self.systems if s.no_compiler), "")

    def failures(self) -> list[str]:
        """Return one line per failure or input problem."""
        lines = []
        for s in self.systems:
            lines += [p if p.startswith(s.source) else f"{s.name or s.source}: {p}" for p in s.problems]
            lines += [f"{s.name}: {r.id}: {r.reason}" for r in s.runs if r.status in (FAILED, ERROR)]
        return lines + self.output_problems


@dataclass(frozen=True)
class Options:
    """What to run: run groups, methods, FMI versions, FMUs from other tools, setting overrides."""

    groups: Sequence[str] = DEFAULT_GROUPS
    methods: Sequence[str] | None = None
    fmu_methods: Sequence[str] | None = None  # methods whose FMUs are built and run (None: those of ``methods``)
    fmi_versions: Sequence[int] = (2, 3)
    external: Sequence[str] = ()
    overrides: dict = field(default_factory=dict)
    workdir: str | None = None
    aliases: Mapping[str, str] = field(default_factory=dict)  # our signal name -> the external FMUs' name
    values: Mapping[str, Any] = field(default_factory=dict)  # --set: parameters and start values by name
    yes: bool = False  # run even when the output grid has more than MAX_ROWS rows
    runner: Callable | None = None  # runs the planned calls elsewhere, e.g. on Dask (validate --scheduler)
    platforms: Sequence[str] | None = None  # binaries of the built FMUs besides the host's (--platform)


# -- physics along a run ---------------------------------------------------------------------------
def conservative_reason(system: System) -> str:
    """Return "" when the Jacobi integral is a first integral, else why not."""
    t = S.t
    reasons = []
    forced = [k for k, f in system.forces.items() if sp.simplify(f) != 0]
    if forced:
        reasons.append(f"applied forces on {', '.join(forced)}")
    if system.dissipation != 0:
        reasons.append("a dissipation function")
    switched = [*(f.name for f in getattr(system, "friction", ())), *(d.name for d in getattr(system, "diodes", ()))]
    if switched:
        reasons.append(f"friction and diodes ({', '.join(switched)})")
    if any(t in e.free_symbols for e in (system.kinetic, system.potential, *system.holonomic, *system.nonholonomic)):
        reasons.append("explicit time dependence")
    else:
        _, a0 = system.constraint_matrix()
        if any(sp.simplify(e) != 0 for e in a0):
            reasons.append("non-homogeneous velocity constraints")
    return "; ".join(reasons)


class Physics:
    """Residuals and energy evaluated along any trajectory that has ``q`` and ``q'``."""

    def __init__(self, eom: EquationsOfMotion):
        system = eom.system
        self.system = system
        self.q_names = [c.name for c in system.coordinates]
        self.qd_names = [f"der({n})" for n in self.q_names]
        args = [S.t, *system.q, *system.qd, *[p.symbol for p in system.parameters], *[u.symbol for u in system.inputs]]
        self.fixed = [p.value for p in system.parameters] + [u.start for u in system.inputs]
        rows = list(system.holonomic) + list(eom.velocity_constraints)
        self._res = compile_exprs(args, rows) if rows else None
        T, V = system.kinetic, system.potential
        h = sum((v * sp.diff(T, v) for v in system.qd), sp.Integer(0)) - T + V
        self._energy = compile_exprs(args, [h, T])

    def _args(self, traj: Trajectory) -> np.ndarray | None:
        if not all(n in traj.signals for n in self.q_names + self.qd_names):
            return None
        cols = [traj.time] + [traj.signals[n] for n in self.q_names + self.qd_names]
        cols += [np.full_like(traj.time, v) for v in self.fixed]
        return np.column_stack(cols)

    def residuals(self, traj: Trajectory) -> np.ndarray | None:
        """Return the largest constraint residual ``max(|phi(q, t)|, |A q' + a0|)`` at every sample.

        Parameters
        ----------
        traj : Trajectory
            A run with the coordinates and their velocities.

        Returns
        -------
        numpy.ndarray or None
            One value per sample; None when the run lacks a coordinate or the system has no constraints.
        """
        args = self._args(traj)
        if args is None or self._res is None:
            return None
        return np.abs(np.asarray(self._res(args), dtype=float).reshape(len(traj.time), -1)).max(axis=1)

    def energy(self, traj: Trajectory) -> tuple[np.ndarray, float] | None:
        """Return the Jacobi integral along the run and its scale ``max(|h(0)|, max T)``."""
        args = self._args(traj)
        if args is None:
            return None
        vals = np.asarray(self._energy(args), dtype=float).reshape(len(traj.time), 2)
        h, T = vals[:, 0], vals[:, 1]
        return h, max(abs(float(h[0])), float(np.abs(T).max()), 1e-300)


# -- one system ------------------------------------------------------------------------------------
def _load(path: Path, result: SystemValidation,
          values: Mapping[str, Any] | None = None) -> tuple[System, dict] | None:
    from ..model.loader import load_system

    try:
        system = load_system(path, values or None)
    except BridgeError as exc:
        result.problems += [str(p) for p in exc.problems]
        return None
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:  # read fine a moment ago
        result.problems.append(f"{path}: cannot read the file again ({exc})")
        return None
    return system, raw


def compiler_problem(groups: Sequence[str]) -> str:
    """Return why the run groups that build FMUs with the C compiler (fmu, rumoca-fmu) cannot run, or ""."""
    from ..errors import CompilerNotFoundError
    from ..fmu.build import compiler

    if not {"fmu", "rumoca-fmu"} & set(groups):
        return ""
    try:
        compiler()
    except CompilerNotFoundError as exc:
        return str(exc)
    return ""


def _plan(system: System, eom: EquationsOfMotion, stop: float, step: float, options: Options, workdir: Path,
          reference_run: Trajectory | None, no_compiler: str = "") -> list[RunSpec]:
    """Return the runs for one system.

    ``no_compiler``: the FMUs built with the C compiler are skipped for this reason.
    """
    from ..backends.fmu import build_openmodelica_fmu, build_rumoca_fmu
    from ..derivation.methods import METHODS
    from ..fmu.platforms import with_host
    from ..tools.openmodelica import find_omc

    specs: list[RunSpec] = []
    names = signal_names(system)
    units = {c.name: c.unit for c in system.coordinates}
    units |= {f"der({c.name})": f"{c.unit}/s" for c in system.coordinates if c.unit}
    units |= dict(system.output_units)
    if reference_run is not None:
        specs.append(RunSpec("native-reference", "native", f"native lagrange, rtol {REFERENCE_RTOL:g}, "
                             "against the closed forms", lambda: reference_run, group="methods"))
    platforms = with_host(options.platforms)  # the host's binary is the one run here
    token = str(workdir)  # this system's validation: what its runs share (shared.remembered)

    def derive_method(name: str) -> EquationsOfMotion | str:
        if name == "lagrange":
            return eom
        try:
            return METHODS[name].derive(system, system.independent)
        except DerivationError as exc:  # e.g. not a Chaplygin system: the method does not apply
            return str(exc).replace("\n", " ")

    def method_eom(name: str) -> EquationsOfMotion:
        """Return the method's equations (derived once per process, shared by its native run and its FMUs)."""
        found = remembered(token, ("eom", name), lambda: derive_method(name))
        if isinstance(found, str):
            raise RunNotApplicable(found)
        return found

    def run_natively(name: str) -> Trajectory | Exception:
        try:
            return native_run(method_eom(name), stop, step)
        except (SplitLimitError, RunNotApplicable) as exc:
            return exc

    def method_native(name: str) -> Trajectory:
        """Return the method's native run (once per process: its FMU runs may need it too)."""
        found = remembered(token, ("native", name), lambda: run_natively(name))
        if isinstance(found, Exception):
            raise found
        return found

    if "methods" in options.groups:
        _method_specs(system, options, specs, method_native)
    _modelica_specs(eom, stop, step, options, specs)

    def split_stop(name: str, failure: RunFailure) -> Trajectory:
        """Judge a reduced method's FMU that stopped where its split turns singular; always raises.

        The method has no other usable split, no split is regular, or (a model with effort unknowns) the FMU keeps its
        build-time split. When the native run stops there too, the run does not apply, as the native one; when the
        native run re-partitions and goes on, the FMU failed.
        """
        if not any(text in failure.reason for text in SPLIT_STOPS):
            raise failure
        try:
            notes = [n for n in method_native(name).notes if n.startswith("re-partitioned")]
        except SplitLimitError as exc:
            raise RunNotApplicable(f"{' '.join(str(exc).split())} (the FMU stops there too)") from failure
        how = f"{notes[0]}{f' (and {len(notes) - 1} more times)' if len(notes) > 1 else ''}" if notes else \
            "it needs no re-partition"
        raise RunFailure(f"{failure.reason} (native {name} goes on: {how})") from failure

    fmu_specs = _FmuRuns(specs, system, workdir, stop, step, names, units, no_compiler, split_stop).add

    if "fmu" in options.groups:
        _native_fmu_specs(system, options, specs, fmu_specs, method_eom, platforms)
    if "openmodelica" in options.groups:
        omc = find_omc()
        if omc:
            fmu_specs("om-fmu", "OpenModelica FMU", lambda p, v: build_openmodelica_fmu(eom, p, v),
                      options.fmi_versions, False, "openmodelica")
        else:
            specs.append(RunSpec("om-fmu", "fmu-me", "OpenModelica FMU", skip_reason="omc not found on PATH or in "
                                 "OPENMODELICAHOME (install OpenModelica to include these runs)"))
    if "rumoca-fmu" in options.groups:
        fmu_specs("rumoca-fmu", "Rumoca FMU", lambda p, v: build_rumoca_fmu(eom, p, platforms=platforms), (2,), False,
                  "rumoca-fmu")
    else:
        specs.append(RunSpec("rumoca-fmu", "fmu-me", "Rumoca FMU", skip_reason=RUMOCA_FMU_OPT_IN))
    for ext in options.external:
        _external_specs(ext, stop, step, names, units, options, specs)
    return specs


@dataclass
class _FmuRuns:
    """What the FMU runs of one system's plan share; :meth:`add` appends the runs of one kind of FMU."""

    specs: list[RunSpec]
    system: System
    workdir: Path
    stop: float
    step: float
    names: list[str]
    units: dict[str, str]
    no_compiler: str
    split_stop: Callable[[str, RunFailure], Trajectory]

    def add(self, prefix: str, label: str, build: Callable[[Path], Path], versions, validate_fails: bool,
            group: str, suffix: str = "", method: str = "lagrange") -> None:
        """Append a Model Exchange and a Co-Simulation run per FMI version (skipped ones without a C compiler)."""
        specs, stop, step, names, units = self.specs, self.stop, self.step, self.names, self.units
        if self.no_compiler and group in ("fmu", "rumoca-fmu"):
            for version in versions:
                for short, ttype in (("me", "fmu-me"), ("cs", "fmu-cs")):
                    specs.append(RunSpec(f"{prefix}{version}-{short}{suffix}", ttype, f"{label} FMI {version}.0",
                                         skip_reason=self.no_compiler, group=group))
            return
        for version in versions:
            def path_for(version=version):  # built once for the ME and CS runs, in whichever process runs them
                return built_once(self.workdir / f"{prefix}{version}{suffix}_{self.system.name}.fmu",
                                  lambda path: build(path, version))

            def folder_for(path_for=path_for):  # unpacked once for the ME and CS runs, as it is built once
                fmu = path_for()
                return built_once(fmu.with_name(f"{fmu.name}.unpacked"), lambda folder: unpack_to(fmu, folder))

            for kind, short, ttype in (("ModelExchange", "me", "fmu-me"), ("CoSimulation", "cs", "fmu-cs")):
                def run(kind=kind, path_for=path_for, folder_for=folder_for):
                    try:
                        return fmu_run(path_for(), kind, stop, step, names, units, invalid_fails=validate_fails,
                                       unpacked=folder_for)
                    except RunFailure as exc:
                        if method == "lagrange" or exc.input:
                            raise
                        return self.split_stop(method, exc)

                how = "fmpy CVode rtol 1e-10" if kind == "ModelExchange" else f"communication step {step:g} s"
                specs.append(RunSpec(f"{prefix}{version}-{short}{suffix}", ttype,
                                     f"{label} FMI {version}.0 {kind}, {how}", guard(run), group=group,
                                     share=f"method {method}" if group == "fmu" else prefix))


def _method_specs(system: System, options: Options, specs: list[RunSpec],
                  method_native: Callable[[str], Trajectory]) -> None:
    """Append the native run of each method asked for (a skipped one where the method does not apply)."""
    from ..derivation.methods import METHODS
    from ..simulation.simulate import DEFAULT_RTOL

    for name, method in METHODS.items():
        if options.methods and name not in options.methods:
            continue
        label = f"native {name}, scipy DOP853 rtol {DEFAULT_RTOL:g}"
        why = method.applicable(system)
        if why:
            specs.append(RunSpec(f"native-{name}", "native", label, skip_reason=f"not applicable: {why}"))
            continue
        specs.append(RunSpec(f"native-{name}", "native", label, guard(lambda name=name: method_native(name)),
                             group="methods", share=f"method {name}"))


def _modelica_specs(eom: EquationsOfMotion, stop: float, step: float, options: Options,
                    specs: list[RunSpec]) -> None:
    """Append the runs of the exported Modelica model: by Rumoca, by pymoca (each if its group is asked for)."""
    if "modelica" in options.groups:
        specs.append(RunSpec("modelica-rumoca", "modelica", "exported .mo simulated by Rumoca",
                             guard(lambda: rumoca_modelica_run(eom, stop, step)), group="modelica"))
    if "pymoca" in options.groups:
        from importlib.util import find_spec

        from ..tools.pymoca import PYMOCA_MISSING

        missing = PYMOCA_MISSING if not (find_spec("pymoca") and find_spec("casadi")) else ""
        specs.append(RunSpec("modelica-pymoca", "modelica", "exported .mo compiled by pymoca, integrated by IDAS",
                             None if missing else guard(lambda: pymoca_modelica_run(eom, stop, step)),
                             skip_reason=missing, group="pymoca"))


def _native_fmu_specs(system: System, options: Options, specs: list[RunSpec], fmu_specs: Callable[..., None],
                      method_eom: Callable[[str], EquationsOfMotion], platforms) -> None:
    """Append the runs of nhbridge's FMUs, one set per method (a skipped one where the method does not apply)."""
    from ..derivation.methods import METHODS
    from ..fmu.build import build_fmu

    for name in fmu_methods(system, options):
        why = METHODS[name].applicable(system)
        suffix = "" if name == "lagrange" else f"-{name}"
        if why:
            specs.append(RunSpec(f"fmu{suffix}", "fmu-me", f"native FMU by {name}",
                                 skip_reason=f"not applicable: {why}", group="fmu"))
            continue
        fmu_specs("fmu", f"native FMU by {name},",
                  lambda p, v, name=name: build_fmu(method_eom(name), p, v, platforms=platforms),
                  options.fmi_versions, True, "fmu", suffix, name)


def _external_specs(ext: str, stop: float, step: float, names: list[str], units: dict[str, str], options: Options,
                    specs: list[RunSpec]) -> None:
    """Append the runs of the external FMU ``ext``: one per interface it declares, or an input error."""
    stem = Path(ext).stem

    def external(kind: str, ext=ext):
        return fmu_run(ext, kind, stop, step, names, units, validate=True, invalid_fails=False,
                       aliases=options.aliases)

    try:
        kinds = fmu_interfaces(describe_fmu(ext))
    except RunFailure as exc:
        specs.append(RunSpec(f"external-{stem}", "external", f"FMU {ext}", skip_reason=exc.reason,
                             input_error=True))
        return
    if not kinds:  # nothing to run is an error, not a silent skip
        specs.append(RunSpec(f"external-{stem}", "external", f"FMU {ext}", skip_reason=f"{ext}: the FMU declares "
                             "neither Model Exchange nor Co-Simulation, so it cannot be run; export it with one "
                             "of them", input_error=True))
    for kind in kinds:
        short = "me" if kind == "ModelExchange" else "cs"
        specs.append(RunSpec(f"external-{stem}-{short}", "external", f"FMU {ext} ({kind})",
                             guard(lambda kind=kind, fn=external: fn(kind)), group="external", share=f"external {ext}"))


def fmu_methods(system: System, options: Options) -> list[str]:
    """Return the methods whose FMUs a campaign builds.

    ``options.fmu_methods``, else those of ``options.methods``, else all; lagrange first (the run ids ``fmu2-me`` ...;
    another method's carry its name: ``fmu2-me-maggi``).
    """
    from ..derivation.methods import METHODS

    wanted = options.fmu_methods if options.fmu_methods is not None else options.methods
    return [name for name in METHODS if not wanted or name in wanted]


def _judge(run: RunResult, ref: Trajectory, physics: Physics, settings: Settings, conservative: bool,
           stop: float) -> None:
    traj = run.trajectory
    assert traj is not None
    failures = []
    missing = [n for n in ref.signals if n not in traj.signals]
    if missing:
        failures.append(f"no values for {', '.join(missing)}")
    for name, reference in ref.signals.items():
        if name in traj.signals:
            run.metrics.append(compare(name, ref.time, reference, traj.time, traj.signals[name], settings.tube,
                                       settings.time_tolerance * stop))
    for m in sorted(run.metrics, key=lambda m: -m.max_rel):
        if m.max_rel > run.tolerance:
            failures.append(f"{m.signal}: max error {m.max_rel:.3g} of its range (abs {m.max_abs:.3g}) at "
                            f"t = {m.worst_time:.4g} s exceeds {run.tolerance:g}")
            break
    outside = [m for m in run.metrics if not m.tube_ok]
    if outside:
        m = max(outside, key=lambda m: m.tube_violations)
        failures.append(f"{m.signal}: {m.tube_violations} sample(s) outside the tube "
                        f"(±{settings.tube:g} of the range, ±{settings.time_tolerance * stop:g} s)")
    res = physics.residuals(traj)
    if res is not None:
        run.residual_series = res
        run.residual = float(res.max())
        if not run.residual <= settings.residual:
            failures.append(f"constraint residual {run.residual:.3g} exceeds {settings.residual:g}")
    if conservative:
        energy = physics.energy(traj)
        if energy is not None:
            h, scale = energy
            run.energy_series = h
            run.energy_drift = float(np.abs(h - h[0]).max() / scale)
            if not run.energy_drift <= settings.energy:
                failures.append(f"energy drift {run.energy_drift:.3g} exceeds {settings.energy:g}")
    if failures:  # a deviation that a documented compiler defect explains says so (e.g. switching times, late)
        failures += [n for n in traj.notes if "docs/compiler-defects/" in n]
    run.status = FAILED if failures else PASSED
    run.reason = "; ".join(failures)


def work_problem(stop: float, step: float, yes: bool) -> str:
    """Return why the output grid ``stop / step`` is refused; empty when it is fine.

    A step below stop * 1e-12, or more than MAX_ROWS rows without ``yes``, is refused.
    """
    rows = stop / step
    if step < stop * MIN_STEP_RATIO:
        return (f"the step {step:g} s is below stop_time * {MIN_STEP_RATIO:g} ({stop * MIN_STEP_RATIO:g} s); the "
                f"grid would have {rows:.3g} points; choose a larger step (--step or [validation] step)")
    if rows > MAX_ROWS and not yes:
        return (f"stop_time / step = {stop:g} / {step:g} = {rows:.3g} output rows per run, more than the limit of "
                f"{MAX_ROWS:.0e}; choose a larger step or a shorter stop time, or pass --yes to run it anyway")
    return ""


def validate_system(path: str | Path, options: Options = Options(),
                    progress: Callable[[str, int, int, RunResult], None] | None = None) -> SystemValidation:
    """Validate one system file (never raises for bad input: it is recorded in the result)."""
    from ..derivation.methods import derive

    path = Path(path)
    result = SystemValidation(str(path))
    loaded = _load(path, result, options.values)
    if loaded is None:
        return result
    system, raw = loaded
    result.name = system.name
    problems = ProblemCollector(str(path))
    overrides = parse_overrides(raw.get("validation"), problems)
    closed: dict[str, ClosedForm] = parse_reference(raw.get("reference"), system, problems)
    unknown = [a for a in options.aliases if a not in signal_names(system)]
    if unknown:
        problems.add("--alias", f"{', '.join(unknown)} is not a signal of {system.name}",
                     "alias a coordinate, a velocity der(x) or an output: --alias OURS=THEIRS")
    result.problems += [str(p) for p in problems.problems]
    settings = Settings().merged(overrides).merged(options.overrides)
    result.settings = settings
    stop = float(settings.stop_time or system.stop_time)
    step = float(settings.step or min(DEFAULT_STEP, stop / 100))
    result.stop_time, result.step = stop, step
    work = work_problem(stop, step, options.yes)
    if work:
        result.problems.append(f"{path}: {work}")
        return result
    try:
        eom = derive(system, "lagrange")
        native = native_run(eom, stop, step, rtol=REFERENCE_RTOL, atol=REFERENCE_RTOL * 1e-2)
    except BridgeError as exc:
        result.problems.append(f"the reference simulation failed: {exc}".replace("\n", " "))
        return result
    signals = dict(native.signals)
    for name, form in closed.items():
        signals[name] = form(native.time)
        result.closed_forms[name] = form.text
    ref = Trajectory(native.time, signals, native.notes)
    result.reference = ref
    result.reference_label = (f"native lagrange, DOP853 rtol {REFERENCE_RTOL:g}"
                              + (f"; closed forms for {', '.join(closed)}" if closed else ""))
    result.energy_unchecked = conservative_reason(system)
    physics = Physics(eom)
    with tempfile.TemporaryDirectory(prefix="nhbridge-validate-", dir=options.workdir) as tmp:
        result.no_compiler = compiler_problem(options.groups)
        specs = _plan(system, eom, stop, step, options, Path(tmp), native if closed else None, result.no_compiler)
        try:
            remote = _run_remotely(options.runner, specs) if options.runner else {}
            for k, spec in enumerate(specs):
                run = RunResult(spec.id, spec.run_type, spec.label, SKIPPED,
                                tolerance=settings.tolerance(spec.run_type))
                if spec.execute is None:
                    run.reason = spec.skip_reason
                    if spec.input_error:
                        run.status, run.input_error = ERROR, True
                else:
                    t0 = time.perf_counter()
                    try:
                        run.trajectory = remote[k]() if k in remote else spec.execute()
                        run.notes = run.trajectory.notes
                        _judge(run, ref, physics, settings, not result.energy_unchecked, stop)
                    except RunFailure as exc:
                        run.status, run.reason, run.input_error = ERROR, exc.reason, exc.input
                    except RunNotApplicable as exc:
                        run.status, run.reason = SKIPPED, f"not applicable: {exc}"
                    except BaseException as exc:  # Ctrl-C or SIGTERM (maybe altered by compiled code): keep
                        if not interrupt_pending(exc):  # what is finished
                            raise
                        run.status, run.reason, run.trajectory = SKIPPED, "interrupted", None
                        result.interrupted = True
                    run.seconds = getattr(remote.get(k), "seconds", time.perf_counter() - t0)  # remote: its own time
                result.runs.append(run)
                if progress:
                    progress(system.name, k + 1, len(specs), run)
                if result.interrupted:
                    break
        except BaseException as exc:  # between runs (e.g. while a progress line is printed)
            if not interrupt_pending(exc):
                raise
            result.interrupted = True
    return result


def _run_remotely(runner: Callable, specs: list[RunSpec]) -> dict[int, Callable[[], Trajectory]]:
    """Hand the runs to ``runner``, those sharing work (``RunSpec.share``) together; return them by index."""
    calls = [(k, spec.share or k, spec.execute) for k, spec in enumerate(specs) if spec.execute is not None]
    if not calls:
        return {}
    return dict(zip([k for k, _, _ in calls], run_together(runner, [(key, fn) for _, key, fn in calls])))


def planned_runs(path: str | Path, options: Options = Options()) -> tuple[SystemValidation, list[RunSpec]]:
    """Return the runs :func:`validate_system` would carry out (nothing is simulated); problems are recorded."""
    from ..derivation.methods import derive

    path = Path(path)
    result = SystemValidation(str(path))
    loaded = _load(path, result, options.values)
    if loaded is None:
        return result, []
    system, raw = loaded
    result.name = system.name
    try:
        eom = derive(system, "lagrange")
    except BridgeError as exc:
        result.problems.append(str(exc).replace("\n", " "))
        return result, []
    closed = isinstance(raw.get("reference"), dict) and bool(raw["reference"])
    placeholder = Trajectory(np.zeros(0), {}) if closed else None
    result.no_compiler = compiler_problem(options.groups)
    return result, _plan(system, eom, system.stop_time, DEFAULT_STEP, options, Path("."), placeholder,
                         result.no_compiler)


def validate(paths: str | Path | Sequence[str | Path], options: Options = Options(),
             progress: Callable[[str, int, int, RunResult], None] | None = None) -> Campaign:
    """Validate one system file or several: every run nhbridge can make, compared with a reference.

    The reference is the native simulation (method ``lagrange``, DOP853 at rtol 1e-12) on a uniform grid, replaced
    signal by signal by the closed forms of the file's ``[reference]`` table. Each run (native methods, the Modelica
    model, FMUs; see ``options.groups``) passes when every compared signal stays within its tolerance and tube, the
    constraint residuals stay small and, for a conservative system, the Jacobi integral is conserved. FMUs in
    ``options.external`` go to the system of their model name.

    Parameters
    ----------
    paths : str, pathlib.Path or sequence of them
        System files.
    options : Options, optional
        Run groups (``methods``, ``modelica``, ``pymoca``, ``fmu``, ``openmodelica``, ``rumoca-fmu``), methods, FMI
        versions, external FMUs and setting overrides.
    progress : callable, optional
        ``progress(system name, index, total, run result)`` after every run.

    Returns
    -------
    Campaign
        Every system's runs with their metrics; ``exit_code`` is 0 when all passed, 1 when a run failed, 2 for bad
        input. Reports come from :mod:`bridge.validation.report`.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import bridge
    >>> from bridge.validation.campaign import Options
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
    ... [reference]
    ... x = "0.1*cos(2*t)"
    ... [simulation]
    ... stop_time = 1.0
    ... '''
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "oscillator.toml"
    ...     _ = path.write_text(text)
    ...     campaign = bridge.validate(path, Options(groups=("methods",), methods=("lagrange",)))
    >>> campaign.exit_code
    0
    >>> [(run.id, run.status) for run in campaign.systems[0].runs if run.run_type == "native"]
    [('native-reference', 'passed'), ('native-lagrange', 'passed')]
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    t0 = time.perf_counter()
    systems = []
    externals = _assign_external(paths, options.external)
    interrupted = False
    for path in paths:
        opts = replace(options, external=externals.get(str(path), ()))
        try:
            systems.append(validate_system(path, opts, progress))
        except BaseException as exc:  # before the runs of this system: keep the systems finished before
            if not interrupt_pending(exc):
                raise
            interrupted = True
        if interrupted or systems[-1].interrupted:
            interrupted = True
            break
    return Campaign(systems, time.perf_counter() - t0, interrupted=interrupted)


def _assign_external(paths: Sequence[str | Path], external: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Assign the external FMUs: with one system all go to it; with several, each to the system named like its model."""
    if not external:
        return {}
    if len(paths) == 1:
        return {str(paths[0]): tuple(external)}
    from ..model.loader import load_system

    by_name: dict[str, str] = {}
    for p in paths:
        try:
            by_name[load_system(p).name] = str(p)
        except BridgeError:
            continue
    out: dict[str, list[str]] = {}
    for fmu in external:
        try:
            model = describe_fmu(fmu).modelName
        except RunFailure:
            model = None
        target = by_name.get(model) if model else None
        if target is None:
            target = str(paths[0])  # reported there as not matching / not loadable
        out.setdefault(target, []).append(fmu)
    return {k: tuple(v) for k, v in out.items()}
