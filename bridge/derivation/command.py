"""``nhbridge derive`` and ``nhbridge methods``: the equations of motion, and the methods that derive them.

A command module ranks with :mod:`bridge.cli`: it loads, derives and writes through the stages' public functions.
"""

from __future__ import annotations

import argparse
import sys

from ..commandline import EXIT_OK, Command, add_method_options, budget, derive, load
from ..errors import BridgeError


def add_derive_parser(subparsers) -> None:
    """Add ``nhbridge derive`` to the CLI's subparsers."""
    dv = subparsers.add_parser("derive", help="derive the equations of motion")
    dv.add_argument("file", metavar="FILE", help="system file (.toml)")
    add_method_options(dv, default=None, default_text="lagrange; with --stats every method")
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


def run_derive(args: argparse.Namespace) -> int:
    """Print the equations (text, LaTeX or JSON), the constraints (--constraints) or the statistics (--stats)."""
    from ..atomic import write_text
    from .methods import METHODS
    from .render import FORMATS
    from .stats import eom_operation_count

    system = load(args, args.file)
    if args.constraints:
        from ..model.contacts import describe_constraints

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
                eom = derive(args, system, name, count=True)
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
        eom = derive(args, system)
        with budget(args, f"the display of {system.name}"):
            text = FORMATS[args.format](eom, simplify=args.simplify)
    if args.output:
        write_text(args.output, text)
        print(f"wrote {args.output}")
    else:
        sys.stdout.write(text)
    return EXIT_OK


def add_methods_parser(subparsers) -> None:
    """Add ``nhbridge methods`` to the CLI's subparsers."""
    subparsers.add_parser("methods", help="list the derivation methods")


def run_methods(args: argparse.Namespace) -> int:
    """Each method's name, title and description."""
    from .methods import METHODS

    for name, method in METHODS.items():
        doc = method.describe().splitlines()
        print(f"{name:<10} {method.title}")
        for line in doc[2:]:
            print(f"           {line.strip()}" if line.strip() else "")
        print()
    return EXIT_OK


COMMANDS = (Command("derive", add_derive_parser, run_derive), Command("methods", add_methods_parser, run_methods))
