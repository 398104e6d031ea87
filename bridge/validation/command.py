"""``nhbridge validate`` and ``nhbridge crosscheck``.

The command-line face of validation campaigns and of the FMI Cross-Check folders (:mod:`.crosscheck`).

A command module ranks with :mod:`bridge.cli`: ``validate --scheduler`` runs its runs on Dask (:mod:`bridge.sweeps`).
"""

from __future__ import annotations

import argparse
import os
import sys

from ..commandline import Command, Progress, add_progress_options, add_set_option, positive
from ..errors import BridgeError
from .campaign import DEFAULT_GROUPS, GROUPS, Options, RunResult, parse_groups, validate
from .settings import RUN_TYPES, SCALARS


def _tolerance(text: str) -> tuple[str, float]:
    kind, _, value = text.partition("=")
    if kind not in RUN_TYPES:
        raise argparse.ArgumentTypeError(f"unknown run type {kind!r} in {text!r}; run types: {', '.join(RUN_TYPES)}")
    try:
        number = float(value)
    except ValueError:
        number = -1.0
    if not number > 0:
        raise argparse.ArgumentTypeError(f"expected TYPE=POSITIVE_NUMBER, e.g. fmu-cs=1e-5, got {text!r}")
    return kind, number


def _alias(text: str) -> tuple[str, str]:
    ours, sep, theirs = text.partition("=")
    if not sep or not ours.strip() or not theirs.strip():
        raise argparse.ArgumentTypeError(f"expected OURS=THEIRS, e.g. der(x)=vx, got {text!r}")
    return ours.strip(), theirs.strip()


def _groups(text: str) -> tuple[str, ...]:
    try:
        return parse_groups(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _versions(text: str) -> tuple[int, ...]:
    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if not items or any(x not in ("2", "3") for x in items):
        raise argparse.ArgumentTypeError(f"FMI versions are 2 and/or 3 (e.g. 2,3), got {text!r}")
    return tuple(int(x) for x in items)


def _fmu_methods(text: str) -> tuple[str, ...]:
    from ..derivation.methods import METHODS

    items = tuple(x.strip() for x in text.split(",") if x.strip())
    if items == ("all",):
        return tuple(METHODS)
    unknown = [x for x in items if x not in METHODS]
    if unknown or not items:
        raise argparse.ArgumentTypeError(f"unknown method(s) {', '.join(unknown) or '(none)'} in {text!r}; "
                                         f"choose from {', '.join(METHODS)} or all")
    return items


def add_validate_parser(subparsers) -> None:
    """Add ``nhbridge validate`` to the CLI's subparsers."""
    from ..derivation.methods import METHODS

    va = subparsers.add_parser(
        "validate", help="validate every method, backend and FMU against the reference",
        description="Simulate each system every way nhbridge can (and any --fmu given), compare every signal with "
        "the reference (tight native simulation, or the [reference] closed forms) and report. Exit code 0: all "
        "passed; 1: a run failed; 2: bad input, or no C compiler for the FMU runs (the other runs are still made "
        "and reported).")
    va.add_argument("files", nargs="+", metavar="FILE", help="system files")
    va.add_argument("--fmu", action="append", default=[], metavar="FMU",
                    help="an FMU made by another tool, compared by variable name (repeatable; with several "
                         "systems each FMU goes to the system named like its model)")
    va.add_argument("--alias", action="append", default=[], type=_alias, metavar="OURS=THEIRS",
                    help="the --fmu FMUs' name for one of our signals, e.g. der(x)=vx (repeatable)")
    va.add_argument("--report", metavar="HTML", help="write a self-contained HTML report with plots")
    va.add_argument("--json", metavar="JSON", help="write every metric as JSON")
    va.add_argument("--csv", metavar="CSV", help="write one row per system, run and signal")
    va.add_argument("--runs", type=_groups, default=DEFAULT_GROUPS, metavar="GROUPS",
                    help=f"run groups: {', '.join(GROUPS)}, or all (default: {','.join(DEFAULT_GROUPS)})")
    va.add_argument("--methods", type=lambda s: tuple(x for x in s.split(",") if x), default=None,
                    metavar="M1,M2", help=f"derivation methods to run natively (default all: {', '.join(METHODS)})")
    va.add_argument("--fmu-methods", type=_fmu_methods, default=None, metavar="all|M1,M2",
                    help="methods whose native FMUs are built and run (run ids fmu2-me, fmu2-me-maggi, ...; default: "
                         "those of --methods, i.e. every applicable method)")
    va.add_argument("--fmi-version", type=_versions, default=(2, 3), metavar="2,3",
                    help="FMI versions of the FMUs: 2, 3 or 2,3 (default: 2,3)")
    va.add_argument("--stop-time", type=positive, default=None, help="default: [simulation] stop_time")
    va.add_argument("--step", type=positive, default=None, help="output and communication step (default 0.01 s)")
    va.add_argument("--max-error", dest="tolerance", type=_tolerance, action="append", default=[],
                    metavar="TYPE=TOL",
                    help="bound on max error / range per run type ("
                         + ", ".join(f"{k} {v:g}" for k, v in RUN_TYPES.items()) + ")")
    for key in ("tube", "time_tolerance", "energy", "residual"):
        va.add_argument(f"--{key.replace('_', '-')}", type=positive, default=None, help=SCALARS[key])
    va.add_argument("--yes", action="store_true", help="run even when a run has more than 10^7 output rows")
    va.add_argument("--no-plots", action="store_true", help="HTML report without plots (faster)")
    va.add_argument("--scheduler", default=None, metavar="ADDRESS",
                    help="run the runs on Dask: 'local' (worker processes on this machine) or a scheduler address "
                         "such as tcp://host:8786 (default: one after the other in this process)")
    va.add_argument("--workers", type=int, default=None, metavar="N",
                    help="worker processes of --scheduler local (implied by --workers; default: the number of cores)")
    from ..fmu.platforms import add_platform_option

    add_platform_option(va, "each native and Rumoca FMU (the host's always: it is the one run)")
    add_set_option(va)
    add_progress_options(va)


def run_validate(args: argparse.Namespace) -> int:
    """Run the campaign, one system after the other in this process or, with --scheduler/--workers, on Dask."""
    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise BridgeError(f"--workers: expected a positive number of worker processes, got {args.workers}")
    if not getattr(args, "scheduler", None) and getattr(args, "workers", None) is None:
        return _campaign(args)
    from ..sweeps.engine import DaskRunner

    with DaskRunner(args.scheduler or "local", args.workers) as runner:  # each system's runs go to the workers
        args.runner = runner
        return _campaign(args)


def _campaign(args: argparse.Namespace) -> int:
    """Run the campaign on ``args`` (with ``args.runner``, if set, running the runs); write its reports.

    Returns the exit code.
    """
    from ..derivation.methods import METHODS
    from .report import terminal, write_reports

    if getattr(args, "platform", None):  # a missing cross compiler: bad input, before anything runs
        from ..fmu.build import toolchains

        toolchains(args.platform)
    if args.methods:
        unknown = [m for m in args.methods if m not in METHODS]
        if unknown:
            raise BridgeError(f"unknown method(s) {', '.join(unknown)}; available: {', '.join(METHODS)}")
    overrides: dict = {}
    if args.tolerance:
        overrides["tolerances"] = dict(args.tolerance)
    for key in ("tube", "time_tolerance", "energy", "residual", "step", "stop_time"):
        if getattr(args, key) is not None:
            overrides[key] = getattr(args, key)
    options = Options(groups=args.runs, methods=args.methods, fmu_methods=args.fmu_methods,
                      fmi_versions=args.fmi_version,
                      external=tuple(args.fmu), overrides=overrides, aliases=dict(args.alias),
                      values=dict(getattr(args, "values", None) or ()),
                      yes=args.yes, runner=getattr(args, "runner", None),
                      platforms=getattr(args, "platform", None))

    def progress(system: str, k: int, n: int, run: RunResult) -> None:
        if args.progress or (not args.quiet and sys.stderr.isatty()):  # --progress/--quiet: see bridge.commandline
            print(f"[{k}/{n}] {system}: {run.id} {run.status} ({run.seconds:.2f} s)", file=sys.stderr, flush=True)

    campaign = validate(args.files, options, progress)
    written = write_reports(campaign, args.report, args.json, args.csv, plots=not args.no_plots)
    print(terminal(campaign))
    for path in written:
        print(f"wrote {path}")
    if campaign.no_compiler:  # one line; the runs that need no compiler are reported above
        print(f"nhbridge: error: {campaign.no_compiler.rstrip('.')}; the FMU runs were skipped", file=sys.stderr)
    if campaign.interrupted:
        print("nhbridge: interrupted; the results above and the reports hold the finished runs only (partial)",
              file=sys.stderr)
        return 130
    return campaign.exit_code


def add_crosscheck_parser(subparsers) -> None:
    """Add ``nhbridge crosscheck`` to the CLI's subparsers."""
    from .crosscheck import add_parser

    add_progress_options(add_parser(subparsers))


def run_crosscheck(args: argparse.Namespace) -> int:
    """Export a system file's cross-check folders, or check a model folder, with a progress line around it."""
    from .crosscheck import cmd_crosscheck

    what = "checking" if args.check or os.path.isdir(args.path) else "exporting (derivation, FMU, reference run)"
    with Progress(args).step(f"{what} {args.path}", inline=False):
        return cmd_crosscheck(args)


COMMANDS = (Command("validate", add_validate_parser, run_validate),
            Command("crosscheck", add_crosscheck_parser, run_crosscheck))
