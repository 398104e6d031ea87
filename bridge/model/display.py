"""Rich display in notebooks: HTML and LaTeX views of systems, equations, linear models and results.

Jupyter shows an object through its ``_repr_html_`` (and ``_repr_latex_`` where there is one). The views here are
bounded like the text display: at most :data:`MAX_ROWS` rows per table and :data:`MAX_LATEX_OPS` operations of
equations rendered as LaTeX, so a 20-link snake or a bicycle shows a summary instead of freezing the notebook.
Every name and value is HTML-escaped.

Examples
--------
>>> from bridge.model.display import html_table
>>> print(html_table("Parameters", ["name", "value"], [["m", "1.5"], ["r", "0.3"]]))  # doctest: +ELLIPSIS
<table ...><caption>Parameters</caption>...<td>m</td><td>1.5</td>...</table>
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

#: rows shown per table before "... and k more"
MAX_ROWS = 12
#: the largest equations (operations counted by sympy) rendered as LaTeX; larger ones get the HTML summary only
MAX_LATEX_OPS = 400

_STYLE = "border-collapse:collapse;margin:0.3em 0;font-size:90%"


def html_table(caption: str, header: Sequence[str], rows: Sequence[Sequence[Any]], limit: int = MAX_ROWS) -> str:
    """Return an HTML table of at most ``limit`` rows (then a row saying how many more there are).

    Parameters
    ----------
    caption : str
        The table's caption.
    header : sequence of str
        Column titles.
    rows : sequence of sequences
        Cell values, converted with ``str`` and escaped.
    limit : int
        The most rows shown.

    Returns
    -------
    str
        The ``<table>`` element.
    """
    esc = html.escape
    head = "".join(f"<th style='text-align:left;padding:0 0.6em'>{esc(str(h))}</th>" for h in header)
    body = ["<tr>" + "".join(f"<td>{esc(str(c))}</td>" for c in row) + "</tr>" for row in rows[:limit]]
    if len(rows) > limit:
        body.append(f"<tr><td colspan='{len(header)}'>... and {len(rows) - limit} more</td></tr>")
    return (f"<table style='{_STYLE}'><caption>{esc(caption)}</caption><tr>{head}</tr>" + "".join(body)
            + "</table>")


def html_card(title: str, lines: Sequence[str], tables: Sequence[str] = ()) -> str:
    """Return a titled block: escaped summary lines, then tables made by :func:`html_table`.

    Parameters
    ----------
    title : str
        The heading (escaped).
    lines : sequence of str
        Summary lines (escaped).
    tables : sequence of str
        HTML tables, inserted as they are.

    Returns
    -------
    str
        A ``<div>`` element.
    """
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    return (f"<div><strong>{html.escape(title)}</strong><ul style='margin:0.2em 0'>{items}</ul>"
            + "".join(tables) + "</div>")


def system_html(system: Any) -> str:
    """Return the HTML view of a :class:`bridge.System`: structure, coordinates, parameters, inputs, outputs."""
    lines = [f"source: {system.source}",
             f"{system.n} coordinates, {len(system.holonomic)} holonomic + {len(system.nonholonomic)} nonholonomic "
             f"constraints, {system.dof} degrees of freedom"]
    if system.description:
        lines.append(system.description.strip().splitlines()[0][:200])
    tables = [html_table("Coordinates", ["name", "start", "der start", "unit", "description"],
                         [[c.name, f"{c.start:g}", f"{c.velocity:g}", c.unit, c.description]
                          for c in system.coordinates]),
              html_table("Parameters", ["name", "value", "unit", "description"],
                         [[p.name, f"{p.value:g}", p.unit, p.description] for p in system.parameters])]
    if system.inputs:
        tables.append(html_table("Inputs", ["name", "start", "unit", "description"],
                                 [[u.name, f"{u.start:g}", u.unit, u.description] for u in system.inputs]))
    if system.outputs:
        tables.append(html_table("Outputs", ["name", "expression"],
                                 [[name, str(getattr(o, "expr", o))[:120]] for name, o in system.outputs.items()]))
    return html_card(f"System {system.name}", lines, tables)


def eom_html(eom: Any) -> str:
    """Return the HTML view of an :class:`bridge.EquationsOfMotion`: method, split, sizes."""
    lines = [f"method: {eom.method}", f"{len(eom.q)} coordinates, {len(eom.u)} speeds, "
             f"mass matrix {'x'.join(map(str, eom.mass_matrix.shape))}"]
    if eom.multipliers:
        lines.append(f"{len(eom.multipliers)} multipliers")
    if eom.dependent:
        lines.append(f"independent: {', '.join(eom.independent)}; dependent: {', '.join(eom.dependent)}")
    return html_card(f"Equations of motion of {eom.system.name}", lines)


def eom_latex(eom: Any) -> str | None:
    """``M(q) u' = f`` as LaTeX when the equations are small (:data:`MAX_LATEX_OPS`), else ``None``."""
    import sympy as sp

    if sp.count_ops(eom.mass_matrix) + sp.count_ops(eom.forcing) > MAX_LATEX_OPS:
        return None
    dots = {s: f"\\dot{{{s.name[4:-1]}}}" for s in eom.system.qd if s.name.startswith("der(")}
    u = sp.Matrix(list(eom.u))
    return (f"$${sp.latex(eom.mass_matrix, symbol_names=dots)} \\frac{{d}}{{dt}} {sp.latex(u, symbol_names=dots)}"
            f" = {sp.latex(eom.forcing, symbol_names=dots)}$$")


def linear_html(model: Any) -> str:
    """Return the HTML view of a :class:`bridge.LinearModel`: sizes, eigenvalues and ``A`` when it is small."""
    import numpy as np

    eig = np.sort_complex(model.eigenvalues())
    lines = [f"{len(model.states)} states, {len(model.inputs)} inputs, {len(model.outputs)} outputs "
             f"(method {model.method})", "states: " + ", ".join(model.states)]
    tables = [html_table("Eigenvalues of A", ["real", "imaginary"], [[f"{z.real:.6g}", f"{z.imag:.6g}"] for z in eig])]
    if len(model.states) <= MAX_ROWS:
        tables.append(html_table("A", ["", *model.states],
                                 [[s, *(f"{v:.6g}" for v in row)] for s, row in zip(model.states, model.A,
                                                                                  strict=True)]))
    return html_card(f"Linear model of {model.system}", lines, tables)


def result_html(result: Any) -> str:
    """Return the HTML view of a :class:`bridge.SimulationResult`: span, sizes, the first and last samples."""
    columns = result.columns()
    names = list(columns)[:MAX_ROWS]
    lines = [f"method {result.eom.method}: {len(result.time)} samples"
             + (f", t = {result.time[0]:g} .. {result.time[-1]:g} s" if len(result.time) else ""),
             f"largest constraint residual {result.max_residual:.2g}"]
    if len(result.time):
        rows = [[name, f"{columns[name][0]:.6g}", f"{columns[name][-1]:.6g}"] for name in names]
        more = len(columns) - len(names)
        caption = "Signals" + (f" (first {len(names)} of {len(columns)})" if more else "")
        return html_card(f"Simulation of {result.eom.system.name}", lines,
                         [html_table(caption, ["signal", "first", "last"], rows)])
    return html_card(f"Simulation of {result.eom.system.name}", lines)
