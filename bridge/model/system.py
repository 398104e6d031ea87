"""The mechanical system as the user described it: coordinates, energies, forces, constraints.

A :class:`System` is immutable and holds sympy expressions over the symbols of
:mod:`bridge.model.symbols` (definitions already substituted). It is built from a TOML
system file (:func:`load_system`, :func:`parse_system`) or from a plain mapping whose
expression entries may be strings or sympy expressions (:func:`build_system`); both
paths run the same checks and report every problem at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from ..kept import without_kept
from . import symbols as S
from .efforts import Diode, Dynamic, Effort, Friction
from .multibody import Multibody

__all__ = ["Coordinate", "Input", "Parameter", "System", "finite", "set_values_with", "total_derivative"]


@dataclass(frozen=True)
class Coordinate:
    """A generalized coordinate q with its start position and velocity."""

    name: str
    start: float
    velocity: float = 0.0
    unit: str = ""
    description: str = ""
    nominal: float | None = None  # magnitude of the coordinate; scales absolute tolerances of importers

    @property
    def symbol(self) -> sp.Symbol:
        """The coordinate's symbol ``q``."""
        return S.q(self.name)

    @property
    def velocity_symbol(self) -> sp.Symbol:
        """The symbol of its velocity, ``der(q)``."""
        return S.qd(self.name)

    @property
    def acceleration_symbol(self) -> sp.Symbol:
        """The symbol of its acceleration, ``der(der(q))``."""
        return S.qdd(self.name)


@dataclass(frozen=True)
class Parameter:
    """A constant; a Modelica parameter and a tunable FMU parameter."""

    name: str
    value: float
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The parameter's symbol."""
        return sp.Symbol(self.name)


@dataclass(frozen=True)
class Input:
    """An external signal u(t), held at ``start`` by the native simulation."""

    name: str
    start: float = 0.0
    unit: str = ""
    description: str = ""

    @property
    def symbol(self) -> sp.Symbol:
        """The input's symbol."""
        return sp.Symbol(self.name)


@dataclass(frozen=True)
class System:
    """A mechanical system: T(q, q', t), V(q, t), D(q, q'), Q, phi(q, t) = 0, A(q, t) q' + a0(q, t) = 0.

    Immutable; built by :func:`bridge.load_system`, :func:`bridge.parse_system`, :func:`bridge.build_system` or
    :func:`bridge.from_mechanics`, which check every entry. Expressions are sympy expressions over the symbols of
    :mod:`bridge.symbols` (``x``, ``der(x)``, parameters, inputs, ``t``). :meth:`with_values` gives a copy with
    other values.

    Parameters
    ----------
    name : str
        The model name (an identifier).
    description : str
        Free text.
    coordinates : tuple of Coordinate
        The generalized coordinates q with their start positions and velocities.
    parameters : tuple of Parameter
        The constants with their values.
    inputs : tuple of Input
        The time-varying quantities given from outside, with their start values.
    kinetic : sympy.Expr
        The kinetic energy ``T(q, q', t)``.
    potential : sympy.Expr, optional
        The potential energy ``V(q, t)``.
    dissipation : sympy.Expr, optional
        Rayleigh's dissipation function ``D(q, q')``; its force on ``q_i`` is ``-dD/dq'_i``.
    forces : mapping of str to sympy.Expr, optional
        The generalized forces ``Q`` not derived from V or D, by coordinate name.
    holonomic : tuple of sympy.Expr, optional
        Holonomic constraints ``phi(q, t) = 0``.
    nonholonomic : tuple of sympy.Expr, optional
        Velocity constraints ``A(q, t) q' + a0(q, t) = 0``, linear in the velocities.
    outputs : mapping of str to sympy.Expr, optional
        Named output expressions.
    output_units, output_descriptions : mapping of str to str, optional
        The outputs' units and descriptions.
    definitions : mapping of str to sympy.Expr, optional
        The ``[definitions]`` (already substituted into the expressions).
    independent : tuple of str, optional
        The coordinates whose velocities the reduced methods keep as speeds (None: chosen by the method).
    fixed_split : bool, optional
        Keep the start split for the whole run (the reduced methods otherwise re-partition).
    stop_time : float, optional
        The default stop time of a simulation.
    source : str, optional
        Where the system came from (a file path, ``<string>``), for messages.
    adjusted_start : tuple of str, optional
        The coordinates and velocities whose start values were computed from the constraints.
    multibody : Multibody, optional
        The bodies and loads, where the system was described by them (Kane's method needs them).
    constraint_labels : tuple of str, optional
        The constraints' entry names, when not all come from ``[constraints]``.
    efforts : tuple of Effort, optional
        Effort variables ``e`` with their constraints ``Gamma(q, q', e, s, t) = 0``.
    dynamic : tuple of Dynamic, optional
        Dynamic variables ``s`` (first-order states).
    friction : tuple of Friction, optional
        Coulomb friction elements (stick and slip by events).
    diodes : tuple of Diode, optional
        Diodes on charge coordinates (conducting and blocking by events).
    interval, rtol, atol : float, optional
        The ``[simulation]`` output interval and tolerances (None: the simulator's defaults).
    ports : mapping of str to str, optional
        Coordinate -> port kind of the exported model's flanges.

    Examples
    --------
    A skate (knife edge) on a plane: three coordinates, one nonholonomic constraint.

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
    >>> system.n, system.m, system.dof
    (3, 1, 2)
    >>> system.q, system.qd
    ((x, y, theta), (der(x), der(y), der(theta)))
    >>> system.nonholonomic
    (-der(x)*sin(theta) + der(y)*cos(theta),)
    >>> [c.velocity for c in system.coordinates]
    [1.0, 0.0, 0.5]
    """

    name: str
    description: str
    coordinates: tuple[Coordinate, ...]
    parameters: tuple[Parameter, ...]
    inputs: tuple[Input, ...]
    kinetic: sp.Expr
    potential: sp.Expr = sp.Integer(0)
    dissipation: sp.Expr = sp.Integer(0)
    forces: Mapping[str, sp.Expr] = field(default_factory=dict)
    holonomic: tuple[sp.Expr, ...] = ()
    nonholonomic: tuple[sp.Expr, ...] = ()
    outputs: Mapping[str, sp.Expr] = field(default_factory=dict)
    output_units: Mapping[str, str] = field(default_factory=dict)
    output_descriptions: Mapping[str, str] = field(default_factory=dict)
    definitions: Mapping[str, sp.Expr] = field(default_factory=dict)
    independent: tuple[str, ...] | None = None
    fixed_split: bool = False  # [method] fixed_split: the reduced methods keep their start split for the whole run
    stop_time: float = 10.0
    source: str = "<system>"
    adjusted_start: tuple[str, ...] = ()  # coordinates/velocities computed from constraints
    multibody: Multibody | None = None  # bodies and loads, where the system was described by them (kane needs it)
    constraint_labels: tuple[str, ...] = ()  # entry names of the constraints when not all from [constraints]
    efforts: tuple[Effort, ...] = ()  # effort variables e with their constraints Gamma(q, q', e, s, t) = 0
    dynamic: tuple[Dynamic, ...] = ()  # dynamic variables s (first-order states), see bridge.model.efforts
    friction: tuple[Friction, ...] = ()  # Coulomb friction elements (stick/slip by events)
    diodes: tuple[Diode, ...] = ()  # diodes on charge coordinates (conducting/blocking by events)
    interval: float | None = None  # [simulation] output interval (default stop_time/1000)
    rtol: float | None = None  # [simulation] relative tolerance (default: the simulator's)
    atol: float | None = None  # [simulation] absolute tolerance (default: the simulator's)
    ports: Mapping[str, str] = field(default_factory=dict)  # [ports] coordinate -> kind (bridge.model.ports)

    def __getstate__(self) -> dict:
        # pickled (with equations sent to a Dask worker): without the values kept on it (bridge.kept), which are
        # computed again where they are needed
        return without_kept(self)

    def __repr__(self) -> str:
        extra = f", {len(self.inputs)} inputs" if self.inputs else ""
        extra += f", {len(self.outputs)} outputs" if self.outputs else ""
        names = ", ".join(c.name for c in self.coordinates[:6]) + (", ..." if self.n > 6 else "")
        return (f"<System {self.name} from {self.source}: {self.n} coordinates ({names}), "
                f"{len(self.holonomic)} holonomic + {len(self.nonholonomic)} nonholonomic constraints, "
                f"{self.dof} degrees of freedom, {len(self.parameters)} parameters{extra}>")

    def _repr_html_(self) -> str:
        from .display import system_html

        return system_html(self)

    # -- symbols ---------------------------------------------------------------
    @property
    def q(self) -> tuple[sp.Symbol, ...]:
        """The coordinate symbols (n)."""
        return tuple(c.symbol for c in self.coordinates)

    @property
    def qd(self) -> tuple[sp.Symbol, ...]:
        """The velocity symbols ``der(q)`` (n)."""
        return tuple(c.velocity_symbol for c in self.coordinates)

    @property
    def qdd(self) -> tuple[sp.Symbol, ...]:
        """The acceleration symbols ``der(der(q))`` (n)."""
        return tuple(c.acceleration_symbol for c in self.coordinates)

    @property
    def n(self) -> int:
        """The number of coordinates."""
        return len(self.coordinates)

    @property
    def constraints(self) -> tuple[tuple[str, sp.Expr], ...]:
        """All constraints with their entry names, holonomic ones first."""
        if len(self.constraint_labels) == self.m:
            return tuple(zip(self.constraint_labels, self.holonomic + self.nonholonomic))
        return tuple([(f"constraints.holonomic[{i + 1}]", e) for i, e in enumerate(self.holonomic)]
                     + [(f"constraints.nonholonomic[{i + 1}]", e) for i, e in enumerate(self.nonholonomic)])

    @property
    def m(self) -> int:
        """The number of constraints, holonomic plus nonholonomic."""
        return len(self.holonomic) + len(self.nonholonomic)

    @property
    def dof(self) -> int:
        """Number of independent velocities n - m."""
        return self.n - self.m

    @property
    def parameter_values(self) -> dict[sp.Symbol, float]:
        """Parameter symbol -> value."""
        return {p.symbol: p.value for p in self.parameters}

    @property
    def input_values(self) -> dict[sp.Symbol, float]:
        """Input symbol -> start value."""
        return {u.symbol: u.start for u in self.inputs}

    def coordinate(self, name: str) -> Coordinate:
        """Return the coordinate named ``name``.

        Parameters
        ----------
        name : str
            The coordinate's name.

        Returns
        -------
        Coordinate
            The coordinate.

        Raises
        ------
        KeyError
            When the system has no such coordinate.
        """
        for c in self.coordinates:
            if c.name == name:
                return c
        raise KeyError(name)

    def generalized_forces(self) -> list[sp.Expr]:
        """Return Q_i from [forces] (non-potential), by coordinate order."""
        return [self.forces.get(c.name, sp.Integer(0)) for c in self.coordinates]

    def velocity_constraints(self) -> list[sp.Expr]:
        """Return every constraint at velocity level: d(phi)/dt for holonomic ones, then the nonholonomic ones."""
        return [total_derivative(e, self.q, self.qd, self.qdd) for e in self.holonomic] + list(self.nonholonomic)

    def constraint_matrix(self) -> tuple[sp.Matrix, sp.Matrix]:
        """Return ``(A, a0)`` of the velocity constraints ``A(q, t) q' + a0(q, t) = 0``."""
        import symengine as se

        from .kinks import diff

        rows = [se.sympify(r) for r in self.velocity_constraints()]
        qd = [se.sympify(v) for v in self.qd]
        A = sp.Matrix(len(rows), self.n, lambda i, j: sp.sympify(diff(rows[i], qd[j])))
        zero = {v: se.Integer(0) for v in qd}
        a0 = sp.Matrix([sp.sympify(r.subs(zero)) for r in rows])
        return A, a0

    def with_start(self, positions: Mapping[str, float], velocities: Mapping[str, float],
                   adjusted: tuple[str, ...] = ()) -> System:
        """Return a copy with other start positions and velocities (no consistency check).

        Parameters
        ----------
        positions : mapping of str to float
            Coordinate name -> start value; coordinates not named keep theirs.
        velocities : mapping of str to float
            Coordinate name -> start velocity.
        adjusted : tuple of str, optional
            The names whose start values were computed from the constraints.

        Returns
        -------
        System
            The new system.
        """
        coords = tuple(replace(c, start=float(positions.get(c.name, c.start)),
                               velocity=float(velocities.get(c.name, c.velocity))) for c in self.coordinates)
        return replace(self, coordinates=coords, adjusted_start=adjusted)

    def with_values(self, values: Mapping[str, Any] | None = None, /, **kwargs: float) -> System:
        """Return a copy with some parameters, start positions, start velocities or input start values set.

        The start state of the copy is made consistent with the constraints (see :mod:`bridge.model.overrides`). The
        values go through the checks of a value written in the system file (:mod:`bridge.model.values`: masses, radii,
        inertia tensors, rates; independent constraints).

        Parameters
        ----------
        values : mapping of str to float, optional
            Name -> value: a parameter ``m``, a start position ``q``, a start velocity ``der(q)`` or an input.
        **kwargs : float
            More values, by keyword.

        Returns
        -------
        System
            The new system.

        Raises
        ------
        SystemFileError
            When a name is unknown or a value is not allowed, with the system file's message.

        Examples
        --------
        >>> import bridge
        >>> system = bridge.parse_system('''
        ... name = "Oscillator"
        ... [coordinates]
        ... x = { start = 0.1, velocity = 0.0 }
        ... [parameters]
        ... m = { value = 2.0 }
        ... k = { value = 8.0 }
        ... [energy]
        ... kinetic = "1/2*m*der(x)^2"
        ... potential = "1/2*k*x^2"
        ... ''')
        >>> heavier = system.with_values({"der(x)": 0.5}, m=4.0)
        >>> heavier.parameter_values[heavier.parameters[0].symbol], heavier.coordinate("x").velocity
        (4.0, 0.5)
        """
        if not _VALUE_SETTER:
            raise RuntimeError("no function sets values on a System: import bridge.model (bridge.model.overrides "
                               "installs it)")
        return _VALUE_SETTER[0](self, {**(values or {}), **kwargs})


#: the function behind :meth:`System.with_values`, :func:`bridge.model.overrides.apply_overrides`; installed by
#: that module (imported with :mod:`bridge.model`), which builds on the constraint kinematics built on System
_VALUE_SETTER: list[Callable[[System, Mapping[str, Any]], System]] = []


def set_values_with(setter: Callable[[System, Mapping[str, Any]], System]) -> None:
    """Install ``setter(system, values) -> system`` as the function behind :meth:`System.with_values`."""
    _VALUE_SETTER[:] = [setter]


def total_derivative(expr: sp.Expr, q, qd, qdd) -> sp.Expr:
    """Return d/dt expr = sum dexpr/dq q' + dexpr/dq' q'' + dexpr/dt (differentiated by symengine)."""
    import symengine as se

    from .kinks import diff

    e = se.sympify(expr)
    free = e.free_symbols
    t = se.sympify(S.t)
    result = diff(e, t) if t in free else se.Integer(0)
    for a, b, c in zip(q, qd, qdd):
        a, b, c = se.sympify(a), se.sympify(b), se.sympify(c)
        if a in free:
            result += diff(e, a) * b
        if b in free:
            result += diff(e, b) * c
    return sp.sympify(result)


def finite(x: Any) -> bool:
    """Return a finite int or float (an int too large for a double is not)."""
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(x)
    except OverflowError:
        return False
