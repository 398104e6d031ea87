"""State feedback on a linear model: ``u = u0 - K (x - x0)``, designed by LQR or given, exported as an FMU.

The law acts on the states of a :class:`~bridge.linearization.model.LinearModel` (the independent coordinates
and speeds of the split, e.g. a bicycle's ``phi, delta, der(phi), der(delta)``) and drives the plant's inputs.
Its closed loop is ``x' = (A - B K) x``. Three consumers:

- :func:`controller_fmu`: the law as an FMI 2/3 FMU on the fixed C runtime (a linear model without states,
  ``y = y0 + D (u - u0)`` with ``D = -K``, ``u0 = x0``, ``y0 = u0``), whose inputs are named after the plant's
  outputs that measure the states (or after the states) and whose outputs are the plant's inputs, so a
  co-simulation scenario connects plant and controller by name;
- :func:`closed_loop_system`: the nonlinear system with each input replaced by the law, for native runs of the
  closed loop (the reference of a co-simulation) and for linearizing the closed loop again;
- :meth:`StateFeedback.eigenvalues`: the closed-loop eigenvalues ``eig(A - B K)``.

Example: a mass on a spring ``x'' = -4 x + F`` stabilised by LQR.

>>> import numpy as np
>>> from bridge.linearization.model import LinearModel
>>> lin = LinearModel("oscillator", "lagrange", ("x", "der(x)"), ("m", "m/s"), ("F",), ("N",), (), (),
...                   np.array([[0.0, 1.0], [-4.0, 0.0]]), np.array([[0.0], [1.0]]), np.zeros((0, 2)),
...                   np.zeros((0, 1)), np.zeros(2), np.zeros(1), np.zeros(0))
>>> law = lqr(lin, np.eye(2), np.eye(1))
>>> bool(np.all(law.eigenvalues().real < 0))
True
"""

from __future__ import annotations

import csv
import io
import math
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import sympy as sp

from ..errors import BridgeError, Problem, ProblemCollector
from ..linearization.model import LinearModel, control_module
from ..model.system import System

#: the weights file's keys
WEIGHT_KEYS = ("Q", "R")
#: how far below zero an eigenvalue of Q (relative to its largest) may be and still count as semi-definite
PSD_TOL = 1e-12


class ControlError(BridgeError):
    """A gain, weights or plant that cannot make a controller (bad input: exit code 2)."""


@dataclass(frozen=True)
class StateFeedback:
    """The law ``u = u0 - K (x - x0)`` on the states of ``plant``.

    Parameters
    ----------
    plant : LinearModel
        The linear model the law was designed on; its states ``x``, operating point ``(x0, u0)`` and inputs.
    K : numpy.ndarray
        The gain, one row per plant input and one column per plant state.
    measured : tuple of str
        The controller's input names, one per state: a plant output that measures the state, else the state.
    design : str
        How ``K`` was obtained (``"lqr"`` or ``"given"``), for reports.
    """

    plant: LinearModel
    K: np.ndarray
    measured: tuple[str, ...]
    design: str = "given"

    def __post_init__(self) -> None:
        n, m = len(self.plant.states), len(self.plant.inputs)
        K = np.atleast_2d(np.asarray(self.K, dtype=float))
        problems = []
        if m == 0:
            problems.append(Problem("plant", f"{self.plant.system} has no inputs: there is nothing to control",
                                    "declare the actuator as an [inputs] entry acting in [forces]"))
        elif K.shape != (m, n):
            states = ", ".join(self.plant.states)
            problems.append(Problem("gain", f"K is {K.shape[0]}x{K.shape[1]}, but the plant has {m} input(s) "
                                    f"({', '.join(self.plant.inputs)}) and {n} state(s) ({states})",
                                    f"give a {m}x{n} matrix: one row per input, one column per state"))
        elif not np.all(np.isfinite(K)):
            problems.append(Problem("gain", "K has entries that are not finite numbers", "give finite numbers"))
        if len(self.measured) != n or len(set(self.measured)) != n:
            problems.append(Problem("measured", f"expected {n} distinct measured names, got {list(self.measured)}",
                                    "name one measured signal per state"))
        if problems:
            raise ControlError(problems)
        object.__setattr__(self, "K", K)

    @property
    def closed_loop(self) -> LinearModel:
        """The linear closed loop ``x' = (A - B K) x + B v``, ``y = (C - D K) x + D v``.

        ``v`` is an input added on top of the law, zero in operation.
        """
        p = self.plant
        return replace(p, A=p.A - p.B @ self.K, C=p.C - p.D @ self.K)

    def eigenvalues(self) -> np.ndarray:
        """Return the closed-loop eigenvalues ``eig(A - B K)``."""
        return np.linalg.eigvals(self.plant.A - self.plant.B @ self.K)

    def is_stable(self, tol: float = 1e-9) -> bool:
        """Return whether every closed-loop eigenvalue's real part is below ``-tol * max(1, |lambda|)``."""
        eig = self.eigenvalues()
        return bool(np.all(eig.real < -tol * np.maximum(1.0, np.abs(eig))))

    def controller_model(self) -> LinearModel:
        """Return the law as a linear model without states.

        Inputs the measured states, outputs the plant's inputs, ``y = y0 + D (u - u0)`` with ``D = -K``, ``u0 = x0`` and
        ``y0 = u0`` of the plant.
        """
        p = self.plant
        n, m = len(p.states), len(p.inputs)
        return LinearModel(system=f"{p.system}_controller", method=p.method, states=(), state_units=(),
                           inputs=self.measured, input_units=p.state_units, outputs=p.inputs,
                           output_units=p.input_units, A=np.zeros((0, 0)), B=np.zeros((0, n)), C=np.zeros((m, 0)),
                           D=-self.K, x0=np.zeros(0), u0=np.array(p.x0, dtype=float),
                           y0=np.array(p.u0, dtype=float), point=dict(p.point))

    def report(self) -> str:
        """Return the gain and the open- and closed-loop eigenvalues as text."""
        p = self.plant
        lines = [f"{self.design} state feedback for {p.system}: {', '.join(p.inputs)} = u0 - K (x - x0)",
                 f"  states x: {', '.join(p.states)}", f"  measured by: {', '.join(self.measured)}", "  K ="]
        lines += ["    [" + ", ".join(f"{v: .6g}" for v in row) + "]" for row in self.K]
        lines.append("  open-loop eigenvalues:   " + _eigen_text(np.linalg.eigvals(p.A)))
        lines.append("  closed-loop eigenvalues: " + _eigen_text(self.eigenvalues()))
        if self.is_stable():
            lines.append("  the closed loop is asymptotically stable")
        else:
            lines.append("  WARNING: the closed loop is NOT asymptotically stable (an eigenvalue has real part >= 0)")
        return "\n".join(lines) + "\n"


def _eigen_text(eig: np.ndarray) -> str:
    order = np.lexsort((eig.imag, eig.real))
    scale = max(1.0, float(np.abs(eig).max()) if eig.size else 1.0)

    def one(z: complex) -> str:
        re_, im = (0.0 if abs(v) < 1e-12 * scale else v for v in (z.real, z.imag))
        return f"{re_:.6g}" if im == 0 else f"{re_:.6g}{im:+.6g}j"

    return ", ".join(one(eig[k]) for k in order) or "(none)"


def _state_symbols(system: System) -> dict[str, sp.Symbol]:
    """Return the symbol of every name a linear model's state may have: ``q`` and ``der(q)``."""
    return {c.name: c.symbol for c in system.coordinates} | {
        f"der({c.name})": c.velocity_symbol for c in system.coordinates}


def measured_names(system: System | None, plant: LinearModel) -> tuple[str, ...]:
    """Return the name by which each state of ``plant`` is measured.

    The name of an output of ``system`` whose expression is exactly that state (``roll = "phi"`` measures ``phi``), else
    the state's own name with ``der(q)`` spelled ``der_q``.
    """
    by_expr: dict[sp.Expr, str] = {}
    if system is not None:
        for name, expr in system.outputs.items():
            by_expr.setdefault(sp.sympify(expr), name)
    symbols = _state_symbols(system) if system is not None else {}
    names = []
    for state in plant.states:
        sym = symbols.get(state)
        names.append(by_expr.get(sym) if sym is not None and sym in by_expr else
                     state.replace("der(", "der_").replace(")", ""))
    return tuple(names)


def lqr(plant: LinearModel, Q: Any, R: Any, measured: Sequence[str] | None = None) -> StateFeedback:
    """Return the linear-quadratic regulator of ``plant``.

    ``K`` minimising ``integral(x' Q x + u' R u) dt``, from python-control's ``lqr`` (the continuous algebraic Riccati
    equation).

    Parameters
    ----------
    plant : LinearModel
        The linear model (from :func:`bridge.linearize`).
    Q, R : array_like
        State and input weights, ``n x n`` symmetric positive semi-definite and ``m x m`` symmetric positive
        definite; a 1-D array is a diagonal.
    measured : sequence of str, optional
        The controller's input names (default: the states' names, ``der(q)`` spelled ``der_q``).

    Returns
    -------
    StateFeedback
        The law, with ``design = "lqr"``.

    Raises
    ------
    ControlError
        Weights of the wrong shape, not symmetric, not (semi-)definite, or a plant LQR cannot stabilise.
    """
    n, m = len(plant.states), len(plant.inputs)
    pc = ProblemCollector()
    Qm = _weight(pc, "Q", Q, n, list(plant.states), definite=False)
    Rm = _weight(pc, "R", R, m, list(plant.inputs), definite=True)
    if m == 0:
        pc.add("plant", f"{plant.system} has no inputs: there is nothing to control",
               "declare the actuator as an [inputs] entry acting in [forces]")
    pc.raise_if_any(ControlError)
    control = control_module()
    try:
        K, _, _ = control.lqr(plant.to_control(), Qm, Rm)
    except Exception as exc:  # python-control raises ControlArgument, ValueError, LinAlgError, SlycotError...
        raise ControlError(f"lqr: python-control found no stabilising solution of the Riccati equation ({exc}); "
                           "check that the plant is stabilisable from its inputs (every unstable mode reachable) "
                           "and that Q weights every unstable mode") from exc
    names = tuple(measured) if measured is not None else measured_names(None, plant)
    return StateFeedback(plant, np.asarray(K, dtype=float), names, design="lqr")


def _weight(pc: ProblemCollector, what: str, value: Any, size: int, names: list[str], definite: bool) -> np.ndarray:
    try:
        W = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        pc.add(what, f"expected numbers, got {value!r}", f"give a {size}x{size} matrix or {size} diagonal weights")
        return np.zeros((size, size))
    if W.ndim == 1:
        W = np.diag(W)
    if W.shape != (size, size):
        pc.add(what, f"is {'x'.join(map(str, W.shape))}, expected {size}x{size} (one row and column per "
               f"{'state' if what == 'Q' else 'input'}: {', '.join(names)})",
               "give one weight per name or a full matrix")
        return np.zeros((size, size))
    if not np.all(np.isfinite(W)):
        pc.add(what, "has entries that are not finite numbers", "give finite numbers")
        return np.zeros((size, size))
    if not np.allclose(W, W.T, rtol=1e-12, atol=1e-12 * max(1.0, float(np.abs(W).max()))):
        pc.add(what, "is not symmetric", "give a symmetric matrix (W[i][j] == W[j][i])")
        return W
    eig = np.linalg.eigvalsh(W) if size else np.zeros(0)
    scale = max(1.0, float(np.abs(eig).max()) if eig.size else 1.0)
    if definite and eig.size and eig.min() <= PSD_TOL * scale:
        pc.add(what, f"is not positive definite (smallest eigenvalue {eig.min():.6g})",
               "give positive weights on the inputs: every input must cost something")
    elif not definite and eig.size and eig.min() < -PSD_TOL * scale:
        pc.add(what, f"is not positive semi-definite (smallest eigenvalue {eig.min():.6g})",
               "give non-negative weights on the states")
    return W


def read_weights(path: str | Path, plant: LinearModel) -> tuple[np.ndarray, np.ndarray]:
    """Read the weights ``Q`` and ``R`` of an LQR design from a TOML file.

    Per name (a diagonal) or as full matrices in the plant's order::

        [Q]                 # or Q = [[...], ...] with one row per state
        phi = 10.0
        "der(phi)" = 1.0    # unnamed states weigh 0
        [R]
        T_delta = 0.1

    Raises :class:`ControlError` naming every problem (unknown names with a suggestion, missing tables).
    """
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ControlError(f"{path}: cannot read the weights file ({exc.__class__.__name__})") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ControlError(f"{path}: not valid TOML ({exc})") from exc
    pc = ProblemCollector(str(path))
    for key in data:
        if key not in WEIGHT_KEYS:
            pc.add(key, "is not a key of a weights file", "give the tables [Q] (states) and [R] (inputs)")
    result = []
    for key, names in (("Q", list(plant.states)), ("R", list(plant.inputs))):
        value = data.get(key)
        if value is None:
            pc.add(key, "is missing", f"give [{key}] with a weight per name ({', '.join(names)})")
            result.append(np.zeros((len(names), len(names))))
        elif isinstance(value, Mapping):
            diag = np.zeros(len(names))
            for name, weight in value.items():
                if name not in names:
                    import difflib

                    close = difflib.get_close_matches(name, names, 1)
                    pc.add(f"{key}.{name}", f"is not a {'state' if key == 'Q' else 'input'} of {plant.system}",
                           f"did you mean {close[0]!r}?" if close else f"use one of {', '.join(names)}")
                elif isinstance(weight, bool) or not isinstance(weight, int | float) or not math.isfinite(weight):
                    pc.add(f"{key}.{name}", f"expected a finite number, got {weight!r}", "give a number")
                else:
                    diag[names.index(name)] = float(weight)
            result.append(np.diag(diag))
        else:
            result.append(value)
    pc.raise_if_any(ControlError)
    return result[0], result[1]


def read_gain(path: str | Path, plant: LinearModel) -> np.ndarray:
    """Read the gain ``K`` from a ``.npy`` file (no pickles) or a CSV file.

    One row per plant input, one column per state; a CSV may start with a header row naming the states (then the columns
    may come in any order).
    """
    path = Path(path)
    try:
        if path.suffix.lower() == ".npy":
            K = np.load(path, allow_pickle=False)
        else:
            K = _gain_csv(path.read_text(encoding="utf-8"), list(plant.states))
    except UnicodeDecodeError as exc:
        raise ControlError(f"{path}: cannot read the gain (not UTF-8 text)") from exc
    except OSError as exc:
        raise ControlError(f"{path}: cannot read the gain ({exc.strerror or exc.__class__.__name__})") from exc
    except ValueError as exc:  # our messages below, or numpy's for a .npy file that is not one
        raise ControlError(f"{path}: cannot read the gain: {exc}") from exc
    return np.atleast_2d(np.asarray(K, dtype=float))


def _gain_csv(text: str, states: list[str]) -> np.ndarray:
    """Return the matrix of a gain CSV (messages never quote the file: it may be any file the user pointed at)."""
    rows = [r for r in csv.reader(io.StringIO(text)) if r and any(c.strip() for c in r)]
    if not rows:
        raise ValueError("the file has no rows")
    header = [c.strip() for c in rows[0]]
    order = None
    if not all(_is_number(c) for c in header):
        if sorted(header) != sorted(states):
            raise ValueError(f"a header row must name every state once ({', '.join(states)})")
        order = [header.index(s) for s in states]
        rows = rows[1:]
    if not all(_is_number(c) for r in rows for c in r):
        raise ValueError("every entry after the header must be a number")
    K = np.array([[float(c) for c in r] for r in rows]) if rows else np.zeros((0, len(states)))
    return K if order is None else K[:, order]


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def check_against_system(system: System, weights: str | Path | None = None, gain: str | Path | None = None) -> None:
    """Check a weights file or a gain file against ``system`` before it is derived and linearized.

    What the linear model is not needed for: the file can be read; the names of ``[Q]`` are coordinates or their
    ``der(q)`` and those of ``[R]`` inputs; a table of diagonal weights is semi-definite (``Q``) or definite
    (``R``, every input weighed); ``R`` as a matrix has one row per input; ``K`` one row per input. The names of
    the states the split keeps, ``Q`` as a matrix and the columns of ``K`` are checked on the linear model
    (:func:`read_weights`, :func:`lqr`, :class:`StateFeedback`), with the same messages.

    Raises
    ------
    ControlError
        Naming every problem found, as the checks on the linear model would.
    """
    candidates = [name for c in system.coordinates for name in (c.name, f"der({c.name})")]
    inputs = [w.name for w in system.inputs]
    stand_in = _NamesOnly(tuple(candidates), tuple(inputs), system.name)
    if weights is not None:
        read_weights(weights, stand_in)  # type: ignore[arg-type]  # only its names are read
        data = tomllib.loads(Path(weights).read_text(encoding="utf-8"))  # read_weights read it already
        pc = ProblemCollector(str(weights))
        if isinstance(data["Q"], Mapping):
            _weight(pc, "Q", [data["Q"].get(n, 0.0) for n in candidates], len(candidates), candidates, False)
        R = data["R"]
        _weight(pc, "R", [R.get(n, 0.0) for n in inputs] if isinstance(R, Mapping) else R, len(inputs), inputs, True)
        pc.raise_if_any(ControlError)
    if gain is not None:
        path = Path(gain)
        if path.suffix.lower() != ".npy":
            try:
                text = path.read_text(encoding="utf-8")
                rows = [r for r in csv.reader(io.StringIO(text)) if any(c.strip() for c in r)]
            except UnicodeDecodeError as exc:
                raise ControlError(f"{path}: cannot read the gain (not UTF-8 text)") from exc
            except OSError as exc:
                raise ControlError(f"{path}: cannot read the gain ({exc.strerror or exc.__class__.__name__})") from exc
            except csv.Error:
                return  # read_gain says why, with the linear model
            if rows and not all(_is_number(c) for c in rows[0]):
                rows = rows[1:]  # the header names the states: checked on the linear model
            shape = (len(rows), max((len(r) for r in rows), default=0))
        else:
            if not path.is_file():
                raise ControlError(f"{path}: cannot read the gain (no such file)")
            try:
                shape = np.atleast_2d(np.load(path, allow_pickle=False, mmap_mode="r")).shape
            except (OSError, ValueError):
                return  # read_gain says why, with the linear model
        if inputs and len(shape) == 2 and shape[0] != len(inputs):
            raise ControlError(Problem("gain", f"K is {shape[0]}x{shape[1]}, but the plant has {len(inputs)} input(s) "
                                       f"({', '.join(inputs)})", "give one row per input, one column per state"))


@dataclass(frozen=True)
class _NamesOnly:
    """What :func:`read_weights` reads of a linear model: its states', inputs' and system's names."""

    states: tuple[str, ...]
    inputs: tuple[str, ...]
    system: str


def controller_fmu(feedback: StateFeedback, path: str | Path, fmi_version: int | str = "2.0",
                   name: str | None = None, platforms: Sequence[str] | str | None = None) -> Path:
    """Write the law as an FMU (Model Exchange and Co-Simulation, sources included) on the fixed C runtime.

    Its inputs are ``feedback.measured`` (start values the operating point ``x0``), its outputs the plant's
    inputs; ``K``, ``x0`` and ``u0`` are settable parameters (``D[i,j] = -K[i,j]``, ``u0[j]``, ``y0[i]``).
    ``platforms``: the binaries to carry, as for :func:`~bridge.fmu.build.build_fmu` (default the host's).
    Returns the path written (atomically).
    """
    from ..linearization.export_fmu import build_linear_fmu

    model = feedback.controller_model()
    return build_linear_fmu(model, path, fmi_version=fmi_version, name=name or model.system, platforms=platforms,
                            static=True)


def closed_loop_system(system: System, feedback: StateFeedback) -> System:
    """Return ``system`` with each input of the law replaced by ``u0 - K (x - x0)``: the nonlinear closed loop.

    Its states ``x`` are coordinates ``q`` and velocities ``der(q)`` of ``system``; the replaced inputs leave the
    system (other inputs stay). Systems with effort constraints, dynamic variables, friction or diodes are
    refused (the law would also have to enter their tables); derive the result by any method but kane (the
    body tables are dropped: the law enters the generalized forces).
    """
    p = feedback.plant
    symbols = _state_symbols(system)
    inputs = {u.name: u for u in system.inputs}
    pc = ProblemCollector(system.source)
    for s in p.states:
        if s not in symbols:
            pc.add("states", f"{s} is not a coordinate or velocity of {system.name}",
                   "close the loop on the system the linear model was taken from")
    for u in p.inputs:
        if u not in inputs:
            pc.add("inputs", f"{u} is not an input of {system.name}",
                   "close the loop on the system the linear model was taken from")
    if system.efforts or system.dynamic or system.friction or system.diodes:
        pc.add("system", "has effort constraints, dynamic variables, friction or diodes",
               "closing the loop natively covers systems without them; co-simulate the controller FMU instead")
    pc.raise_if_any(ControlError)
    x = sp.Matrix([symbols[s] for s in p.states])
    x0 = sp.Matrix([sp.Float(v, 17) for v in p.x0])
    law = {inputs[u].symbol: sp.Float(p.u0[k], 17) - sum(
        (sp.Float(feedback.K[k, j], 17) * (x[j] - x0[j]) for j in range(len(p.states))), sp.Integer(0))
        for k, u in enumerate(p.inputs)}

    def sub(e: sp.Expr) -> sp.Expr:
        return sp.sympify(e).xreplace(law)

    return replace(system, name=f"{system.name}_closed_loop",
                   inputs=tuple(u for u in system.inputs if u.name not in p.inputs),
                   kinetic=sub(system.kinetic), potential=sub(system.potential),
                   dissipation=sub(system.dissipation), forces={k: sub(v) for k, v in system.forces.items()},
                   outputs={k: sub(v) for k, v in system.outputs.items()},
                   definitions={k: sub(v) for k, v in system.definitions.items()},
                   holonomic=tuple(sub(e) for e in system.holonomic),
                   nonholonomic=tuple(sub(e) for e in system.nonholonomic), multibody=None)
