"""Systems that are not among the examples: every method must work on any valid file."""

from __future__ import annotations

import numpy as np
import pytest

import bridge
from bridge.errors import DerivationError

from .test_methods import random_consistent_state

SYSTEMS = {
    # T with a velocity-free term (rotating frame): T = T2 + T0
    "bead_on_rotating_rod": """
name = "Bead"
[coordinates]
r = { start = 0.2, velocity = 0.0 }
[parameters]
m = { value = 0.3 }
w = { value = 2.0 }
k = { value = 1.5 }
[energy]
kinetic = "m/2*(der(r)^2 + r^2*w^2)"
potential = "k/2*r^2"
""",
    # explicit time and a term linear in the velocity (oscillating support)
    "pendulum_on_shaker": """
name = "Shaker"
[coordinates]
th = { start = 0.4, velocity = 0.0 }
[parameters]
m = { value = 1.0 }
l = { value = 0.5 }
g = { value = 9.81 }
A = { value = 0.05 }
w = { value = 7.0 }
[definitions]
ys = "A*sin(w*t)"
xb = "l*sin(th)"
yb = "ys - l*cos(th)"
[energy]
kinetic = "m/2*(der(xb)^2 + der(yb)^2)"
potential = "m*g*yb"
""",
    # vertical rolling disk: a Chaplygin system with four coordinates
    "rolling_disk": """
name = "RollingDisk"
[coordinates]
x = { start = 0.0, velocity = 0.6 }
y = { start = 0.0, velocity = 0.0 }
phi = { start = 0.0, velocity = 0.7 }
th = { start = 0.0, velocity = 2.0 }
[parameters]
m = { value = 2.0 }
r = { value = 0.3 }
A = { value = 0.045 }
C = { value = 0.09 }
c = { value = 0.01 }
[inputs]
tau = { start = 0.2 }
[energy]
kinetic = "m/2*(der(x)^2 + der(y)^2) + A/2*der(phi)^2 + C/2*der(th)^2"
dissipation = "c/2*der(th)^2"
[forces]
th = "tau"
[constraints]
nonholonomic = ["der(x) - r*cos(phi)*der(th)", "der(y) - r*sin(phi)*der(th)"]
[outputs]
speed = "sqrt(der(x)^2 + der(y)^2)"
""",
    # holonomic and nonholonomic constraints together, rheonomic, with a gravity field
    "mixed_constraints": """
name = "Mixed"
[coordinates]
x = { start = 1.0, velocity = 0.0 }
y = { start = 0.0, velocity = 0.5 }
z = { start = 0.0, velocity = 0.5 }
th = { start = 0.0, velocity = 0.0 }
[parameters]
m = { value = 1.0 }
J = { value = 0.2 }
g = { value = 9.81 }
[energy]
kinetic = "m/2*(der(x)^2 + der(y)^2 + der(z)^2) + J/2*der(th)^2"
potential = "m*g*z"
[constraints]
holonomic = ["x^2 + y^2 - 1"]
nonholonomic = ["der(z) - der(y)*cos(th) - 0.1*sin(t)*der(th)"]
""",
}


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_methods_agree(name):
    system = bridge.parse_system(SYSTEMS[name], source=f"<{name}>")
    eoms = []
    for method in bridge.METHODS:
        try:
            eoms.append(bridge.derive(system, method))
        except DerivationError as exc:
            assert method == "chaplygin" or bridge.METHODS[method].applicable(system), exc
    assert len(eoms) >= 4
    rng = np.random.default_rng(3)
    for _ in range(4):
        t, q, qd = random_consistent_state(system, rng, eoms[0])
        ref = eoms[0].numeric.accelerations(t, q, qd)
        for eom in eoms[1:]:
            acc = eom.numeric.accelerations(t, q, qd)
            assert np.abs(acc - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max()), (eom.method, acc, ref)
    runs = [bridge.simulate(eom, 2.0) for eom in eoms]
    span = np.ptp(runs[0].q, axis=0)
    span[span == 0] = 1.0
    for run in runs[1:]:
        assert (np.abs(run.q - runs[0].q) / span).max() < 1e-8, run.eom.method


def test_rolling_disk_is_chaplygin_and_rolls():
    system = bridge.parse_system(SYSTEMS["rolling_disk"])
    eom = bridge.derive(system, "chaplygin")
    assert set(eom.dependent) == {"x", "y"}
    run = bridge.simulate(eom, 3.0)
    # rolling: the speed of the centre equals r times the spin rate
    speed = run.outputs[:, 0]
    assert np.allclose(speed, 0.3 * np.abs(run.qd[:, 3]), atol=1e-10)


def test_bead_closed_form():
    """r'' = (w^2 - k/m) r: with k/m > w^2 a harmonic motion of frequency sqrt(k/m - w^2)."""
    system = bridge.parse_system(SYSTEMS["bead_on_rotating_rod"])
    run = bridge.simulate(bridge.derive(system, "appell"), 5.0)
    omega = np.sqrt(1.5 / 0.3 - 4.0)
    assert np.abs(run.q[:, 0] - 0.2 * np.cos(omega * run.time)).max() < 1e-9


def test_units_do_not_matter():
    """The same sleigh in millimetres, grams and milligram-square-millimetres: same motion, no false singularity."""
    from pathlib import Path

    text = (Path(__file__).parent.parent / "examples" / "chaplygin_sleigh.toml").read_text()
    si = bridge.parse_system(text)
    scaled = text.replace("velocity = 0.3", "velocity = 300.0").replace("velocity = 0.16", "velocity = 160.0")
    scaled = scaled.replace("value = 1.5,", "value = 1500.0,").replace("value = 0.12,", "value = 1.2e8,")
    scaled = scaled.replace("value = 0.2,", "value = 200.0,")
    mm = bridge.parse_system(scaled)
    for method in ("lagrange", "maggi", "chaplygin"):
        a = bridge.simulate(bridge.derive(si, method), 5.0)
        b = bridge.simulate(bridge.derive(mm, method), 5.0)
        assert np.abs(a.q[:, :2] * 1000 - b.q[:, :2]).max() < 1e-6 * 1000, method
        assert np.abs(a.q[:, 2] - b.q[:, 2]).max() < 1e-8, method
