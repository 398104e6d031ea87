"""``nhbridge simulate``: integrate a system natively with scipy and write CSV (and a plot).

A command module ranks with :mod:`bridge.cli`: it loads, derives and simulates through the stages' public functions.
"""

from __future__ import annotations

import argparse
import sys
import time

from ..commandline import EXIT_OK, Command, Progress, add_method_options, derive, load, positive


def add_parser(subparsers) -> None:
    """Add ``nhbridge simulate`` to the CLI's subparsers."""
    sm = subparsers.add_parser("simulate", help="integrate natively with scipy and write CSV")
    sm.add_argument("file", metavar="FILE", help="system file (.toml)")
    add_method_options(sm)
    sm.add_argument("--stop-time", type=positive, default=None,
                    help="simulated time in s (default: [simulation] stop_time)")
    sm.add_argument("--rtol", type=positive, default=None,
                    help="relative tolerance (default: [simulation] rtol, else 1e-10)")
    sm.add_argument("--atol", type=positive, default=None,
                    help="absolute tolerance (default: [simulation] atol, else 1e-12)")
    sm.add_argument("--interval", type=positive, default=None,
                    help="output interval in s (default: [simulation] interval, else stop_time/1000); "
                         "more than 1e7 rows need --yes")
    sm.add_argument("--yes", action="store_true", help="write more than 1e7 output rows if --interval asks for them, "
                    "and integrate past 1e6 evaluations of the equations")
    sm.add_argument("--input", default=None, metavar="CSV",
                    help="time-varying inputs: a CSV file with a time column and one column per input, "
                         "interpolated linearly, held before the first and after the last row (the format fmpy "
                         "reads; default: inputs held at their start values)")
    sm.add_argument("--plot", default=None, metavar="FILE",
                    help="also plot coordinates, velocities, outputs and constraint residuals (.png, .pdf, .svg)")
    sm.add_argument("-o", "--output", default=None, metavar="CSV",
                    help="CSV file, - for standard output (default: <name>.csv)")


def run(args: argparse.Namespace) -> int:
    """Derive, integrate, write the CSV (or standard output) and report on the run."""
    from .budget import MAX_EVALUATIONS
    from .inputs import read_inputs
    from .plot import check_plot_path, pyplot
    from .simulate import MAX_ROWS, output_rows, simulate

    if args.plot:  # before the run: a wrong name or a missing matplotlib wastes no time
        check_plot_path(args.plot)
        pyplot()
    system = load(args, args.file)
    table = read_inputs(args.input, system) if args.input else None
    stop = args.stop_time or system.stop_time
    interval = args.interval or (system.interval if system.interval and system.interval <= stop else stop / 1000)
    output_rows(stop, interval, None if args.yes else MAX_ROWS)  # refuse a grid too fine before deriving anything
    t0 = time.perf_counter()
    eom = derive(args, system)
    t1 = time.perf_counter()
    from .stiffness import notices_on

    with Progress(args).step(f"simulating {system.name}"), notices_on(sys.stderr):
        result = simulate(eom, args.stop_time, rtol=args.rtol, atol=args.atol,
                          interval=args.interval, inputs=table, max_rows=None if args.yes else MAX_ROWS,
                          max_evaluations=None if args.yes else MAX_EVALUATIONS)
    t2 = time.perf_counter()
    out = args.output or f"{system.name}.csv"
    report = sys.stderr if out == "-" else sys.stdout  # the CSV owns standard output
    if out == "-":
        sys.stdout.write(result.to_csv())
        sys.stdout.flush()
    else:
        result.write_csv(out)
    print(f"{system.name}: method {eom.method}, derived in {t1 - t0:.3f} s, simulated to "
          f"t = {result.time[-1]:g} s in {t2 - t1:.3f} s ({result.nfev} evaluations)", file=report)
    if system.adjusted_start:
        print(f"  start values computed from the constraints: {', '.join(system.adjusted_start)}", file=report)
    for te, names in result.repartitions:
        print(f"  re-partitioned at t = {te:.6g}: independent velocities now {', '.join(names)}", file=report)
    print(f"  largest constraint residual over the run: {result.max_residual:.3e}", file=report)
    print(f"  wrote {'standard output' if out == '-' else out} ({len(result.time)} rows)", file=report)
    if args.plot:
        with Progress(args).step(f"plotting {args.plot}"):
            result.plot(args.plot)
        print(f"  wrote {args.plot}", file=report)
    return EXIT_OK


COMMANDS = (Command("simulate", add_parser, run),)
