"""The auxiliary stages and the dynamics of one set of equations in the fewest compiled calls.

A reduced method's right-hand side needs, in order (:mod:`bridge.derivation.methods.reduced`):

1. ``A_dep(q, t) [B, beta] = -[A_ind(q, t), a0(q, t)]``                      (stage 1: Z1 = [B, beta])
2. ``A_dep(q, t) [B', beta'] = -[A'_ind + A'_dep B, a0' + A'_dep beta]``     (stage 2: Z2 = [B', beta'])
3. ``M(q, Z1) u' = F(q, u, Z1, Z2)`` and ``q' = K(q, u, Z1)``                (the dynamics and kinematics)

``A' = dA/dq q' + dA/dt`` contains the dependent velocities ``q'_dep = B u + beta``, so stage 2's right-hand side
is *quadratic* in Z1 (``A'_dep B`` has products ``B_ij B_kl``): it cannot be evaluated before Z1 is known, and no
single linear system in (Z1, Z2) replaces stages 1 and 2. The compiled calls therefore form a chain whose length is
the longest dependency path through the stages: a stage's *level* is 0 when its matrix and right-hand side need only
the arguments ``(t, q, u, parameters, inputs)``, else one more than the highest level of the stages whose
placeholders they contain. All stages of one level are evaluated by one compiled call, then solved.

The dynamics need the last level's placeholders Z_L, but only linearly: the projected forcing is
``C^T (Q - M_full (C' u + c0') - r)`` with ``C'``, ``c0'`` (the entries of Z2) entering once, and the mass matrix
``C^T M_full C`` and the kinematics contain Z1 only. So the dynamics join the call of level L as
``F = F_0 + G Z_L`` (``F_0 = F|_{Z_L = 0}``, ``G = dF/dZ_L``, both free of Z_L): after Z_L is solved, one
matrix-vector product gives F, and no further compiled call is needed. The number of compiled calls per right-hand
side is the number of levels, ``L + 1``: two for the reduced methods (one for lagrange, nielsen, kane), the minimum
the dependency chain allows. Where the dynamics are not affine in Z_L (or the mass matrix contains Z_L) they get a
call of their own after the last stage.

Every stage matrix is factored by LU with partial pivoting (:class:`~bridge.derivation.dense.LUFactors`, no BLAS
threads); a stage whose matrix is the previous stage's (stage 2 above) reuses its factors.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import symengine as se

from ..errors import SimulationError
from ..model.numeric import compile_exprs
from .dense import LUFactors
from .symengine_forms import symengine_forms

SINGULAR_RCOND = 1e-13


def finite(values: np.ndarray) -> bool:
    """Return whether every entry is finite: one dot product, the entry-wise test only when it overflows."""
    return math.isfinite(np.dot(values, values)) or bool(np.isfinite(values).all())


def _call(f, args: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Return the values of the compiled call ``f`` at ``args``, written into ``out`` where ``f`` can."""
    write = getattr(f, "unsafe_real", None)  # looked up per call: a wrapper of the callable has none
    if write is None:
        return np.asarray(f(args), dtype=float).ravel()
    write(args, out)
    return out


def _same_matrix(a, b) -> bool:
    """Return whether two stage matrices are the same expressions (then one LU serves both stages)."""
    return a is b or (a.shape == b.shape and all(x == y for x, y in zip(a, b)))


def _levels(stages) -> list[int]:
    """Return each stage's level: 0 without earlier placeholders, else 1 + the highest level it reads."""
    owner: dict = {}
    levels: list[int] = []
    for k, stage in enumerate(stages):  # symengine's free symbols: a walk in C, not sympy's in Python
        used = set().union(*(e.free_symbols for e in symengine_forms([*stage.matrix, *stage.rhs])))
        levels.append(max((levels[owner[s]] + 1 for s in used if s in owner), default=0))
        for s in stage.symbols:
            owner[se.sympify(s)] = k
    return levels


def _affine_split(exprs: list, symbols: list) -> tuple[list, list] | None:
    """Return ``(E_0, G)`` with ``E = E_0 + G z`` (G row-major) when every entry is affine in ``symbols``, else None."""
    zs = [se.sympify(s) for s in symbols]
    zero = {z: se.Integer(0) for z in zs}
    base, jac = [], []
    for e in exprs:
        present = e.free_symbols
        row = []
        for z in zs:
            g = se.diff(e, z) if z in present else se.Integer(0)
            if g.free_symbols & set(zs):
                return None
            row.append(g)
        base.append(e.xreplace(zero))
        jac += row
    return base, jac


class StageChain:
    """The placeholders of :attr:`EquationsOfMotion.auxiliary`, the dynamics and the kinematics, level by level.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    args : sequence of sympy.Symbol
        The arguments ``[t, q, u, parameters, inputs]``.

    Attributes
    ----------
    functions : list of callable
        The compiled calls, in evaluation order (one per level; :meth:`evaluate` makes each once).
    """

    def __init__(self, eom, args: Sequence):
        self.method = eom.method
        stages = list(eom.auxiliary)
        self.size = eom.mass_matrix.shape[0]
        self.n_kin = len(eom.kinematics)
        placeholders = [s for stage in stages for s in stage.symbols]
        self.n_args = len(args)
        self.n_placeholders = len(placeholders)
        all_args = list(args) + placeholders
        levels = _levels(stages)
        top = max(levels, default=-1)
        offsets = [self.n_args + sum(len(st.symbols) for st in stages[:k]) for k in range(len(stages))]
        top_stages = [k for k, lv in enumerate(levels) if lv == top]
        top_symbols = [s for k in top_stages for s in stages[k].symbols]
        self._top_start = offsets[top_stages[0]] if top_stages else 0
        self._top_end = self._top_start + len(top_symbols)
        contiguous = top_stages == list(range(top_stages[0], top_stages[-1] + 1)) if top_stages else False
        mass = symengine_forms(eom.mass_matrix)
        vector = symengine_forms([*eom.forcing, *eom.kinematics])
        split = None
        if contiguous and not any(e.free_symbols & {se.sympify(s) for s in top_symbols} for e in mass):
            split = _affine_split(vector, top_symbols)
        if split is not None:
            dyn_level, dyn_exprs = top, [*mass, *split[0], *split[1]]
            self.n_top = len(top_symbols)
        else:
            dyn_level, dyn_exprs = top + 1, [*mass, *vector]
            self.n_top = 0
        # per level: (stage index, offset of its placeholders, rows, columns, the stage whose LU factors it uses)
        self._plan: list[list[tuple[int, int, int, int, int]]] = [[] for _ in range(dyn_level + 1)]
        exprs_per_level: list[list] = [[] for _ in range(dyn_level + 1)]
        sources: list[int] = []
        for k, (stage, level) in enumerate(zip(stages, levels)):
            r, c = stage.unknowns.shape
            shared = k and levels[k - 1] <= level and _same_matrix(stage.matrix, stages[k - 1].matrix)
            sources.append(sources[k - 1] if shared else k)
            self._plan[level].append((k, offsets[k], r, c, sources[k]))
            exprs_per_level[level] += symengine_forms(([] if shared else list(stage.matrix)) + list(stage.rhs))
        self._plan_width = [sum((r * r if src == k else 0) + r * c for k, _, r, c, src in plan)
                            for plan in self._plan]
        exprs_per_level[dyn_level] += dyn_exprs
        self.widths = [len(exprs) for exprs in exprs_per_level]  # the values of each call
        self.functions = [compile_exprs(all_args, exprs) for exprs in exprs_per_level]

    def buffers(self) -> tuple[np.ndarray, list[np.ndarray]]:
        """Return new buffers for :meth:`evaluate_into`: the arguments and placeholders, and each call's values."""
        return np.zeros(self.n_args + self.n_placeholders), [np.empty(w) for w in self.widths]

    def evaluate(self, values: np.ndarray, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Return the arguments followed by every placeholder, and ``[M (row-major), F, kinematics]``.

        Parameters
        ----------
        values : numpy.ndarray
            ``[t, q, u, parameters, inputs]``.
        t : float
            The time (for the messages).

        Returns
        -------
        tuple of numpy.ndarray
            The argument array with the placeholders solved, and the dynamics' values.

        Raises
        ------
        SimulationError
            A stage is not finite or its matrix (the split) is singular.
        """
        args, outs = self.buffers()
        args[: self.n_args] = values
        return args, self.evaluate_into(args, outs, t).copy()

    def evaluate_into(self, args: np.ndarray, outs: list[np.ndarray], t: float = 0.0) -> np.ndarray:
        """Solve the placeholders into ``args`` and return ``[M (row-major), F, kinematics]``.

        Parameters
        ----------
        args : numpy.ndarray
            ``[t, q, u, parameters, inputs]`` followed by room for the placeholders (from :meth:`buffers`).
        outs : list of numpy.ndarray
            The buffers of the calls' values (from :meth:`buffers`).
        t : float
            The time (for the messages).

        Returns
        -------
        numpy.ndarray
            The dynamics' values: a view of the last buffer of ``outs`` (or a new array when the forcing is
            completed by the last placeholders).

        Raises
        ------
        SimulationError
            A stage is not finite or its matrix (the split) is singular.
        """
        if not self.n_placeholders:  # no stages: one call
            return _call(self.functions[0], args, outs[0])
        factors: dict[int, LUFactors] = {}
        vals = args
        for f, out, plan, width in zip(self.functions, outs, self._plan, self._plan_width):
            vals = _call(f, args, out)
            if plan and not finite(vals[:width]):
                raise self._not_finite(t)
            pos = 0
            for k, offset, r, c, source in plan:
                if source == k:
                    factors[k] = LUFactors(vals[pos: pos + r * r].reshape(r, r))
                    pos += r * r
                    if factors[k].singular(SINGULAR_RCOND):
                        raise SimulationError(f"at t = {t:.9g} the constraints cannot be solved for the dependent "
                                              f"velocities of method {self.method} (the split is singular)")
                args[offset: offset + r * c] = factors[source].solve(vals[pos: pos + r * c].reshape(r, c)).ravel()
                pos += r * c
            vals = vals[pos:]
        if not self.n_top:
            return vals
        size2, width = self.size * self.size, self.size + self.n_kin
        out = vals[: size2 + width].copy()
        out[size2:] += vals[size2 + width:].reshape(width, self.n_top) @ args[self._top_start: self._top_end]
        return out

    def _not_finite(self, t: float) -> SimulationError:
        return SimulationError(f"at t = {t:.9g} the constraint split of method {self.method} is not finite "
                               "(NaN or Inf); check the constraints for a domain error or a singularity")


__all__ = ["SINGULAR_RCOND", "StageChain", "finite"]
