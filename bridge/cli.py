"""The ``nhbridge`` command line.

Exit codes: 0 success, 1 a run failed (e.g. the simulation hit a singularity), 2 bad input.
Errors are printed as paragraphs, never as tracebacks.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from .atomic import guard_process, interrupt_pending
from .errors import BridgeError, CompilerNotFoundError, SimulationError

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2


def _floats(text: str, count: int, what: str) -> tuple[float, ...]:
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be {count} comma-separated numbers, got {text!r}") from None
    if len(values) != count:
        raise argparse.ArgumentTypeError(f"{what} must be {count} comma-separated numbers, got {text!r}")
    return values


def _baumgarte(text: str) -> tuple[float, float]:
    a, b = _floats(text, 2, "--baumgarte")
    return a, b


def _positive(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def _names(text: str) -> tuple[str, ...]:
    return tuple(x.strip() for x in text.split(",") if x.strip())


def _assignment(text: str) -> tuple[str, str]:
    from .model.overrides import split_assignment

    try:
        return split_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_set_option(sp_: argparse.ArgumentParser) -> None:
    """``--set NAME=VALUE`` (repeatable): parameters, start positions, start velocities der(q), input starts."""
    sp_.add_argument("--set", dest="values", type=_assignment, action="append", default=[], metavar="NAME=VALUE",
                     help="change a parameter, a start position q, a start velocity der(q) or an input's start "
                          "value (repeatable; e.g. --set m=2.5 --set 'der(phi)=3'); the dependent start values are "
                          "then recomputed from the constraints")


def add_progress_options(sp_: argparse.ArgumentParser) -> None:
    """``--progress``/``--quiet``: the same on every long command."""
    group = sp_.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true",
                       help="progress lines on stderr (default: only when stderr is a terminal)")
    group.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _values(args) -> dict[str, str]:
    """The --set values by name; a name given twice is bad input."""
    out: dict[str, str] = {}
    for name, value in getattr(args, "values", None) or []:
        if name in out:
            raise BridgeError(f"--set {name}: given twice ({out[name]} and {value}); give each name once")
        out[name] = value
    return out


def _load(args, path: str):
    """The system in ``path`` with the --set values applied."""
    from .model.loader import load_system

    return load_system(path, _values(args) or None)


class Progress:
    """Progress lines on stderr for steps that may take seconds: on a terminal or with --progress, never
    with --quiet (so CI logs stay clean)."""

    def __init__(self, args):
        self.on = bool(getattr(args, "progress", False)) or (
            not getattr(args, "quiet", False) and _isatty(sys.stderr))

    @contextmanager
    def step(self, text: str, inline: bool = True) -> Iterator[None]:
        """``text ... done (1.2 s)``; not ``inline`` (the step prints lines itself): a line before and after."""
        if not self.on:
            yield
            return
        print(f"{text} ...", end="" if inline else "\n", file=sys.stderr, flush=True)
        lead = " " if inline else f"{text}: "
        t0 = time.perf_counter()
        try:
            yield
        except BaseException:
            print(f"{lead}failed", file=sys.stderr, flush=True)
            raise
        print(f"{lead}done ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


DEFAULT_TIMEOUT = 600.0  # seconds of symbolic work (derivation, display, export) before a command gives up


def build_parser() -> argparse.ArgumentParser:
    from .derivation.methods import METHODS

    p = argparse.ArgumentParser(prog="nhbridge", description="Equations of motion of nonholonomic systems: "
                                "derive, simulate, export to Modelica and FMI.")
    p.add_argument("--version", action="version", version="nhbridge 0.1.0")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="check system files and report their structure")
    c.add_argument("files", nargs="+", metavar="FILE", help="system files (.toml)")
    add_set_option(c)

    methods = list(METHODS)

    def method_opts(sp_: argparse.ArgumentParser, default: str | None = "lagrange",
                    default_text: str = "lagrange") -> None:
        sp_.add_argument("--method", "-m", choices=methods, default=default,
                         help=f"derivation method (default: {default_text})")
        sp_.add_argument("--independent", type=_names, default=None, metavar="X,Y",
                         help="independent velocities for reduced methods (default: [method] independent of the "
                              "file, else chosen automatically)")
        sp_.add_argument("--baumgarte", type=_baumgarte, default=None, metavar="ALPHA,BETA",
                         help="Baumgarte stabilisation of the constraints, lagrange and nielsen only "
                              "(default: none)")
        sp_.add_argument("--timeout", type=_positive, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                         help="stop a derivation (or export) that takes longer, with exit code 1 "
                              f"(default: {DEFAULT_TIMEOUT:g})")
        sp_.add_argument("--memory-limit", type=_positive, default=None, metavar="GIB",
                         help="stop a derivation (or export) whose memory grows past this many GiB, with exit code 1 "
                              "(default: half the physical memory, at most 8)")
        add_set_option(sp_)
        add_progress_options(sp_)

    fmi_help = "FMI version of the FMU: 2 or 3 (default: 2)"

    dv = sub.add_parser("derive", help="derive the equations of motion")
    dv.add_argument("file", metavar="FILE", help="system file (.toml)")
    method_opts(dv, default=None, default_text="lagrange; with --stats every method")
    dv.add_argument("--format", "-f", choices=["text", "latex", "json"], default="text",
                    help="output format (default: text)")
    dv.add_argument("--simplify", action="store_true",
                    help="trigonometric simplification of every expression (may take long on large systems; "
                         "default: a cheap tidy-up within about a second)")
    dv.add_argument("--stats", action="store_true",
                    help="report differentiation operations and CSE operation counts per method")
    dv.add_argument("--constraints", action="store_true",
                    help="show the constraints (those [contacts] generate included), named by entry, and stop")
    dv.add_argument("-o", "--output", default=None, metavar="FILE",
                    help="write to this file (default: standard output)")

    sm = sub.add_parser("simulate", help="integrate natively with scipy and write CSV")
    sm.add_argument("file", metavar="FILE", help="system file (.toml)")
    method_opts(sm)
    sm.add_argument("--stop-time", type=_positive, default=None,
                    help="simulated time in s (default: [simulation] stop_time)")
    sm.add_argument("--rtol", type=_positive, default=None,
                    help="relative tolerance (default: [simulation] rtol, else 1e-10)")
    sm.add_argument("--atol", type=_positive, default=None,
                    help="absolute tolerance (default: [simulation] atol, else 1e-12)")
    sm.add_argument("--interval", type=_positive, default=None,
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

    mo = sub.add_parser("modelica", help="export Modelica models (one file, or a package of several)")
    mo.add_argument("files", nargs="+", metavar="FILE", help="system files (.toml)")
    method_opts(mo)
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
    mo.add_argument("--check", type=_modelica_tools, default=None, metavar="TOOL[,TOOL]",
                    help="compile, simulate and compare each model with Modelica tools: rumoca, pymoca, openmodelica, "
                         "comma-separated (default: no check)")

    fm = sub.add_parser("fmu", help="build an FMU (Model Exchange and Co-Simulation)")
    fm.add_argument("file", metavar="FILE", help="system file (.toml)")
    method_opts(fm)
    fm.add_argument("--fmi-version", type=int, choices=[2, 3], default=2, help=fmi_help)
    fm.add_argument("--backend", choices=["native", "rumoca", "openmodelica"], default="native",
                    help="native: generated C plus nhbridge's FMI runtime, compiled with $CC (default: cc/gcc); "
                         "rumoca: the exported .mo compiled by Rumoca's fmi2 code generation (FMI 2.0 only); "
                         "openmodelica: the .mo compiled by omc (OMPython)")
    fm.add_argument("-o", "--output", default=None, metavar="FMU", help="the .fmu file (default: <name>.fmu)")
    fm.add_argument("--jacobian", action=argparse.BooleanOptionalAction, default=None,
                    help="native backend: generate the Jacobian code for directional derivatives (default: only for "
                         "systems with at most 14 states; it lengthens the build)")
    from .fmu.platforms import add_platform_option

    add_platform_option(fm)

    sub.add_parser("methods", help="list the derivation methods")

    from .validation.command import add_parser as add_validate

    va = add_validate(sub, _positive)
    add_set_option(va)
    add_progress_options(va)

    from .validation.crosscheck import add_parser as add_crosscheck

    add_progress_options(add_crosscheck(sub))

    from .cosim.cli import add_parsers as add_cosim

    add_cosim(sub, _positive)
    add_progress_options(sub.choices["ssp"])

    from .sweeps.command import add_parser as add_sweep

    sw = add_sweep(sub, _positive)
    add_set_option(sw)
    add_progress_options(sw)

    from .linearization.command import add_parser as add_linearize

    li = add_linearize(sub, _positive)
    add_set_option(li)
    add_progress_options(li)

    from .control.command import add_parser as add_controller

    co = add_controller(sub, _positive)
    add_set_option(co)
    add_progress_options(co)
    return p


def _budget(args, what: str):
    """The time (``--timeout``) and memory (``--memory-limit``) budget of symbolic work: derivation, CSE, export."""
    from .derivation.deadline import budget, default_memory_limit

    gib = getattr(args, "memory_limit", None)
    return budget(getattr(args, "timeout", None), int(gib * 2**30) if gib else default_memory_limit(), what)


def _derive(args, system, method: str | None = None, count: bool = False):
    """The equations of ``system`` by the chosen method, with the split and stabilisation from the options."""
    from .derivation.methods import METHODS

    name = method or args.method or "lagrange"
    with (Progress(args).step(f"deriving {system.name} ({name})"),
          _budget(args, f"the derivation of {system.name} by {name}")):
        return METHODS[name].derive(system, args.independent or system.independent, args.baumgarte, count=count)


def cmd_check(args) -> int:
    from .derivation.methods import METHODS

    failures = 0
    for path in args.files:
        try:
            system = _load(args, path)
            METHODS["lagrange"].derive(system)  # mass-matrix regularity at the start state
        except BridgeError as exc:
            print(str(exc), file=sys.stderr)
            failures += 1
            continue
        print(f"{path}: {system.name} is valid")
        print(f"  coordinates ({system.n}): {', '.join(c.name for c in system.coordinates)}")
        print(f"  constraints: {len(system.holonomic)} holonomic, {len(system.nonholonomic)} nonholonomic; "
              f"{system.dof} independent velocities")
        print(f"  parameters: {len(system.parameters)}, inputs: {len(system.inputs)}, "
              f"outputs: {len(system.outputs)}")
        if system.adjusted_start:
            print(f"  start values computed from the constraints: {', '.join(system.adjusted_start)}")
        usable = []
        for name, method in METHODS.items():
            reason = method.applicable(system)
            usable.append(name if reason is None else f"{name} (not applicable: {reason})")
        print("  methods: " + "; ".join(usable))
    return EXIT_INPUT if failures else EXIT_OK


def cmd_derive(args) -> int:
    from .atomic import write_text
    from .derivation.methods import METHODS
    from .derivation.render import FORMATS
    from .derivation.stats import eom_operation_count

    system = _load(args, args.file)
    if args.constraints:
        from .model.contacts import describe_constraints

        text = describe_constraints(system)
    elif args.stats:
        names = [args.method] if args.method else list(METHODS)
        rows = []
        for name in names:
            reason = METHODS[name].applicable(system)
            if reason:
                rows.append((name, None, reason))
                continue
            try:
                eom = _derive(args, system, name, count=True)
            except BridgeError as exc:
                rows.append((name, None, str(exc).split(": ", 2)[-1]))
                continue
            rows.append((name, eom, ""))
        lines = [f"{system.name}: derivation statistics",
                 f"{'method':<10} {'partial':>8} {'time':>6} {'total':>6} {'inertia term':>13} {'ops after CSE':>14} "
                 f"{'seconds':>8}"]
        for name, eom, reason in rows:
            if eom is None:
                lines.append(f"{name:<10} not applicable: {reason}")
                continue
            s = eom.stats
            first = dict(s.breakdown).get("inertia term")
            lines.append(f"{name:<10} {s.differentiations_partial:>8} {s.differentiations_time:>6} "
                         f"{s.differentiations:>6} {'' if first is None else first:>13} "
                         f"{eom_operation_count(eom):>14} {s.seconds:>8.3f}")
        lines.append("partial/time: elementary differentiations, counted term by term on the expanded operands "
                     "(bridge/diffcount.py);")
        lines.append("inertia term: those spent on d/dt(dT/dq') (lagrange) resp. dT'/dq' (nielsen), "
                     "the quantity the seed compares;")
        lines.append("ops: + - * / ^ and function calls (as sympy.count_ops) in the split blocks, mass matrix, forcing "
                     "and kinematics after one joint CSE.")
        text = "\n".join(lines) + "\n"
    else:
        eom = _derive(args, system)
        with _budget(args, f"the display of {system.name}"):
            text = FORMATS[args.format](eom, simplify=args.simplify)
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_simulate(args) -> int:
    from .simulation.budget import MAX_EVALUATIONS
    from .simulation.inputs import read_inputs
    from .simulation.plot import check_plot_path, pyplot
    from .simulation.simulate import MAX_ROWS, output_rows, simulate

    if args.plot:  # before the run: a wrong name or a missing matplotlib wastes no time
        check_plot_path(args.plot)
        pyplot()
    system = _load(args, args.file)
    table = read_inputs(args.input, system) if args.input else None
    stop = args.stop_time or system.stop_time
    interval = args.interval or (system.interval if system.interval and system.interval <= stop else stop / 1000)
    output_rows(stop, interval, None if args.yes else MAX_ROWS)  # refuse a grid too fine before deriving anything
    t0 = time.perf_counter()
    eom = _derive(args, system)
    t1 = time.perf_counter()
    from .simulation.stiffness import notices_on

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


def _modelica_tools(text: str) -> list[str]:
    """``--check rumoca,pymoca``: the named Modelica tools, each known."""
    tools = [t.strip() for t in text.split(",") if t.strip()]
    known = ("rumoca", "pymoca", "openmodelica")
    bad = [t for t in tools if t not in known]
    if bad or not tools:
        raise argparse.ArgumentTypeError(f"unknown Modelica tool {', '.join(bad) or repr(text)}; "
                                         f"choose from {', '.join(known)} (comma-separated)")
    return tools


def cmd_modelica(args) -> int:
    from .modelica.check import CHECKERS
    from .modelica.export import write_model, write_package
    from .modelica.switched import DocumentedLimitation

    if args.package is None and len(args.files) > 1:
        raise BridgeError("several system files need --package NAME (and a directory as -o)")
    if args.package is not None:
        from .model.loader import IDENTIFIER

        if not IDENTIFIER.match(args.package):
            raise BridgeError(f"--package {args.package!r} is not a valid Modelica identifier")
    eoms = []
    for path in args.files:  # derive everything first: nothing is written if any system fails
        system = _load(args, path)
        eoms.append(_derive(args, system))
    from .modelica.forms import missing_compiler, require_expressible

    for tool in args.check or ():  # a form the tool cannot simulate: say which form to use, before writing
        for eom in eoms:
            require_expressible(eom, args.constraint_level, tool)
    with _budget(args, "the Modelica export"):
        if args.package is None:
            target = write_model(eoms[0], args.output or f"{eoms[0].system.name}.mo", args.constraint_level,
                                 msl=args.msl)
            print(f"wrote {target}")
        else:
            target = write_package(eoms, args.output or ".", args.package, args.constraint_level, msl=args.msl)
            print(f"wrote package {args.package} ({len(eoms)} models) to {target}")
    if not args.msl and any(e.system.ports for e in eoms):
        from .modelica.ports import LIBRARY

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


def cmd_fmu(args) -> int:
    from .fmu.backends import build_openmodelica_fmu, build_rumoca_fmu
    from .fmu.build import build_fmu, toolchains

    if args.backend == "rumoca" and args.fmi_version != 2:
        raise BridgeError("the rumoca backend builds FMI 2.0 only; use --fmi-version 2 or --backend native")
    if args.backend != "openmodelica":  # no C compiler (or cross compiler): say so before loading and deriving
        tools = toolchains(args.platform)
    else:
        from .fmu.platforms import parse_platforms

        tools = dict.fromkeys(parse_platforms(args.platform), "")
    system = _load(args, args.file)
    eom = _derive(args, system)
    output = args.output or f"{system.name}.fmu"
    t0 = time.perf_counter()
    with (Progress(args).step(f"building {output} (backend {args.backend})"),
          _budget(args, f"the FMU export of {system.name}")):
        if args.backend == "rumoca":
            path = build_rumoca_fmu(eom, output, platforms=args.platform)
        elif args.backend == "openmodelica":
            path = build_openmodelica_fmu(eom, output, args.fmi_version, platforms=args.platform)
        else:
            path = build_fmu(eom, output, args.fmi_version, "auto" if args.jacobian is None else args.jacobian,
                             platforms=args.platform)
    folders = ", ".join(p.folder(args.fmi_version) for p in tools)
    print(f"wrote {path} (FMI {args.fmi_version}.0, Model Exchange and Co-Simulation, method {eom.method}, "
          f"backend {args.backend}, binaries {folders}, built in {time.perf_counter() - t0:.2f} s)")
    return EXIT_OK


def cmd_methods(args) -> int:
    from .derivation.methods import METHODS

    for name, method in METHODS.items():
        doc = method.describe().splitlines()
        print(f"{name:<10} {method.title}")
        for line in doc[2:]:
            print(f"           {line.strip()}" if line.strip() else "")
        print()
    return EXIT_OK


def _cmd_validate(args) -> int:
    from .validation.command import cmd_validate

    if getattr(args, "workers", None) is not None and args.workers < 1:
        raise BridgeError(f"--workers: expected a positive number of worker processes, got {args.workers}")
    if not getattr(args, "scheduler", None) and getattr(args, "workers", None) is None:
        return cmd_validate(args)
    from .sweeps.engine import DaskRunner

    with DaskRunner(args.scheduler or "local", args.workers) as runner:  # each system's runs go to the workers
        args.runner = runner
        return cmd_validate(args)


def _cmd_cosim(args) -> int:
    from .cosim.cli import cmd_cosim

    return cmd_cosim(args)


def _cmd_ssp(args) -> int:
    from .cosim.cli import cmd_ssp

    with Progress(args).step(f"building the FMUs of {args.scenario} and the SSP package", inline=False):
        return cmd_ssp(args)


def _cmd_sweep(args) -> int:
    from .sweeps.command import cmd_sweep

    return cmd_sweep(args)


def _cmd_linearize(args) -> int:
    from .linearization.command import cmd_linearize

    return cmd_linearize(args, _values(args), Progress(args), lambda what: _budget(args, what))


def _cmd_controller(args) -> int:
    from .control.command import cmd_controller

    return cmd_controller(args, _values(args), Progress(args), lambda what: _budget(args, what))


def _cmd_crosscheck(args) -> int:
    from .validation.crosscheck import cmd_crosscheck

    what = "checking" if args.check or os.path.isdir(args.path) else "exporting (derivation, FMU, reference run)"
    with Progress(args).step(f"{what} {args.path}", inline=False):
        return cmd_crosscheck(args)


COMMANDS = {"check": cmd_check, "derive": cmd_derive, "simulate": cmd_simulate, "modelica": cmd_modelica,
            "fmu": cmd_fmu, "methods": cmd_methods, "validate": _cmd_validate, "cosim": _cmd_cosim, "ssp": _cmd_ssp,
            "crosscheck": _cmd_crosscheck, "sweep": _cmd_sweep, "linearize": _cmd_linearize,
            "controller": _cmd_controller}


class _PipeGuard:
    """A text stream whose reader may go away (``nhbridge ... | head -1``): after a broken pipe the rest of
    the output is dropped (the descriptor is pointed at /dev/null), so the run ends quietly with its own code."""

    def __init__(self, stream):
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._drop()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._drop()

    def _drop(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


@contextmanager
def _quiet_closed_pipes() -> Iterator[None]:
    """stdout and stderr guarded against a reader that closed the pipe, for the duration of one run."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PipeGuard(sys.stdout), _PipeGuard(sys.stderr)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved


def main(argv: Sequence[str] | None = None) -> int:
    with _quiet_closed_pipes():
        parser = build_parser()
        args = parser.parse_args(argv)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """One command; bad input (a BridgeError) exits 2 and a failed run 1, each with a paragraph, no traceback."""
    guard_process()  # SIGTERM runs the finally blocks; leftovers of killed runs are removed
    try:
        return COMMANDS[args.command](args)
    except SimulationError as exc:
        print(f"nhbridge: simulation failed:\n{exc}", file=sys.stderr)
        return EXIT_FAIL
    except CompilerNotFoundError as exc:  # one line: what is missing and how to get it
        print(f"nhbridge: error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except BridgeError as exc:
        if getattr(exc, "exit_code", EXIT_INPUT) == EXIT_FAIL:  # e.g. a derivation past --timeout
            print(f"nhbridge: stopped:\n{exc}", file=sys.stderr)
            return EXIT_FAIL
        print(f"nhbridge: error:\n{exc}", file=sys.stderr)
        return EXIT_INPUT
    except BaseException as exc:  # Ctrl-C or SIGTERM, also when compiled code altered its exception
        if not interrupt_pending(exc):
            raise
        print("nhbridge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
