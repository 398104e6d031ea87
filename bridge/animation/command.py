"""``nhbridge animate``: a simulation's motion as one self-contained HTML page."""

from __future__ import annotations

import sys

from ..commandline import EXIT_OK, Command, add_progress_options, add_set_option, load
from ..errors import BridgeError


def add_parser(subparsers) -> None:
    """Add the ``animate`` command and its options."""
    from ..derivation.methods import METHODS

    p = subparsers.add_parser("animate", help="animate a run as one self-contained HTML page (3D, three.js)",
                              description="Simulate the system (or read a run's CSV) and write an HTML page that "
                                          "plays the motion in 3D: the bodies with their shapes, the points of "
                                          "[animation] and the rolling contacts' tracks. The page needs no "
                                          "network.")
    p.add_argument("file", help="the system file (TOML)")
    p.add_argument("--method", default="lagrange", choices=sorted(METHODS), help="derivation method (default: "
                   "%(default)s)")
    add_set_option(p)
    p.add_argument("--stop-time", type=float, default=None, help="simulated time in s (default: the file's)")
    p.add_argument("--csv", default=None, metavar="RUN.csv", help="animate this run instead of simulating: a CSV "
                   "with time and a column per coordinate (nhbridge simulate, an FMU run, a co-simulation)")
    p.add_argument("--component", default="", metavar="NAME", help="with --csv from a co-simulation: the "
                   "component whose columns (NAME.x, ...) are the system's")
    p.add_argument("--fps", type=float, default=100.0, help="frames per second of simulated time "
                   "(default: %(default)s)")
    p.add_argument("-o", "--output", default=None, help="the HTML file (default: <name>.html)")
    add_progress_options(p)


def run(args) -> int:
    """Simulate or read the run, build the scene, write the page."""
    from ..derivation.methods import METHODS
    from . import animate, file_tables
    from .scene import require_something
    from .shapes import read_drawing

    if not args.fps > 0 or args.fps > 1000:
        raise BridgeError(f"--fps {args.fps:g}: give a frame rate between 0 and 1000 per second")
    system = load(args, args.file)
    tables = file_tables(system)  # the file read once: shapes and points are checked before any simulation
    drawing = read_drawing(system, tables)
    require_something(system, drawing)
    out = args.output or f"{system.name}.html"
    if args.csv:
        prefix = f"{args.component}." if args.component else ""
        path = animate(system=system, csv=args.csv, prefix=prefix, fps=args.fps, path=out, tables=tables)
        what = f"the run in {args.csv}"
    else:
        from ..simulation.simulate import simulate

        eom = METHODS.get_method(args.method).derive(system)
        stop = args.stop_time or system.stop_time
        result = simulate(eom, stop, interval=min(1.0 / args.fps, stop / 10))
        path = animate(result, out, fps=args.fps, tables=tables)
        what = f"{system.name} by {eom.method} to t = {result.time[-1]:g} s"
    from pathlib import Path

    size = Path(path).stat().st_size
    print(f"{system.name}: animated {what}; wrote {path} ({size / 1e6:.1f} MB)", file=sys.stdout)
    return EXIT_OK


COMMANDS = (Command("animate", add_parser, run),)
