"""``nhbridge validate examples/*.toml`` passes: every example, every applicable method's native FMU.

The default command on every example (tests/shared_campaign.py: every method natively, Rumoca, pymoca and every
method's FMUs, FMI 2 and 3, Model Exchange and Co-Simulation) is run once per test
run; ``tests/test_validation.py`` checks its reports, its known answers and lagrange's runs, this module the
native FMUs of every other method against the same reference.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bridge
from bridge.derivation.methods import METHODS
from bridge.validation.campaign import PASSED, SKIPPED

from .shared_campaign import examples_campaign

pytest.importorskip("fmpy")
pytestmark = [pytest.mark.slow, pytest.mark.fmu]

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
OTHER_METHODS = [m for m in METHODS if m != "lagrange"]


@pytest.fixture(scope="module")
def fmu_campaign(tmp_path_factory):
    code, _reports, data = examples_campaign(tmp_path_factory.getbasetemp())
    return code, data


def test_every_examples_fmus_of_every_method_pass(fmu_campaign):
    code, data = fmu_campaign
    assert code == 0, data["failures"]
    assert len(data["systems"]) == len(EXAMPLES)
    built = skipped = 0
    for path, system in zip(EXAMPLES, data["systems"]):
        runs = {r["id"]: r for r in system["runs"]}
        loaded = bridge.load_system(path)
        assert system["name"] == loaded.name
        for name in OTHER_METHODS:
            ids = [f"fmu{v}-{k}-{name}" for v in (2, 3) for k in ("me", "cs")]
            if METHODS[name].applicable(loaded) is not None:  # e.g. Kane without bodies, Chaplygin with holonomic
                assert runs[f"fmu-{name}"]["status"] == SKIPPED, (path.name, runs[f"fmu-{name}"])
                continue
            for rid in ids:
                run = runs[rid]
                if run["status"] == SKIPPED:  # the method itself does not apply here (e.g. its split gives out)
                    assert run["reason"].startswith("not applicable"), (path.name, run)
                    skipped += 1
                    continue
                assert run["status"] == PASSED, (path.name, run)
                assert max(m["max_rel"] for m in run["signals"]) <= run["tolerance"], (path.name, rid)
                built += 1
    assert built > 3 * skipped  # the skips are the exception: a method whose split gives out, not a Chaplygin system
