"""``[method] independent`` gives the start split and the dependent start values; only ``fixed_split = true``
pins the split for the whole run. A Chaplygin sleigh in contact-point coordinates (x, y) with x, theta
independent turns singular at theta = pi/2 (A_dep = cos theta)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.errors import SimulationError, SystemFileError

SLEIGH = Path(__file__).parent / "models" / "contact_sleigh.toml"


def _system(extra: str = ""):
    """The contact-point sleigh, with ``extra`` lines added to its [method] table."""
    text = SLEIGH.read_text(encoding="utf-8").replace("[method]\n", f"[method]\n{extra}\n" if extra else "[method]\n")
    return bridge.parse_system(text, source=str(SLEIGH))


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
