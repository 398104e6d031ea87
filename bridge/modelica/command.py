"""``nhbridge modelica``: export Modelica models (one file, or a package of several) and check them with tools.

A command module ranks with :mod:`bridge.cli`: it loads, derives and exports through the stages' public functions.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..commandline import EXIT_FAIL, EXIT_OK, Command, Progress, add_method_options, budget, derive, load
from ..errors import BridgeError, ExportError


def _modelica_tools(text: str) -> list[str]:
    """``--check rumoca,pymoca``: the named Modelica tools, each known."""
    tools = [t.strip() for t in text.split(",") if t.strip()]
    known = ("rumoca", "pymoca", "openmodelica")
    bad = [t for t in tools if t not in known]
    if bad or not tools:
        raise argparse.ArgumentTypeError(f"unknown Modelica tool {', '.join(bad) or repr(text)}; "
                                         f"choose from {', '.join(known)} (comma-separated)")
    return tools


def add_parser(subparsers) -> None:
    """Add ``nhbridge modelica`` to the CLI's subparsers."""
    mo = subparsers.add_parser("modelica", help="export Modelica models (one file, or a package of several)")
    mo.add_argument("files", nargs="+", metavar="FILE", help="system files (.toml)")
    add_method_options(mo)
    mo.add_argument("--constraint-level", choices=["auto", "index1", "given"], default="auto",
                    help="multiplier DAE: constraints at acceleration level (index1) or as given, "
                         "left to the Modelica tool's index reduction; auto (default): the form "
                         "bridge.modelica.forms chooses for each system, recorded in its Documentation")
    mo.add_argument("--package", default=None, metavar="NAME", help="write a package NAME into the -o directory")
    mo.add_argument("-o", "--output", default=None, metavar="PATH",
                    help="the .mo file (default: <name>.mo), or with --package the directory that receives NAME/ "
                         "(default: the current directory)")
    mo.add_argument("--msl", action="store_true",
                    help="[ports] as the Modelica Standard Library's flanges (Modelica.Mechanics.*.Interfaces); "
                         "default: the identical copies in the library NHBridge shipped with nhbridge")
    mo.add_argument("--target", choices=["rumoca", "pymoca"], default=None,
                    help="write the text for this compiler: a reduced method whose split may turn singular gets the "
                         "text that re-partitions it (form repartition) for rumoca; pymoca, which has no when-clauses, "
                         "keeps the build-time split (bridge.modelica.forms.target_form); default: the same text for "
                         "every compiler")
    mo.add_argument("--check", type=_modelica_tools, default=None, metavar="TOOL[,TOOL]",
                    help="compile, simulate and compare each model with Modelica tools: rumoca, pymoca, openmodelica, "
                         "comma-separated (default: no check)")


def _target_sources(eoms, args: argparse.Namespace) -> dict[str, str]:
    """Return system name -> the re-partitioning text (form repartition) of every model ``--target`` gives it.

    A reduced method that re-partitions gets it for a compiler with when-clauses
    (:data:`bridge.modelica.forms.REPARTITION_TOOLS`); the other methods and compilers keep the chosen form.
    What the text cannot hold (ports, effort unknowns, switched elements, a constraint level chosen by hand) is
    refused with an :class:`~bridge.errors.ExportError` naming the combination, before anything is written.
    """
    from ..derivation.split_free import REPARTITIONING_METHODS
    from .forms import REPARTITION_TOOLS, repartition_obstacle
    from .repartition import repartition_source

    if args.target not in REPARTITION_TOOLS:
        return {}
    texts, problems = {}, []
    for eom in eoms:
        if eom.method not in REPARTITIONING_METHODS or not eom.is_reduced or not eom.dependent:
            continue  # no split of the velocities to re-partition
        name = f"{eom.system.name} by {eom.method}"
        obstacle = repartition_obstacle(eom)
        if obstacle:
            problems.append(f"{name} has {obstacle}: the text that re-partitions its split of the velocities (form "
                            "repartition) cannot hold it")
        elif args.constraint_level != "auto":
            problems.append(f"{name}: --constraint-level {args.constraint_level} chooses the form of a multiplier "
                            "DAE; the re-partitioning text of a reduced method holds its constraints at acceleration "
                            "level itself")
        else:
            texts[eom.system.name] = repartition_source(eom, within=args.package)
    if problems:
        fix = ("drop --constraint-level" if args.constraint_level != "auto" else
               "export without --target (the build-time split, regular until it turns singular) or with --method "
               "lagrange")
        raise ExportError(f"--target {args.target}: " + "; ".join(problems) + f". To fix: {fix}")
    return texts


def run(args: argparse.Namespace) -> int:
    """Derive every system, write the model or package, then check it with the --check tools."""
    from ..tools.pymoca import DocumentedLimitation
    from ..validation.tool_checks import CHECKERS
    from .export import write_model, write_package

    if args.package is None and len(args.files) > 1:
        raise BridgeError("several system files need --package NAME (and a directory as -o)")
    if args.package is not None:
        from ..model.loader import IDENTIFIER

        if not IDENTIFIER.match(args.package):
            raise BridgeError(f"--package {args.package!r} is not a valid Modelica identifier")
    eoms = []
    for path in args.files:  # derive everything first: nothing is written if any system fails
        system = load(args, path)
        eoms.append(derive(args, system))
    from ..tools.availability import missing_compiler
    from .forms import require_expressible

    for tool in args.check or ():  # a form the tool cannot simulate: say which form to use, before writing
        for eom in eoms:
            require_expressible(eom, args.constraint_level, tool)
    with budget(args, "the Modelica export"):
        sources = _target_sources(eoms, args)
        if args.package is None and sources:
            from ..atomic import write_text

            path = Path(args.output or f"{eoms[0].system.name}.mo")
            if path.suffix != ".mo":
                raise BridgeError(f"{path}: a Modelica file must end in .mo")
            target = write_text(path, sources[eoms[0].system.name])
            print(f"wrote {target} (form repartition, for {args.target})")
        elif args.package is None:
            target = write_model(eoms[0], args.output or f"{eoms[0].system.name}.mo", args.constraint_level,
                                 msl=args.msl)
            print(f"wrote {target}")
        else:
            target = write_package(eoms, args.output or ".", args.package, args.constraint_level, msl=args.msl,
                                   sources=sources)
            print(f"wrote package {args.package} ({len(eoms)} models) to {target}"
                  + (f"; form repartition, for {args.target}: {', '.join(sources)}" if sources else ""))
    if not args.msl and any(e.system.ports for e in eoms):
        from .ports import LIBRARY

        print(f"  the flanges of [ports] are in the Modelica library {LIBRARY}: load modelica/{LIBRARY} (shipped as "
              f"bridge.modelica.library) beside the model, or export with --msl for the MSL's")
    failed = 0
    for tool in args.check or ():
        missing = missing_compiler(tool)
        if missing:  # a compiler that is not installed: a skip, with the install command
            print(f"  skipped {tool}: {missing}", file=sys.stderr)
            continue
        for eom in eoms:
            try:
                with Progress(args).step(f"checking {eom.system.name} with {tool}", inline=False):
                    report = CHECKERS[tool](eom, args.constraint_level)
            except DocumentedLimitation as exc:  # the tool lacks what the model needs (docs/compiler-defects)
                print(f"  skipped {tool}: {exc}", file=sys.stderr)
                continue
            except BridgeError as exc:
                print(f"  {tool}: {eom.system.name} FAILED: {exc}", file=sys.stderr)
                failed += 1
                continue
            ok = report.balanced and report.max_error <= 1e-6
            failed += not ok
            print(f"  {'ok' if ok else 'FAILED'} {report.summary()}")
    return EXIT_FAIL if failed else EXIT_OK


COMMANDS = (Command("modelica", add_parser, run),)
