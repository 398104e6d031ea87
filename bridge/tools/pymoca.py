"""A second, independent Modelica compiler: pymoca (Modelica -> CasADi) integrated with CasADi's IDAS.

``pip install "pymoca==0.12.*" "casadi<3.7"`` (pymoca 0.12's generator calls ``MX.__div__``, gone in CasADi 3.7).

pymoca flattens the model into the implicit DAE ``r(t, x, x', z) = 0`` (states ``x``: the variables under
``der()``; algebraic ``z``: everything else). With ``w = (x', z)`` this is the semi-explicit DAE

    x' = w_x,     0 = r(t, x, w_x, w_z)

which is of index 1 exactly when ``dr/dw`` is regular (the index-1 form of the export: ``der(q) = v``,
``M(q) [v', lambda] = F``, the split and the temporaries). The states start at their ``start`` values (all
``fixed``); the consistent ``w(0)`` is computed from the model by Newton's method on ``r(0, x0, w) = 0``
(from the ``start`` values of the algebraic variables), then IDAS integrates it from ``(x0, w(0))``: the
algebraic part as ``z0`` and the derivatives ``w_x(0)`` as ``init_xdot``. (CasADi otherwise starts IDAS's
consistent initialisation IDACalcIC from ``x' = 0``; its Newton iteration for ``x'`` uses ``dr/dx' + dr/dx / c_j``
instead of ``dr/dx'``, and where a derivative enters a row of a small algebraic coefficient through ``dr/dx``
that iteration stalls: ``IDA_LINESEARCH_FAIL`` on the hydropulsator by chaplygin, whose split row
``0.003 s2 (1 + cos 2 psi) = 0.06 s1 sin 2 psi`` ties ``s2`` to ``psi``.) Inputs keep their start values;
parameters their declared values.

IDAS runs at the tolerance ``rtol`` times :data:`IDAS_TOLERANCE_FACTOR`: its variable-order BDF (order <= 5)
accumulates a global error far above its local tolerance where the native reference (DOP853) does not. On the
3-link wheeled snake by Lagrange (``tests/models/snake3.toml``, 10 s) IDAS at ``reltol`` 1e-10 ends 2.9e-6 of
the range from a native run at rtol 1e-13, at 1e-12 1.5e-8; the native run at 1e-10 is 6.2e-10 from it. A
check of the exported equations to 1e-6 of the range then measures IDAS's global error, not the model: at
``rtol / 100`` it stays two orders below the bound.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import ExportError, ValidationError

PYMOCA_MISSING = 'pymoca is not installed; pip install "pymoca==0.12.*" "casadi<3.7"'

#: IDAS's ``reltol`` is the requested ``rtol`` times this (``abstol`` another 1e-2 below): its global error stays
#: about two orders below the 1e-6 of the range a compiler check allows (see the module docstring)
IDAS_TOLERANCE_FACTOR = 1e-2


#: Modelica built-in functions (Modelica Language Specification 3.7.3) that pymoca 0.12's CasADi generator does
#: not know ("Unknown function acos"), with the CasADi operation of the same meaning.
MISSING_BUILTINS = {"asin": "arcsin", "acos": "arccos", "atan": "arctan", "atan2": "__arctan2__"}


def require_pymoca():
    """Return the pymoca and casadi modules, or an :class:`ExportError` with the install command.

    pymoca 0.12 maps a Modelica function call to the CasADi ``MX`` method of the same name, so the built-ins
    ``asin``, ``acos``, ``atan`` and ``atan2`` are unknown to it (CasADi spells them ``arcsin`` ...); they are
    added to its operator table (:data:`MISSING_BUILTINS`), nothing else is changed.
    """
    try:
        import casadi
        from pymoca.backends.casadi import generator
        from pymoca.backends.casadi.api import transfer_model
    except ImportError as exc:
        raise ExportError(PYMOCA_MISSING) from exc
    for name, op in MISSING_BUILTINS.items():
        if hasattr(casadi.MX, op):
            generator.OP_MAP.setdefault(name, op)
    return casadi, transfer_model


@dataclass(frozen=True)
class PymocaRun:
    """A model as pymoca compiled it and IDAS integrated it: every state and algebraic scalar by name."""

    time: np.ndarray
    signals: dict[str, np.ndarray]
    states: int
    algebraics: int
    equations: int
    seconds: float

    def __getitem__(self, name: str) -> np.ndarray:
        for key in (name, f"'{name}'"):
            if key in self.signals:
                return self.signals[key]
        raise ValidationError(f"pymoca's result has no variable {name!r}")


def _start(ca, variable) -> np.ndarray:
    """Return the start value(s) of a pymoca variable, one per scalar (0 where none is numeric)."""
    size = variable.symbol.numel()
    try:
        value = np.asarray(ca.DM(variable.start), dtype=float).ravel()
    except Exception:  # a symbolic start (depends on other variables): no guess
        value = np.zeros(1)
    return np.resize(value, size) if value.size in (1, size) else np.zeros(size)


def _names(variable) -> list[str]:
    name, size = variable.symbol.name(), variable.symbol.numel()
    return [name] if size == 1 else [f"{name}[{k + 1}]" for k in range(size)]


def _compile(source: str, name: str, library: Mapping[str, str] | None = None):
    """Return pymoca's model of ``name`` (parameters and constants replaced by their values).

    ``library``: more files (path relative to the model's folder -> text), e.g. the connector package of a model with
    ports.
    """
    ca, transfer_model = require_pymoca()
    tmp = Path(tempfile.mkdtemp(prefix="nhbridge-pymoca-"))
    try:
        (tmp / f"{name.split('.')[0]}.mo").write_text(source, encoding="utf-8")
        for relative, text in (library or {}).items():
            (tmp / relative).parent.mkdir(parents=True, exist_ok=True)
            (tmp / relative).write_text(text, encoding="utf-8")
        try:
            model = transfer_model(str(tmp), name, {"replace_constant_values": True, "replace_parameter_values": True,
                                                   "resolve_parameter_values": True, "check_balanced": False})
        except Exception as exc:  # pymoca raises plain exceptions of many kinds
            raise ValidationError(f"pymoca rejected the exported model {name}: {type(exc).__name__}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if model.initial_equations:
        raise ValidationError(f"pymoca: {name} has initial equations, which this check does not solve")
    free = [p.symbol.name() for p in model.parameters]
    if free:
        raise ValidationError(f"pymoca: parameters without a value in {name}: {', '.join(free)}")
    return ca, model


def simulate_pymoca(source: str, name: str, stop_time: float, dt: float, rtol: float,
                    library: Mapping[str, str] | None = None) -> PymocaRun:
    """Compile the Modelica text ``source`` with pymoca and integrate it with IDAS.

    ``name`` is the model; ``library`` holds the other files it needs, path -> text.
    """
    ca, model = _compile(source, name, library)
    t, x = model.time, ca.vertcat(*[v.symbol for v in model.states])
    dx_z = [v.symbol for v in model.der_states] + [v.symbol for v in model.alg_states]
    w = ca.vertcat(*dx_z)
    nx, nw = x.numel(), w.numel()
    fixed = [*model.inputs, *model.constants]
    values = [_start(ca, v) for v in model.inputs] + [np.asarray(ca.DM(v.value), dtype=float).ravel()
                                                      for v in model.constants]
    residual = ca.vertcat(*model.equations)
    if fixed:  # inputs keep their start values
        residual = ca.substitute(residual, ca.vertcat(*[v.symbol for v in fixed]), ca.DM(np.concatenate(values)))
    if residual.numel() != nw:
        raise ValidationError(f"pymoca: {name} is not balanced: {residual.numel()} equations for "
                              f"{nx} states and {nw - nx} algebraic variables")
    rows = ca.vertsplit(residual, 1)
    x0 = np.concatenate([_start(ca, v) for v in model.states]) if model.states else np.zeros(0)
    start = time.perf_counter()
    tx = ca.vertcat(t, x)
    jacobian = ca.jacobian(residual, w)
    # consistent initial values: Newton's method block by block (block-triangular form of dr/dw)
    w0 = np.concatenate([np.zeros(nx)] + [_start(ca, v) for v in model.alg_states])
    at0 = np.concatenate([[0.0], x0])
    whole = _expanded(ca.Function("whole", [w, tx], [residual, jacobian]))  # one function: blocks slice its values
    for r, c in _blocks(jacobian.sparsity()):
        _BlockSolver(whole, r, c).solve(w0, at0, name)
    # the DAE without the variables only their own equation contains (outputs, residuals): computed afterwards
    spans = np.cumsum([0] + [s.numel() for s in dx_z])
    peeled = _peel(jacobian.sparsity(), nx)
    gone = {c for _, c in peeled}
    keep = [k for k in range(len(dx_z)) if not set(range(spans[k], spans[k + 1])) <= gone]
    core = [c for k in keep for c in range(spans[k], spans[k + 1])]
    peeled = [(r, c) for r, c in peeled if c not in core]
    dropped = {r for r, _ in peeled}
    wc = ca.vertcat(*[dx_z[k] for k in keep])
    alg = ca.vertcat(*[rows[r] for r in range(nw) if r not in dropped])
    grid = np.arange(1, round(stop_time / dt) + 1) * dt
    dae = {"t": t, "x": x, "z": wc, "ode": ca.vertcat(*[v.symbol for v in model.der_states]), "alg": alg}
    reltol = rtol * IDAS_TOLERANCE_FACTOR
    opts = {"abstol": reltol * 1e-2, "reltol": reltol, "max_num_steps": 1000000, "suppress_algebraic": True,
            "init_xdot": [float(v) for v in w0[:nx]]}  # a list: one element is still a vector
    try:
        integrator = ca.integrator("F", "idas", dae, 0.0, grid, opts)
        out = integrator(x0=x0, z0=w0[core])
    except RuntimeError as exc:
        raise ValidationError(f"pymoca/IDAS could not integrate {name}: {str(exc).splitlines()[-1]}") from exc
    xf = np.column_stack([x0, np.asarray(out["xf"], dtype=float)])
    wf = np.zeros((nw, len(grid) + 1))
    wf[:, 0] = w0
    wf[core, 1:] = np.asarray(out["zf"], dtype=float)
    if peeled:  # the peeled variables after the integration: one (triangular) block, at every output time
        pr, pc = [r for r, _ in peeled], [c for _, c in peeled]
        late = _BlockSolver(_expanded(ca.Function("late", [w, tx], [ca.vertcat(*[rows[r] for r in pr]),
                                                                    jacobian[pr, pc]])),
                            list(range(len(pr))), list(range(len(pc))), pc)
        for k, tk in enumerate(grid, start=1):
            late.solve(wf[:, k], np.concatenate([[tk], xf[:, k]]), name)
    seconds = time.perf_counter() - start
    signals: dict[str, np.ndarray] = {}
    names = [n for v in model.states for n in _names(v)]
    signals.update({n: xf[k] for k, n in enumerate(names)})
    names = [n for v in model.alg_states for n in _names(v)]
    signals.update({n: wf[nx + k] for k, n in enumerate(names)})
    return PymocaRun(np.concatenate([[0.0], grid]), signals, nx, nw - nx, nw, seconds)


def _expanded(function):
    """Return ``function`` with its MX graph expanded to scalar (SX) operations, or as it is where it cannot be.

    The Newton iterations evaluate it point by point (every block of the consistent start, every output time of the
    peeled variables): an MX graph of the residual and its Jacobian is interpreted node by node, about three times
    the CPU of its SX expansion (the 3-link snake by maggi, 709 calls: 0.19 s instead of 0.06 s). IDAS itself keeps
    the MX graph: expanded, it steps over the kink of a relation without events (the MSL's IdealDiode,
    ``docs/compiler-defects/DiodePymocaNoEvents.mo``) where the documented defect has it fail.
    """
    try:
        return function.expand()
    except RuntimeError:  # an operation without a scalar expansion (a call of an external function)
        return function


def _blocks(sparsity) -> list[tuple[list[int], list[int]]]:
    """Return the (rows, columns) of the block-triangular form of the Jacobian ``dr/dw``, in solving order."""
    nb, rowperm, colperm, rowblock, colblock, _, _ = sparsity.btf()
    return [(list(rowperm[rowblock[k]:rowblock[k + 1]]), list(colperm[colblock[k]:colblock[k + 1]]))
            for k in range(nb)]


def _peel(sparsity, nx: int) -> list[tuple[int, int]]:
    """Return the algebraic variables computed after the integration.

    Repeatedly, one that only a single remaining equation contains (an output, a residual), with that equation: the
    (row, column) pairs in peeling order. Any perfect matching pairs them so: what remains is balanced if the whole was.
    """
    rows_of: dict[int, set[int]] = {}
    for r, c in zip(*sparsity.get_triplet()):
        rows_of.setdefault(c, set()).add(r)
    n = sparsity.size2()
    alive = set(range(n))
    peeled: list[tuple[int, int]] = []
    changed = True
    while changed:
        changed = False
        for c in range(nx, n):
            if c in alive and len(rows_of.get(c, ())) == 1:
                (r,) = rows_of[c]
                peeled.append((r, c))
                alive.discard(c)
                for other in rows_of.values():
                    other.discard(r)
                changed = True
    return peeled


class _BlockSolver:
    """Newton's method on one block ``r_rows(w) = 0`` for ``w_cols`` (the others fixed), in place.

    ``f(w, (t, x)) -> (r, J)``; the block is ``r[rows]``, ``J[rows, cols]``; ``unknowns`` are the entries of
    ``w`` solved for (default ``cols``; different when ``f`` returns the block's rows and columns only).
    """

    def __init__(self, f, rows: list[int], cols: list[int], unknowns: list[int] | None = None):
        self.f, self.rows, self.cols = f, rows, cols
        self.unknowns = cols if unknowns is None else unknowns

    def _eval(self, w: np.ndarray, at: np.ndarray) -> tuple[np.ndarray, object]:
        r, J = self.f(w, at)
        return ca_dense(r).ravel()[self.rows], J

    def solve(self, w: np.ndarray, at: np.ndarray, name: str) -> None:
        for _ in range(50):
            r, J = self._eval(w, at)
            if np.all(np.abs(r) <= 1e-12 * (1.0 + np.abs(w[self.unknowns]).max())):
                return
            step = np.linalg.lstsq(ca_dense(J[self.rows, self.cols]), r, rcond=None)[0]
            if not np.all(np.isfinite(step)):
                break
            w[self.unknowns] -= step
        r, _ = self._eval(w, at)
        if not np.all(np.abs(r) <= 1e-8 * (1.0 + np.abs(w[self.unknowns]).max())):
            raise ValidationError(f"pymoca: no consistent values for {name} at t = {at[0]:g} (equations "
                                  f"{self.rows}: residual {np.abs(r).max():.3g})")


def ca_dense(matrix) -> np.ndarray:
    """Return a CasADi DM as a dense numpy array."""
    return np.asarray(matrix.full() if hasattr(matrix, "full") else matrix, dtype=float)


class DocumentedLimitation(ValidationError):
    """A tool cannot run the model for a reason documented in docs/compiler-defects/ (not a wrong export)."""
