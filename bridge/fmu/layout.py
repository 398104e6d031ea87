"""The FMU layout: value references and variable kinds, computed once from the equations.

One :class:`FmuLayout` drives both the generated C (``NHB_VARIABLES``) and ``modelDescription.xml``
(FMI 2.0 or 3.0), so the two cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..derivation.eom import EquationsOfMotion
from ..kept import kept
from ..model import symbols as S
from .features import jacobian_enabled, outputs_use_efforts

#: the split's event indicator is its health sigma_min(A_dep) / sigma_max(A) minus this (the native simulation's
#: bridge.simulation.simulate.SPLIT_THRESHOLD; NHB_SPLIT_THRESHOLD of fmu/nhb_split.h)
SPLIT_EVENT_HEALTH = 1e-3

# enum nhb_kind in fmu/nhb_model.h
TIME, STATE, DERIVATIVE, PARAMETER, INPUT, VELOCITY, OUTPUT, MULTIPLIER, RESIDUAL, INDICATOR, SWITCH_MODE = range(11)



@dataclass(frozen=True)
class Variable:
    """One FMU variable, as it appears in ``modelDescription.xml`` and in ``NHB_VARIABLES``.

    Attributes
    ----------
    name : str
        The variable's name (``x``, ``der(x)``, ``lambda[1]``, ...).
    vr : int
        Its value reference.
    kind : int
        One of ``TIME``, ``STATE``, ..., ``SWITCH_MODE`` (``enum nhb_kind`` in ``fmu/nhb_model.h``).
    index : int
        Its position in the runtime array of its kind.
    causality, variability, initial : str
        The FMI attributes (``initial`` None: not written).
    start : float, optional
        The start value.
    unit, description : str
        Written when not empty.
    derivative_of : str, optional
        The name of the state this variable is the derivative of.
    nominal : float, optional
        The nominal value of a state.
    """

    name: str
    vr: int
    kind: int
    index: int
    causality: str = "local"
    variability: str = "continuous"
    initial: str | None = None
    start: float | None = None
    unit: str = ""
    description: str = ""
    derivative_of: str | None = None  # name of the state this variable is the derivative of
    nominal: float | None = None


@dataclass(frozen=True)
class FmuLayout:
    """Every FMU variable with its value reference, kind and index (one source for XML and C)."""

    fmi_version: int
    variables: tuple[Variable, ...]
    nq: int
    nx: int
    jacobian: bool = False  # model.c has nhb_jacobian: the FMU provides directional derivatives
    dependent: tuple[int, ...] = ()  # build-time split: coordinates made consistent at initialization
    switched: int = 0  # switched elements (friction, diodes): one event indicator and one mode each
    repartition: bool = False  # reduced method whose split changes at an event (indicator split.health)

    @property
    def indicator_count(self) -> int:
        """Event indicators: one per switched element, one for the split's health."""
        return self.switched + int(self.repartition)

    @property
    def event_indicators(self) -> tuple[Variable, ...]:
        """Return the event-indicator variables, in value-reference order."""
        return tuple(v for v in self.variables if v.kind == INDICATOR)

    def by_name(self, name: str) -> Variable:
        """Return the variable called ``name``; ``KeyError`` if there is none."""
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)


_DEPENDENT_POSITION = " (dependent: its start value is computed from the holonomic constraints at initialization)"
_DEPENDENT_VELOCITY = " (dependent: its start value is computed from the constraints at initialization)"


class Numbering:
    """The variables of an FMU in value-reference order.

    FMI 3's independent ``time`` gets 0, then each :meth:`add` takes the next value reference.
    """

    def __init__(self, fmi_version: int):
        self.variables: list[Variable] = []
        if fmi_version == 3:
            self.variables.append(Variable("time", 0, TIME, 0, causality="independent",
                                           description="simulation time"))

    def add(self, **kw) -> None:
        """Append a :class:`Variable` of the keyword fields ``kw`` with the next value reference."""
        self.variables.append(Variable(vr=len(self.variables), **kw))


def _speed_unit(unit: str, power: int) -> str:
    if not unit:
        return ""
    return f"{unit}/s" if power == 1 else f"{unit}/s2"


def start_split(eom: EquationsOfMotion) -> tuple[int, ...]:
    """Return the dependent coordinates (indices, increasing) that the FMU makes consistent at initialization.

    Their start positions (from the holonomic constraints) and velocities are computed from the others. The
    split is the method's for the reduced methods, else ``[method] independent``, else
    :func:`~bridge.model.mechanics.choose_independent` at the start state (the split the loader and the
    reduced methods would choose).

    Raises
    ------
    ExportError
        No choice of independent velocities is regular at the start state.
    """
    system = eom.system
    if system.m == 0:
        return ()
    if eom.dependent:
        return tuple(sorted(eom.dependent_index))
    # the FMI 2 and FMI 3 builds of one set of equations (validate) choose it once
    return kept(eom, "start_split", lambda: _chosen_split(eom))


def _chosen_split(eom: EquationsOfMotion) -> tuple[int, ...]:
    """Return the dependent coordinates of :func:`start_split` for a method without its own split."""
    from ..errors import ExportError
    from ..model.mechanics import Differentiator, choose_independent, independent_from_names, velocity_constraints

    system = eom.system
    if system.independent:
        independent = independent_from_names(system, system.independent)
    else:
        independent = choose_independent(system, velocity_constraints(system, Differentiator(system))[1])
    if independent is None:
        raise ExportError(f"{system.name}: no choice of independent velocities is regular at the start state, so the "
                          "FMU could not make changed start values consistent; check the start values")
    return tuple(i for i in range(system.n) if i not in independent)


def _add_split_speeds(add, eom: EquationsOfMotion, speeds: list[str]) -> None:
    """Add the states of a re-partitioning model after the coordinates.

    One independent-speed slot per degree of freedom (``split.u[k]``, at the start der() of the build split's
    k-th independent coordinate; its meaning changes where the split does), then their derivatives
    ``der(split.u[k])``.
    """
    system = eom.system
    nq = system.n
    for k, nm in enumerate(speeds):
        c = system.coordinate(nm)
        add(name=f"split.u[{k + 1}]", kind=STATE, index=nq + k, initial="exact", start=c.velocity,
            description=f"independent-speed slot {k + 1}: der({nm}) at the start; the runtime chooses the "
                        "independent velocities anew where the split turns singular", nominal=c.nominal)
    for k in range(len(speeds)):
        add(name=f"der(split.u[{k + 1}])", kind=DERIVATIVE, index=nq + k,
            description=f"derivative of the independent-speed slot {k + 1}", derivative_of=f"split.u[{k + 1}]")


def layout(eom: EquationsOfMotion, fmi_version: int = 2, jacobian: bool | str | None = "auto") -> FmuLayout:
    """Assign the FMU's variables their value references, kinds and indices.

    The order is: the coordinates, the split's speed slots (re-partitioning models), the velocities, the
    accelerations, the parameters, inputs, outputs, multipliers, efforts, residuals, the switched elements'
    unknowns, their modes and event indicators, and the split's health.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    fmi_version : int
        2 or 3 (FMI 3 adds the independent ``time`` with value reference 0).
    jacobian : bool, str or None
        Whether to provide directional derivatives (``"auto"``: by :func:`~bridge.fmu.features.jacobian_enabled`);
        never with switched elements or outputs that contain efforts.

    Returns
    -------
    FmuLayout

    Raises
    ------
    ExportError
        No regular split for the start state (:func:`start_split`), or a ``jacobian`` option of another kind.
    """
    from ..derivation.efforts import switched as switched_elements
    from ..derivation.split_free import repartitions

    system = eom.system
    elements = switched_elements(system)
    dependent = start_split(eom)
    speeds = [S.base_name(s) for s in eom.u]
    repartition = repartitions(eom)
    nq = system.n
    numbering = Numbering(fmi_version)
    add = numbering.add
    for i, c in enumerate(system.coordinates):
        add(name=c.name, kind=STATE, index=i, initial="exact", start=c.start, unit=c.unit,
            description=(c.description or f"coordinate {c.name}") + _DEPENDENT_POSITION * (
                i in dependent and bool(system.holonomic)), nominal=c.nominal)
    if repartition:
        _add_split_speeds(add, eom, speeds)
    for i, c in enumerate(system.coordinates):
        if repartition:
            slot = speeds.index(c.name) + 1 if c.name in speeds else 0
            text = (f"velocity of {c.name}" + (f" (its start value is that of the speed slot split.u[{slot}])"
                                                if slot else " (dependent at the start, from the constraints)"))
            add(name=f"der({c.name})", kind=VELOCITY, index=i, unit=_speed_unit(c.unit, 1), description=text,
                derivative_of=c.name, initial="exact" if slot else None, start=c.velocity if slot else None)
        elif c.name in speeds:
            add(name=f"der({c.name})", kind=STATE, index=nq + speeds.index(c.name), initial="exact",
                start=c.velocity, unit=_speed_unit(c.unit, 1),
                description=f"velocity of {c.name}" + _DEPENDENT_VELOCITY * (i in dependent),
                derivative_of=c.name, nominal=c.nominal)
        else:
            add(name=f"der({c.name})", kind=VELOCITY, index=i, unit=_speed_unit(c.unit, 1),
                description=f"velocity of {c.name} (dependent, from the constraints)", derivative_of=c.name)
    for k, nm in enumerate(speeds if not repartition else []):
        unit = system.coordinate(nm).unit
        add(name=f"der({nm},2)", kind=DERIVATIVE, index=nq + k, unit=_speed_unit(unit, 2),
            description=f"acceleration of {nm}", derivative_of=f"der({nm})")
    for k, p in enumerate(system.parameters):
        add(name=p.name, kind=PARAMETER, index=k, causality="parameter", variability="tunable", initial="exact",
            start=p.value, unit=p.unit, description=p.description or p.name)
    for k, u in enumerate(system.inputs):
        add(name=u.name, kind=INPUT, index=k, causality="input", start=u.start, unit=u.unit,
            description=u.description or u.name)
    for k, name in enumerate(system.outputs):
        add(name=name, kind=OUTPUT, index=k, causality="output", unit=system.output_units.get(name, ""),
            description=system.output_descriptions.get(name, f"output {name}"))
    for k in range(len(eom.multipliers)):
        add(name=f"lambda[{k + 1}]", kind=MULTIPLIER, index=k, description=f"constraint multiplier {k + 1}")
    for k, eff in enumerate(system.efforts):  # effort variables: after the multipliers in lam
        add(name=eff.name, kind=MULTIPLIER, index=len(eom.multipliers) + k, unit=eff.unit,
            description=f"effort: {eff.description or eff.name}")
    for k, (entry, _) in enumerate(system.constraints):
        add(name=f"residual[{k + 1}]", kind=RESIDUAL, index=k, description=f"velocity residual of {entry}")
    lam0 = len(eom.multipliers) + len(system.efforts)
    for k, el in enumerate(elements):  # switched elements: unknowns after the efforts in lam
        add(name=el.name, kind=MULTIPLIER, index=lam0 + k, unit=_element_unit(eom, el),
            description=_element_description(el))
    for k, el in enumerate(elements):
        add(name=f"{el.name}.mode", kind=SWITCH_MODE, index=k, variability="discrete",
            description=_MODE_TEXT[_is_diode(el)] + f" of {el.name}")
        add(name=f"{el.name}.indicator", kind=INDICATOR, index=k,
            description=f"event indicator of {el.name}: positive while its mode holds, an event where it crosses 0")
    if repartition:
        add(name="split.health", kind=INDICATOR, index=len(elements),
            description=f"health of the current split of the velocities minus {SPLIT_EVENT_HEALTH!r}: the "
                        "independent velocities are chosen anew where it crosses 0")
    # no directional derivatives with switched elements (their rows change with the modes) or outputs that
    # contain efforts (their derivatives would need those of the solved efforts)
    return FmuLayout(fmi_version, tuple(numbering.variables), nq, nq + len(speeds),
                     jacobian_enabled(eom, jacobian) and not elements and not outputs_use_efforts(eom), dependent,
                     len(elements), repartition)


_MODE_TEXT = {False: "friction mode (0 stick, 1 slip with positive, -1 with negative relative velocity)",
              True: "diode mode (1 conducting, 0 blocking)"}


def _is_diode(el) -> bool:
    from ..model.efforts import Diode

    return isinstance(el, Diode)


def _element_unit(eom: EquationsOfMotion, el) -> str:
    """Return the unit of a switched element's unknown: volts for a diode; a friction force has its normal force's."""
    if _is_diode(el):
        return "V"
    from ..modelica.dimensions import Dimensions

    return Dimensions(eom).text(el.normal)


def _element_description(el) -> str:
    kind = "diode voltage" if _is_diode(el) else f"friction force (generalized force on {el.coordinate})"
    return f"{kind}: {el.description or el.name}"
