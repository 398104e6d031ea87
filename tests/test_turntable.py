"""A ball rolling on a uniformly turning turntable (``tests/models/turntable_ball.toml``): a classical nonholonomic
system whose centre moves on a circle at the rate ``k Omega / (1 + k)``, ``k = J / (m a^2)``, whatever the start
velocity. Every method that applies follows the closed form; chaplygin refuses (the constraints are affine in the
velocities) with a message that says so."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.errors import DerivationError

MODEL = Path(__file__).parent / "models" / "turntable_ball.toml"


@pytest.fixture(scope="module")
def system():
    return bridge.load_system(MODEL)


def closed_form(system, t: np.ndarray) -> np.ndarray:
    """x + i y of the centre: ``z0 + v0 / (i nu) (exp(i nu t) - 1)``, with the start position and velocity."""
    par = {p.name: p.value for p in system.parameters}
    coord = {c.name: c for c in system.coordinates}
    k = par["J"] / (par["m"] * par["a"] ** 2)
    nu = k * par["Omega"] / (1 + k)
    z0 = coord["x"].start + 1j * coord["y"].start
    v0 = coord["x"].velocity + 1j * coord["y"].velocity
    return z0 + v0 / (1j * nu) * (np.exp(1j * nu * t) - 1)


@pytest.mark.parametrize("method", ["lagrange", "nielsen", "maggi", "appell"])
def test_centre_moves_on_the_routh_circle(system, method):
    result = bridge.simulate(bridge.derive(system, method), 6.0)
    z = closed_form(system, result.time)
    span = np.ptp(z.real) + np.ptp(z.imag)
    assert span > 0.05  # the centre really moves (about a third of the circle)
    error = max(np.abs(result["x"] - z.real).max(), np.abs(result["y"] - z.imag).max())
    assert error < 1e-7 * span, f"{method}: {error:.3g}"
    # the spin about the vertical is a first integral (no torque about the normal at a rolling contact)
    assert np.ptp(result["omega_z"]) < 1e-8 * abs(result["omega_z"][0])
    assert result.max_residual < 1e-9


def test_chaplygin_refuses_affine_constraints(system):
    with pytest.raises(DerivationError, match="homogeneous constraints"):
        bridge.derive(system, "chaplygin")
