"""``nhbridge sweep`` on Dask: results against the same cases run natively, a real scheduler with two worker
processes on 127.0.0.1, failing cases (a segfaulting and a hanging FMU) recorded as failed, and bad input.

The reference of every case is independent of the FMU: the system file loaded with the case's values as
``--set`` overrides (the loader makes the start state consistent) and integrated by scipy (bridge.simulate).
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")
pa_parquet = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("fmpy")

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.model.loader import load_system  # noqa: E402
from bridge.simulation.simulate import simulate  # noqa: E402

from .processes import default_signals  # noqa: E402

ROOT = Path(__file__).parent.parent
SLEIGH = ROOT / "examples" / "chaplygin_sleigh.toml"
STOP = 1.5
SWEPT = ["a", "der(theta)"]


def reference_finals(case: dict) -> dict[str, float]:
    """final(signal) of one case: the system with the case's values set, simulated natively."""
    system = load_system(SLEIGH, {k: repr(v) for k, v in case.items()})
    cols = simulate(bridge.derive(system, "lagrange"), STOP, rtol=1e-11, atol=1e-13).columns()
    return {f"final({k})": float(v[-1]) for k, v in cols.items() if k != "time" and not k.startswith("lambda[")}


def check_against_native(table: dict, cases: int, swept: list[str] = SWEPT) -> None:
    assert len(table["case"]) == cases
    assert set(table["status"]) == {"ok"}, table["reason"]
    for i in range(cases):
        case = {name: table[name][i] for name in swept}
        ref = reference_finals(case)
        columns = [c for c in table if c.startswith("final(")]
        assert set(columns) == set(ref)  # one final(...) per coordinate, velocity and output
        for col in columns:
            assert abs(table[col][i] - ref[col]) <= 1e-6 * max(1.0, abs(ref[col])), (case, col)


def read(path: Path) -> dict:
    return pa_parquet.read_table(path).to_pydict()


def test_sweep_local_cluster_matches_native_runs(tmp_path, capsys):
    """``--workers``: a local cluster of one worker process (each worker costs about 2 s of CPU to start; cases
    spread over two local workers are checked by test_a_lost_worker_has_its_cases_retried_by_dask, over two
    remote ones by the scheduler tests, and ``--workers 2`` by the gallery's sweep page in test_gallery)."""
    out = tmp_path / "sweep.parquet"
    code = main(["sweep", str(SLEIGH), "--values", "a=0.1,0.3", "--grid", "der(theta)=0.5:1.1:2", "--record", "final",
                 "--record", "max(abs(theta))", "--record", "max(abs(residual))", "--record", "series(theta)",
                 "--stop-time", str(STOP),
                 "--rtol", "1e-10", "--workers", "1", "-o", str(out), "--quiet", "--plot", str(tmp_path / "p.png")])
    assert code == 0, capsys.readouterr()
    table = read(out)
    check_against_native(table, 4)
    assert table["der(theta)"] == [0.5, 0.5, 1.1, 1.1]  # grid axes vary slowest, then the value lists
    assert table["a"] == [0.1, 0.3, 0.1, 0.3]
    # max |theta| of a monotone heading (theta' > 0 from theta = 0) is its final value
    assert np.allclose(table["max(abs(theta))"], np.abs(table["final(theta)"]), rtol=1e-9)
    assert max(table["max(abs(residual))"]) < 1e-6  # the constraint holds along every run
    assert len(set(table["worker"])) == 1 and all(s > 0 for s in table["seconds"])
    csv = (tmp_path / "sweep.csv").read_text().splitlines()
    assert len(csv) == 5 and '"der(theta)"' in csv[0]
    assert (tmp_path / "p.png").stat().st_size > 1000
    series = read(tmp_path / "sweep.series.parquet")  # the recorded time series, one block per case
    assert set(series) == {"case", "time", "theta"}
    for i in range(4):
        rows = [k for k, c in enumerate(series["case"]) if c == i]
        assert series["time"][rows[0]] == 0.0 and math.isclose(series["time"][rows[-1]], STOP)
        assert series["theta"][rows[-1]] == table["final(theta)"][i]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def dask_cluster():
    """A ``dask scheduler`` and two ``dask worker`` processes on 127.0.0.1 (random free ports), killed after."""
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    # the scheduler and the workers run on this interpreter (whatever `dask` script PATH finds may belong to another
    # environment, whose workers cannot import bridge)
    scheduler = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    worker = [sys.executable, "-m", "distributed.cli.dask_worker"]
    env = {**os.environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    procs = [subprocess.Popen([*scheduler, "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)]
    try:
        for _ in range(2):
            procs.append(subprocess.Popen([*worker, address, "--nthreads", "1", "--nworkers", "1",
                                           "--no-dashboard", "--host", "127.0.0.1"],
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env))
        from distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc in reversed(procs):  # workers first; nothing of theirs needs a graceful end
            proc.kill()
            proc.wait()


def test_sweep_file_reference_key(dask_cluster, tmp_path, capsys):
    """``reference = "ref.csv"`` in a sweep file (relative to the file) is the file's --reference; --reference on the
    command line replaces it. The references are native runs of each case: each case matches its own. (On the
    module's scheduler: the local cluster of ``--workers`` has its own test, and two more would cost seconds each.)"""
    study = tmp_path / "study"
    study.mkdir()
    for a in (0.15, 0.25):
        system = load_system(SLEIGH, {"a": repr(a)})
        simulate(bridge.derive(system, "lagrange"), STOP, rtol=1e-11, atol=1e-13, interval=STOP / 500).write_csv(
            study / f"ref{a}.csv")
    sweep_file = study / "sweep.toml"
    sweep_file.write_text(f'[sweep]\nsystem = "{SLEIGH}"\nstop_time = {STOP}\nrtol = 1e-10\nreference = "ref0.15.csv"\n'
                          'record = ["max_rel(theta)", "max_rel(x)"]\n[sweep.values]\na = [0.15, 0.25]\n')
    out = tmp_path / "sweep.parquet"
    assert main(["sweep", str(sweep_file), "--scheduler", dask_cluster, "-o", str(out), "--quiet"]) == 0, \
        capsys.readouterr()
    table = read(out)
    assert max(table["max_rel(theta)"][0], table["max_rel(x)"][0]) < 1e-6 < 1e-3 < table["max_rel(theta)"][1]
    assert main(["sweep", str(sweep_file), "--scheduler", dask_cluster, "-o", str(out), "--quiet",
                 "--reference", str(study / "ref0.25.csv")]) == 0, capsys.readouterr()
    table = read(out)
    assert max(table["max_rel(theta)"][1], table["max_rel(x)"][1]) < 1e-6 < 1e-3 < table["max_rel(theta)"][0]
    for bad, said in (('reference = 3', "expected the path of a CSV file"), ('reference = "none.csv"', "cannot read")):
        sweep_file.write_text(f'[sweep]\nsystem = "{SLEIGH}"\n{bad}\nrecord = ["max_rel(theta)"]\n'
                              '[sweep.values]\na = [0.15]\n')
        assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "bad.parquet"), "--quiet"]) == 2
        err = capsys.readouterr().err
        assert "[sweep] reference" in err and said in err and "Traceback" not in err, err
    assert not (tmp_path / "bad.parquet").exists()


def test_sweep_through_a_real_scheduler_and_two_worker_processes(dask_cluster, tmp_path, capsys):
    """der(y) is a dependent velocity of the FMU's split (it would recompute it): the worker makes the start
    state consistent as --set does: at theta = 0 the knife edge gives der(y) = a*der(theta), so der(theta) follows."""
    sweep_file = tmp_path / "study.toml"
    sweep_file.write_text(f'[sweep]\nsystem = "{SLEIGH}"\nstop_time = {STOP}\nrtol = 1e-10\nrecord = ["final"]\n'
                          '[sweep.values]\n"der(y)" = [0.1, 0.2]\n[sweep.grid]\na = "0.15:0.25:2"\n')
    out = tmp_path / "remote.csv"
    first = load_system(SLEIGH, {"der(y)": "0.1", "a": "0.15"})  # the first case, natively: the reference
    simulate(bridge.derive(first, "lagrange"), STOP, rtol=1e-11, atol=1e-13, interval=STOP / 500).write_csv(
        tmp_path / "ref.csv")
    code = main(["sweep", str(sweep_file), "--scheduler", dask_cluster, "-o", str(out), "--quiet",
                 "--reference", str(tmp_path / "ref.csv"), "--record", "final", "--record", "max_rel(theta)",
                 "--record", "tube_violations(x)"])
    captured = capsys.readouterr()
    assert code == 0, captured
    assert "on 2 worker(s)" in captured.out
    table = read(tmp_path / "remote.parquet")
    check_against_native(table, 4, ["der(y)", "a"])
    assert len(set(table["final(theta)"])) == 4  # the start velocity der(theta) differs between the cases
    assert table["max_rel(theta)"][0] < 1e-6 and table["tube_violations(x)"][0] == 0  # the reference's own case
    assert min(table["max_rel(theta)"][1:]) > 1e-3 and max(table["tube_violations(x)"][1:]) > 0
    assert all(w.startswith("tcp://127.0.0.1:") for w in table["worker"])
    assert dask_cluster not in table["worker"]  # the rows ran on the workers, not on the scheduler


def test_validate_on_the_scheduler_gives_the_report_of_a_sequential_campaign(dask_cluster, tmp_path, capsys):
    """The same runs, once in this process and once on the two workers: the same statuses and errors."""
    import json

    pendulum = str(ROOT / "examples" / "simple_pendulum.toml")
    common = ["validate", pendulum, "--runs", "methods,fmu", "--methods", "lagrange,maggi", "--fmi-version", "2",
              "--stop-time", "2", "--quiet"]
    assert main([*common, "--json", str(tmp_path / "seq.json")]) == 0, capsys.readouterr()
    assert main([*common, "--json", str(tmp_path / "dask.json"), "--scheduler", dask_cluster]) == 0, \
        capsys.readouterr()
    seq, dsk = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("seq", "dask"))

    def runs(report):
        return {r["id"]: (r["status"], r["energy_drift"], tuple(x["max_abs"] for x in r["signals"]))
                for s in report["systems"] for r in s["runs"]}

    assert runs(dsk) == runs(seq)
    # 2 methods natively and their FMUs, FMI 2 ME and CS
    assert [status for status, *_ in runs(dsk).values()].count("passed") == 6


# -- failing cases: a foreign FMU that segfaults or hangs in fmi2DoStep ---------------------------------------
def _foreign_payload(tmp_path, mode: str, timeout: float):
    from bridge.errors import ProblemCollector
    from bridge.sweeps.engine import Payload
    from bridge.sweeps.record import parse_records
    from tests.foreign_fmu import foreign_fmu

    plan = parse_records(["max(y)"], ["y"], 0, ProblemCollector())
    return Payload(fmu=Path(foreign_fmu(tmp_path, mode)).read_bytes(), plan=plan, residuals=0, stop_time=0.2,
                   interval=0.01, rtol=1e-6, timeout=timeout)


def test_crashing_and_hanging_cases_are_failed_rows_and_the_sweep_goes_on(tmp_path):
    import shutil

    from bridge.sweeps.engine import dask_client, run_cases

    if not shutil.which("gcc"):
        pytest.skip("needs gcc")
    ok = _foreign_payload(tmp_path / "ok", "ok", 30.0)
    crash = _foreign_payload(tmp_path / "crash", "segfault", 30.0)
    hang = _foreign_payload(tmp_path / "hang", "hang", 1.0)
    rows: dict[str, list] = {"ok": [], "crash": [], "hang": []}
    with dask_client("local", 1) as client:
        for name, payload in (("crash", crash), ("hang", hang), ("ok", ok)):  # the same worker runs all three
            run_cases(client, payload, [{}, {}], lambda row, case, got=rows[name]: got.append(row))
        assert len(client.nthreads()) == 1
    assert [r["status"] for r in rows["crash"]] == ["failed", "failed"]
    assert all("crashed" in r["reason"] and "SIGSEGV" in r["reason"] for r in rows["crash"])
    assert all(r["status"] == "failed" and "within 1 s" in r["reason"] for r in rows["hang"])
    assert [r["status"] for r in rows["ok"]] == ["ok", "ok"]
    assert all(math.isclose(r["values"]["max(y)"], 0.2, rel_tol=1e-9) for r in rows["ok"])  # y is the time
    assert len({r["worker"] for r in rows["crash"] + rows["hang"] + rows["ok"]}) == 1  # the worker survived


def test_a_lost_worker_has_its_cases_retried_by_dask(tmp_path, monkeypatch):
    """The first case to pass t = 0.05 SIGKILLs its own Dask worker process (once in all: a marker file records
    the pid it killed). The scheduler hands the lost worker's cases to a worker again (the nanny restarts the dead
    one under a new address): every case ends ok, and none of the rows comes from the killed worker."""
    import shutil

    from bridge.sweeps.engine import dask_client, run_cases

    if not shutil.which("gcc"):
        pytest.skip("needs gcc")
    marker = tmp_path / "killed.pid"
    monkeypatch.setenv("FOREIGN_FMU_KILL_MARKER", str(marker))  # the workers inherit it
    payload = _foreign_payload(tmp_path, "kill-parent-once", 30.0)
    rows: list[dict] = []
    with dask_client("local", 2) as client:
        pids = client.run(os.getpid)  # worker address -> its process
        run_cases(client, payload, [{} for _ in range(6)], lambda row, case: rows.append(row))
        after = set(client.scheduler_info()["workers"])
    killed = int(marker.read_text())
    victim = next(address for address, pid in pids.items() if pid == killed)  # a worker was killed mid-case
    with pytest.raises(ProcessLookupError):
        os.kill(killed, 0)
    assert victim not in after
    assert sorted(r["index"] for r in rows) == list(range(6))
    assert [r["status"] for r in rows] == ["ok"] * 6, [r["reason"] for r in rows]
    assert all(math.isclose(r["values"]["max(y)"], 0.2, rel_tol=1e-9) for r in rows)
    assert victim not in {r["worker"] for r in rows}  # its case was run again elsewhere


# -- bad input: exit 2, one paragraph, nothing written -------------------------------------------------------
def _bad(tmp_path, capsys, *extra: str) -> str:
    out = tmp_path / "bad.parquet"
    t0 = time.perf_counter()
    code = main(["sweep", str(SLEIGH), "--stop-time", "0.5", "-o", str(out), "--quiet", *extra])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    assert not out.exists() and not out.with_suffix(".csv").exists()
    assert time.perf_counter() - t0 < 20
    return err


def test_unknown_name_is_reported_with_a_suggestion(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "--grid", "der(thetta)=0:1:3", "--values", "mm=1,2")
    assert "did you mean 'der(theta)'" in err.lower() and "did you mean 'm'" in err.lower()  # both problems at once


def test_empty_ranges_are_refused(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "--grid", "a=0:1:0", "--random", "m=2:1", "--samples", "4", "--values", "J=,")
    assert "positive whole number" in err and "is empty" in err and "list of values is empty" in err


def test_a_grid_over_max_cases_needs_yes(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "--grid", "a=0.1:0.2:1000", "--grid", "m=1:2:1000")
    assert "1,000,000 cases" in err and "--yes" in err


def test_an_unreachable_scheduler_is_reported_within_seconds(tmp_path, capsys):
    t0 = time.perf_counter()
    err = _bad(tmp_path, capsys, "--values", "a=0.1,0.2", "--scheduler", f"tcp://127.0.0.1:{_free_port()}")
    assert "cannot be reached" in err and time.perf_counter() - t0 < 10


def test_an_unwritable_output_is_refused_before_running(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code = main(["sweep", str(SLEIGH), "--values", "a=0.1,0.2", "-o", str(blocker / "out.parquet"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2 and "cannot write here" in err and "Traceback" not in err
    assert blocker.read_text() == "x"


def test_bad_record_expressions_are_refused(tmp_path, capsys):
    err = _bad(tmp_path, capsys, "--values", "a=0.1,0.2", "--record", "max(abs(thta))", "--record",
               "__import__('os')", "--record", "final(residual)")
    assert "did you mean 'theta'" in err.lower() and "REDUCTION(EXPR)" in err and "needs min, max or mean" in err


def test_ctrl_c_keeps_the_finished_rows(tmp_path):
    """SIGINT to the whole process group (as a terminal's Ctrl-C): exit 130, the finished rows written."""
    import signal

    out = tmp_path / "c.parquet"
    pendulum = str(ROOT / "examples" / "simple_pendulum.toml")
    proc = subprocess.Popen([sys.executable, "-m", "bridge.cli", "sweep", pendulum,
                             "--grid", "l=0.5:1.5:400", "--stop-time", "1", "--workers", "1", "-o", str(out),
                             "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, preexec_fn=default_signals)
    try:
        for line in proc.stderr:
            if line.startswith("sweep: ") and "/400 cases" in line and int(line.split()[1].split("/")[0]) >= 3:
                break
        os.killpg(proc.pid, signal.SIGINT)
        _stdout, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "finished case(s) are written" in stderr
    table = read(out)
    assert 3 <= len(table["case"]) < 400 and set(table["status"]) == {"ok"}
    grid = np.linspace(0.5, 1.5, 400)
    assert all(table["l"][k] == grid[i] for k, i in enumerate(table["case"]))
    assert len((tmp_path / "c.csv").read_text().splitlines()) == len(table["case"]) + 1


SECRET = "s3cr3t-line:x:0:0:do-not-echo"


@pytest.mark.parametrize("where", ["../outside/ref.csv", "{abs}", "link.csv"])
def test_a_sweep_files_reference_outside_its_folder_is_refused_without_echo(tmp_path, capsys, where):
    """The reference of a sweep file resolves inside the file's folder (.., absolute paths and links that leave
    it are refused, naming the rule); nothing of the file it points at reaches a message."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = outside / "ref.csv"
    target.write_text(f"{SECRET}\n{SECRET}\n")  # a file that is not a reference, like /etc/passwd
    study = tmp_path / "study"
    study.mkdir()
    (study / "link.csv").symlink_to(target)
    ref = where.replace("{abs}", str(target))
    sweep_file = study / "sweep.toml"
    sweep_file.write_text(f'[sweep]\nsystem = "{SLEIGH}"\nreference = "{ref}"\nrecord = ["max_rel(theta)"]\n'
                          '[sweep.values]\na = [0.15]\n')
    assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "bad.parquet"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "[sweep] reference" in err and "outside the sweep file's folder" in err and "--reference" in err, err
    assert "s3cr3t" not in err and "Traceback" not in err
    assert not (tmp_path / "bad.parquet").exists()


@pytest.mark.parametrize("text", [f"{SECRET}\n{SECRET}\n", f"time,{SECRET}\n0,1\n1,x\n", f"time\n0\n1,2,{SECRET}\n",
                                  f"time,theta\n0,1\n1,2\n{SECRET}\n"])
def test_a_bad_reference_inside_the_folder_is_refused_without_echoing_its_lines(tmp_path, capsys, text):
    study = tmp_path / "study"
    study.mkdir()
    (study / "ref.csv").write_text(text)
    sweep_file = study / "sweep.toml"
    sweep_file.write_text(f'[sweep]\nsystem = "{SLEIGH}"\nreference = "ref.csv"\nrecord = ["max_rel(x)"]\n'
                          '[sweep.values]\na = [0.15]\n')
    assert main(["sweep", str(sweep_file), "-o", str(tmp_path / "bad.parquet"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "[sweep] reference" in err and "s3cr3t" not in err and "Traceback" not in err, err


def test_shown_columns_quotes_signal_names_only():
    from bridge.sweeps.spec import shown_columns, shown_name

    assert shown_columns(["time", "der(theta)", "residual[2]", "a b:c", "x;y"]) == \
        "time, der(theta), residual[2] and 2 columns whose names are not signal names"
    assert shown_name("theta") == "'theta'" and "s3cr3t" not in shown_name(SECRET)
