"""What both linear exporters (Modelica, FMU) need: the checked :class:`LinearModel` and the names in it.

:func:`checked` verifies the shapes (``A: n x n``, ``B: n x m``, ``C: p x n``, ``D: p x m``, ``x0: n``, ``u0: m``,
``y0: p``, one name and one unit per state, input and output), that every entry is a finite real number and that
the names are unique and free; all problems are reported at once as one :class:`~bridge.errors.ExportError`.

Both exports carry *absolute* states, inputs and outputs (what a user connects and plots):

    der(x) = A (x - x0) + B (u - u0),    y = y0 + C (x - x0) + D (u - u0),

with the states starting at ``x_start`` (default ``x0``, the operating point).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ExportError, Problem
from .model import LinearModel

#: names of the exported matrices and operating point (Modelica parameters, FMU parameter arrays), plus FMI's time
RESERVED = ("A", "B", "C", "D", "x0", "u0", "y0", "time")
_DER = re.compile(r"^der\(\s*(?P<name>[^,()]+?)\s*(?:,\s*(?P<order>\d+)\s*)?\)$")


@dataclass(frozen=True)
class CheckedLinear:
    """A :class:`LinearModel` whose arrays are checked float arrays of consistent shapes."""

    lin: LinearModel
    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray
    x0: np.ndarray
    u0: np.ndarray
    y0: np.ndarray
    x_start: np.ndarray

    @property
    def n(self) -> int:
        """The number of states (rows of A)."""
        return self.A.shape[0]

    @property
    def m(self) -> int:
        """The number of inputs (columns of B)."""
        return self.B.shape[1]

    @property
    def p(self) -> int:
        """The number of outputs (rows of C)."""
        return self.C.shape[0]


def derivative_name(state: str) -> str:
    """Return the FMI name of the time derivative of a state.

    ``der(theta)`` for ``theta``, ``der(theta,2)`` for ``der(theta)``, ``der(theta,3)`` for ``der(theta,2)``.
    """
    match = _DER.match(state)
    if match is None:
        return f"der({state})"
    order = int(match.group("order") or 1)
    return f"der({match.group('name')},{order + 1})"


def modelica_name(name: str) -> str:
    """Return the Modelica spelling of a state name before quoting.

    ``der(theta)`` -> ``der_theta`` (as the nonlinear export names velocities), ``der(theta,2)`` -> ``der_der_theta``;
    other names unchanged.
    """
    match = _DER.match(name)
    if match is None:
        return name
    return "der_" * int(match.group("order") or 1) + match.group("name")


def _array(problems: list[Problem], what: str, value, shape: tuple[int, ...], rows: Sequence[str],
           cols: Sequence[str]) -> np.ndarray:
    """Return ``value`` as a float array of ``shape``; a problem (and zeros) when it is not one or is not finite."""
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError) as exc:
        problems.append(Problem(what, f"is not an array of real numbers ({exc})",
                                "give real numbers (a complex or symbolic entry cannot be exported)"))
        return np.zeros(shape)
    if arr.shape != shape:
        problems.append(Problem(what, f"has the shape {arr.shape}, expected {shape} from the names of the states, "
                                      "inputs and outputs",
                                "build the LinearModel with one row/column per named state, input and output"))
        return np.zeros(shape)
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        first = tuple(int(i) for i in bad[0])
        where = (f"[{rows[first[0]]}, {cols[first[1]]}]" if len(first) == 2 else f"[{rows[first[0]]}]")
        problems.append(Problem(what, f"has {len(bad)} non-finite entr{'y' if len(bad) == 1 else 'ies'} "
                                      f"(first: {what}{where} = {arr[first]})",
                                "the linearization is not defined at this operating point (a singularity or a "
                                "domain error); choose another operating point"))
    return arr


def _names(problems: list[Problem], what: str, names: Sequence[str], units: Sequence[str]) -> None:
    if len(units) != len(names):
        problems.append(Problem(what, f"{len(names)} names but {len(units)} units", "give one unit per name "
                                "(an empty string for none)"))
    for name in names:
        if not isinstance(name, str) or not name.strip():
            problems.append(Problem(what, f"the name {name!r} is empty or not a string", "name every entry"))
        elif name in RESERVED:
            problems.append(Problem(what, f"the name {name!r} is one the export uses itself "
                                          f"({', '.join(RESERVED)})", "rename it in the system file"))


def checked(lin: LinearModel, x_start: Sequence[float] | None = None, static: bool = False) -> CheckedLinear:
    """Return the model's arrays, checked (see the module docstring); an :class:`ExportError` listing every problem.

    ``static``: a model without states (``y = y0 + D (u - u0)``, e.g. a state-feedback controller) is accepted.
    """
    if not isinstance(lin, LinearModel):
        raise ExportError(f"expected a bridge.linearization.LinearModel, got {type(lin).__name__}")
    problems: list[Problem] = []
    states, inputs, outputs = list(lin.states), list(lin.inputs), list(lin.outputs)
    n, m, p = len(states), len(inputs), len(outputs)
    if n == 0 and not static:
        problems.append(Problem("states", "the linear model has no states",
                                "linearize a system with at least one non-cyclic coordinate"))
    _names(problems, "states", states, lin.state_units)
    _names(problems, "inputs", inputs, lin.input_units)
    _names(problems, "outputs", outputs, lin.output_units)
    every = states + inputs + outputs
    dupes = sorted({x for x in every if every.count(x) > 1})
    spelled = [modelica_name(x) for x in every]
    clash = sorted({x for x, s in zip(every, spelled) if spelled.count(s) > 1} - set(dupes))
    if dupes:
        problems.append(Problem("names", f"used twice among states, inputs and outputs: {', '.join(dupes)}",
                                "give every state, input and output its own name"))
    if clash:
        problems.append(Problem("names", f"{', '.join(clash)} have the same Modelica spelling",
                                "rename one of them (der(q) is spelled der_q)"))
    arrays = {
        "A": _array(problems, "A", lin.A, (n, n), states, states),
        "B": _array(problems, "B", lin.B, (n, m), states, inputs),
        "C": _array(problems, "C", lin.C, (p, n), outputs, states),
        "D": _array(problems, "D", lin.D, (p, m), outputs, inputs),
        "x0": _array(problems, "x0", lin.x0, (n,), states, ()),
        "u0": _array(problems, "u0", lin.u0, (m,), inputs, ()),
        "y0": _array(problems, "y0", lin.y0, (p,), outputs, ()),
    }
    start = arrays["x0"] if x_start is None else _array(problems, "x_start", x_start, (n,), states, ())
    if problems:
        raise ExportError([Problem(f"{lin.system} linear model: {pr.entry}", pr.message, pr.hint)
                           for pr in problems])
    return CheckedLinear(lin, x_start=np.array(start, dtype=float), **{k: np.array(v) for k, v in arrays.items()})


def default_stop_time(lin: CheckedLinear) -> float:
    """Return a stop time that shows the dynamics.

    20 times the slowest time scale ``1/|lambda|`` of the non-zero eigenvalues of A (about three periods of the slowest
    oscillation), two significant digits, clamped to [1e-3, 1e4] s; 10 s when every eigenvalue is zero.
    """
    eig = np.abs(np.linalg.eigvals(lin.A)) if lin.n else np.zeros(0)
    scale = max(1.0, float(np.abs(lin.A).max()) if lin.A.size else 1.0)
    eig = eig[eig > 1e-9 * scale]
    if eig.size == 0:
        return 10.0
    stop = 20.0 / float(eig.min())
    return float(min(1e4, max(1e-3, float(f"{stop:.2g}"))))


def finite_number(value: float, what: str) -> float:
    """Return ``value`` as a float when it is positive and finite.

    Parameters
    ----------
    value : float
        The value to check.
    what : str
        What it is, for the message (e.g. ``"--stop-time"``).

    Returns
    -------
    float
        The value.

    Raises
    ------
    ExportError
        When the value is not a positive finite number.
    """
    value = float(value)
    if not math.isfinite(value) or value <= 0:
        raise ExportError(f"{what} must be a positive finite number, got {value}")
    return value
