"""What every ``nhbridge`` command shares: the command record, argument types, common options and the run context.

Each stage's ``command.py`` exposes ``COMMANDS``, a tuple of :class:`Command` (name, ``add_parser(subparsers)``,
``run(args) -> int``); :mod:`bridge.cli` registers them in the order users see and maps errors to exit codes.
The helpers here give every command the same ``--set``, ``--progress``/``--quiet``, method and budget options
and the same loading, derivation and progress lines.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, NamedTuple

from .errors import BridgeError

EXIT_OK, EXIT_FAIL, EXIT_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130

DEFAULT_TIMEOUT = 600.0  # seconds of symbolic work (derivation, display, export) before a command gives up


class Command(NamedTuple):
    """One ``nhbridge`` sub-command.

    Attributes
    ----------
    name : str
        The sub-command's name on the command line.
    add_parser : callable
        ``add_parser(subparsers) -> None``: adds the sub-command's parser and options.
    run : callable
        ``run(args) -> int``: runs it on the parsed arguments and returns the exit code; bad input raises
        :class:`~bridge.errors.BridgeError` (mapped to exit code 2 by :mod:`bridge.cli`).
    """

    name: str
    add_parser: Callable[[Any], None]
    run: Callable[[argparse.Namespace], int]


# --- argument types -------------------------------------------------------------------------------------------


def floats(text: str, count: int, what: str) -> tuple[float, ...]:
    """``count`` comma-separated numbers, e.g. ``--baumgarte 10,25``."""
    try:
        values = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{what} must be {count} comma-separated numbers, got {text!r}") from None
    if len(values) != count:
        raise argparse.ArgumentTypeError(f"{what} must be {count} comma-separated numbers, got {text!r}")
    return values


def baumgarte(text: str) -> tuple[float, float]:
    """``--baumgarte ALPHA,BETA``."""
    a, b = floats(text, 2, "--baumgarte")
    return a, b


def positive(text: str) -> float:
    """Parse a positive number (seconds, tolerances, GiB)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return v


def names(text: str) -> tuple[str, ...]:
    """Comma-separated names, blanks dropped (``--independent x,y``)."""
    return tuple(x.strip() for x in text.split(",") if x.strip())


def assignment(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` of ``--set``."""
    from .model.overrides import split_assignment

    try:
        return split_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


# --- common options -------------------------------------------------------------------------------------------


def add_set_option(parser: argparse.ArgumentParser) -> None:
    """``--set NAME=VALUE`` (repeatable): parameters, start positions, start velocities der(q), input starts."""
    parser.add_argument("--set", dest="values", type=assignment, action="append", default=[], metavar="NAME=VALUE",
                        help="change a parameter, a start position q, a start velocity der(q) or an input's start "
                             "value (repeatable; e.g. --set m=2.5 --set 'der(phi)=3'); the dependent start values "
                             "are then recomputed from the constraints")


def add_progress_options(parser: argparse.ArgumentParser) -> None:
    """``--progress``/``--quiet``: the same on every long command."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--progress", action="store_true",
                       help="progress lines on stderr (default: only when stderr is a terminal)")
    group.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def add_method_options(parser: argparse.ArgumentParser, default: str | None = "lagrange",
                       default_text: str = "lagrange") -> None:
    """Add the derivation options of the commands that derive.

    The options are the method, the split, the stabilisation, the budgets, ``--set`` and the progress lines.
    """
    from .derivation.methods import METHODS

    parser.add_argument("--method", "-m", choices=list(METHODS), default=default,
                        help=f"derivation method (default: {default_text})")
    parser.add_argument("--independent", type=names, default=None, metavar="X,Y",
                        help="independent velocities for reduced methods (default: [method] independent of the "
                             "file, else chosen automatically)")
    parser.add_argument("--baumgarte", type=baumgarte, default=None, metavar="ALPHA,BETA",
                        help="Baumgarte stabilisation of the constraints, lagrange and nielsen only "
                             "(default: none)")
    parser.add_argument("--timeout", type=positive, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help="stop a derivation (or export) that takes longer, with exit code 1 "
                             f"(default: {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory-limit", type=positive, default=None, metavar="GIB",
                        help="stop a derivation (or export) whose memory grows past this many GiB, with exit code 1 "
                             "(default: half the physical memory, at most 8)")
    add_set_option(parser)
    add_progress_options(parser)


# --- the run context ------------------------------------------------------------------------------------------


def set_values(args: argparse.Namespace) -> dict[str, str]:
    """Return the ``--set`` values by name; a name given twice is bad input."""
    out: dict[str, str] = {}
    for name, value in getattr(args, "values", None) or []:
        if name in out:
            raise BridgeError(f"--set {name}: given twice ({out[name]} and {value}); give each name once")
        out[name] = value
    return out


def load(args: argparse.Namespace, path: str):
    """Load the system in ``path`` with the ``--set`` values applied."""
    from .model.loader import load_system

    return load_system(path, set_values(args) or None)


def is_tty(stream) -> bool:
    """Whether ``stream`` is a terminal (False for closed or replaced streams)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """Progress lines on stderr for steps that may take seconds.

    They are shown on a terminal or with --progress, never with --quiet (so CI logs stay clean).
    """

    def __init__(self, args: argparse.Namespace):
        self.on = bool(getattr(args, "progress", False)) or (
            not getattr(args, "quiet", False) and is_tty(sys.stderr))

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


def budget(args: argparse.Namespace, what: str) -> AbstractContextManager:
    """Return the time (``--timeout``) and memory (``--memory-limit``) budget of symbolic work.

    Symbolic work is the derivation, CSE and export.
    """
    from .derivation.deadline import budget as symbolic_budget
    from .derivation.deadline import default_memory_limit

    gib = getattr(args, "memory_limit", None)
    return symbolic_budget(getattr(args, "timeout", None), int(gib * 2**30) if gib else default_memory_limit(), what)


def derive(args: argparse.Namespace, system, method: str | None = None, count: bool = False):
    """Derive the equations of ``system`` by the chosen method, with the split and stabilisation from the options."""
    from .derivation.methods import METHODS

    name = method or args.method or "lagrange"
    with (Progress(args).step(f"deriving {system.name} ({name})"),
          budget(args, f"the derivation of {system.name} by {name}")):
        return METHODS[name].derive(system, args.independent or system.independent, args.baumgarte, count=count)
