"""The interface every derivation method implements, and the registry."""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import sympy as sp

from ...errors import DerivationError, Problem, SystemFileError
from ...model import symbols as S
from ...model.mechanics import Differentiator, state_args
from ...model.numeric import evaluate_once
from ...model.system import System
from ..efforts import with_efforts
from ..eom import DerivationStats, EquationsOfMotion
from ..symengine_forms import symengine_forms
from ..zeros import reduce_structural_zeros


class Method(ABC):
    """A classical method of analytical mechanics turning a :class:`System` into equations.

    Subclasses state their equations in the class docstring and implement :meth:`_derive`.
    Methods hold no state between calls.
    """

    name: str = ""
    title: str = ""
    reduced: bool = False  # eliminates the multipliers (independent velocities as states)

    def accepts_split(self, system: System, independent: Sequence[int]) -> bool:
        """Return whether the method can use this choice of independent velocities (reduced methods)."""
        return True

    def applicable(self, system: System) -> str | None:
        """Return None if the method applies to ``system``, else the reason it does not."""
        return None

    @abstractmethod
    def _derive(self, system: System, d: Differentiator, independent: Sequence[str] | None,
                baumgarte: tuple[float, float] | None) -> EquationsOfMotion:
        ...

    def derive(self, system: System, independent: Sequence[str] | None = None,
               baumgarte: tuple[float, float] | None = None, count: bool = False,
               reference: np.ndarray | None = None) -> EquationsOfMotion:
        """Derive the equations of motion; ``count`` tallies differentiation operations.

        ``reference`` is the state ``[t, q, q', parameters, inputs]`` at which the split and the
        mass matrix are checked numerically (default: the start state).
        """
        reason = self.applicable(system)
        if reason:
            raise DerivationError(Problem("", f"method {self.name!r} does not apply to {system.name}: {reason}",
                                          "choose another method (nhbridge methods lists them)", system.source))
        start = time.perf_counter()
        d = Differentiator(system, count=count, reference=reference)
        eom = with_efforts(self._derive(system, d, independent, baumgarte))  # efforts: unknowns, Gamma rows
        eom = reduce_structural_zeros(eom)[0]  # identically zero coefficients printed as 0 by every exporter
        stats = DerivationStats(time.perf_counter() - start, d.counts.partial, d.counts.time, d.counts.calls,
                                count, tuple(sorted(d.counts.tallies.items())))
        eom = replace(eom, stats=stats)
        check_mass_matrix(eom, d.reference)
        return eom

    def describe(self) -> str:
        """Return the method's description: its class docstring (the equations it forms).

        Returns
        -------
        str
            The stripped docstring, empty when there is none.
        """
        doc = (self.__class__.__doc__ or "").strip()
        return doc


def check_mass_matrix(eom: EquationsOfMotion, at: np.ndarray) -> None:
    """Check that the dynamic matrix is regular at the start state; otherwise say which velocities lack inertia."""
    system = eom.system
    M = eom.mass_matrix
    if M.shape[0] == 0:
        return
    # evaluate at the start state, expressed in (q, q') and the speeds u (and the split solved there)
    args = state_args(system)
    if eom.auxiliary:
        from ...errors import SimulationError

        try:
            z = _stages_once(eom, args, np.asarray(at, dtype=float))
        except SimulationError as exc:
            raise SystemFileError(Problem("method.independent", f"{exc} at the start state",
                                          "choose other independent coordinates", system.source)) from exc
        args, at = args + list(eom.auxiliary_symbols), np.concatenate([at, z])
    Mn = evaluate_once(args, symengine_forms(M), at).reshape(M.shape)
    if not np.all(np.isfinite(Mn)):
        raise SystemFileError(Problem("energy.kinetic", "the mass matrix is not finite at the start state",
                                      "check the kinetic energy and the start values", system.source))
    sv = np.linalg.svd(Mn, compute_uv=True)
    s = sv[1]
    if s[0] > 0 and s[-1] <= 1e-13 * s[0] and _regular_once_scaled(Mn):
        rows = np.abs(Mn).max(axis=1)
        hi, lo = int(np.argmax(rows)), int(np.argmin(rows))
        raise SystemFileError(Problem(
            "energy.kinetic",
            f"the mass matrix is ill-conditioned at the start state (method {eom.method}): its rows range from "
            f"magnitude {rows[hi]:.3g} (for {eom.unknowns[hi]}) to {rows[lo]:.3g} (for {eom.unknowns[lo]}), "
            "beyond what double precision resolves; the matrix is regular once scaled, so a parameter or start "
            "value is far out of proportion with the others",
            "check the parameter values and their units (SI: kg, m, kg.m2)",
            system.source))
    if s[0] == 0 or s[-1] <= 1e-13 * s[0]:  # relative, so that any choice of units works
        null = sv[2][-1]
        names = [str(x) for x, w in zip(eom.unknowns, null) if abs(w) > 0.1]
        _check_friction_sticks_alone(eom, names)
        raise SystemFileError(Problem(
            "energy.kinetic",
            f"the mass matrix is singular at the start state (method {eom.method}): no inertia resists "
            f"the accelerations {', '.join(names)}",
            "every velocity must appear in the kinetic energy, unless constraints determine it", system.source))


def _regular_once_scaled(M: np.ndarray, sweeps: int = 8) -> bool:
    """Return whether ``M`` is regular after row and column scaling by powers of two (Ruiz equilibration).

    A matrix that only looks singular because its entries differ by many orders of magnitude.
    """
    A = M.copy()
    for _ in range(sweeps):
        r, c = np.abs(A).max(axis=1), np.abs(A).max(axis=0)
        if not (np.all(r > 0) and np.all(c > 0)):
            return False  # a zero row or column: singular whatever the scaling
        A = A / np.exp2(np.round(np.log2(np.sqrt(r))))[:, None] / np.exp2(np.round(np.log2(np.sqrt(c))))[None, :]
    s = np.linalg.svd(A, compute_uv=False)
    return bool(np.all(np.isfinite(s)) and s[-1] > 1e-13 * s[0])


def _check_friction_sticks_alone(eom: EquationsOfMotion, undetermined: list[str]) -> None:
    """Check that the derived equations can hold every switched element in its first mode (friction: stick).

    When the unknowns left undetermined there are friction forces, the cause is not missing inertia: those elements'
    stick conditions ``d v_r/dt = 0`` constrain the same accelerations, so they cannot all stick at once and their
    forces would be statically indeterminate. Raise that, naming them.
    """
    from ..efforts import event_friction

    friction = [f.name for f in event_friction(eom.system) if f.name in undetermined]
    if not friction:
        return
    coordinates = sorted({f.coordinate for f in event_friction(eom.system) if f.name in friction})
    forces = ", ".join(friction)
    raise SystemFileError(Problem(
        f"friction.{friction[-1]}",
        f"the friction elements {forces} cannot stick at the same time: their stick conditions d(v_r)/dt = 0 "
        f"constrain the same accelerations (on {', '.join(coordinates)}), so the friction forces {forces} are not "
        "determined while they all stick (nhbridge switches each element between stick and slip, and the equations "
        "as derived hold every element in stick)",
        "describe one contact by one element (its coefficients and normal force combined), or give all but one of "
        "them a regularization velocity (a smooth force without stick)", eom.system.source))


def _stages_once(eom: EquationsOfMotion, args: list, at: np.ndarray) -> np.ndarray:
    """Return the auxiliary placeholders at one point.

    Each stage evaluated by substitution (cheaper than compiling for a single use) and solved by pivoted LU, as
    :class:`~bridge.derivation.stage_chain.StageChain` does.
    """
    from ...errors import SimulationError
    from ..dense import LUFactors
    from ..numeric_model import SINGULAR_RCOND

    values = at
    earlier: list = []
    for stage in eom.auxiliary:
        r, c = stage.unknowns.shape
        vals = evaluate_once(list(args) + earlier, symengine_forms([*stage.matrix, *stage.rhs]), values)
        if not np.all(np.isfinite(vals)):
            raise SimulationError(f"the constraint split of method {eom.method} is not finite (NaN or Inf); check "
                                  "the constraints for a domain error or a singularity")
        L = vals[: r * r].reshape(r, r)
        factors = LUFactors(L)
        if factors.singular(SINGULAR_RCOND, float(np.abs(L).max())):
            raise SimulationError(f"the constraints cannot be solved for the dependent velocities of method "
                                  f"{eom.method} (the split is singular)")
        values = np.concatenate([values, factors.solve(vals[r * r:].reshape(r, c)).ravel()])
        earlier += list(stage.symbols)
    return values[len(at):]


class Registry(dict):
    """The derivation methods by name: ``METHODS[name]`` is a :class:`Method` instance.

    ``bridge.METHODS`` holds lagrange, nielsen (multiplier DAEs), maggi, appell, chaplygin and kane (reduced ODEs
    in the independent velocities). Each method's class docstring states the equations it forms.

    Examples
    --------
    >>> import bridge
    >>> sorted(bridge.METHODS)
    ['appell', 'chaplygin', 'kane', 'lagrange', 'maggi', 'nielsen']
    >>> bridge.METHODS["maggi"].reduced, bridge.METHODS["lagrange"].reduced
    (True, False)
    >>> try:
    ...     bridge.METHODS.get_method("hamilton")
    ... except bridge.DerivationError as err:
    ...     print(err)
    unknown method 'hamilton'; available: lagrange, nielsen, maggi, appell, chaplygin, kane.
    """

    def register(self, method: Method) -> Method:
        """Add ``method`` under its name.

        Parameters
        ----------
        method : Method
            The method instance; its ``name`` is the key.

        Returns
        -------
        Method
            ``method`` itself.
        """
        self[method.name] = method
        return method

    def get_method(self, name: str) -> Method:
        """Return the method named ``name``.

        Parameters
        ----------
        name : str
            A registered method name (``lagrange``, ``maggi``, ...).

        Returns
        -------
        Method
            The method instance.

        Raises
        ------
        DerivationError
            When no method has that name; the message lists the available ones.
        """
        try:
            return self[name]
        except KeyError:
            raise DerivationError(f"unknown method {name!r}; available: {', '.join(self)}") from None


METHODS = Registry()


def derive(system: System, method: str = "lagrange", independent: Sequence[str] | None = None,
           baumgarte: tuple[float, float] | None = None, count: bool = False,
           reference: np.ndarray | None = None) -> EquationsOfMotion:
    """Derive the equations of motion of ``system`` with the named method.

    Every method forms ``M(q, t) z = F(q, u, t)`` in its unknowns ``z`` and keeps it implicit (solved numerically
    at each evaluation, never inverted symbolically). The multiplier methods (lagrange, nielsen) have the speeds
    ``u = q'`` and ``z = (q'', lambda)``; Lagrange's equations are
    ``d/dt(dT/dq') - dT/dq = Q - dV/dq - dD/dq' + A^T lambda`` with the constraints ``A(q, t) q' + a0(q, t) = 0``
    (holonomic ones differentiated once) kept at acceleration level ``A q'' + A' q' + a0' = 0``, Baumgarte-stabilised
    when ``baumgarte`` is given. The reduced methods (maggi, appell, chaplygin, kane) solve the constraints for the
    dependent velocities, ``q' = C(q, t) u + c0``, and form ``(C^T M C) u' = C^T (Q~ - M (C' u + c0') - r)`` in
    ``z = u'``, the multipliers eliminated since ``A C = 0``. Each method's class docstring (``METHODS[name]``)
    states its equations.

    Parameters
    ----------
    system : System
        The system, e.g. from :func:`bridge.load_system` or :func:`bridge.parse_system`.
    method : str, optional
        A name in :data:`bridge.METHODS`: ``lagrange``, ``nielsen``, ``maggi``, ``appell``, ``chaplygin`` or
        ``kane``.
    independent : sequence of str, optional
        The coordinates whose velocities are independent (reduced methods); default the system's ``[method]
        independent``, else the first split that is regular at the start state.
    baumgarte : tuple of (float, float), optional
        Baumgarte's ``(alpha, beta)``: the constraints at acceleration level become
        ``g'' + 2 alpha g' + beta^2 g = 0`` (multiplier methods).
    count : bool, optional
        Count the elementary differentiations (``eom.stats``).
    reference : numpy.ndarray, optional
        The state ``[t, q, q', parameters, inputs]`` at which the split and the mass matrix are checked (default
        the start state).

    Returns
    -------
    EquationsOfMotion
        The equations, immutable.

    Raises
    ------
    DerivationError
        When the method is unknown or does not apply to the system, or the mass matrix is singular at the start.

    Examples
    --------
    A skate (knife edge) on a plane: it cannot slide across its blade.

    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Skate"
    ... [coordinates]
    ... x = { start = 0.0, velocity = 1.0 }
    ... y = { start = 0.0, velocity = 0.0 }
    ... theta = { start = 0.0, velocity = 0.5 }
    ... [parameters]
    ... m = { value = 1.0 }
    ... J = { value = 0.1 }
    ... [energy]
    ... kinetic = "1/2*m*(der(x)^2 + der(y)^2) + 1/2*J*der(theta)^2"
    ... [constraints]
    ... nonholonomic = ["-sin(theta)*der(x) + cos(theta)*der(y)"]
    ... ''')
    >>> eom = bridge.derive(system, "lagrange")
    >>> eom.unknowns
    (der(der(x)), der(der(y)), der(der(theta)), lambda[1])
    >>> eom.mass_matrix.shape
    (4, 4)
    >>> reduced = bridge.derive(system, "maggi", independent=["x", "theta"])
    >>> reduced.u, reduced.dependent
    ((der(x), der(theta)), ('y',))
    >>> reduced.mass_matrix.shape
    (2, 2)
    """
    if independent is None:
        independent = system.independent
    return METHODS.get_method(method).derive(system, independent, baumgarte, count, reference)


def speeds_for(system: System, independent_idx: Sequence[int]) -> tuple[sp.Symbol, ...]:
    """Return the speeds of a reduced method: the velocities ``der(q_i)`` of the independent coordinates.

    Parameters
    ----------
    system : System
        The system.
    independent_idx : sequence of int
        Indices of the independent coordinates.

    Returns
    -------
    tuple of sympy.Symbol
        The speed symbols, in the order of ``independent_idx``.
    """
    return tuple(S.qd(system.coordinates[i].name) for i in independent_idx)
