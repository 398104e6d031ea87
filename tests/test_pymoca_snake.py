"""pymoca on a 3-link wheeled snake (5 coordinates, 3 knife edges, joint springs) by lagrange and maggi.

``tests/models/snake3.toml`` is written from the system-file guide. Both exports, compiled by pymoca and
integrated by IDAS, must match nhbridge's native simulation to 1e-6 of every coordinate's range:

* lagrange (multiplier DAE): IDAS's global error at ``reltol`` 1e-10 alone was 2.9e-6 of the range; the
  check runs IDAS at ``rtol`` times ``IDAS_TOLERANCE_FACTOR`` (``bridge/tools/pymoca.py``).
* maggi (reduced ODE on the split exported): the split turns singular along the run, where the native run
  re-partitions and IDAS stopped (``IDA_CONV_FAIL``); the check compares up to 0.9 of that time and says so.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest

from bridge.model.loader import load_system
from bridge.simulation.simulate import simulate
from bridge.validation.tool_checks import check_pymoca

SNAKE = Path(__file__).parent / "models" / "snake3.toml"
COORDINATES = {"x", "y", "th1", "th2", "th3"}


@pytest.fixture(scope="module")
def snake():
    return load_system(SNAKE)


def test_lagrange_through_pymoca_matches_the_native_run(snake, pymoca, derivations):
    report = check_pymoca(derivations.eom(SNAKE, "lagrange"))  # derived once per run (tests/test_forms.py too)
    assert set(report.errors) == COORDINATES
    assert report.balanced and report.states == 10
    assert report.horizon == "" and report.compared_until == snake.stop_time  # no split: the whole run
    assert report.max_error < 1e-6, report.summary()


def test_maggi_through_pymoca_matches_the_native_run_up_to_its_split_change(snake, pymoca, derivations):
    eom = derivations.eom(SNAKE, "maggi")
    native = simulate(eom, snake.stop_time, interval=snake.stop_time / 500)
    assert native.repartitions, "the native maggi run re-partitions: the exported split turns singular"
    first = native.repartitions[0][0]
    report = check_pymoca(eom)
    assert set(report.errors) == COORDINATES and report.states == 7
    assert report.max_error < 1e-6, report.summary()
    # the comparison ends before the native run's first re-partition, at 0.9 of the split's singular time
    assert 0.85 * first < report.compared_until < first, (first, report.horizon)
    assert f"t = {report.compared_until:.4g} s" in report.summary()


def test_a_split_given_out_before_the_first_output_time_is_followed(derivations):
    """With y, th2 independent the snake's splits give out every few milliseconds: a segment between two
    re-partitions holds no output time, and the run goes on with the next split (it once failed there with an
    AttributeError)."""
    eom = derivations.eom(SNAKE, "maggi", independent=["y", "th2"])
    native = simulate(eom, 0.05, interval=0.01)
    reference = simulate(derivations.eom(SNAKE, "lagrange"), 0.05, interval=0.01, rtol=1e-12, atol=1e-14)
    changes = [te for te, _ in native.repartitions]
    assert any(int(a / 0.01) == int(b / 0.01) for a, b in pairwise(changes))  # a segment without output
    assert native.time[0] == 0.0 and native.time[-1] == pytest.approx(0.05)
    assert abs(native.q - reference.q).max() < 1e-8
