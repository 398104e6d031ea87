"""Effort variables and dynamic variables: the ``[efforts]`` and ``[dynamic]`` tables of a system file.

The seed (Lagrange's equation with displacement and effort constraints, eq. 4.4) admits constraints

    Gamma_j(q, f, e, s, t) = 0,   j = 1..m_e,

in the displacements q, the flows f = q', the effort variables e and the dynamic variables s; they come
from regulated effort sources (DC motors, diodes, Coulomb friction) and are *kept* in this algebraic
form instead of being solved for e.

* An **effort** ``e_j`` is an unknown of the dynamic system, like a multiplier. It may enter the
  generalized forces ``Q(q, q', e, s, t)`` and the rates of the dynamic variables, affinely; its
  constraint ``Gamma_j`` (affine in e, no accelerations) is a row of the mass-matrix system
  ``dGamma/de e = -Gamma|_{e=0}``, solved numerically together with the accelerations.
* A **dynamic variable** ``s_k`` is a first-order state with its own rate ``s_k' = r_k(q, q', e, s, t)``
  (an armature current, a flux, a controller state). It is carried as the flow of an auxiliary
  displacement ``<s>_integral`` (its time integral, start 0): the displacement's row of the dynamic
  system is replaced by ``der(der(<s>_integral)) - dr/de e = r|_{e=0}``, so every stage that handles
  coordinates handles it. The variable itself is an output of the same name.

Efforts and dynamic variables may appear in ``[forces]``, in effort constraints, in rates and in ``[outputs]``
(an output with an effort is evaluated from the solution of the dynamic system at the same point); never in the
energies or the displacement constraints, which the derivation differentiates.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from . import symbols as S

EFFORT_KEYS = {"constraint", "unit", "description"}
FRICTION_KEYS = {"coordinate", "normal", "mu_static", "mu_kinetic", "relative_velocity", "regularization",
                 "description"}
DYNAMIC_KEYS = {"start", "rate", "unit", "description"}
#: the smallest regularization velocity: the integrators resolve a velocity v to a relative precision of about
#: 100 ulps (2.2e-14, the FMU's smallest tolerance; the native default is 1e-10), i.e. to ~1e-10 for |v| up to 1e4,
#: and a narrower transition of tanh(v_r/v_eps) is a sign function to them (with a stiffness mu_k N / v_eps)
REGULARIZATION_FLOOR = 1e-10
INTEGRAL_SUFFIX = "_integral"


@dataclass(frozen=True)
class Effort:
    """An effort variable e fixed by its constraint ``Gamma(q, q', e, s, t) = 0`` (affine in the efforts)."""

    name: str
    constraint: sp.Expr
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The effort's symbol, an unknown of the dynamic system named like the effort."""
        return sp.Symbol(self.name)


@dataclass(frozen=True)
class Dynamic:
    """A dynamic variable s with ``s' = rate(q, q', e, s, t)``, carried as ``der(<coordinate>)``."""

    name: str
    start: float
    rate: sp.Expr
    coordinate: str  # the auxiliary displacement (time integral of s)
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The symbol standing for s in every expression: the velocity of the auxiliary coordinate."""
        return S.qd(self.coordinate)


@dataclass(frozen=True)
class Friction:
    """Coulomb friction on a coordinate.

    The generalized force F on ``coordinate`` is, with the relative velocity v_r(q, q', t) and the normal force
    N(q, q', t) >= 0,

    * slip (v_r != 0): ``F = -mu_kinetic N sign(v_r)``;
    * stick (v_r = 0): the effort that keeps ``dv_r/dt = 0``, as long as ``|F| <= mu_static N``.

    The switching is located by events (:mod:`bridge.simulation.events`). With ``regularization = v_eps > 0``
    the element is the smooth force ``-mu_kinetic N tanh(v_r/v_eps)`` instead (no stick, no events). An
    element whose stick limit ``mu_static N`` is identically 0 (``mu_static = 0``, or the normal force 0) exerts
    no force in any mode: it is :attr:`inert`, a zero force without modes or events.
    """

    name: str
    coordinate: str
    normal: sp.Expr
    mu_static: float
    mu_kinetic: float
    relative_velocity: sp.Expr
    regularization: float = 0.0
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The friction force, an unknown of the dynamic system like an effort."""
        return sp.Symbol(self.name)

    @property
    def inert(self) -> bool:
        """No force in any mode: the stick limit ``mu_static N`` is identically 0 (then so is ``mu_kinetic N``)."""
        return self.mu_static == 0 or self.normal.is_zero is True


DIODE_KEYS = {"flow", "forward_voltage", "on_resistance", "off_conductance", "description"}


@dataclass(frozen=True)
class Diode:
    """A diode on the flow ``der(coordinate)`` (a current: the coordinate is a charge).

    As the MSL's ``Modelica.Electrical.Analog.Ideal.IdealDiode``: its voltage v (an effort, the generalized
    force ``-v`` on the coordinate) and current i = der(coordinate) satisfy, with the knee voltage V_f,

    * conducting: ``v = V_f + R_on (i - G_off V_f)``, until ``i - G_off V_f`` falls to 0;
    * blocking:   ``i = G_off v`` (ideal, G_off = 0: ``i = 0``, kept as ``di/dt = 0``), until ``v`` rises to V_f.
    """

    name: str
    coordinate: str
    forward_voltage: float = 0.0
    on_resistance: float = 0.0
    off_conductance: float = 0.0
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The diode voltage, an unknown of the dynamic system like an effort."""
        return sp.Symbol(self.name)


def integral_unit(unit: str) -> str:
    """Return the unit of the time integral of a quantity in ``unit``.

    ``"1"`` gives ``"s"``, any other unit ``u`` gives ``"u.s"``, and no unit (``""``) stays ``""``.
    """
    if not unit:
        return ""
    return "s" if unit == "1" else f"{unit}.s"


def affine_problem(expr: sp.Expr, variables: set[sp.Symbol]) -> sp.Symbol | None:
    """Return the first of ``variables`` in which ``expr`` is not affine (its derivative contains one of them)."""
    for v in sorted(expr.free_symbols & variables, key=str):
        if sp.diff(expr, v).free_symbols & variables:
            return v
    return None


def dynamic_outputs(dynamic: tuple[Dynamic, ...]) -> tuple[dict, dict, dict]:
    """(expressions, units, descriptions) of the outputs that report the dynamic variables."""
    return ({d.name: d.symbol for d in dynamic}, {d.name: d.unit for d in dynamic if d.unit},
            {d.name: d.description or f"dynamic variable {d.name}" for d in dynamic})


#: the hint of a normal force that is negative, at the start (the loader) or during a run (simulation, FMU)
NEGATIVE_NORMAL_HINT = ("Coulomb friction needs a normal force N >= 0 (a contact that lifts off, N < 0, is a "
                        "different model: the friction law would feed energy in); check its sign and the values "
                        "it depends on")
