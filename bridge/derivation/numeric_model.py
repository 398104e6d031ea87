"""Numeric evaluation of an :class:`EquationsOfMotion`: the right-hand side for integrators.

The dynamic system ``M [u', lambda, e] = F`` (e: the effort variables) is solved by LU with partial pivoting at every
evaluation; it is never solved symbolically. So are the auxiliary stages of the reduced methods
(``A_dep [B, beta] = -[A_ind, a0]`` and its time derivative), before everything that contains their
placeholders. The stages, the mass matrix, the forcing and the kinematics are evaluated by the fewest compiled calls
the dependency chain allows (:mod:`bridge.derivation.stage_chain`: one per right-hand side without stages, two for
the reduced methods).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Mapping

import numpy as np

from ..errors import SimulationError
from ..kept import kept
from ..model import symbols as S
from ..model.mechanics import split_health
from ..model.numeric import compile_exprs
from .dense import LUFactors
from .stage_chain import SINGULAR_RCOND, StageChain, finite
from .symengine_forms import symengine_forms


class CompiledParts:
    """The compiled callables of one set of equations, shared by all its numeric models.

    The stage chain (the right-hand side) is compiled at once; the accelerations of all coordinates, the outputs,
    the constraint residuals and the constraint matrix at their first use. Parameter values and inputs are
    arguments of every callable, so models of the same equations with other values share them.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    """

    def __init__(self, eom):
        self._eom = weakref.ref(eom)  # not kept alive by its cache entry
        system = eom.system
        par_syms = [p.symbol for p in system.parameters]
        inp_syms = [u.symbol for u in system.inputs]
        self.base = [S.t, *system.q, *eom.u, *par_syms, *inp_syms]
        self.full = [S.t, *system.q, *system.qd, *par_syms, *inp_syms]
        self.chain = StageChain(eom, self.base)
        efforts = set(eom.efforts)
        self.outputs_use_efforts = any(e.free_symbols & efforts for e in system.outputs.values())

    @property
    def equations(self):
        """The equations (alive while a model of them is)."""
        return self._eom()

    @functools.cached_property
    def accelerations(self):
        """``q''`` from ``[t, q, u, parameters, inputs, placeholders, u']``."""
        eom = self.equations
        return compile_exprs([*self.base, *eom.auxiliary_symbols, *eom.du], symengine_forms(eom.acceleration_map))

    @functools.cached_property
    def outputs(self):
        """The outputs from ``[t, q, q', parameters, inputs]`` (and the efforts where an output contains one)."""
        eom = self.equations
        args = self.full + (list(eom.efforts) if self.outputs_use_efforts else [])
        return compile_exprs(args, symengine_forms(eom.system.outputs.values()))

    @functools.cached_property
    def constraints(self):
        """``[phi; A q' + a0]`` from ``[t, q, q', parameters, inputs]``."""
        eom = self.equations
        return compile_exprs(self.full, symengine_forms([*eom.system.holonomic, *eom.velocity_constraints]))

    @functools.cached_property
    def jacobian(self):
        """The constraint matrix ``A`` (row-major) of a reduced method with dependent velocities, else None."""
        eom = self.equations
        if not (eom.is_reduced and eom.constraint_jacobian is not None and eom.dependent):
            return None
        return compile_exprs(self.full, symengine_forms(eom.constraint_jacobian))


def compiled_parts(eom) -> CompiledParts:
    """Return the compiled callables of ``eom``, compiled once per equations object (the object is immutable)."""
    return kept(eom, "compiled_parts", lambda: CompiledParts(eom))


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
        self.ne = len(eom.efforts)  # effort unknowns after the multipliers
        self.size = self.p + self.m + self.ne
        self._compiled = compiled_parts(eom)
        # the stages, M, F and the kinematics in the fewest compiled calls; kept for the last state evaluated
        self.chain = self._compiled.chain
        self.output_names = list(system.outputs)
        self.outputs_use_efforts = self._compiled.outputs_use_efforts
        self.n_holonomic = len(system.holonomic)
        idx = [system.qd.index(s) for s in eom.u]
        self.independent_index = np.array(idx, dtype=int)
        n_args = 1 + self.n + self.p + len(self.params) + len(self.inputs)
        self._bounds = (1 + self.n, 1 + self.n + self.p, n_args - len(self.inputs), n_args)
        self._kin = slice(self.size * (self.size + 1), self.size * (self.size + 1) + self.chain.n_kin)
        self.own_buffers()

    def own_buffers(self) -> None:
        """Give this model its own evaluation buffers (a model sharing the compiled callables of another)."""
        self._key: bytes | None = None  # the arguments whose evaluation the buffers hold
        self._args, self._outs = self.chain.buffers()  # the arguments and placeholders; each call's values
        self._dyn = np.empty(0)  # [M, F, kinematics] at the state of _key
        self._solved_key: bytes | None = None  # the state whose unknowns _sol holds
        self._sol = np.empty(0)

    @property
    def _acc(self):
        return self._compiled.accelerations

    @property
    def _out(self):
        return self._compiled.outputs

    @property
    def _con(self):
        return self._compiled.constraints

    @property
    def _jac(self):
        return self._compiled.jacobian

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
    def _evaluate(self, t: float, q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return [t, q, u, parameters, inputs, placeholders] and [M, F, kinematics] at a state (kept for it).

        Both are this model's buffers, overwritten by the next evaluation at another state.
        """
        args = self._args
        i_q, i_p, i_in, n_args = self._bounds
        args[0] = t
        args[1:i_q] = q
        args[i_q:i_p] = u
        args[i_p:i_in] = self.params
        args[i_in:n_args] = self.inputs
        key = args[:n_args].tobytes()
        if key != self._key:  # rhs, kinematics and accelerations at one state share one evaluation
            self._key = None  # the buffers hold no complete evaluation until this one succeeds
            self._dyn = self.chain.evaluate_into(args, self._outs, t)
            self._key = key
        return args, self._dyn

    def _base(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return [t, q, u, parameters, inputs] and the auxiliary placeholders solved there."""
        return self._evaluate(t, q, u)[0]

    def auxiliary(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the placeholders of the auxiliary stages at a state (empty without)."""
        return self._base(t, q, u)[self._bounds[3]:].copy()

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
        return self._solved(t, q, u)[1].copy()

    def _solved(self, t: float, q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``[M, F, kinematics]`` and the unknowns at a state (solved once per state)."""
        vals = self._evaluate(t, q, u)[1]
        if self._solved_key is None or self._solved_key is not self._key:
            self._sol = self._unknowns(t, q, u, vals)
            self._solved_key = self._key
        return vals, self._sol

    def _unknowns(self, t: float, q: np.ndarray, u: np.ndarray, vals: np.ndarray) -> np.ndarray:
        """Return ``M^-1 F`` from the values ``[M (row-major), F, ...]`` of the compiled dynamics."""
        size = self.size
        M = vals[: size * size].reshape(size, size)
        F = vals[size * size: size * size + size]
        if not finite(vals[: size * (size + 1)]):
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
        return self._evaluate(t, q, u)[1][self._kin].copy()

    def rhs(self, t: float, x: np.ndarray) -> np.ndarray:
        """Return ``(q', u')`` at ``x = (q, u)``.

        The auxiliary stages, the mass matrix, the forcing and the kinematics by the calls of :attr:`chain` (one
        per level of the stages: the time-derivative stage and the dynamics share the last one), kept for the
        state; every linear block is solved by pivoted LU without BLAS threads.

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
        vals, sol = self._solved(t, q, u)
        return np.concatenate((vals[self._kin], sol[: self.p]))

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
        return self._solved(t, q, u)[1][self.p:self.p + self.m].copy()

    def efforts(self, t: float, q: np.ndarray, u: np.ndarray) -> np.ndarray:
        """Return the effort variables e at a state (empty without)."""
        return self._solved(t, q, u)[1][self.p + self.m:].copy()

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

    def inputs_at(self, times: np.ndarray) -> np.ndarray:
        """Return the input values at each of ``times`` (one row per time): here the held values."""
        return np.broadcast_to(self.inputs, (len(times), len(self.inputs)))

    def _full_rows(self, times: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return ``[t, q, q', parameters, inputs]`` per row."""
        N = len(times)
        return np.hstack([np.reshape(times, (N, 1)), np.reshape(q, (N, self.n)), np.reshape(qd, (N, self.n)),
                          np.broadcast_to(self.params, (N, len(self.params))), self.inputs_at(times)])

    def outputs_rows(self, times: np.ndarray, q: np.ndarray, qd: np.ndarray,
                     efforts: np.ndarray | None = None) -> np.ndarray:
        """Return :meth:`outputs` at many states at once, one row per time.

        Parameters
        ----------
        times : numpy.ndarray
            The times (N).
        q, qd : numpy.ndarray
            The coordinates and all velocities (N x n), consistent with the constraints.
        efforts : numpy.ndarray, optional
            The efforts there (N x number of efforts); solved per state when an output needs them and they are
            not given.

        Returns
        -------
        numpy.ndarray
            N x number of outputs.
        """
        N = len(times)
        args = self._full_rows(times, q, qd)
        if self.outputs_use_efforts:
            if efforts is None:
                efforts = np.array([self.efforts(t, qq, np.asarray(v)[self.independent_index])
                                    for t, qq, v in zip(times, q, qd)]).reshape(N, self.ne)
            args = np.hstack([args, efforts])
        if not N or not self.output_names:
            return np.zeros((N, len(self.output_names)))
        return np.asarray(self._out(args), dtype=float).reshape(N, len(self.output_names))

    def constraint_residuals_rows(self, times: np.ndarray, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Return :meth:`constraint_residuals` at many states at once, one row per time (N x residuals)."""
        N = len(times)
        width = self.n_holonomic + len(self.eom.velocity_constraints)
        if not N or not width:
            return np.zeros((N, width))
        return np.asarray(self._con(self._full_rows(times, q, qd)), dtype=float).reshape(N, width)

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
