"""Read and check a model folder before its FMU is simulated: every problem at once, nothing written."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import Problem, ValidationError
from .files import CsvData, add_problem, read_csv_file, read_ref_opt
from .layout import FMI_TYPES, PLATFORM, Layout, parse_layout, results_folder
from .output import check_output_dir


@dataclass(frozen=True)
class CheckPlan:
    """A model folder read and checked: its layout, FMU, options, reference and inputs, and the results folder."""

    layout: Layout
    fmu: Path
    md: object
    opts: dict
    reference: CsvData
    inputs: CsvData | None
    target: Path


def _generation_tool(md) -> tuple[str, str]:
    text = (getattr(md, "generationTool", None) or "").strip()
    parts = text.split()
    safe = [re.sub(r"[^A-Za-z0-9._+-]", "_", p) for p in parts]
    if len(safe) >= 2:
        return safe[0], safe[-1]
    return (safe[0], "unknown") if safe else ("unknown", "unknown")


def _require_model_folder(model_dir: Path) -> None:
    """ValidationError unless ``model_dir`` is an existing folder."""
    if not model_dir.exists():
        raise ValidationError(Problem("", "no such folder", "give the model folder, e.g. "
                                      "DIR/fmus/2.0/me/linux64/nhbridge/0.1.0/Model", str(model_dir)))
    if not model_dir.is_dir():
        raise ValidationError(Problem("", "not a folder", "give the model folder that holds Model.fmu and "
                                      "Model_ref.csv", str(model_dir)))


def _require_fmpy() -> None:
    """ValidationError unless fmpy can be imported."""
    try:
        import fmpy  # noqa: F401
    except ImportError as exc:
        raise ValidationError("checking an FMU needs fmpy: pip install fmpy") from exc


def _describe_fmu(model_dir: Path, fmu: Path, model: str, problems: list[Problem]):
    """Return the FMU's model description, or None with a problem: missing (with a hint why) or not loadable."""
    from ..runs import RunFailure, describe_fmu

    if fmu.is_file():
        try:
            return describe_fmu(fmu)
        except RunFailure as exc:
            problems.append(Problem("", exc.reason.split(": ", 1)[-1], "replace it with a valid FMU", str(fmu)))
            return None
    others = sorted(p.name for p in model_dir.glob("*.fmu"))
    hint = (f"the rules name the FMU after its folder: rename {others[0]} or the folder" if others else
            "put the FMU into the folder, named after it")
    if (model_dir / f"{model}.nofmu").exists():
        hint = "the exporter submitted a .nofmu file instead of the FMU; there is nothing to simulate"
    add_problem(problems, fmu, "", "the FMU is missing", hint)
    return None


def _check_reference(reference: CsvData | None, opts: dict | None, problems: list[Problem]) -> None:
    """Problems when the reference has no signal, or does not cover StartTime to StopTime of ``_ref.opt``."""
    if reference is not None and not reference.names:
        add_problem(problems, reference.path, "line 1", "no signal besides the time", "add the variables to compare")
    if reference is not None and opts is not None:
        start, stop = float(opts["StartTime"]), float(opts["StopTime"])
        eps = 1e-9 * max(1.0, abs(stop - start))
        if reference.time[0] > start + eps or reference.time[-1] < stop - eps:
            add_problem(problems, reference.path, "",
                        f"the reference covers {reference.time[0]:g} to {reference.time[-1]:g} s, not StartTime "
                        f"{start:g} to StopTime {stop:g} s of _ref.opt",
                        "the rules ask the reference to contain StartTime and StopTime")


def _fmi_version(layout: Layout | None, md, fmu: Path, problems: list[Problem]) -> str | None:
    """Return the FMI version of the folder, else of the FMU; a problem when the two differ."""
    version = layout.fmi_version if layout else None
    if md is not None:
        if version is not None and md.fmiVersion != version:
            problems.append(Problem("", f"an FMI {md.fmiVersion} FMU in an FMI {version} folder",
                                    "put it under the folder of its FMI version", str(fmu)))
        version = version or md.fmiVersion
    return version


def _interfaces(md) -> dict[str, object | None]:
    """FMI type (me, cs) -> the FMU's description of that interface, None when it lacks it (or has no md)."""
    return {"me": getattr(md, "modelExchange", None), "cs": getattr(md, "coSimulation", None)}


def _fmi_type(layout: Layout | None, md, fmi_type: str | None, model_dir: Path, problems: list[Problem]) -> str | None:
    """Return the FMI type to check: the folder's, else ``--fmi-type``, else the FMU's only interface.

    Problems: an unknown or contradicting ``--fmi-type``, a loose folder whose FMU offers both interfaces.
    """
    if fmi_type is not None and fmi_type not in FMI_TYPES:
        problems.append(Problem("--fmi-type", f"checking takes one FMI type, me or cs, got {fmi_type!r}",
                                "the folder's place in fmus/<version>/<me|cs>/... decides it"))
        fmi_type = None
    if layout is not None:
        if fmi_type is not None and fmi_type != layout.fmi_type:
            problems.append(Problem("--fmi-type", f"the folder is a {layout.fmi_type} folder, not {fmi_type}",
                                    "leave out --fmi-type", str(model_dir)))
        fmi_type = layout.fmi_type
    elif fmi_type is None and md is not None:
        offered = [k for k, v in _interfaces(md).items() if v is not None]
        if len(offered) == 1:
            fmi_type = offered[0]
        else:
            problems.append(Problem("", "the folder is not in a cross-check tree (fmus/<FMI version>/<me|cs>/"
                                    "<platform>/<tool>/<version>/<model>) and the FMU offers both interfaces",
                                    "pass --fmi-type me or --fmi-type cs", str(model_dir)))
    return fmi_type


def _check_interface(md, fmi_type: str | None, in_tree: bool, fmu: Path, problems: list[Problem]) -> None:
    """Return a problem when the FMU lacks the interface (ModelExchange or CoSimulation) of the FMI type to check."""
    if md is not None and fmi_type in FMI_TYPES and _interfaces(md)[fmi_type] is None:
        where = f"the folder is a {fmi_type} folder" if in_tree else f"--fmi-type {fmi_type} asks for it"
        problems.append(Problem("", f"the FMU has no {FMI_TYPES[fmi_type]} interface, but {where}",
                                "check it as the interface it has", str(fmu)))


def _check_results_root(results_root: str | Path | None, layout: Layout | None, model_dir: Path,
                        problems: list[Problem]) -> None:
    """Problems when the results have no place (a loose folder without ``-o``) or ``-o`` is not writable."""
    if results_root is None and layout is None:
        problems.append(Problem("-o", "the folder is not in a cross-check tree, so the results have no default place",
                                "give -o DIR: the results go to DIR/results/...", str(model_dir)))
    if results_root is not None:
        check_output_dir(results_root, problems, "results folder")


def plan_check(model_dir: Path, results_root: str | Path | None, fmi_type: str | None) -> CheckPlan:
    """Read and check everything in the model folder; ValidationError naming every problem."""
    _require_model_folder(model_dir)
    _require_fmpy()
    problems: list[Problem] = []
    layout = parse_layout(model_dir)
    model = Path(os.path.abspath(model_dir)).name
    fmu = model_dir / f"{model}.fmu"
    md = _describe_fmu(model_dir, fmu, model, problems)
    opts = read_ref_opt(model_dir / f"{model}_ref.opt", problems)
    reference = read_csv_file(model_dir / f"{model}_ref.csv", problems, "the reference _ref.csv")
    in_path = model_dir / f"{model}_in.csv"
    inputs = read_csv_file(in_path, problems, "the input file _in.csv") if in_path.exists() else None
    _check_reference(reference, opts, problems)
    version = _fmi_version(layout, md, fmu, problems)
    fmi_type = _fmi_type(layout, md, fmi_type, model_dir, problems)
    _check_interface(md, fmi_type, layout is not None, fmu, problems)
    _check_results_root(results_root, layout, model_dir, problems)
    if problems:
        raise ValidationError(problems)
    if layout is None:
        tool, tool_version = _generation_tool(md)
        layout = Layout(Path(os.path.abspath(results_root)), version, fmi_type, PLATFORM, tool, tool_version, model)
    root = Path(results_root) if results_root is not None else layout.root
    target = results_folder(root, layout.fmi_version, layout.fmi_type, layout.platform, layout.tool,
                            layout.tool_version, model)
    return CheckPlan(layout, fmu, md, opts, reference, inputs, target)
