"""``[method] independent`` gives the start split and the dependent start values; only ``fixed_split = true``
pins the split for the whole run. A Chaplygin sleigh in contact-point coordinates (x, y) with x, theta
independent turns singular at theta = pi/2 (A_dep = cos theta)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import bridge
from bridge.errors import SimulationError, SystemFileError

SLEIGH = """
name = "ContactSleigh"
[coordinates]
x     = {{ start = 0.0, velocity = -0.2, unit = "m" }}
y     = {{ start = 0.0, velocity = 0.7, unit = "m" }}
theta = {{ start = 0.0, velocity = 1.5, unit = "rad" }}
[parameters]
m = {{ value = 1.5, unit = "kg" }}
J = {{ value = 0.12, unit = "kg.m2" }}
a = {{ value = 0.2, unit = "m" }}
[definitions]
xc = "x + a*cos(theta)"
yc = "y + a*sin(theta)"
[energy]
kinetic = "m/2*(der(xc)^2 + der(yc)^2) + J/2*der(theta)^2"
[constraints]
nonholonomic = ["-sin(theta)*der(x) + cos(theta)*der(y)"]
[method]
independent = ["x", "theta"]
{extra}
[simulation]
stop_time = 3.0
"""


def _system(extra: str = ""):
    return bridge.parse_system(SLEIGH.format(extra=extra))


def test_independent_sets_start_values_only():
    system = _system()
    assert not system.fixed_split
    assert system.coordinate("y").velocity == pytest.approx(0.0, abs=1e-15)   # tan(0) * der(x): computed, not 0.7
    run = bridge.simulate(bridge.derive(system, "maggi"), 3.0)
    reference = bridge.simulate(bridge.derive(system, "lagrange"), 3.0)
    theta = run.q[:, 2]
    assert theta.max() > np.pi / 2                      # the run passes the singular split
    assert run.repartitions and abs(run.repartitions[0][0] - np.interp(np.pi / 2, theta, run.time)) < 1e-2
    assert np.abs(run.q - reference.q).max() < 1e-7
    assert run.max_residual < 1e-8


def test_fixed_split_stops_with_the_time():
    system = _system("fixed_split = true")
    assert system.fixed_split and system.independent == ("x", "theta")
    free = bridge.simulate(bridge.derive(_system(), "lagrange"), 3.0)
    crossing = np.interp(np.pi / 2, free.q[:, 2], free.time)
    with pytest.raises(SimulationError, match=r"t = (\S+) .*singular.*fixed_split") as info:
        bridge.simulate(bridge.derive(system, "maggi"), 3.0)
    assert abs(float(re.search(r"t = (\S+)", str(info.value)).group(1)) - crossing) < 1e-2


def test_fixed_split_must_be_a_boolean():
    with pytest.raises(SystemFileError, match=r"method\.fixed_split: expected true or false"):
        _system('fixed_split = "yes"')
