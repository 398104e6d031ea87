"""``nhbridge validate examples/*.toml`` passes: every example, every applicable method's native FMU.

The campaign of ``tests/test_validation.py`` validates every example with its default runs (every method
natively, Rumoca, pymoca) and lagrange's four FMUs. This module runs the rest of the default command: the
native FMUs of every other method (FMI 2 and 3, Model Exchange and Co-Simulation) of every example, on two Dask
worker processes (``--workers 2``), against the same reference. Together they are the whole default command,
each run paid once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import bridge
from bridge.cli import main
from bridge.derivation.methods import METHODS
from bridge.validation.campaign import PASSED, SKIPPED

pytest.importorskip("fmpy")
pytestmark = [pytest.mark.slow, pytest.mark.fmu]

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
OTHER_METHODS = [m for m in METHODS if m != "lagrange"]


@pytest.fixture(scope="module")
def fmu_campaign(tmp_path_factory):
    report = tmp_path_factory.mktemp("validate-examples") / "v.json"
    code = main(["validate", *map(str, EXAMPLES), "--runs", "fmu", "--fmu-methods", ",".join(OTHER_METHODS),
                 "--workers", "2", "-q", "--json", str(report)])
    return code, json.loads(report.read_text())


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
