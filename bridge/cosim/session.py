"""From a scenario (TOML or SSP) to runs: build and unpack the FMUs once, check everything, run as often as needed."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..errors import BridgeError, ProblemCollector
from .checks import Plan, check_scenario
from .components import ModelInfo, build_component, read_model_info
from .errors import CosimError
from .master import Master
from .results import CosimResult
from .scenario import ALGORITHMS, Scenario, load_scenario
from .slaves import extract


class Cosimulation:
    """A checked scenario with its FMUs built and unpacked in ``folder``."""

    def __init__(self, plan: Plan, fmus: dict[str, Path], folder: Path):
        self.plan, self.fmus, self.folder = plan, fmus, folder
        self.unzipdirs = {name: extract(str(path), str(folder)) for name, path in fmus.items()}

    @property
    def scenario(self) -> Scenario:
        return self.plan.scenario

    def run(self, *, step: float | None = None, stop_time: float | None = None, algorithm: str | None = None,
            adaptive: bool | None = None, tolerance: float | None = None, progress: bool = False) -> CosimResult:
        """Run once; the keyword arguments override the scenario's master settings."""
        scenario = self.scenario.with_master(step=step, stop_time=stop_time, algorithm=algorithm,
                                             adaptive=adaptive, tolerance=tolerance)
        master = scenario.master
        if not master.stop_time > master.start_time:
            raise CosimError(f"the stop time {master.stop_time} must be after the start time {master.start_time}")
        if master.algorithm not in ALGORITHMS:
            raise CosimError(f"unknown algorithm {master.algorithm!r}; use one of {', '.join(ALGORITHMS)}")
        # changed settings are checked again (e.g. an adaptive step needs components that can undo a step)
        plan = self.plan if scenario is self.scenario else check_scenario(scenario, self.plan.infos)
        return Master(plan, self.unzipdirs, master, progress).run()


def build_fmus(scenario: Scenario, folder: Path) -> tuple[dict[str, Path], dict[str, ModelInfo]]:
    """Build (system files, Modelica) or locate every component's FMU and read its model description."""
    fmus: dict[str, Path] = {}
    infos: dict[str, ModelInfo] = {}
    cache: dict[tuple, Path] = {}
    pc = ProblemCollector(scenario.source)
    for spec in scenario.components:
        try:
            fmus[spec.name] = build_component(spec, folder, cache)
            infos[spec.name] = read_model_info(fmus[spec.name])
        except BridgeError as exc:
            for p in exc.problems:
                pc.add(f"components.{spec.name}", str(p), "")
    pc.raise_if_any(CosimError)
    return fmus, infos


@contextmanager
def prepare(source: str | Path | Scenario, folder: str | Path | None = None) -> Iterator[Cosimulation]:
    """Load a scenario (``.toml`` or ``.ssp``, or a :class:`Scenario`), build and check it; yield a Cosimulation.

    All problems are raised as :class:`CosimError` before anything runs. FMUs are built and unpacked in
    ``folder`` (default: a temporary folder removed afterwards).
    """
    own = folder is None
    work = Path(tempfile.mkdtemp(prefix="nhbridge-cosim-")) if own else Path(folder)
    work.mkdir(parents=True, exist_ok=True)
    try:
        scenario = open_scenario(source, work)
        fmus, infos = build_fmus(scenario, work)
        plan = check_scenario(scenario, infos)
        yield Cosimulation(plan, fmus, work)
    finally:
        if own:
            shutil.rmtree(work, ignore_errors=True)


def open_scenario(source: str | Path | Scenario, folder: Path) -> Scenario:
    """A scenario from a :class:`Scenario`, a TOML scenario file or an SSP package (unpacked into ``folder``)."""
    if isinstance(source, Scenario):
        return source
    path = Path(source)
    if path.suffix == ".ssp":
        from .ssp import read_ssp

        return read_ssp(path, folder)
    if path.suffix != ".toml":
        raise CosimError(f"{path}: a scenario is a .toml file or an .ssp package")
    return load_scenario(path)
