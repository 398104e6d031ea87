"""pytest plugin: ``pytest --nhbridge-validate=folder/`` turns system files into validation tests.

Every ``*.toml`` system file below the folder (co-simulation scenarios excepted) becomes a test
file with one item per planned run (``native-maggi``, ``fmu2-cs``, ...); an item fails with the
failing metric as its message, and is skipped (with the reason) where the run does not apply. The
runs of one system are carried out together the first time one of its items runs. Registered
through the ``pytest11`` entry point.

Options: ``--nhbridge-runs`` (run groups, as ``nhbridge validate --runs``), ``--nhbridge-stop-time``.
Without other test paths on the command line only the validation items are collected.
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add the ``--nhbridge-validate``, ``--nhbridge-runs`` and ``--nhbridge-stop-time`` options (pytest hook).

    Parameters
    ----------
    parser : pytest.Parser
        Pytest's option parser.
    """
    group = parser.getgroup("nhbridge", "nhbridge validation of system files")
    group.addoption("--nhbridge-validate", action="append", default=[], metavar="FOLDER",
                    help="validate every *.toml system file under FOLDER (one test per system and run type)")
    group.addoption("--nhbridge-runs", default=None, metavar="GROUPS",
                    help="run groups: methods, modelica, fmu, openmodelica, rumoca-fmu or all (default: all but "
                         "rumoca-fmu)")
    group.addoption("--nhbridge-stop-time", type=float, default=None, metavar="SECONDS",
                    help="stop time for every system (default: each file's [validation] or [simulation] value)")


def _folders(config: pytest.Config) -> list[Path]:
    return [Path(f).resolve() for f in config.getoption("nhbridge_validate", default=[]) or []]


def pytest_configure(config: pytest.Config) -> None:
    """Collect the folders given to ``--nhbridge-validate`` (pytest hook).

    Parameters
    ----------
    config : pytest.Config
        Pytest's configuration.

    Raises
    ------
    pytest.UsageError
        When a folder does not exist.
    """
    folders = _folders(config)
    if not folders:
        return
    missing = [str(f) for f in folders if not f.is_dir()]
    if missing:
        raise pytest.UsageError(f"--nhbridge-validate: no such folder: {', '.join(missing)}")
    explicit = config.args_source == pytest.Config.ArgsSource.ARGS
    config.args[:] = ([*config.args] if explicit else []) + [str(f) for f in folders]


def pytest_collect_file(file_path: Path, parent: pytest.Collector):
    """Collect a system file under a validated folder as a :class:`SystemFile` (pytest hook).

    Parameters
    ----------
    file_path : pathlib.Path
        The file pytest found.
    parent : pytest.Collector
        Its collector.

    Returns
    -------
    SystemFile or None
        The collector of a system file (scenario files are left out), else None.
    """
    if file_path.suffix != ".toml":
        return None
    folders = _folders(parent.config)
    if any(file_path.resolve().is_relative_to(f) for f in folders) and not _is_scenario(file_path):
        return SystemFile.from_parent(parent, path=file_path)
    return None


def _is_scenario(path: Path) -> bool:
    """Return whether a file is a co-simulation scenario (a [components] table): those are not validated."""
    import tomllib

    try:
        return "components" in tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False  # a broken file is collected, and its system-file item reports the problem


class ValidationFailure(Exception):
    """A run failed; the message is the failing metric."""


def _options(config: pytest.Config):
    from .validation.campaign import DEFAULT_GROUPS, Options, parse_groups

    groups = DEFAULT_GROUPS
    text = config.getoption("nhbridge_runs")
    if text:
        try:
            groups = parse_groups(text)
        except ValueError as exc:
            raise pytest.UsageError(f"--nhbridge-runs: {exc}") from None
    stop = config.getoption("nhbridge_stop_time")
    return Options(groups=groups, overrides={"stop_time": stop} if stop else {})


class SystemFile(pytest.File):
    """A system file; its items share one validation of the system."""

    def collect(self):
        """Yield one item per planned run, or one item reporting the system file's problems."""
        from .validation.campaign import planned_runs

        self._options = _options(self.config)
        self._result = None
        planned, specs = planned_runs(self.path, self._options)
        if planned.problems or not specs:
            yield SystemInputItem.from_parent(self, name="system-file")
            return
        for spec in specs:
            yield RunItem.from_parent(self, name=spec.id)

    def validation(self):
        """Return the system's validation, carried out once for all its items.

        Returns
        -------
        SystemValidation
            The result of :func:`bridge.validation.campaign.validate_system`.
        """
        if self._result is None:
            from .validation.campaign import validate_system

            self._result = validate_system(self.path, self._options)
        return self._result


class SystemInputItem(pytest.Item):
    """Fails when the system file (or its [reference] / [validation] tables) has problems."""

    def runtest(self) -> None:
        """Fail with the system file's problems, if any."""
        result = self.parent.validation()
        if result.problems:
            raise ValidationFailure("\n".join(result.problems))

    def repr_failure(self, excinfo):
        """Return the failure report: the problems as written, without a traceback."""
        if isinstance(excinfo.value, ValidationFailure):
            return f"{self.path.name}: bad input\n{excinfo.value}"
        return super().repr_failure(excinfo)

    def reportinfo(self):
        """Return the item's location for pytest's report: the file and ``name::system-file``."""
        return self.path, None, f"{self.path.name}::system-file"


class RunItem(pytest.Item):
    """One run of a system: passes, fails with the failing metric, or is skipped with the reason."""

    def runtest(self) -> None:
        """Pass, fail with the failing metric, or skip with the reason, as the run ended."""
        from .validation.campaign import ERROR, FAILED, SKIPPED

        result = self.parent.validation()
        if result.problems:
            raise ValidationFailure("bad input: " + "; ".join(result.problems))
        run = next((r for r in result.runs if r.id == self.name), None)
        if run is None:
            raise ValidationFailure(f"the run {self.name} was planned but not carried out")
        if run.status == SKIPPED:
            pytest.skip(run.reason)
        if run.status in (FAILED, ERROR):
            raise ValidationFailure(f"{result.name} {run.id} ({run.label}): {run.reason}")

    def repr_failure(self, excinfo):
        """Return the failure report: the failing metric, without a traceback."""
        if isinstance(excinfo.value, ValidationFailure):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self):
        """Return the item's location for pytest's report: the file and ``name::run``."""
        return self.path, None, f"{self.path.name}::{self.name}"
