"""Rigid bodies, particles and loads: the multibody description a system may carry besides its energies.

Both the ``[frames]``/``[bodies]``/``[contacts]`` tables of a system file (:mod:`bridge.model.bodies`) and
``bridge.from_mechanics`` (sympy.physics.mechanics objects) produce a :class:`Multibody`; the system's
T, V and Q are computed from it, and Kane's method forms its partial velocities from it.

Every vector is a 3-tuple of sympy expressions over the symbols of :mod:`bridge.model.symbols`
(coordinates q, velocities q', t, parameters, inputs):

* ``T = sum_b 1/2 m_b v_b.v_b + 1/2 w_b . (I_b w_b)``
* ``V = - sum_b m_b g . r_b``  (uniform gravity ``g``)
* ``Q_i = sum_loads F . dv_P/dq'_i  (+ T . dw/dq'_i for torques)``
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

Vector = tuple[sp.Expr, sp.Expr, sp.Expr]

ZERO: Vector = (sp.Integer(0), sp.Integer(0), sp.Integer(0))


def _dot(a: Sequence[sp.Expr], b: Sequence[sp.Expr]) -> sp.Expr:
    return sum((x * y for x, y in zip(a, b)), sp.Integer(0))


@dataclass(frozen=True)
class Body:
    """A rigid body (or a particle: zero inertia, ``rotation`` None).

    ``position``/``velocity``: mass centre and its velocity, inertial (N) components;
    ``rotation``: direction cosines R with ``v_N = R v_B``; ``angular_velocity``: of the body frame
    relative to N, body-frame components; ``inertia``: 3x3 about the mass centre, body frame.
    """

    name: str
    mass: sp.Expr
    position: Vector
    velocity: Vector
    rotation: sp.ImmutableMatrix | None = None
    angular_velocity: Vector = ZERO
    inertia: sp.ImmutableMatrix = sp.ImmutableMatrix.zeros(3, 3)
    #: angular velocity of the basis that ``rotation``, ``angular_velocity`` and ``inertia`` use, in that basis, when
    #: the basis is not fixed in the body (e.g. a wheel whose inertia is given in the fork frame: ``from_mechanics``);
    #: None: the basis is the body frame (rate = ``angular_velocity``)
    basis_angular_velocity: Vector | None = None

    @property
    def is_particle(self) -> bool:
        """Whether the body is a particle (no rotation, no inertia)."""
        return self.rotation is None

    def kinetic_energy(self) -> sp.Expr:
        """Return the kinetic energy ``T = 1/2 m v . v + 1/2 w^T I w``.

        Returns
        -------
        sympy.Expr
            The body's kinetic energy (translational only for a particle).
        """
        w = sp.Matrix(self.angular_velocity)
        rot = (w.T * sp.Matrix(self.inertia) * w)[0, 0] if not self.is_particle else sp.Integer(0)
        return sp.Rational(1, 2) * self.mass * _dot(self.velocity, self.velocity) + sp.Rational(1, 2) * rot


@dataclass(frozen=True)
class Load:
    """A force applied at a point or a torque on a body; generalized force ``Q_i = vector . d velocity / d q'_i``.

    For ``kind`` "force", ``velocity`` is that point's velocity (N components); for ``kind`` "torque", the body's
    angular velocity. ``vector`` is in the same basis as ``velocity``.
    """

    name: str
    kind: str  # "force" | "torque"
    velocity: Vector
    vector: Vector


@dataclass(frozen=True)
class Multibody:
    """The bodies, loads and uniform gravity (N components) of a system."""

    bodies: tuple[Body, ...]
    loads: tuple[Load, ...] = ()
    gravity: Vector = ZERO
    #: direction cosines ``(frame name, C)`` of the coordinates not shown to be a rotation for every state (checked
    #: at the start state only); a native run stops where ``|C^T C - 1|`` grows
    rotation_watch: tuple[tuple[str, sp.ImmutableMatrix], ...] = ()
    #: generated constraints ``(entry, expression)`` left out because they repeat the others identically (two
    #: rolling-disk contacts on one axle both forbid sliding along it)
    dropped_constraints: tuple[tuple[str, sp.Expr], ...] = ()
    #: (entry, what, expression) of the constants besides masses that must be positive (a contact's radius),
    #: checked again whenever parameter values change (:mod:`bridge.model.values`)
    positive: tuple[tuple[str, str, sp.Expr], ...] = ()

    def kinetic_energy(self) -> sp.Expr:
        """Return the kinetic energy of all bodies, ``T = sum_b T_b``.

        Returns
        -------
        sympy.Expr
            The sum of the bodies' kinetic energies.
        """
        return sum((b.kinetic_energy() for b in self.bodies), sp.Integer(0))

    def potential_energy(self) -> sp.Expr:
        """Return gravity's potential ``-sum m g . r``."""
        return -sum((b.mass * _dot(self.gravity, b.position) for b in self.bodies), sp.Integer(0))

    def generalized_forces(self, qd: Sequence[sp.Symbol]) -> list[sp.Expr]:
        """Return ``Q_i`` of the loads (gravity excluded: it is in V), one per velocity in ``qd``."""
        return [sum((_dot(ld.vector, [sp.diff(v, s) for v in ld.velocity]) for ld in self.loads), sp.Integer(0))
                for s in qd]
