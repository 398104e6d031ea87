"""``nhbridge fmu``: build an FMU (Model Exchange and Co-Simulation) with the native, Rumoca or OpenModelica backend.

A command module ranks with :mod:`bridge.cli`: it loads, derives and builds through the stages' public functions.
"""

from __future__ import annotations

import argparse
import contextlib
import time

from ..commandline import EXIT_OK, Command, Progress, add_method_options, budget, derive, load
from ..errors import BridgeError

FMI_HELP = "FMI version of the FMU: 2 or 3 (default: 2)"


def add_parser(subparsers) -> None:
    """Add ``nhbridge fmu`` to the CLI's subparsers."""
    from .platforms import add_platform_option

    fm = subparsers.add_parser("fmu", help="build an FMU (Model Exchange and Co-Simulation)")
    fm.add_argument("file", metavar="FILE", help="system file (.toml)")
    add_method_options(fm)
    fm.add_argument("--fmi-version", type=int, choices=[2, 3], default=2, help=FMI_HELP)
    fm.add_argument("--backend", choices=["native", "rumoca", "openmodelica"], default="native",
                    help="native: generated C plus nhbridge's FMI runtime, compiled with $CC (default: cc/gcc); "
                         "rumoca: the exported .mo compiled by Rumoca's fmi2 code generation (FMI 2.0 only); "
                         "openmodelica: the .mo compiled by omc (OMPython)")
    fm.add_argument("-o", "--output", default=None, metavar="FMU", help="the .fmu file (default: <name>.fmu)")
    fm.add_argument("--jacobian", action=argparse.BooleanOptionalAction, default=None,
                    help="native backend: generate the Jacobian code for directional derivatives (default: only for "
                         "systems with at most 14 states; it lengthens the build)")
    add_platform_option(fm)


def run(args: argparse.Namespace) -> int:
    """Check the toolchain, derive, build the FMU and report what was built.

    The native backend's runtime starts compiling first, while the system is loaded and derived
    (:class:`~.build.RuntimeBuild`); a failed load or derivation stops it and leaves nothing behind.
    """
    from .build import RuntimeBuild, toolchains

    if args.backend == "rumoca" and args.fmi_version != 2:
        raise BridgeError("the rumoca backend builds FMI 2.0 only; use --fmi-version 2 or --backend native")
    if args.backend != "openmodelica":  # no C compiler (or cross compiler): say so before loading and deriving
        tools = toolchains(args.platform)
    else:
        from .platforms import parse_platforms

        tools = dict.fromkeys(parse_platforms(args.platform), "")
    with RuntimeBuild(args.fmi_version, tools) if args.backend == "native" else contextlib.nullcontext() as runtime:
        return _derive_and_build(args, tools, runtime)


def _derive_and_build(args: argparse.Namespace, tools: dict, runtime) -> int:
    """Load, derive, build (with the runtime already compiling for the native backend) and report."""
    from ..backends.fmu import build_openmodelica_fmu, build_rumoca_fmu
    from .build import build_fmu

    system = load(args, args.file)
    eom = derive(args, system)
    output = args.output or f"{system.name}.fmu"
    t0 = time.perf_counter()
    with (Progress(args).step(f"building {output} (backend {args.backend})"),
          budget(args, f"the FMU export of {system.name}")):
        if args.backend == "rumoca":
            path = build_rumoca_fmu(eom, output, platforms=args.platform)
        elif args.backend == "openmodelica":
            path = build_openmodelica_fmu(eom, output, args.fmi_version, platforms=args.platform)
        else:
            path = build_fmu(eom, output, args.fmi_version, "auto" if args.jacobian is None else args.jacobian,
                             platforms=args.platform, runtime=runtime)
    folders = ", ".join(p.folder(args.fmi_version) for p in tools)
    print(f"wrote {path} (FMI {args.fmi_version}.0, Model Exchange and Co-Simulation, method {eom.method}, "
          f"backend {args.backend}, binaries {folders}, built in {time.perf_counter() - t0:.2f} s)")
    return EXIT_OK


COMMANDS = (Command("fmu", add_parser, run),)
