"""``nhbridge validate examples/*.toml``, the default command on every example, run once per test run.

The modules that check the campaign (test_validation: every example passes, its reports, the known answers;
test_validate_examples: every method's FMUs) read one result: under scripts/run_tests.py it is kept in the run's
folder (``$NHBRIDGE_TEST_FMU_CACHE``, beside the shared FMUs), so the module process that asks first runs it and
the other waits for it and reads it; under a plain pytest run it is kept for that session. The key is the
command and the text of every example, so a changed example is validated anew.

The HTML report is written without plots (``--no-plots``): drawing every run of every example is about half of
the campaign's work, and the plots are checked on a smaller campaign (test_validation). The campaign runs in the
module's process, one run after the other: on Dask workers (``--workers 2``) it took more CPU than that (the
cluster's processes, their imports and heartbeats, the closures and trajectories shipped both ways) and the test
runner keeps the other core busy with other modules anyway. The path of ``validate --workers`` is checked on the
smaller campaign of test_validation (test_reports_are_written), and ``--scheduler`` against a sequential campaign
in test_sweeps.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from pathlib import Path

ROOT = Path(__file__).parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.toml"))
FMU_CACHE_ENV = "NHBRIDGE_TEST_FMU_CACHE"  # tests/conftest.py: the run's folder of shared builds
REPORTS = ("html", "json", "csv")


def campaign_args(folder: Path) -> list[str]:
    """The command: every example, every run group and method by default, every report written into ``folder``."""
    return ["validate", *map(str, EXAMPLES), "-q", "--no-plots", "--report", str(folder / "v.html"),
            "--json", str(folder / "v.json"), "--csv", str(folder / "v.csv")]


def examples_campaign(session_folder: Path) -> tuple[int, dict[str, Path], dict]:
    """Return the campaign's exit code, its report files by kind and its JSON report; run on first use.

    ``session_folder`` keeps the result where the run has no shared folder (a plain pytest run).
    """
    from bridge.cli import main

    shared = os.environ.get(FMU_CACHE_ENV)
    base = (Path(shared) if shared else session_folder) / "campaigns"
    base.mkdir(parents=True, exist_ok=True)
    parts = [campaign_args(Path("."))] + [[p.name, p.read_text(encoding="utf-8")] for p in EXAMPLES]
    key = hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]
    folder = base / key
    done = folder / "exit_code"
    with (base / f"{key}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another module process running it finishes first
        if not done.is_file():
            folder.mkdir(exist_ok=True)
            code = main(campaign_args(folder))
            (folder / "exit_code.tmp").write_text(str(code))
            os.replace(folder / "exit_code.tmp", done)  # written last: a result without it is not whole
    reports = {k: folder / f"v.{k}" for k in REPORTS}
    return int(done.read_text()), reports, json.loads(reports["json"].read_text())
