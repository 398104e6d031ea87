"""Split changes of native runs: hysteresis of the choice, and equations derived once per split.

The 3-link wheeled snake run from the split with y, th2 independent: its link angles swing, and the splits
whose dependent coordinates are the cyclic x, y turn singular one after the other. The new split is the healthiest
(:mod:`bridge.simulation.split_choice`), so the run changes split rarely. A second run of the same equations takes
the new splits' equations from the first run (no derivation, counted by wrapping the method's ``derive``) and gives
the same trajectory as freshly derived equations.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.derivation.methods import METHODS
from bridge.model.mechanics import all_splits, cyclic_coordinates, numeric_constraint_matrix, split_health
from bridge.simulation.simulate import derived_splits
from bridge.simulation.split_choice import PREFERENCE_MARGIN, choose_new_split

ROOT = Path(__file__).parent.parent
STOP = 0.5


@pytest.fixture(scope="module")
def snake3():
    return bridge.load_system(ROOT / "tests" / "models" / "snake3.toml")


@pytest.fixture(scope="module")
def first_run(snake3):
    eom = bridge.derive(snake3, "maggi", independent=["y", "th2"])
    return eom, bridge.simulate(eom, STOP)


def test_changes_are_rare_and_not_back_and_forth(first_run):
    eom, result = first_run
    changes = result.repartitions
    assert 1 <= len(changes) <= 3
    names = [eom.independent] + [names for _, names in changes]
    times = [0.0] + [t for t, _ in changes]
    for k in range(2, len(names)):  # a split left is not re-entered within 0.1 s
        assert not (names[k] == names[k - 2] and times[k] - times[k - 1] < 0.1)
    assert np.abs(result.residuals).max() < 1e-8


class _CountedDerive:
    def __init__(self, method):
        self.method, self.original, self.calls = method, method.derive, 0

    def __call__(self, *args, **kwargs):
        self.calls += 1
        return self.original(*args, **kwargs)


def test_second_run_derives_nothing_and_matches_fresh_equations(snake3, first_run):
    eom, first = first_run
    assert set(derived_splits(eom)) == {eom.independent, *(names for _, names in first.repartitions)}
    maggi = METHODS.get_method("maggi")
    counted = _CountedDerive(maggi)
    maggi.derive = counted
    try:
        second = bridge.simulate(eom, STOP)
    finally:
        del maggi.derive  # the class's method again
    assert counted.calls == 0
    assert second.repartitions == first.repartitions
    assert np.allclose(second.q, first.q, rtol=0, atol=1e-9)
    fresh = bridge.simulate(bridge.derive(snake3, "maggi", independent=["y", "th2"]), STOP)  # derives every split
    assert [n for _, n in fresh.repartitions] == [n for _, n in first.repartitions]
    assert np.allclose(fresh.q, first.q, rtol=0, atol=1e-9)
    assert np.allclose(fresh.qd, first.qd, rtol=0, atol=1e-9)


def test_choice_is_the_healthiest_up_to_the_cyclic_preference(snake3, first_run):
    eom = first_run[0]
    A = eom.constraint_jacobian.tolist()
    cyclic = cyclic_coordinates(snake3)
    rng = np.random.default_rng(5)
    start = np.array([c.start for c in snake3.coordinates])
    for _ in range(6):
        q = start + rng.normal(scale=0.8, size=start.size)
        values = np.concatenate([[0.0], q, np.zeros(snake3.n), [p.value for p in snake3.parameters]])
        An = numeric_constraint_matrix(snake3, A, values)
        exclude = (1, 3)
        health = {tuple(ind): split_health(An, [i for i in range(snake3.n) if i not in ind])
                  for ind in all_splits(snake3.n, 3) if tuple(ind) != exclude}
        chosen = choose_new_split(snake3, A, values, lambda ind: True, exclude)
        best = max(health.values())
        assert health[chosen] >= PREFERENCE_MARGIN * best
        more_cyclic = [ind for ind, h in health.items() if h >= PREFERENCE_MARGIN * best
                       and sum(i in cyclic for i in range(snake3.n) if i not in ind)
                       > sum(i in cyclic for i in range(snake3.n) if i not in chosen)]
        assert not more_cyclic
        assert health[chosen] == best or sum(i in cyclic for i in range(snake3.n) if i not in chosen) > 0
