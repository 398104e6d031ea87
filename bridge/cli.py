"""The ``nhbridge`` command line.

Exit codes: 0 success, 1 a run failed (e.g. the simulation hit a singularity), 2 bad input.
Errors are printed as paragraphs, never as tracebacks.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from .atomic import guard_process
from .errors import BridgeError, SimulationError

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


def build_parser() -> argparse.ArgumentParser:
    from .derivation.methods import METHODS

    p = argparse.ArgumentParser(prog="nhbridge", description="Equations of motion of nonholonomic systems: "
                                "derive, simulate, export to Modelica and FMI.")
    p.add_argument("--version", action="version", version="nhbridge 0.1.0")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    c = sub.add_parser("check", help="check system files and report their structure")
    c.add_argument("files", nargs="+", metavar="FILE")

    methods = list(METHODS)

    def method_opts(sp_: argparse.ArgumentParser, default: str | None = "lagrange") -> None:
        sp_.add_argument("--method", "-m", choices=methods, default=default,
                         help="derivation method (default: %(default)s)")
        sp_.add_argument("--independent", type=_names, default=None, metavar="X,Y",
                         help="independent velocities for reduced methods (default: file or automatic)")
        sp_.add_argument("--baumgarte", type=_baumgarte, default=None, metavar="ALPHA,BETA",
                         help="Baumgarte stabilisation of the constraints (lagrange, nielsen)")

    dv = sub.add_parser("derive", help="derive the equations of motion")
    dv.add_argument("file", metavar="FILE")
    method_opts(dv, default=None)
    dv.add_argument("--format", "-f", choices=["text", "latex", "json"], default="text")
    dv.add_argument("--stats", action="store_true",
                    help="report differentiation operations and CSE operation counts per method")
    dv.add_argument("-o", "--output", default=None, help="write to this file instead of standard output")

    sm = sub.add_parser("simulate", help="integrate natively with scipy and write CSV")
    sm.add_argument("file", metavar="FILE")
    method_opts(sm)
    sm.add_argument("--stop-time", type=_positive, default=None, help="default: [simulation] stop_time")
    sm.add_argument("--rtol", type=_positive, default=None, help="relative tolerance (default 1e-10)")
    sm.add_argument("--atol", type=_positive, default=None, help="absolute tolerance (default 1e-12)")
    sm.add_argument("--interval", type=_positive, default=None, help="output interval (default stop_time/1000)")
    sm.add_argument("-o", "--output", default=None, help="CSV file (default: <name>.csv)")

    mo = sub.add_parser("modelica", help="export Modelica models (one file, or a package of several)")
    mo.add_argument("files", nargs="+", metavar="FILE")
    method_opts(mo)
    mo.add_argument("--constraint-level", choices=["index1", "given"], default="index1",
                    help="multiplier DAE: constraints at acceleration level (index1) or as given, "
                         "left to the Modelica tool's index reduction")
    mo.add_argument("--package", default=None, metavar="NAME", help="write a package NAME into the -o directory")
    mo.add_argument("-o", "--output", required=True, help="the .mo file, or the directory for --package")
    mo.add_argument("--check", choices=["rumoca", "openmodelica"], default=None,
                    help="compile, simulate and compare each model with a Modelica tool")

    fm = sub.add_parser("fmu", help="build an FMU (Model Exchange and Co-Simulation)")
    fm.add_argument("file", metavar="FILE")
    method_opts(fm)
    fm.add_argument("--fmi-version", type=int, choices=[2, 3], default=2)
    fm.add_argument("--backend", choices=["native", "rumoca", "openmodelica"], default="native",
                    help="native: generated C plus nhbridge's FMI runtime, compiled with $CC (default: cc/gcc); "
                         "rumoca: the exported .mo compiled by Rumoca's fmi2 code generation (FMI 2.0 only); "
                         "openmodelica: the .mo compiled by omc (OMPython)")
    fm.add_argument("-o", "--output", required=True, help="the .fmu file")
    fm.add_argument("--jacobian", action=argparse.BooleanOptionalAction, default=None,
                    help="native backend: generate the Jacobian code for directional derivatives (default: only for "
                         "systems with at most 14 states; it lengthens the build)")

    sub.add_parser("methods", help="list the derivation methods")

    from .validation.command import add_parser as add_validate

    add_validate(sub, _positive)

    from .validation.crosscheck import add_parser as add_crosscheck

    add_crosscheck(sub)

    from .cosim.cli import add_parsers as add_cosim

    add_cosim(sub, _positive)
    return p


def _derive(args, system, method: str | None = None, count: bool = False):
    """The equations of ``system`` by the chosen method, with the split and stabilisation from the options."""
    from .derivation.methods import METHODS

    return METHODS[method or args.method or "lagrange"].derive(system, args.independent or system.independent,
                                                                 args.baumgarte, count=count)


def cmd_check(args) -> int:
    from .derivation.methods import METHODS
    from .model.loader import load_system

    failures = 0
    for path in args.files:
        try:
            system = load_system(path)
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
    from .model.loader import load_system

    system = load_system(args.file)
    if args.stats:
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
        lines.append("ops: + - * / ^ and function calls in mass matrix, forcing and kinematics after one joint CSE.")
        text = "\n".join(lines) + "\n"
    else:
        eom = _derive(args, system)
        text = FORMATS[args.format](eom)
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def cmd_simulate(args) -> int:
    from .model.loader import load_system
    from .simulation.simulate import DEFAULT_ATOL, DEFAULT_RTOL, simulate

    system = load_system(args.file)
    t0 = time.perf_counter()
    eom = _derive(args, system)
    t1 = time.perf_counter()
    result = simulate(eom, args.stop_time, rtol=args.rtol or DEFAULT_RTOL, atol=args.atol or DEFAULT_ATOL,
                      interval=args.interval)
    t2 = time.perf_counter()
    out = args.output or f"{system.name}.csv"
    result.write_csv(out)
    print(f"{system.name}: method {eom.method}, derived in {t1 - t0:.3f} s, simulated to "
          f"t = {result.time[-1]:g} s in {t2 - t1:.3f} s ({result.nfev} evaluations)")
    for te, names in result.repartitions:
        print(f"  re-partitioned at t = {te:.6g}: independent velocities now {', '.join(names)}")
    print(f"  largest constraint residual over the run: {result.max_residual:.3e}")
    print(f"  wrote {out} ({len(result.time)} rows)")
    return EXIT_OK


def cmd_modelica(args) -> int:
    from .model.loader import load_system
    from .modelica.check import CHECKERS
    from .modelica.export import write_model, write_package

    if args.package is None and len(args.files) > 1:
        raise BridgeError("several system files need --package NAME (and a directory as -o)")
    if args.package is not None:
        from .model.loader import IDENTIFIER

        if not IDENTIFIER.match(args.package):
            raise BridgeError(f"--package {args.package!r} is not a valid Modelica identifier")
    eoms = []
    for path in args.files:  # derive everything first: nothing is written if any system fails
        system = load_system(path)
        eoms.append(_derive(args, system))
    if args.package is None:
        target = write_model(eoms[0], args.output, args.constraint_level)
        print(f"wrote {target}")
    else:
        target = write_package(eoms, args.output, args.package, args.constraint_level)
        print(f"wrote package {args.package} ({len(eoms)} models) to {target}")
    failed = 0
    if args.check:
        for eom in eoms:
            try:
                report = CHECKERS[args.check](eom, args.constraint_level)
            except BridgeError as exc:
                print(f"  {args.check}: {eom.system.name} FAILED: {exc}", file=sys.stderr)
                failed += 1
                continue
            ok = report.balanced and report.max_error <= 1e-6
            failed += not ok
            print(f"  {'ok' if ok else 'FAILED'} {report.summary()}")
    return EXIT_FAIL if failed else EXIT_OK


def cmd_fmu(args) -> int:
    from .fmu.backends import build_openmodelica_fmu, build_rumoca_fmu
    from .fmu.build import build_fmu
    from .model.loader import load_system

    if args.backend == "rumoca" and args.fmi_version != 2:
        raise BridgeError("the rumoca backend builds FMI 2.0 only; use --fmi-version 2 or --backend native")
    system = load_system(args.file)
    eom = _derive(args, system)
    t0 = time.perf_counter()
    if args.backend == "rumoca":
        path = build_rumoca_fmu(eom, args.output)
    elif args.backend == "openmodelica":
        path = build_openmodelica_fmu(eom, args.output, args.fmi_version)
    else:
        path = build_fmu(eom, args.output, args.fmi_version, "auto" if args.jacobian is None else args.jacobian)
    print(f"wrote {path} (FMI {args.fmi_version}.0, Model Exchange and Co-Simulation, method {eom.method}, "
          f"backend {args.backend}, built in {time.perf_counter() - t0:.2f} s)")
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

    return cmd_validate(args)


def _cmd_cosim(args) -> int:
    from .cosim.cli import cmd_cosim

    return cmd_cosim(args)


def _cmd_ssp(args) -> int:
    from .cosim.cli import cmd_ssp

    return cmd_ssp(args)


def _cmd_crosscheck(args) -> int:
    from .validation.crosscheck import cmd_crosscheck

    return cmd_crosscheck(args)


COMMANDS = {"check": cmd_check, "derive": cmd_derive, "simulate": cmd_simulate, "modelica": cmd_modelica,
            "fmu": cmd_fmu, "methods": cmd_methods, "validate": _cmd_validate, "cosim": _cmd_cosim, "ssp": _cmd_ssp,
            "crosscheck": _cmd_crosscheck}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    guard_process()  # SIGTERM runs the finally blocks; leftovers of killed runs are removed
    try:
        return COMMANDS[args.command](args)
    except SimulationError as exc:
        print(f"nhbridge: simulation failed:\n{exc}", file=sys.stderr)
        return EXIT_FAIL
    except BridgeError as exc:
        print(f"nhbridge: error:\n{exc}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt:
        print("nhbridge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
