"""``--symbolic``: A(p) and B(p) as functions of the parameters p, the state held at the operating point.

The same steps as the numeric linearization (:mod:`.linearize`, :mod:`.jacobian`), with the state, time and inputs
replaced by their values at the point and the parameters left as symbols: the implicit blocks (auxiliary stages,
``M z = F``, the constraint splits) are solved by sympy's LU solve. This is for display only (like
:meth:`EquationsOfMotion.explicit`); nothing downstream uses it. Every entry is simplified while the time budget
lasts; a system too large to form within it is reported (use a reduced method, whose blocks are small).
"""

from __future__ import annotations

import time

import numpy as np
import sympy as sp

from ..errors import BridgeError
from ..model import symbols as S
from .model import LinearModel


class SymbolicTimeout(BridgeError):
    """The symbolic linearization took longer than its time limit."""

    exit_code = 1


def _number(x: float) -> sp.Expr:
    """Return an exact short form of a point value where one exists (0, 1/2, 46/3), else the float."""
    if x == 0:
        return sp.Integer(0)
    r = sp.nsimplify(float(x), tolerance=1e-13 * max(1.0, abs(x)), rational=True)
    return r if isinstance(r, sp.Rational) and r.q <= 1000 and float(r) == float(x) else sp.Float(x)


class _Clock:
    def __init__(self, seconds: float):
        self.deadline = time.monotonic() + seconds
        self.seconds = seconds

    def check(self, what: str) -> None:
        if time.monotonic() > self.deadline:
            raise SymbolicTimeout(f"--symbolic: {what} did not finish within {self.seconds:g} s (--timeout): A(p) "
                                  "of this system is too large to form explicitly; the numeric A, B, C, D are "
                                  "exact without it (a reduced method, --method maggi or chaplygin, has the "
                                  "smallest blocks)")


def _jac(exprs, variables) -> sp.Matrix:
    return sp.Matrix(len(exprs), len(variables), lambda i, j: sp.diff(exprs[i], variables[j]))


def _set_rows(target: sp.Matrix, rows: list[int], values: sp.Matrix) -> None:
    for k, i in enumerate(rows):
        target[i, :] = values[k, :]


def symbolic_matrices(linearizer, model: LinearModel, seconds: float = 120.0) -> tuple[sp.Matrix, sp.Matrix]:
    """Return (A(p), B(p)) for the states and inputs of ``model`` (taken at the same point by ``linearizer``)."""
    clock = _Clock(seconds)
    eom, system = linearizer.eom, linearizer.system
    n, p = system.n, len(eom.u)
    point = model.point
    cn = [c.name for c in system.coordinates]
    sub = {S.t: sp.Integer(0)}
    sub.update({c.symbol: _number(point[c.name]) for c in system.coordinates})
    sub.update({c.velocity_symbol: _number(point[f"der({c.name})"]) for c in system.coordinates})
    sub.update({w.symbol: _number(point[w.name]) for w in system.inputs})
    q, qd, inp = list(system.q), list(system.qd), [w.symbol for w in system.inputs]
    variables = [*q, *eom.u, *inp]
    nv = len(variables)
    # auxiliary stages and their derivatives
    Zsub: dict = {}
    dZ = sp.zeros(0, nv)
    earlier: list = []
    for stage in eom.auxiliary:
        L = sp.Matrix(stage.matrix).xreplace(sub)
        Z = sp.Matrix(stage.unknowns)
        res = list(sp.Matrix(stage.matrix) * Z - sp.Matrix(stage.rhs))
        R = sp.Matrix(stage.rhs).xreplace(sub).xreplace(Zsub)
        Zval = L.LUsolve(R).applyfunc(sp.cancel)
        Zsub.update(dict(zip(stage.symbols, Zval)))
        jv = _jac(res, variables).xreplace(sub).xreplace(Zsub)
        je = _jac(res, earlier).xreplace(sub).xreplace(Zsub) if earlier else sp.zeros(len(res), 0)
        rhs = jv + (je * dZ if earlier else sp.zeros(len(res), nv))
        r, c = Z.shape
        block = sp.Matrix([[rhs[i * c + k // nv, k % nv] for k in range(c * nv)] for i in range(r)])
        sol = -L.LUsolve(block)
        dZ = dZ.col_join(sp.Matrix([[sp.cancel(sol[i // c, (i % c) * nv + k]) for k in range(nv)]
                                    for i in range(r * c)]))
        earlier += list(stage.symbols)
        clock.check("the constraint split")
    M = sp.Matrix(eom.mass_matrix).xreplace(sub).xreplace(Zsub)
    F = sp.Matrix(eom.forcing).xreplace(sub).xreplace(Zsub)
    z = M.LUsolve(F).applyfunc(sp.cancel) if M.shape[0] else sp.zeros(0, 1)
    clock.check("the solution of the dynamics")
    zsub = dict(zip(eom.unknowns, z))
    res = list(sp.Matrix(eom.mass_matrix) * sp.Matrix(eom.unknowns) - sp.Matrix(eom.forcing))
    jv = _jac(res, variables).xreplace(sub).xreplace(Zsub).xreplace(zsub)
    je = _jac(res, earlier).xreplace(sub).xreplace(Zsub).xreplace(zsub) if earlier else None
    dz = -M.LUsolve(jv + (je * dZ if earlier else sp.zeros(len(res), nv)))
    clock.check("the Jacobian of the dynamics")
    kin = list(eom.kinematics)
    dK = _jac(kin, variables).xreplace(sub).xreplace(Zsub)
    if earlier:
        dK = dK + _jac(kin, earlier).xreplace(sub).xreplace(Zsub) * dZ
    J = dK.col_join(dz[:p, :])
    # the constraint manifold, with the split of the numeric linearization
    ind = list(linearizer.independent)
    dep = [i for i in range(n) if i not in ind]
    hd = list(linearizer.holonomic_dependent or ())
    qr = [i for i in range(n) if i not in hd]
    nq, ni, nw = len(qr), len(ind), len(inp)
    Tq = sp.zeros(n, nq)
    for k, i in enumerate(qr):
        Tq[i, k] = 1
    if hd:
        Phi = _jac(list(system.holonomic), q).xreplace(sub)
        _set_rows(Tq, hd, -Phi[:, hd].LUsolve(Phi[:, qr]))
    Tfull = Tq.row_join(sp.zeros(n, ni))
    rows = qr + ([n + k for k in range(p)] if eom.is_reduced else [n + i for i in ind])
    if eom.is_reduced:
        T = Tfull.col_join(sp.zeros(p, nq).row_join(sp.eye(ni)))
        Tw = sp.zeros(n + p, nw)
    else:
        vc = system.velocity_constraints()
        Vq, Vqd = _jac(vc, q).xreplace(sub), _jac(vc, qd).xreplace(sub)
        Vw = _jac(vc, inp).xreplace(sub) if inp else sp.zeros(len(vc), 0)
        Tqd = sp.zeros(n, nq + ni)
        for k, i in enumerate(ind):
            Tqd[i, nq + k] = 1
        Tqdw = sp.zeros(n, nw)
        if dep:
            Ad = Vqd[:, dep]
            _set_rows(Tqd, dep, -Ad.LUsolve(Vq * Tfull + Vqd[:, ind] * Tqd[ind, :]))
            if nw:
                _set_rows(Tqdw, dep, -Ad.LUsolve(Vw))
        T, Tw = Tfull.col_join(Tqd), sp.zeros(n, nw).col_join(Tqdw)
    clock.check("the tangent map of the constraints")
    Jx, Jw = J[:, : n + p], J[:, n + p:]
    A = Jx[rows, :] * T
    B = Jx[rows, :] * Tw + (Jw[rows, :] if nw else sp.zeros(len(rows), 0))
    states = [cn[i] for i in qr] + [f"der({cn[i]})" for i in ind]
    keep = [states.index(s) for s in model.states]
    A, B = A[keep, keep], B[keep, :]
    out = []
    for Mx in (A, B):
        Mx = Mx.applyfunc(sp.cancel)
        if time.monotonic() < clock.deadline:
            Mx = Mx.applyfunc(lambda e: sp.simplify(e) if time.monotonic() < clock.deadline
                              and sp.count_ops(e) < 400 else e)
        out.append(Mx)
    # the symbolic result must reproduce the numeric one at the file's parameter values
    values = {prm.symbol: prm.value for prm in system.parameters}
    values.update({prm.symbol: model.point[prm.name] for prm in system.parameters})
    An = np.array(out[0].xreplace(values).evalf(), dtype=float) if out[0].shape[0] else np.zeros((0, 0))
    if An.size and not np.allclose(An, model.A, rtol=1e-8, atol=1e-8 * max(1.0, np.abs(model.A).max())):
        raise BridgeError("--symbolic: A(p) does not reproduce the numeric A at the point (internal error)")
    return out[0], out[1]


def symbolic_text(eom, linearizer, model: LinearModel, seconds: float = 120.0) -> str:
    """Return ``A(p)`` and ``B(p)`` of a linear model as functions of the parameters, as text.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations the model was formed from.
    linearizer : Linearizer
        The linearizer that formed ``model``.
    model : LinearModel
        The numeric model (its point, states and inputs).
    seconds : float, optional
        Time limit of the symbolic computation.

    Returns
    -------
    str
        One line per nonzero entry, ``A[state, state] = expression``.

    Raises
    ------
    SymbolicTimeout
        When the limit is exceeded.
    """
    A, B = symbolic_matrices(linearizer, model, seconds)
    used = sorted({str(s) for s in A.free_symbols | B.free_symbols})
    lines = [f"A(p) and B(p) of {model.system} ({model.method}) at the point, as functions of the parameters "
             f"{', '.join(used) or '(none enter)'}:"]
    for i, si in enumerate(model.states):
        for j, sj in enumerate(model.states):
            if A[i, j] != 0:
                lines.append(f"  A[{si}, {sj}] = {sp.sstr(A[i, j])}")
    for i, si in enumerate(model.states):
        for j, wj in enumerate(model.inputs):
            if B[i, j] != 0:
                lines.append(f"  B[{si}, {wj}] = {sp.sstr(B[i, j])}")
    lines.append("  (entries not listed are 0)")
    return "\n".join(lines) + "\n"
