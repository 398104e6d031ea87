"""Equations linear in the states are written with der(q) for Rumoca (RumocaLinearOutputOfState.mo).

A gear ``phi - n*theta`` as a holonomic constraint gives the velocity-level residual ``der_phi - n*der_theta``:
Rumoca 0.9 calls that model structurally singular. Written ``der(phi) - der(theta)*n`` it simulates; the run is
compared with the closed form ``theta = v0 t + tau t^2 / (2 (J1 + n^2 J2))`` and with the native run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

from bridge import derive, load_system
from bridge.modelica.export import model_source

GEAR = Path(__file__).parent / "models" / "gear.toml"
STOP = 2.0


@pytest.fixture(scope="module")
def gear():
    system = load_system(GEAR)
    return derive(system, "lagrange")


def _closed_form(system, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = {q.name: q.value for q in system.parameters}
    a = p["tau"] / (p["J1"] + p["n"] ** 2 * p["J2"])
    theta = 1.0 * t + 0.5 * a * t ** 2
    return theta, p["n"] * theta


def test_the_gear_residual_is_written_with_der_of_the_coordinates(gear):
    text = model_source(gear)
    assert "residual[1] = der(phi) - der(theta)*n;" in text
    assert "der_phi - der_theta*n" not in text


def test_rumoca_simulates_the_geared_system_like_the_closed_form_and_the_native_run(gear, rumoca):
    from bridge import simulate

    text = model_source(gear)
    with tempfile.TemporaryDirectory() as tmp:
        model = rumoca.loads(text, model="Gear", filename=str(Path(tmp) / "Gear.mo"), roots=[])
        result = model.simulate((0.0, STOP), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=STOP / 200))
    t = np.asarray(result.time, dtype=float)
    theta, phi = _closed_form(gear.system, t)
    span = float(np.ptp(theta))
    assert np.abs(np.asarray(result["theta"], dtype=float) - theta).max() < 1e-6 * span
    assert np.abs(np.asarray(result["phi"], dtype=float) - phi).max() < 1e-6 * span
    assert np.abs(np.asarray(result["residual[1]"], dtype=float)).max() < 1e-6
    native = simulate(gear, STOP)
    np.testing.assert_allclose(native.q[:, 0], _closed_form(gear.system, native.time)[0], atol=1e-7 * span)
    tau = {q.name: q.value for q in gear.system.parameters}["tau"]
    np.testing.assert_allclose(np.asarray(result["shaft_power"], dtype=float),
                               tau * np.gradient(theta, t, edge_order=2), atol=1e-6)


def test_an_equation_with_state_dependent_coefficients_is_printed_as_it_was():
    """Only equations linear in the states change: a rolling constraint cos(psi)*der_x keeps the velocity variable."""
    from bridge.modelica.export import linear_in_states

    system = load_system(Path(__file__).parent.parent / "examples" / "chaplygin_sleigh.toml")
    coords = system.coordinates
    q = {c.name: c.symbol for c in coords}
    v = {c.name: c.velocity_symbol for c in coords}
    names = list(q)
    a, b = names[0], names[1]
    n = sp.Symbol("n")
    assert linear_in_states(v[a] - n * v[b], coords)
    assert linear_in_states(v[a] - 2 * q[b], coords)
    assert not linear_in_states(sp.cos(q[a]) * v[b], coords)
    assert not linear_in_states(v[a] * v[b], coords)
    assert not linear_in_states(q[a] - n * q[b], coords)  # no velocity: nothing to rewrite


def test_pymoca_simulates_the_same_text(gear):
    """The other compiler takes the der(q) residual too (against the native run)."""
    pytest.importorskip("pymoca")
    from bridge.validation.tool_checks import check_pymoca

    report = check_pymoca(gear, stop_time=STOP)
    assert report.balanced and report.max_error < 1e-6
