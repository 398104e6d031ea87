"""Validation reports: a terminal table, JSON, CSV and a self-contained HTML page with plots.

The HTML embeds its matplotlib figures as PNG data URIs (one file to archive or mail): per system,
each signal's runs overlaid on the reference with their error below, the constraint residual
along every run and, for conservative systems, the energy drift.
"""

from __future__ import annotations

import base64
import csv
import datetime as _dt
import html
import io
import json
import math
from pathlib import Path

import numpy as np

from ..atomic import write_text
from ..version import __version__
from .campaign import ERROR, FAILED, PASSED, SKIPPED, Campaign, RunResult, SystemValidation

MARK = {PASSED: "pass", FAILED: "FAIL", ERROR: "ERROR", SKIPPED: "skip"}


def _num(x: float | None, fmt: str = ".2e") -> str:
    if x is None:
        return "-"
    if isinstance(x, float) and not math.isfinite(x):
        return "inf" if x > 0 else "nan"
    return format(x, fmt)


# -- terminal --------------------------------------------------------------------------------------
def terminal(campaign: Campaign) -> str:
    """Return a fixed-width summary: one line per run, then one line per failure."""
    lines = [f"{'system':<20} {'run':<18} {'status':<6} {'worst signal':<16} {'max err':>9} {'tol':>7} "
             f"{'residual':>9} {'energy':>9} {'time':>6}"]
    for s in campaign.systems:
        if not s.runs:
            lines.append(f"{(s.name or Path(s.source).name)[:20]:<20} {'-':<18} {MARK[ERROR]:<6} {s.problems[0][:60]}"
                         if s.problems else f"{s.source}")
            continue
        for r in s.runs:
            w = r.worst
            tol = r.tolerance if r.status != SKIPPED else None
            lines.append(f"{s.name[:20]:<20} {r.id[:18]:<18} {MARK[r.status]:<6} "
                         f"{(w.signal if w else '-')[:16]:<16} {_num(w.max_rel if w else None):>9} "
                         f"{_num(tol, '.0e'):>7} {_num(r.residual):>9} {_num(r.energy_drift):>9} "
                         f"{r.seconds:6.2f}")
    counts = {k: sum(r.status == k for s in campaign.systems for r in s.runs) for k in MARK}
    lines.append("")
    lines.append(f"{len(campaign.systems)} system(s): {counts[PASSED]} run(s) passed, {counts[FAILED]} failed, "
                 f"{counts[ERROR]} error(s), {counts[SKIPPED]} skipped, in {campaign.seconds:.1f} s")
    failures = campaign.failures()
    if failures:
        lines.append("")
        lines += [f"FAILED {f}" for f in failures]
    return "\n".join(lines)


# -- JSON / CSV ------------------------------------------------------------------------------------
def _finite(x):
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def _run_dict(r: RunResult) -> dict:
    return {"id": r.id, "type": r.run_type, "label": r.label, "status": r.status, "reason": r.reason,
            "tolerance": r.tolerance, "seconds": round(r.seconds, 4), "max_residual": _finite(r.residual),
            "energy_drift": _finite(r.energy_drift), "notes": list(r.notes), "input_error": r.input_error,
            "signals": [{k: _finite(v) for k, v in m.as_dict().items()} for m in r.metrics]}


def to_dict(campaign: Campaign) -> dict:
    """Return the campaign as a JSON-ready dict: verdict, settings, and every system's runs and metrics.

    Parameters
    ----------
    campaign : Campaign
        The validation campaign.

    Returns
    -------
    dict
        The report.
    """
    return {
        "tool": f"nhbridge {__version__}", "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "exit_code": campaign.exit_code, "seconds": round(campaign.seconds, 3), "failures": campaign.failures(),
        "systems": [{
            "name": s.name, "source": s.source, "status": s.status, "problems": s.problems,
            "reference": s.reference_label, "closed_forms": s.closed_forms, "stop_time": s.stop_time, "step": s.step,
            "energy_checked": not s.energy_unchecked and s.reference is not None,
            "energy_not_checked_because": s.energy_unchecked, "settings": s.settings.as_dict(),
            "runs": [_run_dict(r) for r in s.runs]} for s in campaign.systems]}


def to_json(campaign: Campaign) -> str:
    """Return the campaign's report as JSON text (see :func:`to_dict`).

    Parameters
    ----------
    campaign : Campaign
        The validation campaign.

    Returns
    -------
    str
        The indented JSON.
    """
    return json.dumps(to_dict(campaign), indent=2) + "\n"


CSV_FIELDS = ["system", "run", "run_type", "status", "signal", "max_abs", "max_rel", "rms", "scale", "worst_time",
              "tube_violations", "tube_ok", "tolerance", "max_residual", "energy_drift", "reason"]


def to_csv(campaign: Campaign) -> str:
    """Return the campaign's report as CSV: one row per signal of every run (and per problem).

    Parameters
    ----------
    campaign : Campaign
        The validation campaign.

    Returns
    -------
    str
        The CSV text with the header :data:`CSV_FIELDS`.
    """
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for s in campaign.systems:
        for p in s.problems:
            w.writerow([s.name or s.source, "", "", ERROR] + [""] * 11 + [p])
        for r in s.runs:
            common = [_num(r.tolerance, "g"), _num(r.residual, ".6g"), _num(r.energy_drift, ".6g"), r.reason]
            if not r.metrics:
                w.writerow([s.name, r.id, r.run_type, r.status] + [""] * 8 + common)
            for m in r.metrics:
                w.writerow([s.name, r.id, r.run_type, r.status, m.signal, f"{m.max_abs:.6g}", f"{m.max_rel:.6g}",
                            f"{m.rms:.6g}", f"{m.scale:.6g}", f"{m.worst_time:.6g}", m.tube_violations, m.tube_ok,
                            *common])
    return buf.getvalue()


# -- HTML ------------------------------------------------------------------------------------------
def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _fixed_margins(fig, top: float, bottom: float) -> None:
    """Place the axes with margins in inches (``top``, ``bottom``; the sides fixed), without measuring the text.

    Cheaper than ``tight_layout``, which draws every tick label once more to measure it: the report's plots are
    most of its cost. The log-scaled axes carry no minor ticks (their labels are most of the text to lay out).
    """
    from matplotlib.ticker import NullLocator

    height = fig.get_figheight()
    fig.subplots_adjust(left=0.075, right=0.99, top=1 - top / height, bottom=bottom / height, wspace=0.22,
                        hspace=0.35)
    for ax in fig.axes:
        if ax.get_yscale() == "log":
            ax.yaxis.set_minor_locator(NullLocator())


def _figures(s: SystemValidation) -> list[tuple[str, str]]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ref = s.reference
    if ref is None:
        return []
    runs = [r for r in s.runs if r.trajectory is not None]
    colors = plt.get_cmap("tab10")
    out = []
    names = list(ref.signals)
    fig, axes = plt.subplots(len(names), 2, figsize=(11, 1.9 * len(names) + 0.6), squeeze=False, sharex=True)
    for row, name in enumerate(names):
        ax, ex = axes[row]
        ax.plot(ref.time, ref.signals[name], color="black", lw=2.4, label="reference")
        for k, r in enumerate(runs):
            tr = r.trajectory
            if name not in tr.signals:
                continue
            ax.plot(tr.time, tr.signals[name], lw=1, color=colors(k % 10), label=r.id,
                    ls="--" if r.status != PASSED else "-")
            err = np.abs(np.interp(ref.time, tr.time, tr.signals[name]) - ref.signals[name])
            m = next((m for m in r.metrics if m.signal == name), None)
            if m is not None:
                ex.semilogy(ref.time, np.maximum(err / m.scale, 1e-17), lw=0.8, color=colors(k % 10))
        ax.set_ylabel(name, fontsize=8)
        ex.set_ylabel("|error| / range", fontsize=8)
        ex.axhline(s.settings.tube, color="grey", lw=0.6, ls=":")
        for a in (ax, ex):
            a.tick_params(labelsize=7)
            a.grid(alpha=0.3)
    axes[0][0].legend(fontsize=7, ncol=3, loc="best")
    axes[-1][0].set_xlabel("time (s)", fontsize=8)
    axes[-1][1].set_xlabel("time (s)", fontsize=8)
    fig.suptitle(f"{s.name}: runs over the reference (left), error relative to the signal's range (right; "
                 f"dotted: tube half-width)", fontsize=9, va="top", y=1 - 0.1 / fig.get_figheight())
    _fixed_margins(fig, top=0.45, bottom=0.45)
    out.append(("signals", _png(fig)))

    with_res = [r for r in runs if r.residual_series is not None]
    conserv = [r for r in runs if r.energy_series is not None]
    if with_res or conserv:
        fig, axes = plt.subplots(1, 2 if (with_res and conserv) else 1, figsize=(11, 2.8), squeeze=False)
        col = 0
        if with_res:
            ax = axes[0][col]
            for k, r in enumerate(runs):
                if r.residual_series is not None:
                    ax.semilogy(r.trajectory.time, np.maximum(r.residual_series, 1e-18), lw=0.8,
                                color=colors(k % 10), label=r.id)
            ax.set_title("largest constraint residual |phi|, |A q' + a0|", fontsize=9)
            ax.legend(fontsize=6, ncol=2)
            col += 1
        if conserv:
            ax = axes[0][col]
            for k, r in enumerate(runs):
                if r.energy_series is not None:
                    h = r.energy_series
                    ax.plot(r.trajectory.time, h - h[0], lw=0.8, color=colors(k % 10), label=r.id)
            ax.set_title("energy (Jacobi integral) h(t) - h(0)", fontsize=9)
            ax.legend(fontsize=6, ncol=2)
        for a in axes[0]:
            a.tick_params(labelsize=7)
            a.grid(alpha=0.3)
            a.set_xlabel("time (s)", fontsize=8)
        _fixed_margins(fig, top=0.3, bottom=0.5)
        out.append(("residual and energy", _png(fig)))
    return out


STYLE = """
body{font-family:system-ui,Segoe UI,Helvetica,Arial,sans-serif;margin:2em;color:#222;max-width:1200px}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;padding-top:1em}
table{border-collapse:collapse;font-size:0.85em;margin:0.5em 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left}th{background:#f3f3f3}
td.num{text-align:right;font-family:ui-monospace,monospace}
.passed{color:#17692b;font-weight:bold}.failed,.error{color:#b00020;font-weight:bold}.skipped{color:#777}
.reason{font-size:0.85em;color:#555}img{max-width:100%}details{margin:0.3em 0}
"""


def _cell(text: str, cls: str = "") -> str:
    return f'<td class="{cls}">{html.escape(text)}</td>' if cls else f"<td>{html.escape(text)}</td>"


def to_html(campaign: Campaign, plots: bool = True) -> str:
    """Return the campaign's report as a standalone HTML page.

    Parameters
    ----------
    campaign : Campaign
        The validation campaign.
    plots : bool, optional
        Embed a plot of each failed run's worst signal against the reference.

    Returns
    -------
    str
        The HTML text: verdict, failures, a summary table and every system's runs.
    """
    e = html.escape
    parts = [f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>nhbridge validation</title>"
             f"<style>{STYLE}</style></head><body>",
             f"<h1>nhbridge validation report</h1><p>nhbridge {e(__version__)}, "
             f"{e(_dt.datetime.now().strftime('%Y-%m-%d %H:%M'))}, {len(campaign.systems)} system(s), "
             f"{campaign.seconds:.1f} s. Verdict: <span class='{'passed' if campaign.exit_code == 0 else 'failed'}'>"
             f"{'all runs passed' if campaign.exit_code == 0 else 'problems found'}</span> "
             f"(exit code {campaign.exit_code}).</p>"]
    failures = campaign.failures()
    if failures:
        parts.append("<h2>Failures</h2><ul>" + "".join(f"<li>{e(f)}</li>" for f in failures) + "</ul>")
    parts.append("<h2>Summary</h2><table><tr><th>system</th><th>status</th><th>passed</th><th>failed</th>"
                 "<th>skipped</th><th>reference</th></tr>")
    for s in campaign.systems:
        n = {k: sum(r.status == k for r in s.runs) for k in MARK}
        parts.append(f"<tr><td><a href='#{e(s.name or s.source)}'>{e(s.name or s.source)}</a></td>"
                     + _cell(s.status, s.status) + f"<td class='num'>{n[PASSED]}</td>"
                     f"<td class='num'>{n[FAILED] + n[ERROR]}</td><td class='num'>{n[SKIPPED]}</td>"
                     + _cell(s.reference_label) + "</tr>")
    parts.append("</table>")
    for s in campaign.systems:
        parts.append(f"<h2 id='{e(s.name or s.source)}'>{e(s.name or s.source)}</h2><p>{e(s.source)}")
        if s.reference is not None:
            tol = ", ".join(f"{k} {v:g}" for k, v in s.settings.tolerances.items())
            parts.append(f"<br>Reference: {e(s.reference_label)}; stop time {s.stop_time:g} s, step {s.step:g} s."
                         f"<br>Tolerances (max error / range): {e(tol)}; tube ±{s.settings.tube:g} of the range, "
                         f"±{s.settings.time_tolerance * s.stop_time:g} s; residual ≤ {s.settings.residual:g}; "
                         + (f"energy drift ≤ {s.settings.energy:g}." if not s.energy_unchecked else
                            f"energy not checked ({e(s.energy_unchecked)})."))
        parts.append("</p>")
        if s.closed_forms:
            parts.append("<p>Closed forms: " + "; ".join(f"<code>{e(k)} = {e(v)}</code>"
                                                         for k, v in s.closed_forms.items()) + "</p>")
        if s.problems:
            parts.append("<ul>" + "".join(f"<li class='error'>{e(p)}</li>" for p in s.problems) + "</ul>")
        if s.runs:
            parts.append("<table><tr><th>run</th><th>what</th><th>status</th><th>worst signal</th>"
                         "<th>max err / range</th><th>tolerance</th><th>tube</th><th>max residual</th>"
                         "<th>energy drift</th><th>time (s)</th><th>reason / notes</th></tr>")
            for r in s.runs:
                w = r.worst
                tube = "-" if not r.metrics else ("ok" if all(m.tube_ok for m in r.metrics) else "violated")
                parts.append("<tr>" + _cell(r.id) + _cell(r.label) + _cell(r.status, r.status)
                             + _cell(w.signal if w else "-") + _cell(_num(w.max_rel if w else None), "num")
                             + _cell(_num(r.tolerance, "g"), "num") + _cell(tube) + _cell(_num(r.residual), "num")
                             + _cell(_num(r.energy_drift), "num") + _cell(f"{r.seconds:.2f}", "num")
                             + f"<td class='reason'>{e('; '.join(filter(None, [r.reason, *r.notes])))}</td></tr>")
            parts.append("</table>")
            detail = [r for r in s.runs if r.metrics]
            if detail:
                parts.append("<details><summary>all signals of every run</summary><table><tr><th>run</th>"
                             "<th>signal</th><th>max abs</th><th>max rel</th><th>RMS</th><th>range</th>"
                             "<th>at t</th><th>tube violations</th></tr>")
                for r in detail:
                    for m in r.metrics:
                        parts.append("<tr>" + _cell(r.id) + _cell(m.signal) + _cell(_num(m.max_abs), "num")
                                     + _cell(_num(m.max_rel), "num") + _cell(_num(m.rms), "num")
                                     + _cell(_num(m.scale, ".3g"), "num") + _cell(_num(m.worst_time, ".4g"), "num")
                                     + _cell(str(m.tube_violations), "num") + "</tr>")
                parts.append("</table></details>")
        if plots:
            for title, uri in _figures(s):
                parts.append(f"<p><img alt='{e(s.name)} {e(title)}' src='{uri}'></p>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


def unwritable(path: Path) -> str:
    """Return why ``path`` cannot be written, or an empty string."""
    import os

    if path.is_dir():
        return f"{path}: is a directory; give a file name for the report"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{path}: {parent} is not a directory; choose another report path"
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return f"{path}: cannot write here (permission denied); choose another report path"
    return ""


def write_reports(campaign: Campaign, html_path=None, json_path=None, csv_path=None, plots: bool = True) -> list[Path]:
    """Write the requested reports (each atomically).

    A path that cannot be written is recorded in ``campaign.output_problems`` and the other reports are still written.
    """
    from ..errors import BridgeError

    targets = [(p, r) for p, r in ((json_path, to_json), (csv_path, to_csv), (html_path, lambda c: to_html(c, plots)))
               if p is not None]
    for path, _ in targets:  # before rendering, so that every report lists the paths that fail
        problem = unwritable(Path(path))
        if problem:
            campaign.output_problems.append(problem)
    written = []
    for path, render in targets:
        if unwritable(Path(path)):
            continue
        try:
            written.append(write_text(path, render(campaign)))
        except BridgeError as exc:
            campaign.output_problems.append(str(exc).replace("\n", " "))
    return written
