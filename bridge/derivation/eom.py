"""The central object: equations of motion, as every exporter receives them.

Whatever the method, the equations are stored in one first-order form with states
``x = (q, u)``:

* kinematics      ``q' = K(q, u, t)``                        (n equations)
* dynamics        ``M(q, u, t) [u', lambda] = F(q, u, t)``   (p + m equations, solved numerically)

For the full methods (lagrange, nielsen) ``u = q'`` and ``lambda`` are the constraint
multipliers; for the reduced methods (maggi, appell, chaplygin) ``u`` are the independent
velocities and there are no multipliers. Effort variables e (constraints Gamma(q, q', e, s, t) = 0 kept
algebraic, :mod:`bridge.derivation.efforts`) are further unknowns after the multipliers.
``acceleration_map`` gives q'' in terms of (q, u, u', t). No exporter re-derives anything from the system.

The reduced methods keep the split of the constraints implicit: an *auxiliary* block of
:class:`AuxiliaryStage` s ``L(q, t) Z = R(q, u, t, Z_earlier)``, evaluated before everything else,
gives placeholder symbols Z (``B = -A_dep^-1 A_ind``, ``beta = -A_dep^-1 a0`` and their time
derivatives) that K, M, F and the acceleration map contain. Every evaluator solves it numerically
(pivoted LU) at each evaluation; nothing is inverted symbolically.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import sympy as sp

from ..model import symbols as S
from ..model.system import System


@dataclass(frozen=True)
class DerivationStats:
    """How much work a derivation took."""

    seconds: float
    differentiations_partial: int = 0
    differentiations_time: int = 0
    diff_calls: int = 0
    counted: bool = False
    breakdown: tuple[tuple[str, int], ...] = ()  # e.g. ("inertia term", 68)

    @property
    def differentiations(self) -> int:
        """The elementary differentiations in all: partial derivatives plus total time derivatives."""
        return self.differentiations_partial + self.differentiations_time


@dataclass(frozen=True)
class AuxiliaryStage:
    """One linear block ``matrix Z = rhs`` with unknown symbols ``unknowns`` (r x c), ``matrix`` r x r.

    ``matrix`` depends on (q, t, parameters); ``rhs`` also on u, the inputs and the unknowns of earlier stages.
    """

    unknowns: sp.ImmutableMatrix
    matrix: sp.ImmutableMatrix
    rhs: sp.ImmutableMatrix

    @property
    def symbols(self) -> tuple[sp.Symbol, ...]:
        """The unknowns row-major (the order of ``list(rhs)``)."""
        return tuple(self.unknowns)


@dataclass(frozen=True)
class EquationsOfMotion:
    """Equations of motion of one system by one method (immutable), as :func:`bridge.derive` returns them.

    The dynamics are ``mass_matrix * unknowns = forcing`` (solved numerically at each evaluation, never inverted
    symbolically), the kinematics ``q' = kinematics(q, u, t)``, the accelerations ``q'' = acceleration_map(q, u, u',
    t)``. The unknowns are the speeds' accelerations ``u'``, the multipliers and the effort variables.

    Parameters
    ----------
    system : System
        The system the equations are of.
    method : str
        The method's name in :data:`bridge.METHODS`.
    u : tuple of sympy.Symbol
        The speeds (p): all velocities ``der(q)`` for the multiplier methods, the independent ones for reduced ones.
    kinematics : sympy.ImmutableMatrix
        The n x 1 velocities ``q'`` in terms of ``(q, u, t)``.
    acceleration_map : sympy.ImmutableMatrix
        The n x 1 accelerations ``q''`` in terms of ``(q, u, u', t)``.
    mass_matrix : sympy.ImmutableMatrix
        The square matrix ``M`` of ``M z = F``.
    forcing : sympy.ImmutableMatrix
        The right-hand side ``F``.
    multipliers : tuple of sympy.Symbol, optional
        The Lagrange multipliers ``lambda[k]`` (empty for reduced methods).
    velocity_constraints : tuple of sympy.Expr, optional
        Every constraint at velocity level, ``A(q, t) q' + a0``.
    independent, dependent : tuple of str, optional
        The split of the coordinates of a reduced method.
    constraint_jacobian : sympy.ImmutableMatrix, optional
        ``A(q, t)``, m x n.
    baumgarte : tuple of (float, float), optional
        The Baumgarte parameters the constraints were stabilised with.
    forms : tuple of (str, sympy.Basic), optional
        Method-specific forms by name (e.g. the split's ``A_dep``, ``A_ind``), for display.
    auxiliary : tuple of AuxiliaryStage, optional
        The linear blocks of an implicit split, solved in order before the kinematics and the dynamics.
    stats : DerivationStats, optional
        How much work the derivation took.
    efforts : tuple of sympy.Symbol, optional
        The effort unknowns, after the multipliers.

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
    >>> eom = bridge.derive(system, "lagrange")
    >>> eom
    <EquationsOfMotion Oscillator by lagrange: 1 coordinates, 1 speeds, mass matrix 1x1>
    >>> eom.unknowns, eom.mass_matrix, eom.forcing
    ((der(der(x)),), Matrix([[m]]), Matrix([[-k*x]]))
    """

    system: System
    method: str
    u: tuple[sp.Symbol, ...]
    kinematics: sp.ImmutableMatrix
    acceleration_map: sp.ImmutableMatrix
    mass_matrix: sp.ImmutableMatrix
    forcing: sp.ImmutableMatrix
    multipliers: tuple[sp.Symbol, ...] = ()
    velocity_constraints: tuple[sp.Expr, ...] = ()
    independent: tuple[str, ...] = ()
    dependent: tuple[str, ...] = ()
    constraint_jacobian: sp.ImmutableMatrix | None = None  # A(q, t), m x n
    baumgarte: tuple[float, float] | None = None
    forms: tuple[tuple[str, sp.Basic], ...] = ()
    auxiliary: tuple[AuxiliaryStage, ...] = ()  # solved (in order) before kinematics and dynamics
    stats: DerivationStats = field(default_factory=lambda: DerivationStats(0.0))
    efforts: tuple[sp.Symbol, ...] = ()  # effort unknowns after the multipliers (bridge.derivation.efforts)

    def __repr__(self) -> str:
        split = f", independent {', '.join(self.independent)}" if self.dependent else ""
        lam = f", {len(self.multipliers)} multipliers" if self.multipliers else ""
        return (f"<EquationsOfMotion {self.system.name} by {self.method}: {len(self.q)} coordinates, "
                f"{len(self.u)} speeds{lam}{split}, mass matrix {'x'.join(map(str, self.mass_matrix.shape))}>")

    def _repr_html_(self) -> str:
        from ..model.display import eom_html

        return eom_html(self)

    def _repr_latex_(self) -> str | None:
        from ..model.display import eom_latex

        return eom_latex(self)

    # -- views -----------------------------------------------------------------
    @property
    def name(self) -> str:
        """The system's name."""
        return self.system.name

    @property
    def q(self) -> tuple[sp.Symbol, ...]:
        """The coordinate symbols ``q`` (n)."""
        return self.system.q

    @property
    def qd(self) -> tuple[sp.Symbol, ...]:
        """The velocity symbols ``der(q)`` (n)."""
        return self.system.qd

    @property
    def qdd(self) -> tuple[sp.Symbol, ...]:
        """The acceleration symbols ``der(der(q))`` (n)."""
        return self.system.qdd

    @property
    def du(self) -> tuple[sp.Symbol, ...]:
        """The acceleration symbols ``der(der(.))`` of the speeds ``u`` (p)."""
        return tuple(S.qdd(S.base_name(s)) for s in self.u)

    @property
    def dependent_index(self) -> tuple[int, ...]:
        """The indices of the dependent coordinates among the system's coordinates."""
        names = [c.name for c in self.system.coordinates]
        return tuple(names.index(nm) for nm in self.dependent)

    @property
    def auxiliary_symbols(self) -> tuple[sp.Symbol, ...]:
        """The placeholders of every auxiliary stage, in evaluation order."""
        return tuple(s for stage in self.auxiliary for s in stage.symbols)

    @property
    def unknowns(self) -> tuple[sp.Symbol, ...]:
        """The unknowns of ``mass_matrix * unknowns = forcing``: ``du``, the multipliers, then the efforts."""
        return self.du + self.multipliers + self.efforts

    @property
    def is_reduced(self) -> bool:
        """Whether the equations are in fewer speeds than coordinates (a reduced method)."""
        return len(self.u) < self.system.n

    @property
    def holonomic(self) -> tuple[sp.Expr, ...]:
        """The holonomic constraints ``phi(q, t)`` of the system."""
        return self.system.holonomic

    @property
    def outputs(self) -> Mapping[str, sp.Expr]:
        """The system's outputs, name -> expression."""
        return self.system.outputs

    @property
    def parameters(self):
        """The system's parameters."""
        return self.system.parameters

    @property
    def inputs(self):
        """The system's inputs."""
        return self.system.inputs

    def form(self, name: str) -> sp.Basic:
        """Return a method-specific form with the split's placeholders replaced by their explicit solution.

        On request only, see :meth:`explicit`.
        """
        return self.explicit(dict(self.forms)[name])

    def explicit(self, expr: sp.Basic, seconds: float = 10.0) -> sp.Basic:
        """Return ``expr`` with the auxiliary placeholders replaced by explicit expressions.

        For display and comparison only (never on the way to equations, FMUs or simulation). Each stage is solved by
        sympy's LU solve; entries are simplified (cancel, then simplify when small) while the time budget ``seconds``
        lasts.
        """
        if not self.auxiliary or not (expr.free_symbols & set(self.auxiliary_symbols)):
            return expr
        return expr.xreplace(self._explicit_split(seconds))

    def _explicit_split(self, seconds: float) -> dict:
        cached = self.__dict__.get("_explicit_cache")
        if cached is not None:
            return cached
        deadline = time.monotonic() + seconds
        sub: dict = {}
        for stage in self.auxiliary:
            sol = sp.Matrix(stage.matrix).LUsolve(sp.Matrix(stage.rhs).xreplace(sub))
            for z, e in zip(stage.unknowns, sol):
                if time.monotonic() < deadline:
                    e = sp.cancel(e)
                    if sp.count_ops(e) < 120 and time.monotonic() < deadline:
                        e = sp.simplify(e)
                sub[z] = e
        object.__setattr__(self, "_explicit_cache", sub)
        return sub

    def equations(self) -> list[sp.Eq]:
        """Return the dynamic equations ``(M [u', lambda])_i = F_i`` as sympy equalities."""
        lhs = self.mass_matrix * sp.Matrix(self.unknowns)
        return [sp.Eq(lhs[i], self.forcing[i]) for i in range(lhs.shape[0])]

    def __getstate__(self) -> dict:
        # pickled (sent to a Dask worker, kept in the run-wide test cache): the equations alone; what is computed
        # and kept on the object (its compiled numeric model, cached runs) is computed again where it is needed
        return {f.name: self.__dict__[f.name] for f in dataclasses.fields(self)}

    @functools.cached_property
    def numeric(self):
        """Return the compiled numeric model (:class:`bridge.derivation.numeric_model.NumericModel`)."""
        from .numeric_model import NumericModel

        return NumericModel(self)
