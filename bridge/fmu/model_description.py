"""``modelDescription.xml`` for FMI 2.0 and 3.0, from the same layout as the C."""

from __future__ import annotations

from collections.abc import Sequence

from ..derivation.eom import EquationsOfMotion
from ..version import __version__
from .layout import INPUT, OUTPUT, STATE, TIME, FmuLayout, Variable
from .plan import CModelPlan


# -- modelDescription.xml ------------------------------------------------------------------------------
def output_dependencies(eom: EquationsOfMotion, lay: FmuLayout) -> dict[str, list[Variable]]:
    """Find the knowns (continuous states, inputs) each output depends on directly, read off its expression.

    An input in an output's expression is direct feedthrough. A dependent velocity (reduced methods)
    depends on every state; an effort (solved with the accelerations) on every state and input.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    lay : FmuLayout
        Their layout.

    Returns
    -------
    dict of str to list of Variable
        Per output name its dependencies, in value-reference order.
    """
    system = eom.system
    states = [v for v in lay.variables if v.kind == STATE]
    inputs = [v for v in lay.variables if v.kind == INPUT]
    by_name = {v.name: v for v in lay.variables}
    efforts = set(eom.efforts)
    result: dict[str, list[Variable]] = {}
    for name, expr in system.outputs.items():
        free = expr.free_symbols
        deps = set(states + inputs) if free & efforts else set()
        for c in system.coordinates:
            if c.symbol in free:
                deps.add(by_name[c.name])
            if c.velocity_symbol in free:
                vel = by_name[f"der({c.name})"]
                deps.update([vel] if vel.kind == STATE else states)
        deps.update(by_name[u.name] for u in system.inputs if u.symbol in free)
        result[name] = sorted(deps, key=lambda v: v.vr)
    return result


def _description_root(eom: EquationsOfMotion, lay: FmuLayout, guid: str):
    """Create the ``fmiModelDescription`` element: version, model name, GUID (FMI 3: instantiation token), tool."""
    from lxml import etree

    system = eom.system
    v3 = lay.fmi_version == 3
    root = etree.Element("fmiModelDescription")
    root.set("fmiVersion", "3.0" if v3 else "2.0")
    root.set("modelName", system.name)
    root.set("instantiationToken" if v3 else "guid", guid)
    root.set("description", system.description or system.name)
    root.set("generationTool", f"nhbridge {__version__}")
    if not v3:
        root.set("numberOfEventIndicators", str(lay.indicator_count))
        root.set("variableNamingConvention", "structured")
    return root


def _capabilities(lay: FmuLayout) -> dict[str, str]:
    """Return the flags of both interfaces: FMU states (``nhb_state_*`` in nhb_state.c), directional derivatives."""
    if lay.fmi_version == 3:
        flags = {"canGetAndSetFMUState": "true", "canSerializeFMUState": "true"}
        if lay.jacobian:
            flags["providesDirectionalDerivatives"] = "true"
        return flags
    return {"canNotUseMemoryManagementFunctions": "true", "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true" if lay.jacobian else "false"}


def _add_interfaces(root, name: str, lay: FmuLayout, sources: Sequence[str] = ()) -> None:
    """``ModelExchange`` and ``CoSimulation`` (variable communication step, FMI 2: no input interpolation).

    FMI 2: each lists the C files of ``sources/`` to compile in ``<SourceFiles>`` (FMI 3 has
    ``sources/buildDescription.xml`` instead: :func:`build_description`).
    """
    from lxml import etree

    me = etree.SubElement(root, "ModelExchange", modelIdentifier=name)
    cs = etree.SubElement(root, "CoSimulation", modelIdentifier=name, canHandleVariableCommunicationStepSize="true")
    for el in (me, cs):
        for flag, value in _capabilities(lay).items():
            el.set(flag, value)
        if lay.fmi_version != 3 and sources:
            files = etree.SubElement(el, "SourceFiles")
            for source in sources:
                etree.SubElement(files, "File", name=source)
    if lay.fmi_version != 3:
        cs.set("canInterpolateInputs", "false")
    elif lay.indicator_count:  # events inside doStep: handled there, or an early return for the importer's Event Mode
        cs.set("hasEventMode", "true")
        cs.set("mightReturnEarlyFromDoStep", "true")


def build_description(name: str, sources: Sequence[str]) -> bytes:
    """Write FMI 3's ``sources/buildDescription.xml`` for the model identifier ``name``.

    It declares one C99 source file set (all files flat in ``sources/``, which is the include directory) and
    the C math library.

    Parameters
    ----------
    name : str
        The model identifier.
    sources : sequence of str
        The C files to compile.

    Returns
    -------
    bytes
        The XML document, UTF-8.
    """
    from lxml import etree

    root = etree.Element("fmiBuildDescription", fmiVersion="3.0")
    config = etree.SubElement(root, "BuildConfiguration", modelIdentifier=name)
    files = etree.SubElement(config, "SourceFileSet", language="C99")
    for source in sources:
        etree.SubElement(files, "SourceFile", name=source)
    etree.SubElement(config, "Library", name="m", description="C math library (libm)")
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")


def _add_unit_definitions(root, lay: FmuLayout) -> None:
    """``UnitDefinitions``: every unit the variables use, sorted (none: no element)."""
    from lxml import etree

    units = sorted({v.unit for v in lay.variables if v.unit})
    if units:
        ud = etree.SubElement(root, "UnitDefinitions")
        for u in units:
            etree.SubElement(ud, "Unit", name=u)


def _add_log_categories(root) -> None:
    """``LogCategories``: the runtime's error, warning and debug categories."""
    from lxml import etree

    cats = etree.SubElement(root, "LogCategories")
    for cat in ("logStatusError", "logStatusWarning", "logDebug"):
        etree.SubElement(cats, "Category", name=cat)


def _add_default_experiment(root, system) -> None:
    """Add ``DefaultExperiment``: 0 to the system's stop time.

    The tolerance and step are the file's ``[simulation]`` rtol and interval, else 1e-8 and stop time / 1000.
    """
    from lxml import etree

    stop = float(system.stop_time)
    step = system.interval if system.interval is not None and system.interval <= stop else stop / 1000
    tolerance = repr(float(system.rtol)) if system.rtol is not None else "1e-08"
    etree.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime=repr(stop),
                     tolerance=tolerance, stepSize=repr(float(step)))


def _add_variable(parent, v: Variable, v3: bool):
    """One ``Float64`` (FMI 3) or ``ScalarVariable`` (FMI 2) element; the one holding unit, start and nominal.

    In FMI 2 that is the variable's ``Real`` child.
    """
    from lxml import etree

    el = etree.SubElement(parent, "Float64" if v3 else "ScalarVariable", name=v.name, valueReference=str(v.vr))
    if v.description:
        el.set("description", v.description)
    el.set("causality", v.causality)
    if v.kind != TIME:
        el.set("variability", v.variability)
    if v.initial and v.causality != "input":
        el.set("initial", v.initial)
    target = el if v3 else etree.SubElement(el, "Real")
    if v.unit:
        target.set("unit", v.unit)
    if v.start is not None:
        target.set("start", repr(float(v.start)))
    if v.nominal is not None:
        target.set("nominal", repr(float(v.nominal)))
    return target


def _state_reference(lay: FmuLayout, state: str, index_of: dict[str, int]) -> str:
    """How a derivative names its state: the value reference (FMI 3) or the 1-based variable index (FMI 2)."""
    return str(lay.by_name(state).vr) if lay.fmi_version == 3 else str(index_of[state])


def _add_model_variables(root, lay: FmuLayout) -> dict[str, int]:
    """``ModelVariables`` in layout order, derivatives linked to their states; the 1-based index of each name."""
    from lxml import etree

    index_of = {v.name: pos + 1 for pos, v in enumerate(lay.variables)}
    mv = etree.SubElement(root, "ModelVariables")
    for v in lay.variables:
        target = _add_variable(mv, v, lay.fmi_version == 3)
        if v.derivative_of:
            target.set("derivative", _state_reference(lay, v.derivative_of, index_of))
    return index_of


def _state_derivatives(lay: FmuLayout) -> list[Variable]:
    """Return the derivatives of the continuous states, ordered like the states."""
    derivs = [v for v in lay.variables if v.derivative_of and lay.by_name(v.derivative_of).kind == STATE]
    state_order = {v.name: v.index for v in lay.variables if v.kind == STATE}
    return sorted(derivs, key=lambda v: state_order[v.derivative_of])


def _model_structure_fmi3(ms, outputs: list[Variable], derivs: list[Variable], initial: list[Variable],
                          depends: dict[str, list[Variable]], indicators: tuple[Variable, ...] = ()) -> None:
    """Add FMI 3's ``Output``, ``ContinuousStateDerivative``, ``InitialUnknown`` and ``EventIndicator`` elements.

    Each names its variable by value reference.
    """
    from lxml import etree

    for v in outputs:
        etree.SubElement(ms, "Output", valueReference=str(v.vr),
                         dependencies=" ".join(str(d.vr) for d in depends[v.name]))
    for v in derivs:
        etree.SubElement(ms, "ContinuousStateDerivative", valueReference=str(v.vr))
    for v in initial:
        etree.SubElement(ms, "InitialUnknown", valueReference=str(v.vr))
    for v in indicators:
        etree.SubElement(ms, "EventIndicator", valueReference=str(v.vr))


def _model_structure_fmi2(ms, outputs: list[Variable], derivs: list[Variable], initial: list[Variable],
                          depends: dict[str, list[Variable]], index_of: dict[str, int]) -> None:
    """FMI 2 ``Outputs``, ``Derivatives`` and ``InitialUnknowns``, each an ``Unknown`` by variable index."""
    from lxml import etree

    if outputs:
        out_el = etree.SubElement(ms, "Outputs")
        for v in outputs:
            etree.SubElement(out_el, "Unknown", index=str(index_of[v.name]),
                             dependencies=" ".join(str(index_of[d.name]) for d in depends[v.name]))
    if derivs:  # the schema wants at least one Unknown: a model without states has no Derivatives element
        der_el = etree.SubElement(ms, "Derivatives")
        for v in derivs:
            etree.SubElement(der_el, "Unknown", index=str(index_of[v.name]))
    if initial:
        ini_el = etree.SubElement(ms, "InitialUnknowns")
        for v in sorted(initial, key=lambda v: index_of[v.name]):
            etree.SubElement(ini_el, "Unknown", index=str(index_of[v.name]))


def _add_model_structure(root, eom: EquationsOfMotion, lay: FmuLayout, index_of: dict[str, int]) -> None:
    """``ModelStructure``: the outputs with their dependencies, the state derivatives and the initial unknowns.

    The initial unknowns are the outputs and the calculated derivatives (a velocity state is exact). The
    dependencies are declared so that importers can tell direct feedthrough.
    """
    from lxml import etree

    ms = etree.SubElement(root, "ModelStructure")
    outputs = [v for v in lay.variables if v.kind == OUTPUT]
    derivs = _state_derivatives(lay)
    initial = sorted({*outputs, *(v for v in derivs if v.kind != STATE and v.initial != "exact")}, key=lambda v: v.vr)
    depends = output_dependencies(eom, lay)
    if lay.fmi_version == 3:
        _model_structure_fmi3(ms, outputs, derivs, initial, depends, lay.event_indicators)
    else:
        _model_structure_fmi2(ms, outputs, derivs, initial, depends, index_of)


def model_description(plan: CModelPlan, sources: Sequence[str] = ()) -> bytes:
    """Write ``modelDescription.xml`` (FMI 2.0 or 3.0, as the plan's layout) for the plan's variables.

    Parameters
    ----------
    plan : CModelPlan
        The equations, layout and GUID.
    sources : sequence of str
        The C files in the FMU's ``sources/`` (FMI 2: listed in ``<SourceFiles>``).

    Returns
    -------
    bytes
        The XML document, UTF-8.
    """
    from lxml import etree

    eom, lay, guid = plan.eom, plan.layout, plan.guid
    root = _description_root(eom, lay, guid)
    _add_interfaces(root, eom.system.name, lay, sources)
    _add_unit_definitions(root, lay)
    _add_log_categories(root)
    _add_default_experiment(root, eom.system)
    index_of = _add_model_variables(root, lay)
    _add_model_structure(root, eom, lay, index_of)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")


