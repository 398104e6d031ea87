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
    """Base class: a problem the user can fix (bad input, unsupported system, missing tool).

    The message is one paragraph per problem, ``<file>: <entry>: <what is wrong>. <how to fix>``; the command line
    prints it and exits with code 2, without a traceback.

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems; a string is one problem without a place or hint.

    Attributes
    ----------
    problems : tuple of Problem
        The problems, in the order they were found.

    Examples
    --------
    >>> from bridge.errors import BridgeError, Problem
    >>> err = BridgeError([Problem("parameters.m", "must be positive", "give a mass above 0", "pendulum.toml"),
    ...                    Problem("coordinates.x.start", "is not a number", source="pendulum.toml")])
    >>> print(err)
    pendulum.toml: parameters.m: must be positive. Give a mass above 0.
    pendulum.toml: coordinates.x.start: is not a number.
    >>> len(err.problems)
    2
    """

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem("", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems: tuple[Problem, ...] = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class SystemFileError(BridgeError):
    """The system file (or the equivalent sympy input) is invalid.

    Every problem of the input is reported at once, each with its TOML entry and a hint.

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems, as for :class:`BridgeError`.

    Examples
    --------
    >>> import bridge
    >>> try:
    ...     bridge.parse_system('''
    ... name = "Bad"
    ... [coordinates]
    ... x = { start = 0.0 }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... ''')
    ... except bridge.SystemFileError as err:
    ...     print(err.problems[0].entry, "|", err.problems[0].hint)
    energy.kinetic | declare it under [coordinates], [parameters], [inputs] or [definitions]
    """


class DerivationError(BridgeError):
    """A method cannot derive equations for this system (e.g. not a Chaplygin system).

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems, as for :class:`BridgeError`.

    Examples
    --------
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1 }
    ... [parameters]
    ... m = { value = 2.0 }
    ... k = { value = 8.0 }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... ''')
    >>> try:
    ...     bridge.derive(system, "chaplygin")
    ... except bridge.DerivationError as err:
    ...     print(err.problems[0].message)
    method 'chaplygin' does not apply to Oscillator: it has no nonholonomic constraint (use lagrange)
    """


class SimulationError(BridgeError):
    """Numerical integration cannot continue (singular split, singular mass matrix, NaN), or bad run settings.

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems, as for :class:`BridgeError`.

    Examples
    --------
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1 }
    ... [parameters]
    ... m = { value = 2.0 }
    ... k = { value = 8.0 }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... ''')
    >>> try:
    ...     bridge.simulate(bridge.derive(system), 1.0, parameters={"c": 0.5})
    ... except bridge.SimulationError as err:
    ...     print(err)
    unknown parameter 'c'; parameters: m, k.
    """


class SplitLimitError(SimulationError):
    """A reduced method's split of the velocities became singular and the method has no other usable split.

    A limit of the method's form for this motion, not a numerical failure.
    """


class ExportError(BridgeError):
    """Writing Modelica, C or an FMU failed.

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems, as for :class:`BridgeError`.

    Examples
    --------
    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1 }
    ... [parameters]
    ... m = { value = 2.0 }
    ... k = { value = 8.0 }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... ''')
    >>> try:
    ...     bridge.write_modelica(bridge.derive(system), "Oscillator.txt")
    ... except bridge.ExportError as err:
    ...     print(err)
    Oscillator.txt: a Modelica file must end in .mo.
    """


class CompilerNotFoundError(ExportError):
    """No C compiler to build an FMU with (``$CC``, ``cc``, ``gcc`` or ``clang``); reported in one line."""


class ValidationError(BridgeError):
    """A validation run could not be carried out (a compiler rejected a model, a cross-check input is invalid).

    A run that is carried out and misses its tolerance is no error: it is a failed run of the campaign.

    Parameters
    ----------
    problems : list of Problem, Problem or str
        The problems, as for :class:`BridgeError`.

    Examples
    --------
    >>> import bridge
    >>> err = bridge.ValidationError("Rumoca rejected the exported model Oscillator")
    >>> isinstance(err, bridge.BridgeError), str(err)
    (True, 'Rumoca rejected the exported model Oscillator.')
    """


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
