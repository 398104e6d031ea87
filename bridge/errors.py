"""Error hierarchy.

Every error a user can cause is a :class:`BridgeError`; the CLI prints it as one
paragraph per problem and exits with code 2, never with a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One problem: where (file and entry), what is wrong and how to fix it."""

    entry: str
    message: str
    hint: str = ""
    source: str = ""

    def __str__(self) -> str:
        where = ": ".join(p for p in (self.source, self.entry) if p)
        text = _sentence(self.message)
        if self.hint:
            text += " " + _sentence(self.hint[0].upper() + self.hint[1:])
        return f"{where}: {text}" if where else text


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "?", "!")) else text + "."


class BridgeError(Exception):
    """Base class: a problem the user can fix (bad input, unsupported system, missing tool)."""

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class SystemFileError(BridgeError):
    """The system file (or the equivalent sympy input) is invalid."""


class DerivationError(BridgeError):
    """A method cannot derive equations for this system (e.g. not a Chaplygin system)."""


class SimulationError(BridgeError):
    """Numerical integration cannot continue (singular split, singular mass matrix, NaN)."""


class SplitLimitError(SimulationError):
    """A reduced method's split of the velocities became singular and the method has no other usable split.

    A limit of the method's form for this motion, not a numerical failure.
    """


class ExportError(BridgeError):
    """Writing Modelica, C or an FMU failed."""


class CompilerNotFoundError(ExportError):
    """No C compiler to build an FMU with (``$CC``, ``cc``, ``gcc`` or ``clang``); reported in one line."""


class ValidationError(BridgeError):
    """A validation run could not be carried out."""


class ProblemCollector:
    """Collects problems so that all of them are reported at once."""

    def __init__(self, source: str = ""):
        self.source = source
        self.problems: list[Problem] = []

    def add(self, entry: str, message: str, hint: str = "") -> None:
        """Record a problem of the input.

        Parameters
        ----------
        entry : str
            Where: a TOML path such as ``parameters.m`` or ``constraints.nonholonomic[2]``.
        message : str
            What is wrong.
        hint : str, optional
            How to fix it.
        """
        self.problems.append(Problem(entry, message, hint, self.source))

    def __bool__(self) -> bool:
        return bool(self.problems)

    def raise_if_any(self, cls: type[BridgeError] = SystemFileError) -> None:
        """Raise every recorded problem at once, if there is any.

        Parameters
        ----------
        cls : type, optional
            The :class:`BridgeError` subclass to raise.

        Raises
        ------
        BridgeError
            An instance of ``cls`` holding all the problems.
        """
        if self.problems:
            raise cls(self.problems)
