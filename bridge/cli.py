"""The ``nhbridge`` command line: the registry of commands and the mapping from errors to exit codes.

Each command lives in its stage's ``command.py`` as a :class:`~bridge.commandline.Command` (name,
``add_parser(subparsers)``, ``run(args) -> int``); the options every command shares are in
:mod:`bridge.commandline`. Exit codes: 0 success, 1 a run failed (e.g. the simulation hit a singularity),
2 bad input, 130 interrupted. Errors are printed as paragraphs, never as tracebacks.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache

from .atomic import guard_process, interrupt_pending
from .commandline import EXIT_FAIL, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, Command
from .errors import BridgeError, CompilerNotFoundError, SimulationError
from .version import __version__

__all__ = ["EXIT_FAIL", "EXIT_INPUT", "EXIT_INTERRUPTED", "EXIT_OK", "ORDER", "build_parser", "commands", "main"]

# the sub-commands in the order ``nhbridge --help`` lists them
ORDER = ("check", "derive", "simulate", "modelica", "fmu", "methods", "validate", "crosscheck", "cosim", "ssp",
         "sweep", "linearize", "controller", "animate")


@cache
def commands() -> dict[str, Command]:
    """Return every sub-command by name, in :data:`ORDER`.

    The stages' command modules are imported on first use, so ``import bridge.cli`` stays light (the stage
    packages bring sympy, numpy, scipy).
    """
    from .animation import command as animation
    from .control import command as control
    from .cosim import command as cosim
    from .derivation import command as derivation
    from .fmu import command as fmu
    from .linearization import command as linearization
    from .model import command as model
    from .modelica import command as modelica
    from .simulation import command as simulation
    from .sweeps import command as sweeps
    from .validation import command as validation

    stages = (model, derivation, simulation, modelica, fmu, validation, cosim, sweeps, linearization, control,
              animation)
    by_name = {command.name: command for stage in stages for command in stage.COMMANDS}
    unlisted = sorted(set(by_name) - set(ORDER))
    if unlisted:  # a command module's new entry must be placed in the help order
        raise RuntimeError(f"commands missing from bridge.cli.ORDER: {', '.join(unlisted)}")
    return {name: by_name[name] for name in ORDER}


def build_parser() -> argparse.ArgumentParser:
    """Build the ``nhbridge`` parser with every registered sub-command."""
    p = argparse.ArgumentParser(prog="nhbridge", description="Equations of motion of nonholonomic systems: "
                                "derive, simulate, export to Modelica and FMI.")
    p.add_argument("--version", action="version", version=f"nhbridge {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in commands().values():
        command.add_parser(sub)
    return p


class _PipeGuard:
    """A text stream whose reader may go away (``nhbridge ... | head -1``).

    After a broken pipe the rest of the output is dropped (the descriptor is pointed at /dev/null), so the run
    ends quietly with its own code.
    """

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
    """Stdout and stderr guarded against a reader that closed the pipe, for the duration of one run."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _PipeGuard(sys.stdout), _PipeGuard(sys.stderr)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        sys.stdout, sys.stderr = saved


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default: ``sys.argv[1:]``), run the command and return its exit code."""
    with _quiet_closed_pipes():
        parser = build_parser()
        args = parser.parse_args(argv)
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    """One command; bad input (a BridgeError) exits 2 and a failed run 1, each with a paragraph, no traceback."""
    guard_process()  # SIGTERM runs the finally blocks; leftovers of killed runs are removed
    try:
        return commands()[args.command].run(args)
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
        return EXIT_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main())
