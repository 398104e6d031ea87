"""Numeric evaluation of an :class:`EquationsOfMotion`: the right-hand side for integrators.

The dynamic system ``M [u', lambda, e] = F`` (e: the effort variables) is solved by LU with partial pivoting at every
evaluation; it is never solved symbolically. So are the auxiliary stages of the reduced methods
(``A_dep [B, beta] = -[A_ind, a0]`` and its time derivative), before everything that contains their
placeholders.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..errors import SimulationError
from ..model import symbols as S
from ..model.mechanics import split_health
from ..model.numeric import compile_exprs
from .dense import LUFactors
from .symengine_forms import symengine_forms

SINGULAR_RCOND = 1e-13


class AuxiliarySolver:
    """The placeholders Z of :attr:`EquationsOfMotion.auxiliary` at given argument values, stage by stage.

    Stage k solves ``L_k Z_k = R_k(args, Z_1..Z_k-1)`` by LU with partial pivoting. A stage whose matrix is the
    previous stage's (the time derivative of the split, ``A_dep B' = ...``) compiles only its right-hand side and
    reuses the factors; the solves run without BLAS threads (:mod:`bridge.derivation.dense`).
    """

    def __init__(self, eom, args):
        self.stages: list[tuple] = []
        self.method = eom.method
        earlier: list = []
        previous = None
        for stage in eom.auxiliary:
            same = previous is not None and _same_matrix(stage.matrix, previous)
            exprs = ([] if same else list(stage.matrix)) + list(stage.rhs)
            f = compile_exprs(list(args) + earlier, symengine_forms(exprs))
            self.stages.append((f, stage.unknowns.shape[0], stage.unknowns.shape[1], same))
            earlier += list(stage.symbols)
            previous = stage.matrix
        self.size = len(earlier)

    def solve(self, values: np.ndarray, t: float = 0.0) -> np.ndarray:
        """Solve for all placeholders (row-major per stage, stages in order)."""
        return self.arguments(values, t)[values.shape[0]:]

    def arguments(self, values: np.ndarray, t: float = 0.0) -> np.ndarray:
        """Return ``values`` followed by all placeholders, solved stage by stage in one array.

        Each stage's compiled call reads the leading part of the array (the arguments and the earlier stages'
        placeholders) and its solution is written after it: no array is rebuilt between the stages.
        """
        known = values.shape[0]
        args = np.empty(known + self.size)
        args[:known] = values
        factors: LUFactors | None = None
        for f, r, c, same in self.stages:
            vals = np.asarray(f(args[:known]), dtype=float).ravel()
            if not np.isfinite(vals).all():
                raise SimulationError(f"at t = {t:.9g} the constraint split of method {self.method} is not finite "
                                      "(NaN or Inf); check the constraints for a domain error or a singularity")
            if not same:
                L = vals[: r * r].reshape(r, r)
                factors = LUFactors(L)
                if factors.singular(SINGULAR_RCOND, float(np.abs(L).max())):
                    raise SimulationError(f"at t = {t:.9g} the constraints cannot be solved for the dependent "
                                          f"velocities of method {self.method} (the split is singular)")
                vals = vals[r * r:]
            assert factors is not None  # a stage reusing the factors follows the stage that made them
            args[known: known + r * c] = factors.solve(vals.reshape(r, c)).ravel()
            known += r * c
        return args


def _same_matrix(a, b) -> bool:
    """Return whether two stage matrices are the same expressions (then one LU serves both stages)."""
    return a is b or (a.shape == b.shape and all(x == y for x, y in zip(a, b)))


class NumericModel:
    """Compiled callables for one set of equations; states ``x = (q, u)``.

    The right-hand side solves ``M z = F`` by pivoted LU at each evaluation (never a symbolic inverse); the auxiliary
    stages of an implicit split are solved first, once per state.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    parameters : mapping of str to float, optional
        Parameter values replacing the system's.

    Examples
    --------
    >>> import numpy as np
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
    >>> model = bridge.derive(system).numeric
    >>> model.rhs(0.0, np.array([0.1, 0.0])).tolist()
    [0.0, -0.4]
    """

    def __init__(self, eom, parameters: Mapping[str, float] | None = None):
        self.eom = eom
        system = eom.system
        self.n = system.n
        self.p = len(eom.u)
        self.m = len(eom.multipliers)
        self.params = np.array([p.value for p in system.parameters], dtype=float)
        self.inputs = np.array([u.start for u in system.inputs], dtype=float)
        if parameters:
            self.set_parameters(parameters)
        par_syms = [p.symbol for p in system.parameters]
        inp_syms = [u.symbol for u in system.inputs]
        base = [S.t, *system.q, *eom.u, *par_syms, *inp_syms]
        self.ne = len(eom.efforts)  # effort unknowns after the multipliers
        size = self.p + self.m + self.ne
        self.size = size
        self._aux = AuxiliarySolver(eom, base) if eom.auxiliary else None
        self._aux_key: bytes | None = None
        self._aux_args = np.empty(0)  # the arguments and the placeholders solved at the state of _aux_key
        base = base + list(eom.auxiliary_symbols)
        self._kin = compile_exprs(base, symengine_forms(eom.kinematics))
        # one compiled call gives M, F and the kinematics: one evaluation per right-hand side
        self._dyn_kin = compile_exprs(base, symengine_forms([*eom.mass_matrix, *eom.forcing, *eom.kinematics]))
        self._acc = compile_exprs(base + list(eom.du), list(eom.acceleration_map))
        full = [S.t, *system.q, *system.qd, *par_syms, *inp_syms]
        self.output_names = list(system.outputs)
        efforts = set(eom.efforts)
        self.outputs_use_efforts = any(e.free_symbols & efforts for e in system.outputs.values())
        self._out = compile_exprs(full + (list(eom.efforts) if self.outputs_use_efforts else []),
                                  list(system.outputs.values()))
        self.n_holonomic = len(system.holonomic)
        self._con = compile_exprs(full, list(system.holonomic) + list(eom.velocity_constraints))
        self._jac = (compile_exprs(full, list(eom.constraint_jacobian))
                     if eom.is_reduced and eom.constraint_jacobian is not None and eom.dependent else None)
        idx = [system.qd.index(s) for s in eom.u]
        self.independent_index = np.array(idx, dtype=int)

    def set_parameters(self, values: Mapping[str, float]) -> None:
        """Change parameter values for the following evaluations.

        Parameters
        ----------
        values : mapping of str to float
            Parameter name -> value.

        Raises
        ------
        SimulationError
            When a name is not a parameter of the system.
        """
        names = [p.name for p in self.eom.system.parameters]
        for k, v in values.items():
            if k not in names:
                raise SimulationError(f"unknown parameter {k!r}; parameters: {', '.join(names)}")
            self.params[names.index(k)] = float(v)

    # -- evaluation ------------------------------------------------------------
    def _base(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return [t, q, u, parameters, inputs] and the auxiliary placeholders solved there."""
        values = np.concatenate([[t], q, u, self.params, self.inputs])
        if self._aux is None:
            return values
        key = values.tobytes()
        if key != self._aux_key:  # rhs, kinematics and accelerations at one state share one solve
            self._aux_args = self._aux.arguments(values, t)
            self._aux_key = key
        return self._aux_args

    def auxiliary(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the placeholders of the auxiliary stages at a state (empty without)."""
        return self._base(t, q, u)[1 + self.n + self.p + len(self.params) + len(self.inputs):]

    def solve(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the unknowns ``[u', lambda, e]`` at a state, solving ``M z = F`` by pivoted LU.

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        u : numpy.ndarray
            Speeds (p).

        Returns
        -------
        numpy.ndarray
            The speeds' accelerations, the multipliers and the efforts.

        Raises
        ------
        SimulationError
            When ``M`` or ``F`` is not finite or ``M`` is singular there.
        """
        return self._unknowns(t, q, u, np.asarray(self._dyn_kin(self._base(t, q, u)), dtype=float).ravel())

    def _unknowns(self, t: float, q: np.ndarray, u: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Return ``M^-1 F`` from the values ``[M (row-major), F, ...]`` of the compiled dynamics."""
        size = self.size
        M = vals[: size * size].reshape(size, size)
        F = vals[size * size: size * size + size]
        if not np.isfinite(vals[: size * (size + 1)]).all():
            raise SimulationError(f"at t = {t:.9g} the equations are not finite (NaN or Inf) "
                                  f"[method {self.eom.method}]: {self._not_finite(M, F, q, u)}; "
                                  "check the expressions for a domain error (sqrt, log, acos of a value out of "
                                  "range) or a singularity at this state")
        factors = LUFactors(M)
        if factors.singular(SINGULAR_RCOND):
            raise SimulationError(f"at t = {t:.9g} the mass matrix of method {self.eom.method} is singular "
                                  "(the configuration is singular or the constraints became dependent)")
        return factors.solve(F)

    def _not_finite(self, M: np.ndarray, F: np.ndarray, q: np.ndarray, u: np.ndarray) -> str:
        """Say which rows of ``M z = F`` are not finite, and at which state.

        Row k is the equation of u'_k, then constraint k.
        """
        rows = ([f"der({u_})" for u_ in self.eom.u] + [f"constraint {k + 1}" for k in range(self.m)]
                + [f"the constraint of effort {e}" for e in self.eom.efforts])
        bad = [f"{'the mass matrix row' if not np.all(np.isfinite(M[i])) else 'the forcing'} of {rows[i]}"
               for i in range(self.size) if not (np.all(np.isfinite(M[i])) and np.isfinite(F[i]))]
        state = [f"{c.name} = {v:.6g}" for c, v in zip(self.eom.system.coordinates, q)]
        state += [f"{s} = {v:.6g}" for s, v in zip(self.eom.u, u)]
        return f"{', '.join(bad[:4])} at {', '.join(state[:8])}"

    def kinematics(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return ``q' = kinematics(q, u, t)`` at a state.

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        u : numpy.ndarray
            Speeds (p).

        Returns
        -------
        numpy.ndarray
            The coordinate velocities (n).
        """
        return np.asarray(self._kin(self._base(t, q, u)), dtype=float).ravel()

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return ``(q', u')`` at ``x = (q, u)``.

        The auxiliary stages first (one compiled call per stage; the time-derivative stage reuses the split's LU
        factors), solved into one argument array and kept for the state, then one compiled call of the mass matrix,
        the forcing and the kinematics together; every linear block is solved by pivoted LU without BLAS threads.

        Parameters
        ----------
        t : float
            Time.
        x : numpy.ndarray
            The state ``(q, u)`` (n + p).

        Returns
        -------
        numpy.ndarray
            Its time derivative (n + p).

        Raises
        ------
        SimulationError
            When the equations are not finite or the mass matrix is singular there.
        """
        q, u = x[: self.n], x[self.n:]
        vals = np.asarray(self._dyn_kin(self._base(t, q, u)), dtype=float).ravel()
        sol = self._unknowns(t, q, u, vals)
        return np.concatenate([vals[self.size * (self.size + 1):], sol[: self.p]])

    def accelerations(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return q'' at a state given by all velocities (which must satisfy the constraints).

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        qd : numpy.ndarray
            All velocities (n), consistent with the constraints.

        Returns
        -------
        numpy.ndarray
            The accelerations of all coordinates (n).
        """
        u = np.asarray(qd, dtype=float)[self.independent_index]
        du = self.solve(t, q, u)[: self.p]
        return np.asarray(self._acc(np.concatenate([self._base(t, q, u), du])), dtype=float).ravel()

    def multipliers(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the multipliers ``lambda`` at a state (empty for reduced methods).

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        u : numpy.ndarray
            Speeds (p).

        Returns
        -------
        numpy.ndarray
            The multipliers (m).
        """
        return self.solve(t, q, u)[self.p:self.p + self.m]

    def efforts(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the effort variables e at a state (empty without)."""
        return self.solve(t, q, u)[self.p + self.m:]

    def state(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the integrator's state ``x = (q, u)`` from the coordinates and all velocities.

        Parameters
        ----------
        q : numpy.ndarray
            Coordinates (n).
        qd : numpy.ndarray
            All velocities (n); the speeds are those of the independent coordinates.

        Returns
        -------
        numpy.ndarray
            ``(q, u)`` (n + p).
        """
        return np.concatenate([q, np.asarray(qd, dtype=float)[self.independent_index]])

    def _full(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        return np.concatenate([[t], q, qd, self.params, self.inputs])

    def outputs(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the outputs y(t, q, q') (efforts solved at the same state where an output contains one).

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        qd : numpy.ndarray
            All velocities (n), consistent with the constraints.

        Returns
        -------
        numpy.ndarray
            One value per output, in the system's order.
        """
        args = self._full(t, q, qd)
        if self.outputs_use_efforts:
            args = np.concatenate([args, self.efforts(t, q, np.asarray(qd, dtype=float)[self.independent_index])])
        return np.asarray(self._out(args), dtype=float).ravel()

    def constraint_residuals(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the constraint residuals ``[phi(q, t); A q' + a0]`` at a state.

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        qd : numpy.ndarray
            All velocities (n).

        Returns
        -------
        numpy.ndarray
            The holonomic residuals, then every constraint at velocity level.
        """
        return np.asarray(self._con(self._full(t, q, qd)), dtype=float).ravel()

    def constraint_matrix(self, t: float, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return the constraint Jacobian ``A(q, t)`` of ``A q' + a0 = 0`` at a state (reduced methods).

        Parameters
        ----------
        t : float
            Time.
        q : numpy.ndarray
            Coordinates (n).
        qd : numpy.ndarray
            Velocities (n).

        Returns
        -------
        numpy.ndarray
            The m x n matrix.
        """
        A = self.eom.constraint_jacobian
        if self._jac is None or A is None:
            raise ValueError(f"method {self.eom.method} has no constraint split (not a reduced method)")
        return np.asarray(self._jac(self._full(t, q, qd)), dtype=float).reshape(A.shape)

    def split_health(self, t: float, q: np.ndarray, qd: np.ndarray) -> float:
        """Return the split's health sigma_min(A_dep) / sigma_max(A) in [0, 1]; 0 means the split is singular."""
        if self._jac is None:
            return 1.0
        return split_health(self.constraint_matrix(t, q, qd), self.eom.dependent_index)
