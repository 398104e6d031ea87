"""From a scenario (TOML or SSP) to runs: build and unpack the FMUs once, check everything, run as often as needed."""

from __future__ import annotations

import math
import shutil
import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from ..atomic import temp_folder
from ..errors import BridgeError, ProblemCollector
from .checks import Plan, check_names, check_scenario
from .components import ModelInfo, build_component, read_model_info, unpack
from .errors import CosimError, CosimInterrupted, CosimRunError
from .master import Master
from .results import CosimResult, Progress
from .scenario import ALGORITHMS, MasterSettings, Scenario, load_scenario

MAX_STEPS = 10**7            # communication steps accepted without yes=True (--yes)
MAX_VALUES = 2 * 10**8       # recorded values (rows x signals; 1.5 GiB) accepted without yes=True
MIN_STEP_RATIO = 1e-12       # a step below stop_time * MIN_STEP_RATIO is refused
CALL_TIMEOUT = 120.0         # seconds one FMU call may take before the run is stopped


class Cosimulation:
    """A checked scenario with its FMUs built and unpacked in ``folder``."""

    def __init__(self, plan: Plan, fmus: dict[str, Path], folder: Path, unzipdirs: dict[str, Path] | None = None):
        self.plan, self.fmus, self.folder = plan, fmus, folder
        if unzipdirs is None:
            unzipdirs = {name: unpack(path, folder) for name, path in fmus.items()}
        self.unzipdirs = {name: str(p) for name, p in unzipdirs.items()}

    @property
    def scenario(self) -> Scenario:
        """The checked scenario of the plan."""
        return self.plan.scenario

    def run(self, *, step: float | None = None, stop_time: float | None = None, algorithm: str | None = None,
            adaptive: bool | None = None, tolerance: float | None = None, progress: bool = False,
            yes: bool = False, timeout: float = CALL_TIMEOUT, isolate: bool = True) -> CosimResult:
        """Run once; the keyword arguments override the scenario's master settings.

        The work is estimated first (:func:`work_problem`; ``yes`` lifts the limit on the number of steps). With
        ``isolate`` the FMUs run in a child process (:mod:`bridge.tools.sandbox`): a component that crashes it or
        does not return from a call within ``timeout`` seconds is named in a :class:`CosimRunError`. Ctrl-C
        raises :class:`CosimInterrupted` with the steps finished so far.
        """
        scenario = self.scenario.with_master(step=step, stop_time=stop_time, algorithm=algorithm,
                                             adaptive=adaptive, tolerance=tolerance)
        master = scenario.master
        if not master.stop_time > master.start_time:
            raise CosimError(f"the stop time {master.stop_time} must be after the start time {master.start_time}")
        if master.algorithm not in ALGORITHMS:
            raise CosimError(f"unknown algorithm {master.algorithm!r}; use one of {', '.join(ALGORITHMS)}")
        # changed settings are checked again (e.g. an adaptive step needs components that can undo a step)
        plan = self.plan if scenario is self.scenario else check_scenario(scenario, self.plan.infos)
        problem = work_problem(master, len(plan.record), yes)
        if problem:
            raise CosimError(f"{scenario.source}: {problem}")
        if not isolate:
            return Master(plan, self.unzipdirs, master, progress).run()
        from ..tools.sandbox import Beacon, ChildFailure, ChildInterrupted, isolated

        beacon = Beacon()
        shown = Progress(progress, master.start_time, master.stop_time)

        def tick() -> None:
            if beacon.progress()[1]:
                shown.update(*beacon.progress())

        try:
            message = isolated(_run_child, plan, self.unzipdirs, master, beacon, timeout=timeout, beacon=beacon,
                               tick=tick if progress else None)
        except ChildFailure as exc:
            raise CosimRunError(_blame(plan, exc, beacon, timeout)) from None
        except ChildInterrupted as exc:
            if exc.message[0] == "ok":
                raise CosimInterrupted(exc.message[1]) from exc.interrupt
            raise exc.interrupt from None
        if message[0] != "ok":
            raise (CosimRunError if message[1] else CosimError)(message[2])
        result = message[1]
        shown.finish(float(result.time[-1]), len(result.time) - 1)
        return result


def work_problem(master: MasterSettings, signals: int, yes: bool) -> str:
    """Return why the run is refused before it starts, or "".

    A step below ``MIN_STEP_RATIO`` times the stop time, or (unless ``yes``) more than ``MAX_STEPS`` communication steps
    (fixed: (stop - start) / step; adaptive: (stop - start) / min_step) or, with a fixed step, more than ``MAX_VALUES``
    recorded values.
    """
    span = master.stop_time - master.start_time
    floor = MIN_STEP_RATIO * max(abs(master.stop_time), span)
    for name, value in (("step", master.step), ("min_step", master.min_step)):
        if value is not None and value < floor:
            return (f"master.{name} = {value:g} s is below stop_time * {MIN_STEP_RATIO:g} ({floor:g} s), too small "
                    "to advance the time; choose a larger step")
    steps = span / (master.min_step or span * 1e-7) if master.adaptive else math.ceil(span / master.step - 1e-9)
    values = (steps + 1) * (signals + 1)
    if yes:
        return ""
    if steps > MAX_STEPS:
        what = "(stop_time - start_time) / min_step" if master.adaptive else "(stop_time - start_time) / step"
        return (f"the run would take up to {what} = {steps:.3g} communication steps, more than the limit of "
                f"{MAX_STEPS:.0e}; choose a larger step or a shorter stop time, or pass --yes (yes=True) to run it "
                "anyway")
    if values > MAX_VALUES and not master.adaptive:  # adaptive: the worst case above is no estimate of the rows
        return (f"the run would record {values:.3g} values ({steps:.3g} steps x {signals} signals, "
                f"{values * 8 / 2**30:.1f} GiB), more than the limit of {MAX_VALUES:.0e}; record fewer signals or "
                "use a larger step, or pass --yes (yes=True) to run it anyway")
    return ""


def _run_child(conn, plan: Plan, unzipdirs: dict[str, str], master: MasterSettings, beacon) -> None:
    """Run the master in the child process; Ctrl-C (SIGINT) ends it after the current step with what is done."""
    stop = [False]

    def request_stop(signum, frame) -> None:
        stop[0] = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    try:
        conn.send(("ok", Master(plan, unzipdirs, master, beacon, beacon, lambda: stop[0]).run()))
    except BridgeError as exc:
        conn.send(("error", isinstance(exc, CosimRunError), str(exc)))
    except BaseException as exc:  # report everything to the parent
        conn.send(("error", True, f"the co-simulation failed: {type(exc).__name__}: {exc}"))
    finally:
        conn.close()


def _blame(plan: Plan, failure, beacon, timeout: float) -> str:
    """Return the message for a crashed or hung child: the component and the call it was in."""
    from .slaves import CALLS

    if beacon.calls == 0:
        return f"the co-simulation process stopped ({failure.reason}) before it called any FMU"
    who, what, t = beacon.last()
    spec = plan.scenario.components[who]
    name = f"component {spec.name} ({spec.source.name})"
    if failure.kind == "timeout":
        return (f"{name}: {CALLS[what]} at t = {t:.10g} s did not return within {timeout:g} s; the run was stopped "
                "(the FMU hangs, or needs a longer --timeout)")
    return (f"{name} crashed in {CALLS[what]} at t = {t:.10g} s ({failure.signal}); it ran in a separate process, "
            "so the run stopped with this message; fix or replace the FMU")


def build_fmus(scenario: Scenario, folder: Path, platforms: Sequence[str] | None = None
               ) -> tuple[dict[str, Path], dict[str, ModelInfo], dict[str, Path]]:
    """Build or locate every component's FMU, unpack it safely and read its model description.

    System files and Modelica models are built with the binaries of ``platforms`` (default the host's); each file is
    unpacked once. Returns the FMUs, their descriptions and unpack folders by component.
    """
    fmus: dict[str, Path] = {}
    infos: dict[str, ModelInfo] = {}
    unzipdirs: dict[str, Path] = {}
    cache: dict[tuple, Path] = {}
    unpacked: dict[Path, tuple[Path, ModelInfo]] = {}
    pc = ProblemCollector(scenario.source)
    to_build = [spec.name for spec in scenario.components if spec.kind != "fmu"]
    if to_build:  # no C compiler: one line for the scenario, not one per component
        from ..errors import CompilerNotFoundError
        from ..fmu.build import toolchains

        try:
            toolchains(platforms)
        except CompilerNotFoundError as exc:
            raise CompilerNotFoundError(f"{scenario.source}: components {', '.join(to_build)}: {exc}") from exc
    for spec in scenario.components:
        try:
            fmu = fmus[spec.name] = build_component(spec, folder, cache, platforms)
            key = Path(fmu).resolve()
            if key not in unpacked:
                unzipdir = unpack(fmu, folder)
                unpacked[key] = (unzipdir, read_model_info(fmu, unzipdir))
            unzipdirs[spec.name], infos[spec.name] = unpacked[key]
        except BridgeError as exc:
            for p in exc.problems:
                pc.add(f"components.{spec.name}", str(p), "")
    pc.raise_if_any(CosimError)
    return fmus, infos, unzipdirs


@contextmanager
def prepare(source: str | Path | Scenario, folder: str | Path | None = None,
            platforms: Sequence[str] | None = None) -> Iterator[Cosimulation]:
    """Load a scenario (``.toml`` or ``.ssp``, or a :class:`Scenario`), build and check it; yield a Cosimulation.

    All problems are raised as :class:`CosimError` before anything runs. FMUs are built (with the binaries of
    ``platforms``, default the host's) and unpacked in ``folder`` (default: a temporary folder removed
    afterwards).
    """
    own = folder is None
    work = temp_folder("cosim") if own else Path(folder)
    work.mkdir(parents=True, exist_ok=True)
    try:
        scenario = open_scenario(source, work)
        check_names(scenario)  # before anything is built
        fmus, infos, unzipdirs = build_fmus(scenario, work, platforms)
        plan = check_scenario(scenario, infos)
        yield Cosimulation(plan, fmus, work, unzipdirs)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def open_scenario(source: str | Path | Scenario, folder: Path) -> Scenario:
    """Return a scenario from a :class:`Scenario`, a TOML scenario file or an SSP package (unpacked into ``folder``)."""
    if isinstance(source, Scenario):
        return source
    path = Path(source)
    if path.suffix == ".ssp":
        from .ssp import read_ssp

        return read_ssp(path, folder)
    if path.suffix != ".toml":
        raise CosimError(f"{path}: a scenario is a .toml file or an .ssp package")
    return load_scenario(path)
