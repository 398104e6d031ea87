"""A :class:`LinearModel` as a Modelica model with named states.

The parameters carry the names of ``Modelica.Blocks.Continuous.StateSpace`` (``A[n,n]``, ``B[n,m]``, ``C[p,n]``,
``D[p,m]``) plus the operating point ``x0[n]``, ``u0[m]``, ``y0[p]``; every state is a variable of its own under
the system file's name (``der(theta)`` is spelled ``der_theta``, as in the nonlinear export) with unit and
description, and the equations are, row by row in absolute variables,

    der(x_i) = sum_j A[i,j]*(x_j - x0[j]) + sum_k B[i,k]*(u_k - u0[k]),
    y_l      = y0[l] + sum_j C[l,j]*(x_j - x0[j]) + sum_k D[l,k]*(u_k - u0[k]),

every entry written (a zero entry stays a parameter one can change). The states start at ``x_start`` (default
the operating point x0), ``fixed=true``. Inputs and outputs are declared ``input Real`` / ``output Real`` as in
the nonlinear export (:mod:`bridge.modelica.export`): that is what ``Modelica.Blocks.Interfaces.RealInput`` and
``RealOutput`` are (``connector RealInput = input Real``); the short connector classes themselves are not
declared because pymoca 0.12 does not resolve them (a ``KeyError`` on the input). Empty matrices (no inputs, no
outputs) are left out. Numbers are full-precision literals.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..atomic import write_text
from ..codegen.numbers import value_literal as _num
from ..codegen.printer import PLAIN_IDENTIFIER
from ..codegen.strings import modelica_block_text
from ..codegen.strings import modelica_text as _quote
from ..errors import ExportError
from ..modelica.printer import RESERVED, modelica_ident
from ..version import __version__
from .export_common import CheckedLinear, checked, default_stop_time, finite_number, modelica_name
from .model import LinearModel


def _matrix(M: np.ndarray) -> str:
    """Return a Modelica matrix literal ``[a, b; c, d]``, one row per line."""
    rows = [", ".join(_num(v) for v in row) for row in M]
    return "[" + ";\n      ".join(rows) + "]"


def _vector(v: np.ndarray) -> str:
    return "{" + ", ".join(_num(x) for x in v) + "}"


def _unit(unit: str) -> str:
    return f', unit="{_quote(unit)}"' if unit else ""


def _row(coefficient: str, i: int, values: Sequence[str], points: str) -> list[str]:
    """Return the terms ``coefficient[i,j]*(values_j - points[j])`` of one row."""
    return [f"{coefficient}[{i + 1}, {j + 1}]*({v} - {points}[{j + 1}])" for j, v in enumerate(values)]


def _model_name(lin: LinearModel, name: str | None) -> str:
    name = name if name is not None else f"{lin.system}_linear"
    if not PLAIN_IDENTIFIER.match(name) or name in RESERVED:
        raise ExportError(f"the model name {name!r} is not a Modelica identifier (letters, digits and _, starting "
                          "with a letter, not a keyword); choose another name")
    return name


def _state_description(name: str) -> str:
    return f"velocity {name}" if name.startswith("der(") else f"coordinate {name}"


def _documentation(chk: CheckedLinear) -> str:
    """Return the HTML: system, method, the equations, the operating point, dropped coordinates, eigenvalues."""
    lin = chk.lin

    def esc(text: str) -> str:
        return html.escape(str(text), quote=False)

    eig = np.sort_complex(np.linalg.eigvals(chk.A))
    eig_text = ", ".join(f"{z.real:.6g}" if z.imag == 0 else f"{z.real:.6g} {'+' if z.imag > 0 else '-'} "
                         f"{abs(z.imag):.6g}i" for z in eig)
    lines = [
        f"<p>Linear model of <b>{esc(lin.system)}</b> about an operating point, from the equations of method "
        f"<code>{esc(lin.method)}</code>; written by nhbridge {__version__}.</p>",
        "<p>In absolute variables: <code>der(x) = A*(x - x0) + B*(u - u0)</code>, <code>y = y0 + C*(x - x0) + "
        "D*(u - u0)</code> (A, B, C, D as in Modelica.Blocks.Continuous.StateSpace; x0, u0, y0 the operating "
        "point). The states start at their <code>start</code> values (the operating point by default).</p>",
        "<table border=\"1\"><tr><th>state</th><th>variable</th><th>unit</th><th>x0</th></tr>",
        *[f"<tr><td>{esc(s)}</td><td><code>{esc(modelica_ident(modelica_name(s)))}</code></td><td>{esc(u)}</td>"
          f"<td>{_num(x)}</td></tr>" for s, u, x in zip(lin.states, lin.state_units, chk.x0)],
        "</table>",
    ]
    if lin.inputs:
        lines.append("<p>Inputs at the operating point: " + ", ".join(
            f"{esc(u)} = {_num(v)}" for u, v in zip(lin.inputs, chk.u0)) + ".</p>")
    if lin.point:
        lines.append("<p>Operating point: " + ", ".join(f"{esc(k)} = {float(v) + 0.0!r}" for k, v in lin.point.items())
                     + ".</p>")
    if lin.independent:
        lines.append("<p>Independent coordinates of the split: " + esc(", ".join(lin.independent)) + ".</p>")
    lines.append("<p>Cyclic coordinates left out of the state: "
                 + (esc(", ".join(lin.dropped)) if lin.dropped else "none") + ".</p>")
    conserved = tuple(getattr(lin, "conserved", ()))  # decoupled neutral speeds (e.g. a bicycle's forward speed)
    if conserved:
        lines.append("<p>Conserved speeds left out of the state: " + esc(", ".join(conserved)) + ".</p>")
    residual = tuple(getattr(lin, "residual", ()))  # (rate name, value) of the states at the point (steady: ~0)
    if residual:
        lines.append("<p>Rates of the states at the operating point (zero for a steady point): " + ", ".join(
            f"{esc(k)} = {float(v) + 0.0:.3g}" for k, v in residual) + ".</p>")
    lines.append(f"<p>Eigenvalues of A: {esc(eig_text)}.</p>")
    return "\n".join(lines)


def linear_modelica_source(lin: LinearModel, name: str | None = None, x_start: Sequence[float] | None = None,
                           stop_time: float | None = None) -> str:
    """Return the Modelica text of the linear model (see the module docstring).

    ``name`` defaults to ``<system>_linear``, ``x_start`` (absolute state values) to ``x0``, the experiment's stop time
    to :func:`~bridge.linearization.export_common.default_stop_time`. An :class:`ExportError` for a bad model.
    """
    chk = checked(lin, x_start)
    model = _model_name(lin, name)
    stop = default_stop_time(chk) if stop_time is None else finite_number(stop_time, "the stop time")
    n, m, p = chk.n, chk.m, chk.p
    xs = [modelica_ident(modelica_name(s)) for s in lin.states]
    us = [modelica_ident(u) for u in lin.inputs]
    ys = [modelica_ident(y) for y in lin.outputs]
    out = [f'model {model} "Linear model of {_quote(lin.system)} ({_quote(lin.method)}) about an operating point"',
           "  // Modelica.Blocks.Continuous.StateSpace-compatible matrices and the operating point",
           f'  parameter Real A[{n}, {n}] = {_matrix(chk.A)} "state matrix";']
    if m:
        out.append(f'  parameter Real B[{n}, {m}] = {_matrix(chk.B)} "input matrix";')
    if p:
        out.append(f'  parameter Real C[{p}, {n}] = {_matrix(chk.C)} "output matrix";')
    if p and m:
        out.append(f'  parameter Real D[{p}, {m}] = {_matrix(chk.D)} "feedthrough matrix";')
    out.append(f'  parameter Real x0[{n}] = {_vector(chk.x0)} "operating point: states";')
    if m:
        out.append(f'  parameter Real u0[{m}] = {_vector(chk.u0)} "operating point: inputs";')
    if p:
        out.append(f'  parameter Real y0[{p}] = {_vector(chk.y0)} "operating point: outputs";')
    if m:
        out.append("  // inputs (as Modelica.Blocks.Interfaces.RealInput)")
        out += [f'  input Real {u}(start={_num(v)}{_unit(unit)}) "input {_quote(name_)}";'
                for u, v, unit, name_ in zip(us, chk.u0, lin.input_units, lin.inputs)]
    if p:
        out.append("  // outputs (as Modelica.Blocks.Interfaces.RealOutput)")
        out += [f'  output Real {y}{f"({_unit(unit)[2:]})" if unit else ""} "output {_quote(name_)}";'
                for y, unit, name_ in zip(ys, lin.output_units, lin.outputs)]
    out.append("  // states (absolute values)")
    out += [f'  Real {x}(start={_num(v)}, fixed=true{_unit(unit)}) "{_quote(_state_description(s))}";'
            for x, v, unit, s in zip(xs, chk.x_start, lin.state_units, lin.states)]
    out.append("equation")
    for i in range(n):
        terms = _row("A", i, xs, "x0") + (_row("B", i, us, "u0") if m else [])
        out.append(f"  der({xs[i]}) = " + "\n    + ".join(terms) + ";")
    for k in range(p):
        terms = [f"y0[{k + 1}]"] + _row("C", k, xs, "x0") + (_row("D", k, us, "u0") if m else [])
        out.append(f"  {ys[k]} = " + "\n    + ".join(terms) + ";")
    out += ["  annotation(",
            f"    experiment(StopTime={_num(stop)}, Interval={_num(stop / 1000)}, Tolerance=1e-08),",
            f'    Documentation(info="{modelica_block_text(_documentation(chk))}"));',
            f"end {model};"]
    return "\n".join(out) + "\n"


def write_linear_modelica(lin: LinearModel, path: str | Path, name: str | None = None,
                          x_start: Sequence[float] | None = None, stop_time: float | None = None) -> Path:
    """Write :func:`linear_modelica_source` to ``path`` (``.mo``) atomically (the same arguments)."""
    path = Path(path)
    if path.suffix != ".mo":
        raise ExportError(f"{path}: a Modelica file must end in .mo")
    text = linear_modelica_source(lin, name, x_start, stop_time)
    return write_text(path, text)
