"""Export a system's cross-check folders (rules §9.1.4, §9.1.5): the FMU and its reference.

Each model folder holds ``{Model_Name}.fmu`` (at most 10 MB, ``validate_vendor_repo``), ``{Model_Name}_ref.csv``,
``{Model_Name}_ref.opt``, ``{Model_Name}_in.csv`` (only when the FMU has inputs) and ``ReadMe.md``. Signals
constant up to integration noise (a conserved energy) are left out of ``_ref.csv`` and named in the ReadMe: the
cross-check band (:mod:`.band`) is 10 % of such a signal's noise, and no importer could pass.
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from ...errors import BridgeError, ExportError, Problem, SimulationError, SystemFileError, ValidationError
from ...version import __version__
from ..metrics import CONSTANT
from .band import BAND_WIDTH
from .files import MAX_CSV_BYTES, csv_text, opt_text
from .layout import FMI_TYPE_TITLES, FMI_TYPES, PLATFORM, README_NAME, TOOL_NAME, model_folder
from .output import FolderSwap, check_output_dir, write_file

MAX_FMU_BYTES = 10_000_000  # validate_vendor_repo: an FMU must not be larger than 10 MB
RECOMMENDED_SIGNALS = 10    # §9.1.4: "at most 10 of the important variables" (a recommendation)
REFERENCE_RTOL, REFERENCE_ATOL = 1e-12, 1e-14
REFERENCE_INTERVALS = 500   # at most 501 rows: fmpy's cross-check report warns above 1000 samples


def reference_step(stop: float) -> float:
    """Return the output step of a reference.

    ``stop / n`` with the smallest n giving a step of at least 1, 2 or 5 × 10^k ≥ stop/500.
    """
    raw = stop / REFERENCE_INTERVALS
    exp = math.floor(math.log10(raw))
    nice = next(m * 10.0 ** exp for m in (1, 2, 5, 10) if m * 10.0 ** exp >= raw * (1 - 1e-9))
    return stop / max(1, round(stop / nice))


def _compiler_version() -> str:
    from ...tools.gcc import compiler, compiler_version

    try:
        return compiler_version(compiler())
    except BridgeError:
        return "unknown"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _summary(text: str, limit: int = 120) -> str:
    """Return the first sentence of a description, shortened for a table cell (no ``|``)."""
    text = _one_line(text).replace("|", "/")
    match = re.match(r"(.+?[.!?])\s+(?=[A-Z])", text)
    first = match.group(1) if match else text
    return first if len(first) <= limit else first[:limit - 1].rstrip() + "…"


def _export_readme(system, fmi_version: int, fmi_type: str, step: float, stop: float, names: list[str],
                   constant: list[str], source: Path, compiler: str, binaries: Sequence[str] = (PLATFORM,)) -> str:
    model = system.name
    units = {c.name: c.unit for c in system.coordinates}
    units |= {f"der({c.name})": f"{c.unit}/s" for c in system.coordinates if c.unit}
    rows = [f"## {model} FMU", "", "### Model Info", "", f"|Model Name|{model}|", "|-|-|",
            f"|Description|{_summary(system.description) or model}|",
            f"|FMI Version|{fmi_version}.0|", f"|FMI Type|{FMI_TYPE_TITLES[fmi_type]}|", f"|Platform|{PLATFORM}|",
            f"|Compiler|{compiler}|", f"|Generation Tool|{TOOL_NAME} {__version__}|", "",
            "### Model", "", _one_line(system.description) or model, "",
            f"Generated from the nhbridge system file `{source.name}` (SHA-256 `{_sha256(source)[:16]}…`). "
            f"`{model}.fmu` is a source FMU with the {', '.join(binaries)} binar{'ies' if len(binaries) > 1 else 'y'} "
            "and provides both Model Exchange and "
            "Co-Simulation; the same file is submitted under `me/` and `cs/`. Co-Simulation integrates with an "
            "adaptive Dormand–Prince 5(4) or 8(5,3) method (whichever needs fewer evaluations) at the "
            "importer's tolerance and lands on the communication points.",
            "", "### Reference solution", "",
            f"`{model}_ref.csv`: nhbridge's native simulation: equations of motion by the Lagrange method with "
            f"multipliers, integrated by scipy's DOP853 at RelTol {REFERENCE_RTOL:g} and AbsTol {REFERENCE_ATOL:g}, "
            f"sampled every {step:.6g} s from 0 to {stop:g} s (`{model}_ref.opt`). "
            "Velocities are the FMU variables `der(x)`.", "",
            "| signal | unit |", "|-|-|"]
    rows += [f"| `{n}` | {units.get(n, '') or '–'} |" for n in names]
    if constant:
        rows += ["", f"Left out: {', '.join(f'`{n}`' for n in constant)}, which vary by less than {CONSTANT:g} of "
                 "their value along the reference (e.g. a conserved energy). The cross-check band is "
                 f"{BAND_WIDTH:.0%} of a signal's range, for these integration noise no importer could stay within."]
    if len(names) > RECOMMENDED_SIGNALS:
        rows += ["", f"The reference has {len(names)} signals, more than the {RECOMMENDED_SIGNALS} the rules "
                 "recommend: every coordinate, velocity and output is listed."]
    if system.inputs:
        held = ", ".join(f"`{u.name}` = {u.start:g}{' ' + u.unit if u.unit else ''}" for u in system.inputs)
        rows += ["", f"Inputs (`{model}_in.csv`): {held}, held constant over the run."]
    rows += ["", "### Reproduce", "", "```",
             f"nhbridge crosscheck {source.name} -o DIR --fmi-version {fmi_version} --fmi-type {fmi_type}",
             f"nhbridge crosscheck --check DIR/fmus/{fmi_version}.0/{fmi_type}/{PLATFORM}/{TOOL_NAME}/{__version__}/"
             f"{model}", "```", ""]
    return "\n".join(rows)


def export_crosscheck(system_path: str | Path, out_dir: str | Path, fmi_version: int = 2,
                      fmi_types: Iterable[str] = ("me", "cs"),
                      platforms: Iterable[str] | str | None = None) -> list[Path]:
    """Write the cross-check folders of a system file under ``out_dir/fmus/...``; the model folders written.

    One FMU (Model Exchange and Co-Simulation) is built and put into each requested ``me``/``cs`` folder
    with ``_ref.csv``, ``_ref.opt``, ``_in.csv`` (inputs held at their start values) and ``ReadMe.md``.
    ``platforms``: binaries besides the host's (see :func:`~bridge.fmu.build.build_fmu`); the folder layout
    names the host's platform.
    Every folder is written beside its target and renamed into place; an existing one is replaced.
    """
    from ...derivation.methods import derive
    from ...fmu.build import build_fmu, toolchains
    from ...fmu.platforms import with_host
    from ...model.loader import load_system
    from ...simulation.simulate import simulate
    from ..reference import signal_names

    problems: list[Problem] = []
    types = list(dict.fromkeys(fmi_types))
    if fmi_version not in (2, 3):
        problems.append(Problem("--fmi-version", f"FMI version must be 2 or 3, got {fmi_version!r}"))
    wrong = [t for t in types if t not in FMI_TYPES]
    if wrong or not types:
        problems.append(Problem("--fmi-type", f"FMI types must be me and/or cs, got {', '.join(map(str, types))}",
                                "use me, cs or both"))
    check_output_dir(out_dir, problems)
    source = Path(system_path)
    try:
        system = load_system(source)
    except SystemFileError as exc:
        if not problems:
            raise
        raise ValidationError(list(exc.problems) + problems) from exc
    if problems:
        raise ValidationError(problems)
    chosen = with_host(platforms)
    tools = toolchains(chosen)  # no (cross) compiler: one line (CompilerNotFoundError) before any work

    eom = derive(system, "lagrange")
    stop = float(system.stop_time)
    step = reference_step(stop)
    result = simulate(eom, stop, interval=step, rtol=REFERENCE_RTOL, atol=REFERENCE_ATOL)
    cols = result.columns()
    names = [n for n in signal_names(system) if n in cols]
    bad = [n for n in names if not np.all(np.isfinite(cols[n]))]
    if bad:
        raise SimulationError(f"{source}: the reference simulation produced non-finite values for {', '.join(bad)}")
    constant = [n for n in names if 0 < np.ptp(cols[n]) < CONSTANT * np.abs(cols[n]).max()]
    names = [n for n in names if n not in constant]
    if not names:
        raise ValidationError(f"{source}: every signal of {system.name} is constant up to integration noise; the "
                              "cross-check band (10 % of a signal's range) cannot compare such signals")
    files = {f"{system.name}_ref.csv": csv_text(cols["time"], {n: cols[n] for n in names}),
             f"{system.name}_ref.opt": opt_text(0.0, stop, step, REFERENCE_RTOL, REFERENCE_ATOL, step)}
    if system.inputs:
        files[f"{system.name}_in.csv"] = csv_text(np.array([0.0, stop]),
                                                  {u.name: np.full(2, u.start) for u in system.inputs})
    for name, text in files.items():
        if len(text.encode()) > MAX_CSV_BYTES:
            raise ExportError(f"{name} would be {len(text.encode()) / 1e6:.1f} MB, above the 1 MB limit of the "
                              "FMI Cross-Check rules")
    with tempfile.TemporaryDirectory(prefix="nhbridge-crosscheck-") as tmp:
        fmu = build_fmu(eom, Path(tmp) / f"{system.name}.fmu", fmi_version, platforms=chosen)
        if fmu.stat().st_size > MAX_FMU_BYTES:
            raise ExportError(f"{fmu.name} is {fmu.stat().st_size / 1e6:.1f} MB, above the 10 MB limit of the "
                              "FMI Cross-Check repository")
        compiler = _compiler_version()
        with FolderSwap() as swap:
            for fmi_type in types:
                staging = swap.stage(model_folder(out_dir, fmi_version, fmi_type, system.name))
                try:
                    shutil.copyfile(fmu, staging / fmu.name)
                except OSError as exc:
                    raise ExportError(f"{staging}: cannot write the FMU ({exc.strerror or exc})") from exc
                for name, text in files.items():
                    write_file(staging / name, text)
                write_file(staging / README_NAME, _export_readme(system, fmi_version, fmi_type, step, stop, names,
                                                             constant, source, compiler,
                                                             [p.folder(fmi_version) for p in tools]))
            return swap.commit()
