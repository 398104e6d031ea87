"""Check an FMU of a cross-check model folder against its reference: simulate with fmpy, compare, write results.

Every signal of ``_ref.csv`` gets two tests, and ``passed`` needs both:

1. the cross-check band of the repository's validator (:mod:`.band`): the reference on 1000 points, ±10 samples
   in time, ±10 % of its range in value; fails when more than 10 % of the result's samples lie outside;
2. nhbridge's csv-compare tube (:func:`bridge.validation.metrics.compare`): ±``tube`` (0.002) of the signal's
   range in value and ±``time_tolerance`` (1e-3) of the time span; fails on any sample outside.

The band alone would pass clearly wrong results (10 % of the range, 10 % of the samples), so the tube decides as
well; a ``passed`` written here is always one the repository's validator accepts. The results folder holds exactly
one marker, ``passed`` or ``failed`` (``rejected`` is not written: an FMU nhbridge cannot load is bad input),
``{Model_Name}_out.csv`` (``validate_vendor_repo`` reads it whenever ``passed`` exists) and ``ReadMe.md``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...version import __version__
from ..metrics import compare
from ..settings import DEFAULT_TIME_TOLERANCE, DEFAULT_TUBE
from .band import BAND_OUTLIERS, BAND_POINTS, BAND_WIDTH, BAND_WINDOW, band_outliers, band_width
from .export import REFERENCE_INTERVALS
from .files import MAX_CSV_BYTES, CsvData, csv_text
from .layout import FMI_TYPE_TITLES, FMI_TYPES, README_NAME, TOOL_NAME, parse_layout
from .output import FolderSwap, write_file
from .plan import CheckPlan, plan_check
from .result import CrosscheckResult, SignalCheck

ME_RTOL_FLOOR = 1e-10  # CVode is not asked for more than this, whatever RelTol says


def _check_readme(res: CrosscheckResult, plan: CheckPlan, how: str, tube: float, time_tol: float, fmpy_version: str,
                  wrote_out: bool) -> str:
    lay = plan.layout
    rows = [f"## {res.model}: FMI Cross-Check result ({res.status})", "",
            f"|Model Name|{res.model}|", "|-|-|", f"|FMI Version|{res.fmi_version}|",
            f"|FMI Type|{FMI_TYPE_TITLES[res.fmi_type]}|", f"|Platform|{lay.platform}|",
            f"|Importing Tool|{TOOL_NAME} {__version__} (simulation by FMPy {fmpy_version})|",
            f"|Exporting Tool|{lay.tool} {lay.tool_version}|", f"|Result|{res.status}|", "",
            "### How the FMU was simulated", "", how, "",
            "### Comparison", "",
            f"Every signal of `{res.model}_ref.csv` against the result; `passed` needs both tests for every signal:",
            "",
            f"1. the cross-check band of `fmpy.cross_check.validate_result`: the reference on {BAND_POINTS} points, "
            f"±{BAND_WINDOW // 2} samples in time, ±{BAND_WIDTH:.0%} of its range in value; at most "
            f"{BAND_OUTLIERS:.0%} of the samples outside;",
            f"2. nhbridge's csv-compare tube: ±{tube:g} of the signal's range in value, ±{time_tol:g} s in time; "
            "no sample outside.", "",
            "| signal | max abs error | max error / range | at t (s) | outside band | outside tube | verdict |",
            "|-|-|-|-|-|-|-|"]
    for s in res.signals:
        m = s.metrics
        rows.append(f"| `{s.signal}` | {m.max_abs:.3g} | {m.max_rel:.3g} | {m.worst_time:.4g} | "
                    f"{s.band_outside}/{s.samples} | {m.tube_violations} | {'passed' if s.passed else 'failed'} |")
    if res.reasons:
        rows += ["", "### Reasons", ""] + [f"- {r}" for r in res.reasons]
    if res.notes:
        rows += ["", "### Notes", ""] + [f"- {n}" for n in res.notes]
    rows += ["", "### Files", ""]
    if wrote_out:
        rows.append(f"- `{res.model}_out.csv`: the simulated values of the reference's signals.")
    rows.append(f"- `{res.status}`: the result (FMI Cross-Check rules §9.2.3).")
    if parse_layout(res.model_dir) is not None:
        where = Path(os.path.abspath(res.model_dir)).relative_to(plan.layout.root)
        rows += ["", "### Reproduce (in the folder that holds `fmus/`)", "", "```",
                 f"nhbridge crosscheck --check {where}", "```", ""]
    else:
        rows += ["", "### Reproduce", "", "```", f"nhbridge crosscheck --check {res.model_dir} --fmi-type "
                 f"{res.fmi_type} -o {plan.layout.root}", "```", ""]
    return "\n".join(rows)


@dataclass(frozen=True)
class _RunSettings:
    """How the FMU is simulated: the time span, CS communication step, output interval and ME tolerance."""

    start: float
    stop: float
    step: float
    interval: float
    rtol: float | None  # None: the FMU's default tolerance
    rtol_opt: float     # RelTol of _ref.opt


def _run_settings(opts: dict, ref: CsvData) -> _RunSettings:
    """Return the run that ``_ref.opt`` asks for.

    Output every OutputIntervalLength, else StepSize, else the reference's median spacing (if that is not positive:
    (stop - start) / REFERENCE_INTERVALS); CS communicates every StepSize (StepSize 0, variable step: at the output
    interval); ME runs at ``rtol = max(RelTol, ME_RTOL_FLOOR)``, or the FMU's default tolerance when RelTol is 0.
    """
    start, stop = float(opts["StartTime"]), float(opts["StopTime"])
    step = float(opts["StepSize"])
    interval = float(opts.get("OutputIntervalLength", 0.0)) or step or float(np.median(np.diff(ref.time)))
    interval = interval if interval > 0 else (stop - start) / REFERENCE_INTERVALS
    rtol_opt = float(opts["RelTol"])
    rtol = max(rtol_opt, ME_RTOL_FLOOR) if rtol_opt > 0 else None
    return _RunSettings(start, stop, step or interval, interval, rtol, rtol_opt)


def _check_grid(run: _RunSettings, model_dir: Path) -> None:
    """Raise ValidationError when ``_ref.opt`` asks for a grid beyond the campaign's limits.

    An output interval or a step below ``StopTime * 1e-12``, or more than ``MAX_ROWS`` output points or communication
    steps (the limits of :mod:`..campaign`).
    """
    from ...errors import Problem, ValidationError
    from ..campaign import MAX_ROWS, MIN_STEP_RATIO

    span = run.stop - run.start
    for what, value in (("the output interval", run.interval), ("StepSize", run.step)):
        if value < MIN_STEP_RATIO * max(abs(run.stop), span) or span / value > MAX_ROWS:
            raise ValidationError(Problem("_ref.opt", f"{what} {value:g} s over {span:g} s means {span / value:.3g} "
                                          f"points, more than the limit of {MAX_ROWS:.0e}",
                                          "give a larger StepSize / OutputIntervalLength", str(model_dir)))


def _signals_to_compare(res: CrosscheckResult, plan: CheckPlan, variables: dict) -> list[str]:
    """Return the reference's signals the FMU has; the missing ones are a reason to fail."""
    ref = plan.reference
    missing = [n for n in ref.names if n not in variables]
    if missing:
        res.reasons.append(f"the FMU lacks the variable(s) {', '.join(missing)} of {ref.path.name}")
    return [n for n in ref.names if n in variables]


def _input_array(res: CrosscheckResult, plan: CheckPlan, fmu_inputs: list[str]):
    """Return the ``_in.csv`` values of the FMU's inputs as fmpy's structured array, or None (inputs at start values).

    An ``_in.csv`` column that is no input of the FMU is a reason to fail; inputs it leaves out get a note.
    """
    if plan.inputs is None:
        if fmu_inputs:
            res.notes.append(f"the FMU has input(s) {', '.join(fmu_inputs)} but the folder has no _in.csv: held at "
                             "their start values")
        return None
    wrong = [n for n in plan.inputs.names if n not in fmu_inputs]
    if wrong:
        res.reasons.append(f"{plan.inputs.path.name} names {', '.join(wrong)}, which the FMU does not have as "
                           f"input(s)")
    used = [n for n in plan.inputs.names if n in fmu_inputs]
    unset = [n for n in fmu_inputs if n not in used]
    if unset:
        res.notes.append(f"input(s) {', '.join(unset)} not in {plan.inputs.path.name}: held at their start values")
    return plan.inputs.structured(used) if used else None


def _note_validation_problems(res: CrosscheckResult, fmu: Path) -> None:
    """Return a note with the number and the first three problems ``fmpy.validation.validate_fmu`` finds, if any."""
    from fmpy.validation import validate_fmu

    try:
        found = validate_fmu(str(fmu))
    except Exception as exc:  # fmpy raises plain exceptions for broken XML
        found = [str(exc)]
    if found:
        res.notes.append(f"fmpy.validation.validate_fmu reports {len(found)} problem(s): "
                         + "; ".join(p.splitlines()[0] for p in found[:3]))


def _how_simulated(kind: str, run: _RunSettings, plan: CheckPlan, input_array, fmu_inputs: list[str]) -> str:
    """Return the ReadMe's account of the simulation: interface, solver and tolerance, output interval, span, inputs."""
    if kind == "ModelExchange":
        tol = "the FMU's default tolerance (RelTol 0 in `_ref.opt`)" if run.rtol is None else \
            (f"relative tolerance {run.rtol:g} (RelTol {run.rtol_opt:g} of `_ref.opt`, not tighter than "
             f"{ME_RTOL_FLOOR:g})")
        how = f"FMPy `simulate_fmu`, Model Exchange, CVode at {tol}, output every {run.interval:.6g} s"
    else:
        tol = "its default tolerance" if run.rtol is None else f"tolerance {run.rtol:g}"
        how = (f"FMPy `simulate_fmu`, Co-Simulation at communication step {run.step:.6g} s, {tol} passed to the FMU, "
               f"output every {run.interval:.6g} s")
    how += f", from {run.start:g} to {run.stop:g} s"
    how += (f", inputs from `{plan.inputs.path.name}` (linear interpolation)." if input_array is not None
            else ", no inputs." if not fmu_inputs else ", inputs at their start values.")
    return how + " The FMU runs in a child process, so a crash fails the check instead of stopping it."


def _simulate(res: CrosscheckResult, plan: CheckPlan, kind: str, run: _RunSettings, present: list[str],
              input_array) -> dict[str, np.ndarray] | None:
    """Return the simulated ``present`` signals (and time) from an isolated fmpy run; None, with a reason, when none."""
    from ..runs import RunFailure, simulate_isolated

    if not present:
        res.reasons.append("no signal of the reference can be compared")
        return None
    if res.reasons:
        return None
    kw = dict(fmi_type=kind, start_time=run.start, stop_time=run.stop, output_interval=run.interval, output=present,
              relative_tolerance=run.rtol, input=input_array, validate=False)
    if kind == "ModelExchange":
        kw["solver"] = "CVode"
    else:
        kw["step_size"] = run.step
    try:
        return simulate_isolated(plan.fmu, **kw)
    except RunFailure as exc:
        res.reasons.append(f"the simulation failed: {exc.reason}")
        return None


def _compare_signals(res: CrosscheckResult, ref: CsvData, data: dict[str, np.ndarray], present: list[str],
                     run: _RunSettings, tube: float, time_tol: float) -> None:
    """Check that the result spans start to stop and each signal against the band and the tube; failures as reasons."""
    start, stop = run.start, run.stop
    t = data["time"]
    if t.size < 2 or t[0] > start + 1e-9 * (stop - start) or t[-1] < stop - 1e-9 * (stop - start):
        res.reasons.append(f"the result covers {t[0]:g} to {t[-1]:g} s, not {start:g} to {stop:g} s")
    in_span = (ref.time >= start) & (ref.time <= stop)
    for name in present:
        if name not in data:
            res.reasons.append(f"{name}: no values in the result")
            continue
        metrics = compare(name, ref.time[in_span], ref.columns[name][in_span], t, data[name], tube, time_tol)
        outside = band_outliers(t, data[name], ref.time, ref.columns[name], start, stop)
        width = band_width(ref.time, ref.columns[name], start, stop)[2]
        check = SignalCheck(name, metrics, int(outside.sum()), int(t.size), width)
        res.signals.append(check)
        if not check.band_ok:
            res.reasons.append(f"{name}: {check.band_outside} of {check.samples} samples "
                               f"({check.band_fraction:.0%}) outside the cross-check band (±{width:.3g}: "
                               f"{BAND_WIDTH:.0%} of the reference's range), more than {BAND_OUTLIERS:.0%}")
        if not metrics.tube_ok:
            res.reasons.append(f"{name}: {metrics.tube_violations} sample(s) outside the tube (±{tube:g} of the "
                               f"range, ±{time_tol:g} s); max error {metrics.max_rel:.3g} of the range "
                               f"(abs {metrics.max_abs:.3g}) at t = {metrics.worst_time:.4g} s")


def _write_results(res: CrosscheckResult, plan: CheckPlan, out_text: str | None, readme: str) -> None:
    """Write ``{Model}_out.csv`` (when simulated), the marker and ReadMe.md into place; list them in ``res.files``."""
    with FolderSwap() as swap:
        staging = swap.stage(plan.target)
        if out_text is not None:
            write_file(staging / f"{plan.layout.model}_out.csv", out_text)
        write_file(staging / res.status, "")
        write_file(staging / README_NAME, readme)
        target = swap.commit()[0]
    res.files = sorted(target / p.name for p in target.iterdir())


def _out_csv(res: CrosscheckResult, data: dict[str, np.ndarray] | None, present: list[str]) -> str | None:
    """Return the text of ``{Model}_out.csv`` (the simulated signals), noted when above the rules' 1 MB.

    None when nothing was simulated.
    """
    if data is None:
        return None
    out_text = csv_text(data["time"], {n: data[n] for n in present if n in data})
    if len(out_text.encode()) > MAX_CSV_BYTES:
        res.notes.append(f"{res.model}_out.csv is larger than the 1 MB the rules allow")
    return out_text


def check_crosscheck(model_dir: str | Path, results_dir: str | Path | None = None, fmi_type: str | None = None,
                     tube: float = DEFAULT_TUBE, time_tolerance: float = DEFAULT_TIME_TOLERANCE) -> CrosscheckResult:
    """Simulate the FMU of a cross-check model folder with fmpy and compare it with ``_ref.csv``.

    ``results_dir`` is the root that receives ``results/...`` (rules §9.2.4); by default the root of the
    tree the model folder is in. Writes ``{Model}_out.csv``, ``passed`` or ``failed`` and ``ReadMe.md``
    there (a folder written beside its target and renamed into place). Bad input (missing or malformed
    files, an FMU that does not load or lacks the folder's interface, an unwritable output) raises
    :class:`ValidationError` naming every problem, and nothing is written. ME runs with CVode at the
    ``_ref.opt`` RelTol (not tighter than 1e-10), CS at communication step StepSize (or the output
    interval when StepSize is 0), with the ``_in.csv`` inputs (linear interpolation) when present.
    """
    import fmpy

    model_dir = Path(model_dir)
    plan = plan_check(model_dir, results_dir, fmi_type)
    lay, ref = plan.layout, plan.reference
    run = _run_settings(plan.opts, ref)
    _check_grid(run, model_dir)
    time_tol = time_tolerance * (run.stop - run.start)
    res = CrosscheckResult(lay.model, model_dir, lay.fmi_version, lay.fmi_type, results_dir=plan.target,
                           settings=f"band ±{BAND_WIDTH:g}·range (fmpy), tube ±{tube:g}·range, ±{time_tol:g} s")
    res.notes += ref.notes + (plan.inputs.notes if plan.inputs else [])
    variables = {v.name: v for v in plan.md.modelVariables}
    present = _signals_to_compare(res, plan, variables)
    fmu_inputs = [n for n, v in variables.items() if v.causality == "input"]
    input_array = _input_array(res, plan, fmu_inputs)
    _note_validation_problems(res, plan.fmu)
    kind = FMI_TYPES[lay.fmi_type]
    how = _how_simulated(kind, run, plan, input_array, fmu_inputs)
    data = _simulate(res, plan, kind, run, present, input_array)
    if data is not None:
        _compare_signals(res, ref, data, present, run, tube, time_tol)
    res.passed = not res.reasons and bool(res.signals)
    out_text = _out_csv(res, data, present)
    readme = _check_readme(res, plan, how, tube, time_tol, fmpy.__version__, out_text is not None)
    _write_results(res, plan, out_text, readme)
    return res
