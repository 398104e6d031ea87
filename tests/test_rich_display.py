"""Rich display in notebooks: the HTML and LaTeX views are bounded, escaped and say what the object holds."""

from __future__ import annotations

from pathlib import Path

import sympy as sp

import bridge
from bridge.model.display import MAX_ROWS

ROOT = Path(__file__).resolve().parents[1]

PENDULUM = """
name = "Pendulum"
description = "A <b>pendulum</b> & its 'rod'"
[coordinates]
theta = { start = 0.3, velocity = 0.0, unit = "rad", description = "angle <from> vertical" }
[parameters]
m = { value = 1.0, unit = "kg" }
l = { value = 0.5, unit = "m" }
g = { value = 9.81, unit = "m/s2" }
[energy]
kinetic = "m*l^2/2*der(theta)^2"
potential = "-m*g*l*cos(theta)"
"""


def test_system_html_escapes_names_and_descriptions():
    system = bridge.parse_system(PENDULUM)
    page = system._repr_html_()
    assert "<b>pendulum</b>" not in page and "&lt;b&gt;pendulum&lt;/b&gt;" in page
    assert "angle &lt;from&gt; vertical" in page
    for name in ("theta", "m", "l", "g"):
        assert f"<td>{name}</td>" in page


def test_small_equations_render_as_latex_that_sympy_reads_back():
    eom = bridge.derive(bridge.parse_system(PENDULUM), "lagrange")
    latex = eom._repr_latex_()
    assert latex.startswith("$$") and latex.endswith("$$")
    assert r"\dot{theta}" in latex and r"\sin" in latex
    assert "Pendulum" in eom._repr_html_()
    # the mass matrix entry m l^2 appears as printed by sympy for the derived matrix
    assert sp.latex(eom.mass_matrix[0, 0]) in latex


def test_large_systems_show_a_bounded_summary():
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "engineering" / "bicycle.toml"), "lagrange")
    assert eom._repr_latex_() is None  # too large to typeset: the HTML summary is shown instead
    page = eom.system._repr_html_()
    assert page.count("<tr>") <= 2 * (MAX_ROWS + 2) + 8
    assert "more</td>" in page  # 17 parameters: the table says how many are left out


def test_result_and_linear_model_views():
    eom = bridge.derive(bridge.parse_system(PENDULUM), "lagrange")
    result = bridge.simulate(eom, stop_time=0.5)
    page = result._repr_html_()
    assert f"{len(result.time)} samples" in page and "<td>theta</td>" in page
    model = bridge.linearize(bridge.derive(bridge.parse_system(PENDULUM).with_values({"theta": 0.0}), "lagrange"))
    page = model._repr_html_()
    assert "Eigenvalues of A" in page
    # the pendulum about its lower rest: eigenvalues +-i sqrt(g/l)
    assert f"{(9.81 / 0.5) ** 0.5:.6g}" in page
