"""Native FMUs: generated C for one model plus the fixed runtime in ``fmu/``.

One :class:`FmuLayout` (value references and variable kinds) is computed from the equations and
drives both the generated C (``NHB_VARIABLES``) and ``modelDescription.xml`` (FMI 2.0 or 3.0), so
the two cannot drift. The C comes from sympy's C99 printer after one joint CSE pass over the mass
matrix, forcing and kinematics; the mass-matrix system is solved at run time by the runtime's LU
with partial pivoting (``nhb_lu_solve``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import sympy as sp
from sympy.printing.c import C99CodePrinter

from . import __version__
from . import symbols as S
from .atomic import atomic_file
from .eom import EquationsOfMotion
from .errors import ExportError

RUNTIME = Path(__file__).resolve().parent.parent / "fmu"
PLATFORM = {2: "linux64", 3: "x86_64-linux"}

# enum nhb_kind in fmu/nhb_model.h
TIME, STATE, DERIVATIVE, PARAMETER, INPUT, VELOCITY, OUTPUT, MULTIPLIER, RESIDUAL = range(9)


@dataclass(frozen=True)
class Variable:
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

    def by_name(self, name: str) -> Variable:
        for v in self.variables:
            if v.name == name:
                return v
        raise KeyError(name)


def _speed_unit(unit: str, power: int) -> str:
    if not unit:
        return ""
    return f"{unit}/s" if power == 1 else f"{unit}/s2"


def layout(eom: EquationsOfMotion, fmi_version: int = 2, jacobian: bool | str | None = "auto") -> FmuLayout:
    from .fmu_jacobian import jacobian_enabled

    system = eom.system
    speeds = [S.base_name(s) for s in eom.u]
    nq = system.n
    out: list[Variable] = []
    vr = 0
    if fmi_version == 3:
        out.append(Variable("time", 0, TIME, 0, causality="independent", description="simulation time"))
        vr = 1

    def add(**kw) -> None:
        nonlocal vr
        out.append(Variable(vr=vr, **kw))
        vr += 1

    for i, c in enumerate(system.coordinates):
        add(name=c.name, kind=STATE, index=i, initial="exact", start=c.start, unit=c.unit,
            description=c.description or f"coordinate {c.name}", nominal=c.nominal)
    for i, c in enumerate(system.coordinates):
        if c.name in speeds:
            add(name=f"der({c.name})", kind=STATE, index=nq + speeds.index(c.name), initial="exact",
                start=c.velocity, unit=_speed_unit(c.unit, 1), description=f"velocity of {c.name}",
                derivative_of=c.name, nominal=c.nominal)
        else:
            add(name=f"der({c.name})", kind=VELOCITY, index=i, unit=_speed_unit(c.unit, 1),
                description=f"velocity of {c.name} (dependent, from the constraints)", derivative_of=c.name)
    for k, nm in enumerate(speeds):
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
    for k, (entry, _) in enumerate(system.constraints):
        add(name=f"residual[{k + 1}]", kind=RESIDUAL, index=k, description=f"velocity residual of {entry}")
    return FmuLayout(fmi_version, tuple(out), nq, nq + len(speeds), jacobian_enabled(eom, jacobian))


# -- C ---------------------------------------------------------------------------------------------
class NhbCPrinter(C99CodePrinter):
    """C99 printer mapping the bridge's symbols to the runtime's arrays."""

    def __init__(self, names: dict[sp.Symbol, str]):
        super().__init__({"math_macros": {}})
        self.names = names

    def _print_Symbol(self, expr):
        if expr in self.names:
            return self.names[expr]
        return super()._print_Symbol(expr)


def _c_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
    system = eom.system
    names: dict[sp.Symbol, str] = {S.t: "t"}
    nq = system.n
    for i, c in enumerate(system.coordinates):
        names[c.symbol] = f"x[{i}]"
    for k, s in enumerate(eom.u):
        names[s] = f"x[{nq + k}]"
    for k, p in enumerate(system.parameters):
        names[p.symbol] = f"p[{k}]"
    for k, u in enumerate(system.inputs):
        names[u.symbol] = f"in[{k}]"
    return names


def _cse_block(printer: NhbCPrinter, exprs: list[sp.Expr], prefix: str) -> tuple[list[str], list[str]]:
    temps = sp.numbered_symbols(f"{prefix}_")
    repl, reduced = sp.cse(exprs, symbols=temps, order="canonical")
    lines = []
    for sym, e in repl:
        printer.names[sym] = str(sym)
        lines.append(f"    const double {sym} = {printer.doprint(e)};")
    return lines, [printer.doprint(e) for e in reduced]


def _c_array(values) -> str:
    """A C initializer ``{v0, v1, ...}`` of doubles (``{0.0}`` for none: C has no empty arrays)."""
    return "{" + ", ".join(repr(float(v)) for v in values) + "}" if values else "{0.0}"


def _c_assignments(target: str, values: list[str]) -> list[str]:
    """One statement ``target[k] = values[k];`` per value."""
    return [f"    {target}[{k}] = {value};" for k, value in enumerate(values)]


def _c_preamble(eom: EquationsOfMotion) -> list[str]:
    """The file comment and the includes."""
    return [
        f"/* {eom.system.name}: generated by nhbridge {__version__} from the equations of method {eom.method}.",
        " * Do not edit: regenerate with `nhbridge fmu`. */",
        "#include <math.h>",
        "#include <stdio.h>",
        '#include "nhb_model.h"',
        "",
    ]


def _c_model_constants(eom: EquationsOfMotion, lay: FmuLayout, guid: str) -> list[str]:
    """Name, GUID, the sizes and the variable table ``NHB_VARIABLES`` (value reference, kind, index)."""
    system = eom.system
    var_rows = ",\n".join(f"    {{{v.vr}u, {v.kind}, {v.index}}}" for v in lay.variables)
    return [
        f'const char *const NHB_MODEL_NAME = "{system.name}";',
        f'const char *const NHB_GUID = "{guid}";',
        f"const int NHB_NX = {lay.nx};",
        f"const int NHB_NQ = {system.n};",
        f"const int NHB_NP = {len(system.parameters)};",
        f"const int NHB_NIN = {len(system.inputs)};",
        f"const int NHB_NV = {system.n};",
        f"const int NHB_NY = {len(system.outputs)};",
        f"const int NHB_NLAM = {len(eom.multipliers)};",
        f"const int NHB_NRES = {system.m};",
        f"const int NHB_NVARS = {len(lay.variables)};",
        f"const nhb_variable NHB_VARIABLES[] = {{\n{var_rows}\n}};",
    ]


def _c_start_values(eom: EquationsOfMotion) -> list[str]:
    """The start state ``x0 = [q0; u0]``, its nominal values, the parameter values and the input start values."""
    system = eom.system
    speeds = [system.coordinate(S.base_name(s)) for s in eom.u]
    x0 = [c.start for c in system.coordinates] + [c.velocity for c in speeds]
    nominals = [c.nominal or 1.0 for c in system.coordinates] + [c.nominal or 1.0 for c in speeds]
    return [
        f"const double NHB_X0[] = {_c_array(x0)};",
        f"const double NHB_NOMINALS[] = {_c_array(nominals)};",
        f"const double NHB_P0[] = {_c_array([q.value for q in system.parameters])};",
        f"const double NHB_IN0[] = {_c_array([u.start for u in system.inputs])};",
        "",
    ]


def _c_rhs(eom: EquationsOfMotion, lay: FmuLayout) -> list[str]:
    """``nhb_rhs``: ``dx = [K; du]`` with ``[du; lambda]`` solved from ``M [du; lambda] = F`` (LU, partial pivoting).

    One CSE pass covers M, F and K; a singular M or non-finite derivatives return an error code and message.
    """
    nq, size = eom.system.n, len(eom.u) + len(eom.multipliers)
    temps, dyn = _cse_block(NhbCPrinter(_c_names(eom)),
                            list(eom.mass_matrix) + list(eom.forcing) + list(eom.kinematics), "c")
    n_m = size * size
    return [
        "int nhb_rhs(double t, const double *x, const double *p, const double *in, double *dx, double *lam,",
        "            char *msg, size_t msg_len)",
        "{",
        "    (void)t; (void)x; (void)p; (void)in; (void)lam;",
        f"    double M[{max(1, n_m)}];",
        f"    double F[{max(1, size)}];",
        *temps,
        *_c_assignments("M", dyn[:n_m]),
        *_c_assignments("F", dyn[n_m:n_m + size]),
        *_c_assignments("dx", dyn[n_m + size:n_m + size + nq]),
        *_c_rhs_solution(eom, lay),
    ]


def _c_rhs_solution(eom: EquationsOfMotion, lay: FmuLayout) -> list[str]:
    """The end of ``nhb_rhs``: solve ``M [du; lambda] = F`` in place, copy ``du`` (and lambda), check finiteness."""
    nq, p, m = eom.system.n, len(eom.u), len(eom.multipliers)
    lines = [
        f"    int bad = nhb_lu_solve({p + m}, M, F);",
        "    if (bad) {",
        '        snprintf(msg, msg_len, "the mass matrix is singular at t = %.17g (pivot %d)", t, bad);',
        "        return 1;",
        "    }",
        f"    for (int i = 0; i < {p}; ++i) dx[{nq} + i] = F[i];",
    ]
    if m:
        lines.append(f"    if (lam) for (int i = 0; i < {m}; ++i) lam[i] = F[{p} + i];")
    return lines + [
        f"    for (int i = 0; i < {lay.nx}; ++i) {{",
        "        if (!isfinite(dx[i])) {",
        '            snprintf(msg, msg_len, "the derivatives are not finite at t = %.17g", t);',
        "            return 2;",
        "        }",
        "    }",
        "    return 0;",
        "}",
        "",
    ]


def _c_outputs(eom: EquationsOfMotion) -> list[str]:
    """``nhb_outputs``: the velocities ``v = K``, then the outputs ``y`` and velocity residuals ``r`` in terms of v."""
    system = eom.system
    nq, ny = system.n, len(system.outputs)
    vel_temps, vel = _cse_block(NhbCPrinter(_c_names(eom)), list(eom.kinematics), "k")
    out_printer = NhbCPrinter(_c_names(eom))
    for i, c in enumerate(system.coordinates):
        out_printer.names[c.velocity_symbol] = f"v[{i}]"
    out_temps, outs = _cse_block(out_printer, list(system.outputs.values()) + list(system.velocity_constraints()),
                                 "o")
    return [
        "int nhb_outputs(double t, const double *x, const double *p, const double *in, double *v, double *y,",
        "                double *r, char *msg, size_t msg_len)",
        "{",
        "    (void)t; (void)x; (void)p; (void)in; (void)y; (void)r; (void)msg; (void)msg_len;",
        *vel_temps,
        *_c_assignments("v", vel[:nq]),
        *out_temps,
        *_c_assignments("y", outs[:ny]),
        *_c_assignments("r", outs[ny:ny + system.m]),
        "    return 0;",
        "}",
        "",
    ]


def model_c(eom: EquationsOfMotion, lay: FmuLayout, guid: str) -> str:
    """The generated ``model.c``: constants, start values, ``nhb_rhs``, ``nhb_outputs`` (and ``nhb_jacobian``)."""
    from .fmu_jacobian import jacobian_c

    lines = [*_c_preamble(eom), *_c_model_constants(eom, lay, guid), *_c_start_values(eom), *_c_rhs(eom, lay),
             *_c_outputs(eom), *jacobian_c(eom, lay.jacobian)]
    return "\n".join(lines)


# -- modelDescription.xml ------------------------------------------------------------------------------
def output_dependencies(eom: EquationsOfMotion, lay: FmuLayout) -> dict[str, list[Variable]]:
    """The knowns (continuous states, inputs) each output depends on directly, read off its expression.

    An input in an output's expression is direct feedthrough. A dependent velocity (reduced methods)
    depends on every state.
    """
    system = eom.system
    states = [v for v in lay.variables if v.kind == STATE]
    by_name = {v.name: v for v in lay.variables}
    result: dict[str, list[Variable]] = {}
    for name, expr in system.outputs.items():
        free = expr.free_symbols
        deps = set()
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
    """The ``fmiModelDescription`` element: version, model name, GUID (FMI 3: instantiation token), tool."""
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
        root.set("numberOfEventIndicators", "0")
        root.set("variableNamingConvention", "structured")
    return root


def _capabilities(lay: FmuLayout) -> dict[str, str]:
    """The flags of both interfaces: FMU states (``nhb_state_*`` in nhb_core.c), directional derivatives."""
    if lay.fmi_version == 3:
        flags = {"canGetAndSetFMUState": "true", "canSerializeFMUState": "true"}
        if lay.jacobian:
            flags["providesDirectionalDerivatives"] = "true"
        return flags
    return {"canNotUseMemoryManagementFunctions": "true", "canGetAndSetFMUstate": "true",
            "canSerializeFMUstate": "true", "providesDirectionalDerivative": "true" if lay.jacobian else "false"}


def _add_interfaces(root, name: str, lay: FmuLayout) -> None:
    """``ModelExchange`` and ``CoSimulation`` (variable communication step, FMI 2: no input interpolation)."""
    from lxml import etree

    me = etree.SubElement(root, "ModelExchange", modelIdentifier=name)
    cs = etree.SubElement(root, "CoSimulation", modelIdentifier=name, canHandleVariableCommunicationStepSize="true")
    for el in (me, cs):
        for flag, value in _capabilities(lay).items():
            el.set(flag, value)
    if lay.fmi_version != 3:
        cs.set("canInterpolateInputs", "false")


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


def _add_default_experiment(root, stop_time: float) -> None:
    """``DefaultExperiment``: 0 to the system's stop time, tolerance 1e-8, step stop time / 1000."""
    from lxml import etree

    etree.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime=repr(float(stop_time)),
                     tolerance="1e-08", stepSize=repr(float(stop_time) / 1000))


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
    if v.initial and not (v.causality == "input"):
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
    """The derivatives of the continuous states, ordered like the states."""
    derivs = [v for v in lay.variables if v.derivative_of and lay.by_name(v.derivative_of).kind == STATE]
    state_order = {v.name: v.index for v in lay.variables if v.kind == STATE}
    return sorted(derivs, key=lambda v: state_order[v.derivative_of])


def _model_structure_fmi3(ms, outputs: list[Variable], derivs: list[Variable], initial: list[Variable],
                          depends: dict[str, list[Variable]]) -> None:
    """FMI 3 ``Output``, ``ContinuousStateDerivative`` and ``InitialUnknown`` elements, by value reference."""
    from lxml import etree

    for v in outputs:
        etree.SubElement(ms, "Output", valueReference=str(v.vr),
                         dependencies=" ".join(str(d.vr) for d in depends[v.name]))
    for v in derivs:
        etree.SubElement(ms, "ContinuousStateDerivative", valueReference=str(v.vr))
    for v in initial:
        etree.SubElement(ms, "InitialUnknown", valueReference=str(v.vr))


def _model_structure_fmi2(ms, outputs: list[Variable], derivs: list[Variable], initial: list[Variable],
                          depends: dict[str, list[Variable]], index_of: dict[str, int]) -> None:
    """FMI 2 ``Outputs``, ``Derivatives`` and ``InitialUnknowns``, each an ``Unknown`` by variable index."""
    from lxml import etree

    if outputs:
        out_el = etree.SubElement(ms, "Outputs")
        for v in outputs:
            etree.SubElement(out_el, "Unknown", index=str(index_of[v.name]),
                             dependencies=" ".join(str(index_of[d.name]) for d in depends[v.name]))
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
    initial = sorted({*outputs, *(v for v in derivs if v.kind != STATE)}, key=lambda v: v.vr)
    depends = output_dependencies(eom, lay)
    if lay.fmi_version == 3:
        _model_structure_fmi3(ms, outputs, derivs, initial, depends)
    else:
        _model_structure_fmi2(ms, outputs, derivs, initial, depends, index_of)


def model_description(eom: EquationsOfMotion, lay: FmuLayout, guid: str) -> bytes:
    """``modelDescription.xml`` (FMI 2.0 or 3.0, as ``lay.fmi_version``) for the layout's variables, UTF-8."""
    from lxml import etree

    root = _description_root(eom, lay, guid)
    _add_interfaces(root, eom.system.name, lay)
    _add_unit_definitions(root, lay)
    _add_log_categories(root)
    _add_default_experiment(root, eom.system.stop_time)
    index_of = _add_model_variables(root, lay)
    _add_model_structure(root, eom, lay, index_of)
    return etree.tostring(root, pretty_print=True, xml_declaration=True, encoding="UTF-8")


# -- build ---------------------------------------------------------------------------------------------
RUNTIME_SOURCES = {2: ["nhb_linalg.c", "nhb_core.c", "nhb_jacobian.c", "fmi2_runtime.c"],
                   3: ["nhb_linalg.c", "nhb_core.c", "nhb_jacobian.c", "fmi3_runtime.c"]}


def compiler() -> str:
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if not cc or not shutil.which(cc.split()[0]):
        where = f"CC={os.environ['CC']!r} is not an executable" if os.environ.get("CC") else "no cc or gcc on PATH"
        raise ExportError(f"no C compiler found ({where}): install gcc or set the CC environment variable to a C "
                          "compiler")
    return cc


def _output_path(path: str | Path) -> Path:
    """The FMU's target path, checked: it ends in .fmu and its folder exists or can be made."""
    path = Path(path)
    if path.suffix != ".fmu":
        raise ExportError(f"{path}: an FMU file must end in .fmu")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ExportError(f"{path}: cannot write here ({exc.strerror or exc}); choose a writable output path") from exc
    return path


def _compile(cc: str, binary: Path, sources: list[Path], flags: list[str], what: str) -> None:
    """Compile ``sources`` into the shared library ``binary`` (C99, -O2, position independent)."""
    binary.parent.mkdir(parents=True, exist_ok=True)
    cmd = [*cc.split(), "-std=c99", "-O2", "-fPIC", "-shared", *flags, "-o", str(binary), *map(str, sources), "-lm"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ExportError(f"compiling {what} failed ({cmd[0]}): {proc.stderr.strip()[:2000]}")


def _pack(path: Path, folder: Path) -> Path:
    """Zip modelDescription.xml, binaries/ and sources/ of ``folder`` into the FMU ``path`` atomically."""
    members = [folder / "modelDescription.xml", *sorted((folder / "binaries").rglob("*.so")),
               *sorted((folder / "sources").iterdir())]
    with atomic_file(path) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for f in members:
            zf.write(f, f.relative_to(folder).as_posix())
    return path


def build_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
              jacobian: bool | str | None = "auto") -> Path:
    """Generate, compile and pack a source FMU with the Linux x86-64 binary; written atomically.

    ``jacobian``: generate the Jacobian code for directional derivatives (``True``/``False``; ``"auto"``: when
    the system has at most ``bridge.fmu_jacobian.JACOBIAN_MAX_STATES`` states).
    """
    if fmi_version not in (2, 3):
        raise ExportError(f"FMI version must be 2 or 3, got {fmi_version}")
    path = _output_path(path)
    cc = compiler()
    system = eom.system
    lay = layout(eom, fmi_version, jacobian)
    jac = ":jacobian" if lay.jacobian else ""
    guid = "{" + str(uuid.uuid5(uuid.NAMESPACE_URL,
                                f"nhbridge:{system.name}:{eom.method}:{model_c_hash(eom)}{jac}")) + "}"
    sources = RUNTIME_SOURCES[fmi_version]
    with tempfile.TemporaryDirectory(prefix="nhbridge-fmu-") as tmp:
        folder = Path(tmp)
        src = folder / "sources"
        src.mkdir()
        (src / "model.c").write_text(model_c(eom, lay, guid), encoding="utf-8")
        for name in [*sources, "nhb_model.h", "nhb_core.h", "nhb_jacobian.h"]:
            shutil.copy(RUNTIME / name, src / name)
        for header in (RUNTIME / "include" / f"fmi{fmi_version}").glob("*.h"):
            shutil.copy(header, src / header.name)
        _compile(cc, folder / "binaries" / PLATFORM[fmi_version] / f"{system.name}.so",
                 [src / "model.c", *[src / s for s in sources]],
                 ["-fvisibility=hidden", "-Wall", "-Wextra", f"-I{src}"], system.name)
        (folder / "modelDescription.xml").write_bytes(model_description(eom, lay, guid))
        return _pack(path, folder)


def model_c_hash(eom: EquationsOfMotion) -> str:
    import hashlib

    text = "|".join(map(str, [eom.method, *eom.mass_matrix, *eom.forcing, *eom.kinematics,
                              *[p.name for p in eom.system.parameters]]))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def build_rumoca_fmu(eom: EquationsOfMotion, path: str | Path, level: str = "index1") -> Path:
    """The exported Modelica model compiled to an FMI 2.0 FMU by Rumoca's ``fmi2`` code generation.

    Rumoca writes a self-contained C file and modelDescription.xml; nhbridge compiles it with ``$CC``
    and packs the FMU (sources included) atomically. Rumoca's Co-Simulation is fixed-step explicit Euler.
    """
    try:
        import rumoca
    except ImportError as exc:
        raise ExportError('Rumoca is not installed; pip install --only-binary rumoca "rumoca>=0.9.9,<0.10", or use '
                          "--backend native") from exc
    from .modelica_export import model_source

    path = _output_path(path)
    cc = compiler()
    name = eom.system.name
    try:
        model = rumoca.loads(model_source(eom, level), model=name, filename=f"{name}.mo")
        generated = model.codegen("fmi2")
    except (rumoca.RumocaError, RuntimeError) as exc:  # codegen template errors surface as RuntimeError
        raise ExportError(f"Rumoca cannot generate an FMU for {name}: {exc}; use --backend native") from exc
    with tempfile.TemporaryDirectory(prefix="nhbridge-rumoca-") as tmp:
        folder = Path(tmp)
        generated.save_all(str(folder))
        _compile(cc, folder / "binaries" / "linux64" / f"{name}.so", sorted((folder / "sources").glob("*.c")), [],
                 f"Rumoca's C for {name}")
        return _pack(path, folder)


OMC_MISSING_FMU = ("OpenModelica's omc was not found on PATH or in OPENMODELICAHOME; install OpenModelica or use "
                   "--backend native")


def build_openmodelica_fmu(eom: EquationsOfMotion, path: str | Path, fmi_version: int = 2,
                           level: str = "index1") -> Path:
    """The exported Modelica model compiled by OpenModelica (``buildModelFMU`` in omc, through OMPython)."""
    from .modelica_check import omc_session

    path = _output_path(path)
    name = eom.system.name
    with omc_session(eom, level, OMC_MISSING_FMU, ExportError) as (omc, _):
        built = omc.sendExpression(f'buildModelFMU({name}, version="{fmi_version}.0", fmuType="me_cs")')
        if not built or not Path(str(built)).exists():
            raise ExportError(f"omc could not build an FMU for {name}: {omc.sendExpression('getErrorString()')}")
        with atomic_file(path) as tmp:
            shutil.copyfile(str(built), tmp)
    return path
