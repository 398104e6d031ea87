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


def model_c(eom: EquationsOfMotion, lay: FmuLayout, guid: str) -> str:
    system = eom.system
    nq, p, m = system.n, len(eom.u), len(eom.multipliers)
    size = p + m
    printer = NhbCPrinter(_c_names(eom))
    M, F, K = eom.mass_matrix, eom.forcing, eom.kinematics
    dyn_lines, dyn = _cse_block(printer, list(M) + list(F) + list(K), "c")
    # outputs: velocities first (kinematics), then outputs and residuals in terms of v
    out_printer = NhbCPrinter(_c_names(eom))
    for i, c in enumerate(system.coordinates):
        out_printer.names[c.velocity_symbol] = f"v[{i}]"
    vel_lines, vel = _cse_block(NhbCPrinter(_c_names(eom)), list(K), "k")
    res_exprs = list(system.velocity_constraints())
    out_lines, outs = _cse_block(out_printer, list(system.outputs.values()) + res_exprs, "o")
    ny = len(system.outputs)

    def arr(values) -> str:
        return "{" + ", ".join(repr(float(v)) for v in values) + "}" if values else "{0.0}"

    x0 = [c.start for c in system.coordinates] + [system.coordinate(S.base_name(s)).velocity for s in eom.u]
    nominals = [c.nominal or 1.0 for c in system.coordinates] + [
        system.coordinate(S.base_name(s)).nominal or 1.0 for s in eom.u]
    var_rows = ",\n".join(f"    {{{v.vr}u, {v.kind}, {v.index}}}" for v in lay.variables)
    lines = [
        f"/* {system.name}: generated by nhbridge {__version__} from the equations of method {eom.method}.",
        " * Do not edit: regenerate with `nhbridge fmu`. */",
        "#include <math.h>",
        "#include <stdio.h>",
        '#include "nhb_model.h"',
        "",
        f'const char *const NHB_MODEL_NAME = "{system.name}";',
        f'const char *const NHB_GUID = "{guid}";',
        f"const int NHB_NX = {lay.nx};",
        f"const int NHB_NQ = {nq};",
        f"const int NHB_NP = {len(system.parameters)};",
        f"const int NHB_NIN = {len(system.inputs)};",
        f"const int NHB_NV = {nq};",
        f"const int NHB_NY = {ny};",
        f"const int NHB_NLAM = {m};",
        f"const int NHB_NRES = {system.m};",
        f"const int NHB_NVARS = {len(lay.variables)};",
        f"const nhb_variable NHB_VARIABLES[] = {{\n{var_rows}\n}};",
        f"const double NHB_X0[] = {arr(x0)};",
        f"const double NHB_NOMINALS[] = {arr(nominals)};",
        f"const double NHB_P0[] = {arr([q.value for q in system.parameters])};",
        f"const double NHB_IN0[] = {arr([u.start for u in system.inputs])};",
        "",
        "int nhb_rhs(double t, const double *x, const double *p, const double *in, double *dx, double *lam,",
        "            char *msg, size_t msg_len)",
        "{",
        "    (void)t; (void)x; (void)p; (void)in; (void)lam;",
        f"    double M[{max(1, size * size)}];",
        f"    double F[{max(1, size)}];",
        *dyn_lines,
    ]
    for k in range(size * size):
        lines.append(f"    M[{k}] = {dyn[k]};")
    for k in range(size):
        lines.append(f"    F[{k}] = {dyn[size * size + k]};")
    for i in range(nq):
        lines.append(f"    dx[{i}] = {dyn[size * size + size + i]};")
    lines += [
        f"    int bad = nhb_lu_solve({size}, M, F);",
        "    if (bad) {",
        '        snprintf(msg, msg_len, "the mass matrix is singular at t = %.17g (pivot %d)", t, bad);',
        "        return 1;",
        "    }",
        f"    for (int i = 0; i < {p}; ++i) dx[{nq} + i] = F[i];",
    ]
    if m:
        lines.append(f"    if (lam) for (int i = 0; i < {m}; ++i) lam[i] = F[{p} + i];")
    lines += [
        f"    for (int i = 0; i < {lay.nx}; ++i) {{",
        "        if (!isfinite(dx[i])) {",
        '            snprintf(msg, msg_len, "the derivatives are not finite at t = %.17g", t);',
        "            return 2;",
        "        }",
        "    }",
        "    return 0;",
        "}",
        "",
        "int nhb_outputs(double t, const double *x, const double *p, const double *in, double *v, double *y,",
        "                double *r, char *msg, size_t msg_len)",
        "{",
        "    (void)t; (void)x; (void)p; (void)in; (void)y; (void)r; (void)msg; (void)msg_len;",
        *vel_lines,
    ]
    for i in range(nq):
        lines.append(f"    v[{i}] = {vel[i]};")
    lines += out_lines
    for k in range(ny):
        lines.append(f"    y[{k}] = {outs[k]};")
    for k in range(system.m):
        lines.append(f"    r[{k}] = {outs[ny + k]};")
    lines += ["    return 0;", "}", ""]
    from .fmu_jacobian import jacobian_c

    lines += jacobian_c(eom, lay.jacobian)
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


def model_description(eom: EquationsOfMotion, lay: FmuLayout, guid: str) -> bytes:
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
    me = etree.SubElement(root, "ModelExchange", modelIdentifier=system.name)
    cs = etree.SubElement(root, "CoSimulation", modelIdentifier=system.name,
                          canHandleVariableCommunicationStepSize="true")
    if not v3:
        for el in (me, cs):
            el.set("canNotUseMemoryManagementFunctions", "true")
            el.set("canGetAndSetFMUstate", "true")  # the runtime's FMU states (nhb_state_* in nhb_core.c)
            el.set("canSerializeFMUstate", "true")
            el.set("providesDirectionalDerivative", "true" if lay.jacobian else "false")
        cs.set("canInterpolateInputs", "false")
    else:
        for el in (me, cs):
            el.set("canGetAndSetFMUState", "true")
            el.set("canSerializeFMUState", "true")
    if v3 and lay.jacobian:
        for el in (me, cs):
            el.set("providesDirectionalDerivatives", "true")
    units = sorted({v.unit for v in lay.variables if v.unit})
    if units:
        ud = etree.SubElement(root, "UnitDefinitions")
        for u in units:
            etree.SubElement(ud, "Unit", name=u)
    cats = etree.SubElement(root, "LogCategories")
    for cat in ("logStatusError", "logStatusWarning", "logDebug"):
        etree.SubElement(cats, "Category", name=cat)
    etree.SubElement(root, "DefaultExperiment", startTime="0.0", stopTime=repr(float(system.stop_time)),
                     tolerance="1e-08", stepSize=repr(float(system.stop_time) / 1000))
    mv = etree.SubElement(root, "ModelVariables")
    index_of = {}
    for pos, v in enumerate(lay.variables):
        index_of[v.name] = pos + 1
        if v3:
            el = etree.SubElement(mv, "Float64", name=v.name, valueReference=str(v.vr))
        else:
            el = etree.SubElement(mv, "ScalarVariable", name=v.name, valueReference=str(v.vr))
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
    # derivative attributes (need the state's index / value reference)
    for pos, v in enumerate(lay.variables):
        if v.derivative_of:
            el = mv[pos]
            target = el if v3 else el[0]
            state = lay.by_name(v.derivative_of)
            target.set("derivative", str(state.vr) if v3 else str(index_of[state.name]))
    ms = etree.SubElement(root, "ModelStructure")
    outputs = [v for v in lay.variables if v.kind == OUTPUT]
    derivs = [v for v in lay.variables if v.derivative_of and lay.by_name(v.derivative_of).kind == STATE]
    # order derivatives like the states
    state_order = {v.name: v.index for v in lay.variables if v.kind == STATE}
    derivs.sort(key=lambda v: state_order[v.derivative_of])
    # initial unknowns: outputs and the derivatives that are calculated (a velocity state is exact)
    initial = sorted({*outputs, *(v for v in derivs if v.kind != STATE)}, key=lambda v: v.vr)
    depends = output_dependencies(eom, lay)  # declared, so that importers can tell direct feedthrough
    if v3:
        for v in outputs:
            etree.SubElement(ms, "Output", valueReference=str(v.vr),
                             dependencies=" ".join(str(d.vr) for d in depends[v.name]))
        for v in derivs:
            etree.SubElement(ms, "ContinuousStateDerivative", valueReference=str(v.vr))
        for v in initial:
            etree.SubElement(ms, "InitialUnknown", valueReference=str(v.vr))
    else:
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
