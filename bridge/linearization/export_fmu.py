"""A :class:`LinearModel` as an FMU (FMI 2.0 or 3.0, Model Exchange and Co-Simulation) on the fixed C runtime.

The FMU carries *absolute* states (named as in the system file, starting at ``x_start``, default the operating
point ``x0``), inputs and outputs:

    der(x) = A (x - x0) + B (u - u0),    y = y0 + C (x - x0) + D (u - u0).

A, B, C, D, x0, u0 and y0 are parameters (``A[i,j]`` ..., 1-based, variability ``fixed``: settable before the
initialization), so one FMU serves every operating point of the same size. The generated ``model.c`` implements
the runtime's model interface (``fmu/nhb_model.h``) for this form with data only: the sizes, tables and start
values; every state counts as a "coordinate" (``NHB_NQ = NHB_NX``, so the runtime's messages name the states), no
velocities, constraints or multipliers. The model functions are fixed C beside the runtime
(``fmu/nhb_linear.c``): ``nhb_rhs`` and ``nhb_outputs`` are the two matrix products above (loops over the
parameter array), and ``nhb_jacobian`` returns ``[[A, B], [C, D]]``, so the FMU provides directional
derivatives. Value references and
``modelDescription.xml`` come from one :class:`~bridge.fmu.layout.FmuLayout`, compiled and packed by the
machinery of :mod:`bridge.fmu.build` (same compiler flags, sources shipped, reproducible zip).

The derivative of a state ``s`` is ``der(s)`` (``der(q,2)`` for ``der(q)``). When that is itself a state (the
velocity ``der(theta)`` of the coordinate ``theta``), that state *is* the derivative, as in the nonlinear FMU;
then row ``s`` of the linear model must say so (``A`` row the unit row of that state, ``B`` row zero, its
operating-point value zero, to 1e-9), else the export is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ..codegen.c import c_array as _c_array
from ..codegen.c import c_string as _c_string
from ..errors import ExportError
from ..fmu.layout import DERIVATIVE, INPUT, OUTPUT, PARAMETER, STATE, FmuLayout, Numbering
from ..fmu.split_c import failing_body, function_head, no_split_c
from ..version import __version__
from .export_common import CheckedLinear, checked, default_stop_time, derivative_name, finite_number
from .model import LinearModel

#: how closely a state row must be "der(q) is the velocity state" to serve as the derivative of q
ALIAS_TOL = 1e-9


def _parameter_blocks(chk: CheckedLinear) -> list[tuple[str, np.ndarray, str]]:
    """Return (name, values, description) of the parameter arrays, in the order of ``p`` in model.c."""
    return [("A", chk.A, "state matrix"), ("B", chk.B, "input matrix"), ("C", chk.C, "output matrix"),
            ("D", chk.D, "feedthrough matrix"), ("x0", chk.x0, "operating point: state"),
            ("u0", chk.u0, "operating point: input"), ("y0", chk.y0, "operating point: output")]


def _offsets(chk: CheckedLinear) -> dict[str, int]:
    """Return where each parameter array starts in ``p``."""
    out, at = {}, 0
    for name, values, _ in _parameter_blocks(chk):
        out[name] = at
        at += values.size
    return out


def _aliases(chk: CheckedLinear) -> dict[int, int]:
    """Return state i -> state j where ``der(state i)`` is the name of state j.

    Raise an ExportError when row i of the model does not make state j that derivative.
    """
    lin = chk.lin
    index = {s: k for k, s in enumerate(lin.states)}
    out = {}
    for i, s in enumerate(lin.states):
        j = index.get(derivative_name(s))
        if j is None:
            continue
        unit = np.zeros(chk.n)
        unit[j] = 1.0
        scale = ALIAS_TOL * max(1.0, float(np.abs(chk.A[i]).max()))
        if (np.abs(chk.A[i] - unit).max() > scale or (chk.m and np.abs(chk.B[i]).max() > scale)
                or abs(chk.x0[j]) > ALIAS_TOL * max(1.0, float(np.abs(chk.x0).max()))):
            raise ExportError(f"{lin.system} linear model: the state {lin.states[j]} is named as the derivative of "
                              f"the state {s}, but row {s} of the model is not der({s}) = {lin.states[j]} (A row the "
                              f"unit row of {lin.states[j]}, B row 0, x0 of {lin.states[j]} = 0); rename the states "
                              "or check the linearization")
        out[i] = j
    return out


def _rate_unit(unit: str) -> str:
    """Return the unit of a time derivative: ``rad`` -> ``rad/s``, ``rad/s`` -> ``rad/s2``."""
    if not unit:
        return ""
    return unit + "2" if unit.endswith("/s") else f"{unit}/s"


def linear_layout(chk: CheckedLinear, fmi_version: int) -> FmuLayout:
    """Return every FMU variable with its value reference: (time,) states, derivatives, parameters, inputs, outputs."""
    lin = chk.lin
    numbering = Numbering(fmi_version)
    add = numbering.add
    aliases = _aliases(chk)
    derivative_of = {j: lin.states[i] for i, j in aliases.items()}
    for i, (s, unit) in enumerate(zip(lin.states, lin.state_units)):
        what = "velocity" if s.startswith("der(") else "coordinate"
        add(name=s, kind=STATE, index=i, initial="exact", start=float(chk.x_start[i]), unit=unit,
            description=f"{what} {s} (absolute; operating point {float(chk.x0[i])!r})",
            derivative_of=derivative_of.get(i), nominal=1.0)
    for i, s in enumerate(lin.states):
        if i not in aliases:
            add(name=derivative_name(s), kind=DERIVATIVE, index=i, unit=_rate_unit(lin.state_units[i]),
                description=f"time derivative of {s}", derivative_of=s)
    base = 0
    for name, values, text in _parameter_blocks(chk):
        labels = _labels(chk, name)
        for k, value in enumerate(values.ravel()):
            index = ",".join(str(int(i) + 1) for i in np.unravel_index(k, values.shape))
            add(name=f"{name}[{index}]",
                kind=PARAMETER, index=base + k, causality="parameter", variability="fixed", initial="exact",
                start=float(value), description=f"{text} {labels[k]}")
        base += values.size
    for k, (u, unit) in enumerate(zip(lin.inputs, lin.input_units)):
        add(name=u, kind=INPUT, index=k, causality="input", start=float(chk.u0[k]), unit=unit, description=f"input {u}")
    for k, (y, unit) in enumerate(zip(lin.outputs, lin.output_units)):
        add(name=y, kind=OUTPUT, index=k, causality="output", unit=unit, description=f"output {y}")
    return FmuLayout(fmi_version, tuple(numbering.variables), chk.n, chk.n, jacobian=True)


def _labels(chk: CheckedLinear, block: str) -> list[str]:
    """Return what each entry of a parameter array relates: ``(der(theta), theta)`` for A, ``theta`` for x0."""
    lin = chk.lin
    rows, cols = {"A": (lin.states, lin.states), "B": (lin.states, lin.inputs), "C": (lin.outputs, lin.states),
                  "D": (lin.outputs, lin.inputs), "x0": (lin.states, None), "u0": (lin.inputs, None),
                  "y0": (lin.outputs, None)}[block]
    if cols is None:
        return list(rows)
    return [f"(d {derivative_name(r) if block in 'AB' else r} / d {c})" for r in rows for c in cols]


def linear_model_c(chk: CheckedLinear, lay: FmuLayout, guid: str, name: str) -> str:
    """Return the generated ``model.c`` of the linear FMU: the data for the fixed model functions of fmu/nhb_linear.c.

    Sizes, tables and start values of fmu/nhb_model.h (the matrices and the operating point are the parameters),
    and the stubs of the parts a linear model does not have (constraints, switched elements, re-partitioning).
    """
    np_total = sum(v.size for _, v, _ in _parameter_blocks(chk))
    rows = ",\n".join(f"    {{{v.vr}u, {v.kind}, {v.index}}}" for v in lay.variables)
    params = np.concatenate([v.ravel() for _, v, _ in _parameter_blocks(chk)])
    names = ", ".join(_c_string(s) for s in chk.lin.states) or '""'  # C has no empty arrays
    return "\n".join([
        f"/* {name}: linear model of {chk.lin.system} ({chk.lin.method}) generated by nhbridge {__version__}.",
        " * The data of dx = A (x - x0) + B (in - u0), y = y0 + C (x - x0) + D (in - u0), which fmu/nhb_linear.c",
        " * evaluates: A, B, C, D, x0, u0, y0 are the parameters p (row-major, in this order). Do not edit:",
        " * regenerate with nhbridge linearize --fmu. */",
        "#include <stdio.h>",
        '#include "nhb_model.h"',
        "",
        f"const char *const NHB_MODEL_NAME = {_c_string(name)};",
        f"const char *const NHB_GUID = {_c_string(guid)};",
        f"const int NHB_NX = {chk.n};",
        f"const int NHB_NQ = {chk.n}; /* every state counts as a coordinate: the runtime's messages name it */",
        f"const int NHB_NP = {np_total};",
        f"const int NHB_NIN = {chk.m};",
        "const int NHB_NV = 0;",
        f"const int NHB_NY = {chk.p};",
        "const int NHB_NLAM = 0;",
        "const int NHB_NRES = 0;",
        f"const int NHB_NVARS = {len(lay.variables)};",
        f"const nhb_variable NHB_VARIABLES[] = {{\n{rows}\n}};",
        f"const double NHB_X0[] = {_c_array(chk.x_start)};",
        f"const double NHB_NOMINALS[] = {_c_array([v.nominal or 1.0 for v in lay.variables if v.kind == STATE])};",
        f"const double NHB_P0[] = {_c_array(params)};",
        f"const double NHB_IN0[] = {_c_array(chk.u0)};",
        "",
        "/* no constraints */",
        "const int NHB_HAS_CONSTRAINTS = 0;",
        "const int NHB_NHOL = 0;",
        "const int NHB_VELOCITY_STATES = 0;",
        "const int NHB_DEPENDENT[] = {0};",
        f"const char *const NHB_COORDINATE_NAMES[] = {{{names}}};",
        'const char *const NHB_CONSTRAINT_NAMES[] = {""};',
        "",
        *function_head("nhb_constraints"),
        *failing_body("the model has no constraints"),
        "/* no switched elements (no event indicators) */",
        "const int NHB_NSW = 0;",
        "const int NHB_SWITCH_KIND[] = {0};",
        "const int NHB_SWITCH_UNKNOWN[] = {0};",
        'const char *const NHB_SWITCH_NAMES[] = {""};',
        "",
        *function_head("nhb_switching"),
        *failing_body("the model has no switched elements"),
        *no_split_c(),
    ])


def linear_model_description(chk: CheckedLinear, lay: FmuLayout, guid: str, name: str, stop_time: float,
                             sources: Sequence[str]) -> bytes:
    """Return ``modelDescription.xml`` from the layout, with the helpers of :mod:`bridge.fmu.model_description`.

    The outputs depend on the states and inputs whose entries of C and D are non-zero as exported.
    """
    from lxml import etree

    from ..fmu import model_description as md

    lin = chk.lin
    v3 = lay.fmi_version == 3
    root = etree.Element("fmiModelDescription")
    root.set("fmiVersion", "3.0" if v3 else "2.0")
    root.set("modelName", name)
    root.set("instantiationToken" if v3 else "guid", guid)
    root.set("description", f"Linear model of {lin.system} ({lin.method}) about an operating point")
    root.set("generationTool", f"nhbridge {__version__}")
    if not v3:
        root.set("numberOfEventIndicators", "0")
        root.set("variableNamingConvention", "structured")
    md._add_interfaces(root, name, lay, sources)
    md._add_unit_definitions(root, lay)
    md._add_log_categories(root)
    etree.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime=repr(stop_time), tolerance="1e-08",
                     stepSize=repr(stop_time / 1000))
    index_of = md._add_model_variables(root, lay)
    ms = etree.SubElement(root, "ModelStructure")
    states = [v for v in lay.variables if v.kind == STATE]
    inputs = [v for v in lay.variables if v.kind == INPUT]
    outputs = [v for v in lay.variables if v.kind == OUTPUT]
    depends = {v.name: [s for j, s in enumerate(states) if chk.C[v.index, j] != 0]
               + [u for k, u in enumerate(inputs) if chk.D[v.index, k] != 0] for v in outputs}
    derivs = md._state_derivatives(lay)
    initial = sorted({*outputs, *(v for v in derivs if v.kind != STATE)}, key=lambda v: v.vr)
    if v3:
        md._model_structure_fmi3(ms, outputs, derivs, initial, depends)
    else:
        md._model_structure_fmi2(ms, outputs, derivs, initial, depends, index_of)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")


def _version(fmi_version: int | str) -> int:
    text = str(fmi_version).strip()
    if text in ("2", "2.0"):
        return 2
    if text in ("3", "3.0"):
        return 3
    raise ExportError(f"FMI version must be 2.0 or 3.0, got {fmi_version!r}")


def build_linear_fmu(lin: LinearModel, path: str | Path, fmi_version: int | str = "2.0", name: str | None = None,
                     x_start: Sequence[float] | None = None, stop_time: float | None = None,
                     platforms: Iterable[str] | str | None = None, static: bool = False) -> Path:
    """Generate, compile and pack the linear model's FMU (ME and CS, one binary per platform and the sources).

    Written atomically. ``name``: the model identifier (default ``<system>_linear``); ``x_start``: the states' start
    values (absolute, default ``x0``); ``stop_time``: the default experiment's (default
    :func:`~bridge.linearization.export_common.default_stop_time`); ``platforms``: as for
    :func:`~bridge.fmu.build.build_fmu` (default the host's); ``static``: a model without states is accepted (``y = y0 +
    D (u - u0)``: a static gain such as a state-feedback controller).
    """
    from ..codegen.printer import PLAIN_IDENTIFIER
    from ..fmu.build import output_path, pack_source_fmu, toolchains
    from ..fmu.runtime import LINEAR_SOURCES

    version = _version(fmi_version)
    chk = checked(lin, x_start, static=static)
    name = name if name is not None else f"{lin.system}_linear"
    if not PLAIN_IDENTIFIER.match(name):
        raise ExportError(f"the model identifier {name!r} must be a C identifier (letters, digits and _, not starting "
                          "with a digit); choose another name")
    stop = default_stop_time(chk) if stop_time is None else finite_number(stop_time, "the stop time")
    tools = toolchains(platforms)
    path = output_path(path)
    lay = linear_layout(chk, version)
    digest = np.concatenate([v.ravel() for _, v, _ in _parameter_blocks(chk)] + [chk.x_start]).tobytes().hex()
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL, f"nhbridge-linear:{name}:{lin.states}:{lin.inputs}:"
                                                    f"{lin.outputs}:{digest}")) + "}"
    return pack_source_fmu(path, name, version, linear_model_c(chk, lay, guid, name),
                           lambda c_files: linear_model_description(chk, lay, guid, name, stop, c_files), tools,
                           model_sources=LINEAR_SOURCES)
