"""``nhbridge check``: check system files and report their structure.

A command module ranks with :mod:`bridge.cli` (it may use every stage): ``check`` derives each system once to
test the mass matrix at the start state and lists the methods that apply.
"""

from __future__ import annotations

import argparse
import sys

from ..commandline import EXIT_INPUT, EXIT_OK, Command, add_set_option, load
from ..errors import BridgeError


def add_parser(subparsers) -> None:
    """Add ``nhbridge check`` to the CLI's subparsers."""
    c = subparsers.add_parser("check", help="check system files and report their structure")
    c.add_argument("files", nargs="+", metavar="FILE", help="system files (.toml)")
    add_set_option(c)


def run(args: argparse.Namespace) -> int:
    """Check every file; exit code 2 when any is invalid (each problem printed, the others still checked)."""
    from ..derivation.methods import METHODS

    failures = 0
    for path in args.files:
        try:
            system = load(args, path)
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


COMMANDS = (Command("check", add_parser, run),)
