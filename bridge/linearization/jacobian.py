"""Exact Jacobians of one method's own first-order equations, differentiated symbolically (symengine).

The equations of :class:`~bridge.derivation.eom.EquationsOfMotion` are implicit: the auxiliary stages
``L_k Z_k = R_k(v, Z_<k)``, the dynamics ``M(v, Z) z = F(v, Z)`` with ``z = [u', lambda]`` and the kinematics
``q' = K(v, Z)``, over the variables ``v = (q, u, w)`` (w the inputs). Their residuals are differentiated
symbolically and evaluated at the point; the linear systems stay implicit and are solved numerically there:

    dZ_k = -L_k^-1 (dr_k/dv + dr_k/dZ_<k dZ_<k/dv),          r_k = L_k Z_k - R_k
    dz   = -M^-1  (dr/dv + dr/dZ dZ/dv),                      r   = M z - F
    dK   =  dK/dv + dK/dZ dZ/dv

(the derivative of ``M^-1 F`` is ``M^-1 (dF - dM z)``), so no finite difference and no symbolic inverse is used.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import symengine as se

from ..derivation.dense import LUFactors
from ..derivation.symengine_forms import symengine_form
from ..errors import SimulationError
from ..model import symbols as S
from ..model.kinks import diff, outer_kinks
from ..model.numeric import compile_exprs

SINGULAR = 1e-13


def jacobian_exprs(exprs: Sequence, variables: Sequence) -> list:
    """Return the row-major ``d exprs_i / d variables_j`` (symengine), zero where a variable does not occur."""
    svars = [se.sympify(v) for v in variables]
    out = []
    for e in exprs:
        e = symengine_form(e)  # each shared subexpression converted once
        free = e.free_symbols
        d = diff if outer_kinks(e) else se.diff  # the kink-aware derivative only where there are kinks
        out.extend(d(e, v) if v in free else se.Integer(0) for v in svars)
    return out


# Calls by substitution before compiling. Compiling (one CSE pass, then LLVM without optimisation passes) costs
# about ten substitutions of the same expressions (measured on the Whipple bicycle's Jacobians: 1.3 s against 0.11 s),
# so a point or a few stay with substitution and a sweep or a root search compiles once: never more than about
# twice the cheaper of the two.
SUBSTITUTIONS = 10


class LazyCompiled:
    """``f(values)`` evaluating ``exprs`` at ``args = values``.

    By substitution for the first ``after`` calls (one linear model needs one call, a few points a few), then by
    the callable of :func:`~bridge.model.numeric.compile_exprs` (sweeps, root finding); see ``SUBSTITUTIONS``.
    """

    def __init__(self, args: Sequence, exprs: Sequence, after: int = SUBSTITUTIONS):
        self.args = [se.sympify(a) for a in args]
        self.exprs = [symengine_form(e) for e in exprs]
        self.after, self.calls, self.compiled = after, 0, None

    def __call__(self, values) -> np.ndarray:
        """Return the expressions' values at ``args = values`` (NaN where one is not a real number).

        Parameters
        ----------
        values : array_like
            One value per argument.

        Returns
        -------
        numpy.ndarray
            One value per expression.
        """
        self.calls += 1
        if self.compiled is None and self.calls > self.after:
            self.compiled = compile_exprs(self.args, self.exprs)
        if self.compiled is not None:
            return np.asarray(self.compiled(np.asarray(values, dtype=float)), dtype=float).ravel()
        point = {a: se.Float(float(v)) for a, v in zip(self.args, values, strict=True)}
        out = np.empty(len(self.exprs))
        for k, e in enumerate(self.exprs):
            try:
                out[k] = float(e.xreplace(point))
            except (RuntimeError, TypeError, ValueError):
                out[k] = np.nan  # not a real number here (a domain error, a division by zero)
        return out


def _se(matrix) -> se.Matrix:
    return se.Matrix([[symengine_form(e) for e in row] for row in matrix.tolist()])


def lu_solve(M: np.ndarray, rhs: np.ndarray, what: str) -> np.ndarray:
    """Return ``M^-1 rhs`` by pivoted LU; a singular ``M`` is reported as ``what``."""
    if M.shape[0] == 0:
        return np.zeros_like(rhs)
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(rhs))):
        raise SimulationError(f"{what} is not finite (NaN or Inf) at the operating point")
    factors = LUFactors(M)  # no BLAS threads for these tiny solves (bridge.derivation.dense)
    if factors.singular(SINGULAR):
        raise SimulationError(f"{what} is singular at the operating point")
    return factors.solve(rhs)


class MethodJacobian:
    """Compiled values and Jacobians of ``(q', u')`` for one set of equations.

    The Jacobians are taken with respect to ``(q, u)`` and the inputs ``w``.

    Arguments of every compiled function: ``[t, q, u, parameters, inputs, Z, z]`` (``Z`` the auxiliary
    placeholders, ``z`` the unknowns ``[u', lambda]``), so the parameters stay free for sweeps.
    """

    def __init__(self, eom):
        system = eom.system
        self.eom = eom
        self.n, self.p, self.nw = system.n, len(eom.u), len(system.inputs)
        par = [p.symbol for p in system.parameters]
        inp = [w.symbol for w in system.inputs]
        self.args = [S.t, *system.q, *eom.u, *par, *inp, *eom.auxiliary_symbols, *eom.unknowns]
        self.variables = [*system.q, *eom.u, *inp]
        self.nv = len(self.variables)
        self.stages = []
        earlier: list = []
        for stage in eom.auxiliary:
            L, Z, R = _se(stage.matrix), _se(stage.unknowns), _se(stage.rhs)
            res = list(L * Z - R)  # row-major r x c
            jac = jacobian_exprs(res, self.variables) + jacobian_exprs(res, earlier)
            shape = (stage.unknowns.shape[0], stage.unknowns.shape[1], len(earlier))
            self.stages.append((LazyCompiled(self.args, list(L) + list(R)), LazyCompiled(self.args, jac), shape))
            earlier += list(stage.symbols)
        self.n_aux = len(earlier)
        M, F = _se(eom.mass_matrix), _se(eom.forcing)
        z = se.Matrix([[se.sympify(s)] for s in eom.unknowns])
        res = list(M * z - F) if M.shape[0] else []
        self.size = len(eom.unknowns)
        self._mf = LazyCompiled(self.args, list(M) + list(F))
        self._dyn = LazyCompiled(self.args, jacobian_exprs(res, self.variables) + jacobian_exprs(res, earlier))
        kin = list(eom.kinematics)
        self._kin = LazyCompiled(self.args, kin + jacobian_exprs(kin, self.variables) + jacobian_exprs(kin, earlier))

    def evaluate(self, base: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Return ``(f, J, Jw, z)`` at ``base = [t, q, u, parameters, inputs]``.

        ``f = (q', u')``, ``J = d(q', u')/d(q, u)`` ((n + p) x (n + p)), ``Jw = d(q', u')/dw`` and the unknowns ``z =
        [u', lambda]``. A singular split or mass matrix raises :class:`SimulationError`.
        """
        nv, method = self.nv, self.eom.method
        zeros_aux, zeros_z = np.zeros(self.n_aux), np.zeros(self.size)
        aux = np.zeros(0)
        dZ = np.zeros((0, nv))
        for f, fj, (r, c, ne) in self.stages:
            values = np.concatenate([base, aux, zeros_aux[len(aux):], zeros_z])
            vals = np.asarray(f(values), dtype=float).ravel()
            L = vals[: r * r].reshape(r, r)
            R = vals[r * r:].reshape(r, c)
            Zk = lu_solve(L, R, f"the constraint split of method {method}")
            values[len(base) + len(aux): len(base) + len(aux) + r * c] = Zk.ravel()
            vals = np.asarray(fj(values), dtype=float).ravel()
            jv = vals[: r * c * nv].reshape(r * c, nv)
            je = vals[r * c * nv:].reshape(r * c, ne)
            rhs = (jv + je @ dZ).reshape(r, c * nv)
            dZk = -lu_solve(L, rhs, f"the constraint split of method {method}").reshape(r * c, nv)
            aux = np.concatenate([aux, Zk.ravel()])
            dZ = np.vstack([dZ, dZk])
        s = self.size
        values = np.concatenate([base, aux, zeros_z])
        mf = np.asarray(self._mf(values), dtype=float).ravel()
        M = mf[: s * s].reshape(s, s)
        z = lu_solve(M, mf[s * s:], f"the mass matrix of method {method}")
        values = np.concatenate([base, aux, z])
        vals = np.asarray(self._dyn(values), dtype=float).ravel()
        jv = vals[: s * nv].reshape(s, nv)
        je = vals[s * nv:].reshape(s, self.n_aux)
        dz = -lu_solve(M, jv + je @ dZ, f"the mass matrix of method {method}")
        n = self.n
        vals = np.asarray(self._kin(values), dtype=float).ravel()
        kin = vals[:n]
        kv = vals[n: n + n * nv].reshape(n, nv)
        ke = vals[n + n * nv:].reshape(n, self.n_aux)
        dK = kv + ke @ dZ
        full = np.vstack([dK, dz[: self.p]])
        m = n + self.p
        return np.concatenate([kin, z[: self.p]]), full[:, :m], full[:, m:], z
