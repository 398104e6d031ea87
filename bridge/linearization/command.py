"""``nhbridge linearize``: the linear model about a steady point, its modes, and sweeps of it.

Exit codes: 0 done; 1 a derivation stopped (timeout); 2 bad input (a point that is not steady, an unknown or
non-numeric sweep, inputs without values, a singular split at the point or along the sweep).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..commandline import Command, Progress, add_progress_options, add_set_option, budget, names, positive, set_values
from ..errors import BridgeError
from .point import LinearizationError


def _unit(system, name: str) -> str:
    """Return the unit of a swept name: a parameter's, an input's, a coordinate's or (for der(q)) its rate's."""
    from ..simulation.plot import rate_unit

    units = {p.name: p.unit for p in system.parameters} | {w.name: w.unit for w in system.inputs}
    units |= {c.name: c.unit for c in system.coordinates}
    units |= {f"der({c.name})": rate_unit(c.unit) for c in system.coordinates}
    return units.get(name, "")


def add_parser(subparsers) -> None:
    """Add ``nhbridge linearize`` to the CLI's subparsers."""
    from ..derivation.methods import METHODS

    li = subparsers.add_parser(
        "linearize", help="linearize about an equilibrium or a steady motion (A, B, C, D, eigenvalues, sweeps)",
        description="Linearize a system about a steady point (the file's start state with --set overrides) in its "
        "minimal coordinates: the independent coordinates and speeds of the split, the constraints eliminated "
        "exactly, by symbolic Jacobians of the chosen method's equations. Cyclic coordinates (e.g. position and "
        "heading) and decoupled neutral speeds (e.g. a bicycle's forward speed) are detected and dropped. "
        "Exit code 2: bad input (a point that is not steady, an unknown sweep name, inputs without values, "
        "a singular split).")
    li.add_argument("file", metavar="FILE", help="system file (.toml)")
    li.add_argument("--method", "-m", choices=list(METHODS), default="lagrange",
                    help="derivation method whose equations are linearized (default: lagrange; every method gives "
                         "the same linear model)")
    li.add_argument("--independent", type=names, default=None, metavar="X,Y",
                    help="independent velocities of the split (default: [method] independent of the file, else "
                         "chosen at the point)")
    li.add_argument("--cyclic", default=None, metavar="X,Y|none",
                    help="the cyclic coordinates to drop (default: detected: those nothing depends on to first "
                         "order); 'none' keeps every coordinate")
    li.add_argument("--keep-conserved", action="store_true",
                    help="keep decoupled neutral speeds (zero row and column of A) in the state")
    li.add_argument("--json", default=None, metavar="FILE", help="write the linear model(s) as JSON")
    li.add_argument("--csv", default=None, metavar="FILE",
                    help="write the eigenvalues as CSV (one row per mode; with --sweep one row per value)")
    li.add_argument("--sweep", default=None, action="append", metavar="NAME=START:STOP:NUM",
                    help="linearize at NUM values of a parameter, start position, der(q) or input; reports the "
                         "stable range with its boundaries found by root finding (one sweep axis: for several, "
                         "run once per value of the others with --set)")
    li.add_argument("--plot", default=None, metavar="FILE",
                    help="with --sweep: plot the eigenvalues' real and imaginary parts against the swept value "
                         "(.png, .pdf, .svg)")
    li.add_argument("--symbolic", action="store_true",
                    help="print A(p) and B(p) as functions of the parameters (the state held at the point)")
    li.add_argument("--modelica", default=None, metavar="FILE", help="export the linear model as a Modelica model")
    li.add_argument("--fmu", default=None, metavar="FILE", help="build an FMU of the linear model")
    li.add_argument("--fmi-version", type=int, choices=[2, 3], default=2,
                    help="FMI version of --fmu: 2 or 3 (default: 2)")
    from ..fmu.platforms import add_platform_option

    add_platform_option(li, "--fmu")
    li.add_argument("--timeout", type=positive, default=600.0, metavar="SECONDS",
                    help="stop a derivation that takes longer (exit code 1; default 600)")
    add_set_option(li)
    add_progress_options(li)


def run(args: argparse.Namespace) -> int:
    """Run the command on the parsed arguments; exit code 0, or an error (see the module's docstring)."""
    from ..derivation.methods import METHODS
    from ..model.loader import load_system
    from .linearize import Linearizer
    from .outputs import point_csv, record, sweep_csv, text_report, write_json
    from .point import operating_point
    from .sweep import Sweep, parse_sweep, stability_text

    values, progress = set_values(args), Progress(args)

    _check_arguments(args)
    system = load_system(args.file, values or None)
    spec = parse_sweep(args.sweep, system) if args.sweep else None
    cyclic = None if args.cyclic is None else (() if args.cyclic.strip().lower() == "none" else names(args.cyclic))
    with (progress.step(f"deriving {system.name} ({args.method})"),
          budget(args, f"the derivation of {system.name} by {args.method}")):
        eom = METHODS.get_method(args.method).derive(system, args.independent or system.independent)
    with progress.step("compiling the Jacobians"):
        linearizer = Linearizer(eom, args.independent)
    out = sys.stdout
    base = None
    base_error = None
    try:
        base = linearizer.at(operating_point(system, values), cyclic=cyclic, keep_conserved=args.keep_conserved)
    except LinearizationError as exc:
        if spec is None:
            raise
        base_error = exc
    data = record(base) if base is not None else None
    if spec is not None:
        sweep = Sweep(linearizer, system, spec, values, cyclic, args.keep_conserved)
        with progress.step(f"sweeping {spec.name} ({spec.num} values)"):
            svalues, models = sweep.run()
        with progress.step("finding the stability boundaries"):
            stab = sweep.stability(svalues, models)
        if data is None:
            data = record(models[0])
            data["note"] = f"the file's point is not steady ({base_error}); the top-level model is the sweep's first"
        data["sweep"] = {"name": spec.name, "start": spec.start, "stop": spec.stop, "num": spec.num}
        data["points"] = [{spec.name: v, "value": v, **record(m)} for v, m in zip(svalues, models)]
        for p in data["points"]:
            p.pop("point", None)
        data["stability"] = stab
    if args.symbolic:
        from .symbolic import symbolic_text

        with progress.step("forming A(p) and B(p)"):
            out.write(symbolic_text(eom, linearizer, base if base is not None else models[0], args.timeout))
    if base is not None:
        out.write(text_report(base))
    if spec is not None:
        out.write(stability_text(stab))
    if args.json:
        write_json(args.json, data)
    if args.csv:
        from ..atomic import write_text

        write_text(args.csv, sweep_csv(spec.name, svalues, models) if spec else point_csv(base))
    if args.plot:
        from .outputs import plot_sweep

        plot_sweep(args.plot, spec.name, svalues, models, stab, f"{system.name}: eigenvalues against {spec.name}",
                   _unit(system, spec.name))
    lin = base if base is not None else models[0]
    _export(lin, args, progress)
    return 0


def _check_arguments(args: argparse.Namespace) -> None:
    """Check the options against each other before anything is derived or written; one ``--sweep`` is kept."""
    from ..simulation.plot import check_plot_path

    if args.sweep and len(args.sweep) > 1:
        given = ", ".join(repr(text.split("=", 1)[0].strip()) for text in args.sweep)
        raise LinearizationError(
            f"--sweep is given {len(args.sweep)} times ({given}); linearize sweeps one value at a time: keep one "
            "--sweep and run once per value of the others with --set NAME=VALUE")
    args.sweep = args.sweep[0] if args.sweep else None
    if args.plot and not args.sweep:
        raise LinearizationError("--plot needs --sweep NAME=START:STOP:NUM (the plot is of eigenvalues against it)")
    if args.plot:
        check_plot_path(args.plot)
    for opt in ("json", "csv", "modelica", "fmu", "plot"):
        path = getattr(args, opt)
        if path and Path(path).is_dir():
            raise LinearizationError(f"--{opt} {path}: is a folder; give a file name")
    if args.fmu:  # a missing (cross) compiler: said before anything is derived or written
        from ..fmu.build import toolchains

        toolchains(getattr(args, "platform", None))
    elif getattr(args, "platform", None):
        raise LinearizationError("--platform chooses the binaries of --fmu; give --fmu FILE as well")


def _export(lin, args: argparse.Namespace, progress: Progress) -> None:
    """Write the linear model as Modelica (``--modelica``) and as an FMU (``--fmu``)."""
    if args.modelica:
        try:
            from .export_modelica import write_linear_modelica
        except ImportError as exc:
            raise BridgeError(f"--modelica: the linear Modelica export is not available ({exc})") from exc
        write_linear_modelica(lin, args.modelica)
    if args.fmu:
        try:
            from .export_fmu import build_linear_fmu
        except ImportError as exc:
            raise BridgeError(f"--fmu: the linear FMU export is not available ({exc})") from exc
        with progress.step(f"building {args.fmu}"):
            build_linear_fmu(lin, args.fmu, fmi_version=f"{args.fmi_version}.0",
                             platforms=getattr(args, "platform", None))


COMMANDS = (Command("linearize", add_parser, run),)
