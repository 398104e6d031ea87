"""``nhbridge cosim`` and ``nhbridge ssp``: the co-simulation commands (registered in :mod:`bridge.cli`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..commandline import Command, Progress, add_progress_options, positive


def add_cosim_parser(subparsers) -> None:
    """Add ``nhbridge cosim`` to the CLI's subparsers."""
    cs = subparsers.add_parser("cosim", help="co-simulate FMUs: a scenario file (.toml) or an SSP package (.ssp)",
                               description="Run a co-simulation and write the recorded signals as CSV. Everything "
                               "is checked before the run; nothing is written when a check fails.")
    cs.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml) or SSP package (.ssp)")
    cs.add_argument("-o", "--output", default=None, help="CSV file (default: <scenario name>.csv)")
    cs.add_argument("--plot", default=None, metavar="FILE", help="also plot the recorded signals (.png, .pdf, .svg; "
                    "needs matplotlib)")
    cs.add_argument("--step", type=positive, default=None, help="communication step in s (default: master.step); "
                    "with --adaptive the initial step")
    cs.add_argument("--stop-time", type=positive, default=None, help="default: master.stop_time")
    cs.add_argument("--algorithm", choices=["jacobi", "gauss-seidel"], default=None,
                    help="ordering of the component steps (default: master.algorithm)")
    cs.add_argument("--adaptive", action="store_true", default=None,
                    help="control the communication step by step doubling (needs components that can undo a step)")
    cs.add_argument("--tolerance", type=positive, default=None,
                    help="adaptive: error per unit time on each coupling signal, relative to 1 + |y| "
                         "(default: master.tolerance, 1e-4)")
    add_progress_options(cs)
    cs.add_argument("--yes", action="store_true", help="run even when the run takes more than 10^7 communication "
                    "steps or records more than 2*10^8 values")
    cs.add_argument("--call-timeout", type=positive, default=None, metavar="SECONDS",
                    help="seconds one FMU call may take before the run is "
                    "stopped and the component named (default 120)")


def add_ssp_parser(subparsers) -> None:
    """Add ``nhbridge ssp`` to the CLI's subparsers."""
    sp = subparsers.add_parser("ssp", help="export a scenario as an SSP 1.0 package (FMUs included)",
                               description="Build the scenario's FMUs, check the scenario and write an SSP package "
                               "for OMSimulator, fmpy and other SSP tools.")
    sp.add_argument("scenario", metavar="SCENARIO", help="scenario file (.toml) or SSP package (.ssp)")
    sp.add_argument("-o", "--output", default=None, help="the .ssp file (default: <scenario name>.ssp)")
    from ..fmu.platforms import add_platform_option

    add_platform_option(sp, "each FMU built from a system file or a Modelica model")
    add_progress_options(sp)


def run_cosim(args: argparse.Namespace) -> int:
    """Check and run the co-simulation, write the CSV (and plot); an interruption keeps the finished steps."""
    from ..errors import BridgeError
    from .errors import CosimInterrupted
    from .results import pyplot
    from .session import CALL_TIMEOUT, prepare

    if args.plot:
        pyplot()  # fail before the run when matplotlib is missing
    for path in (args.output, args.plot):
        if path and Path(path).is_dir():
            raise BridgeError(f"{path}: is a folder; give a file name")
    with prepare(args.scenario) as cosim:
        scenario = cosim.scenario
        progress = args.progress or (not args.quiet and sys.stderr.isatty())
        out = args.output or f"{scenario.name}.csv"
        try:
            result = cosim.run(step=args.step, stop_time=args.stop_time, algorithm=args.algorithm,
                               adaptive=args.adaptive, tolerance=args.tolerance, progress=progress, yes=args.yes,
                               timeout=args.call_timeout or CALL_TIMEOUT)
        except CosimInterrupted as stop:
            _write_partial(stop.result, out)
            raise
    result.write_csv(out)
    st = result.stats
    mode = "adaptive step" if st["adaptive"] else f"step {st['step']:g} s"
    print(f"{scenario.name}: {len(scenario.components)} components, {st['algorithm']}, {mode}; "
          f"{st['steps']} communication steps to t = {result.time[-1]:g} s in {st['seconds']:.3f} s "
          f"({st['steps_per_second']:,.0f} steps/s)")
    if st["adaptive"]:
        print(f"  {st['rejected']} rejected steps; steps between {st['smallest_step']:.3g} and "
              f"{st['largest_step']:.3g} s")
    print(f"  wrote {out} ({len(result.time)} rows, {len(result.names)} signals)")
    if args.plot:
        result.plot(args.plot, title=scenario.name)
        print(f"  wrote {args.plot}")
    return 0


def _write_partial(result, out: str) -> None:
    """Write the steps finished before an interruption as ``<out stem>.partial.csv`` (the output is left alone)."""
    if not result.stats.get("interrupted"):
        result.write_csv(out)
        print(f"nhbridge: interrupted after the run was complete; wrote {out}", file=sys.stderr)
        return
    path = Path(out)
    partial = path.with_name(f"{path.stem}.partial{path.suffix or '.csv'}")
    result.write_csv(partial)
    print(f"nhbridge: co-simulation interrupted at t = {result.time[-1]:.6g} s ({len(result.time) - 1} communication "
          f"steps); wrote the finished steps to {partial} (partial; {out} was not written)", file=sys.stderr)


def run_ssp(args: argparse.Namespace) -> int:
    """Build the scenario's FMUs and write the SSP package, with a progress line around it."""
    with Progress(args).step(f"building the FMUs of {args.scenario} and the SSP package", inline=False):
        return _write_package(args)


def _write_package(args: argparse.Namespace) -> int:
    from .errors import CosimError
    from .session import prepare
    from .ssp import write_ssp

    if args.output is not None and Path(args.output).suffix != ".ssp":
        raise CosimError(f"{args.output}: an SSP package must end in .ssp")
    with prepare(args.scenario, platforms=getattr(args, "platform", None)) as cosim:
        path = write_ssp(cosim.plan, cosim.fmus, args.output or f"{cosim.scenario.name}.ssp")
        names = ", ".join(f"{c.name} ({c.kind})" for c in cosim.scenario.components)
    print(f"wrote {path}: SSP 1.0 package of {cosim.scenario.name} with {names}; "
          f"{len(cosim.scenario.connections)} connections")
    return 0


COMMANDS = (Command("cosim", add_cosim_parser, run_cosim), Command("ssp", add_ssp_parser, run_ssp))
