"""A sweep of 10^7 cases: cases made lazily and rows streamed to disk, memory bounded whatever the case count.

The child process enumerates the cases of a 10^7-case grid and feeds rows (shaped as the workers return them,
finishing out of order) into the table writer the sweep command uses; its peak RSS after 20,000 rows and after
200,000 rows may differ only by the writer's stated bound, not by the number of cases.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from bridge.cli import main

CHILD = textwrap.dedent("""
    import json, random, resource, sys
    from pathlib import Path
    from bridge.sweeps.spec import Axis, SweepSpec
    from bridge.sweeps.results import StreamingTables

    def rss_mib():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    folder = Path(sys.argv[1])
    spec = SweepSpec(axes=[Axis("a", "grid", tuple(float(k) for k in range(1000)), "--grid a"),
                           Axis("b", "grid", tuple(float(k) for k in range(100)), "--grid b"),
                           Axis("c", "values", tuple(float(k) for k in range(100)), "--values c")])
    total = spec.size()
    cases = spec.iter_cases()
    rng = random.Random(1)
    marks = {}
    window = []
    with StreamingTables(spec.names, ["final(x)"], folder / "t.parquet", folder / "t.csv") as tables:
        for index, case in enumerate(cases):
            window.append((index, case))
            if len(window) >= 32:  # rows finish out of order, 32 in flight like the engine's window
                k, c = window.pop(rng.randrange(len(window)))
                row = {"index": k, "status": "ok" if k % 97 else "failed", "reason": "" if k % 97 else "boom",
                       "values": {"final(x)": c["a"] + c["b"] + c["c"]}, "series": None, "seconds": 0.01,
                       "worker": "w1"}
                tables.add(row, c)
            if index == 20_000:
                marks["early"] = rss_mib()
            if index == 200_000:
                break
        for k, c in window:
            tables.add({"index": k, "status": "ok", "reason": "", "values": {"final(x)": c["a"] + c["b"] + c["c"]},
                        "series": None, "seconds": 0.01, "worker": "w1"}, c)
    marks["late"] = rss_mib()
    print(json.dumps({"total": total, "rows": tables.rows, "failed": tables.failed, **marks}))
""")


def test_ten_million_cases_stream_with_bounded_memory(tmp_path):
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["total"] == 10_000_000 and got["rows"] == 200_001
    assert got["late"] - got["early"] < 64, got  # MiB: the writer's chunk and reorder buffer, not the cases
    import pyarrow.parquet as pq

    table = pq.read_table(tmp_path / "t.parquet").to_pydict()
    assert table["case"] == list(range(200_001))  # case order although the rows finished out of order
    k = 123_457  # a = k // 10_000, b = (k // 100) % 100, c = k % 100
    assert (table["a"][k], table["b"][k], table["c"][k]) == (12.0, 34.0, 57.0)
    assert table["final(x)"][k] == 12.0 + 34.0 + 57.0
    assert sum(s == "failed" for s in table["status"]) == got["failed"] > 0
    with open(tmp_path / "t.csv") as fh:
        assert sum(1 for _ in fh) == 200_002


def test_too_many_random_samples_are_refused(tmp_path, capsys):
    from pathlib import Path

    sleigh = Path(__file__).parent.parent / "examples" / "chaplygin_sleigh.toml"
    assert main(["sweep", str(sleigh), "--random", "a=0.1:0.3", "--samples", "2000000", "--yes",
                 "-o", str(tmp_path / "s.parquet"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--samples" in err and "1,000,000" in err and "Traceback" not in err


@pytest.mark.parametrize("n", [1, 5])
def test_iter_cases_is_the_list_of_cases(n):
    from bridge.sweeps.spec import Axis, SweepSpec

    spec = SweepSpec(axes=[Axis("a", "grid", (1.0, 2.0), "g"), Axis("b", "random", (0.0, 1.0), "r")], samples=n,
                     seed=3)
    assert list(spec.iter_cases()) == spec.cases() and len(spec.cases()) == spec.size() == 2 * n
