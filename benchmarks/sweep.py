"""Sweep throughput: cases per second of ``nhbridge sweep``'s engine on Dask against plain loops.

Run from the repository root::

    python benchmarks/sweep.py [--system examples/chaplygin_sleigh.toml] [--name a] [--cases 40] [--stop-time 2]

The system's native FMU (FMI 2 CS, lagrange) is built once; the same ``--cases`` values of ``--name`` run

* sequentially in this process over the unpacked FMU (``fmpy.simulate_fmu`` on the folder, no isolation);
* with fmpy's own ``simulate_fmu`` on the ``.fmu`` file in a loop (it unpacks the archive every time);
* through :func:`bridge.sweeps.engine.run_cases` on a LocalCluster of 1 and 2 single-threaded worker processes
  (each case in a forked child with a timeout, reductions computed there), cluster start-up excluded.

The overhead per case is (1-worker time - sequential time) / cases; Dask's own per-task cost is measured with
no-op tasks on the 1-worker cluster. The paper estimate of the workers needed for 100,000 cases in an hour is
100,000 x (1-worker seconds per case) / 3600 s, and the scheduler's share is 100,000 x (no-op task seconds).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import tempfile
import time
from pathlib import Path

import fmpy
import numpy as np

from bridge.derivation.methods import METHODS
from bridge.errors import ProblemCollector
from bridge.fmu.build import build_fmu
from bridge.model.loader import load_system
from bridge.sweeps.command import build_payload
from bridge.sweeps.engine import _unpacked, dask_client, run_cases
from bridge.sweeps.record import parse_records
from bridge.sweeps.spec import SweepSpec

ROOT = Path(__file__).resolve().parent.parent


def _noop() -> None:
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--system", default=str(ROOT / "examples" / "chaplygin_sleigh.toml"))
    ap.add_argument("--name", default="a", help="the swept parameter")
    ap.add_argument("--low", type=float, default=0.1)
    ap.add_argument("--high", type=float, default=0.3)
    ap.add_argument("--cases", type=int, default=40)
    ap.add_argument("--stop-time", type=float, default=2.0)
    args = ap.parse_args()

    system = load_system(args.system)
    values = np.linspace(args.low, args.high, args.cases)
    cases = [{args.name: float(v)} for v in values]
    signals = [c.name for c in system.coordinates] + [f"der({c.name})" for c in system.coordinates] + \
        list(system.outputs)
    plan = parse_records(["final"], signals, len(system.constraints), ProblemCollector())
    spec = SweepSpec(system=args.system, stop_time=args.stop_time)
    t0 = time.perf_counter()
    payload = build_payload(system, plan, spec, "lagrange", 300.0)
    build = time.perf_counter() - t0
    folder = str(_unpacked(payload))
    kw = dict(fmi_type="CoSimulation", stop_time=payload.stop_time, output_interval=payload.interval,
              relative_tolerance=payload.rtol, output=plan.outputs, validate=False)
    rows = {}

    fmpy.simulate_fmu(folder, start_values=cases[0], **kw)  # warm-up: imports, dlopen
    t0 = time.perf_counter()
    for case in cases:
        fmpy.simulate_fmu(folder, start_values=case, **kw)
    rows["sequential loop, unpacked FMU"] = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        fmu = build_fmu(METHODS["lagrange"].derive(system, system.independent), Path(tmp) / "m.fmu", 2)
        t0 = time.perf_counter()
        for case in cases:
            fmpy.simulate_fmu(str(fmu), start_values=case, **kw)
        rows["fmpy simulate_fmu(.fmu) loop"] = time.perf_counter() - t0

    noop = float("nan")
    startup = {}
    for workers in (1, 2):
        t0 = time.perf_counter()
        with dask_client("local", workers) as client:
            startup[workers] = time.perf_counter() - t0
            run_cases(client, payload, cases[:2], lambda row: None)  # warm: scatter, unpack, imports
            got: list = []
            t0 = time.perf_counter()
            run_cases(client, payload, cases, got.append)
            rows[f"nhbridge sweep engine, {workers} worker(s)"] = time.perf_counter() - t0
            assert all(r["status"] == "ok" for r in got), [r["reason"] for r in got if r["status"] != "ok"]
            if workers == 1:
                client.gather(client.map(lambda _: _noop(), range(20), pure=False))
                t0 = time.perf_counter()
                client.gather(client.map(lambda _: _noop(), range(200), pure=False))
                noop = (time.perf_counter() - t0) / 200

    n = len(cases)
    print(f"CPU: {platform.machine()}, {os.cpu_count()} logical cores; Python {platform.python_version()}, "
          f"fmpy {fmpy.__version__}; load average {os.getloadavg()[0]:.1f}")
    print(f"{system.name}: {n} cases of {args.name} in [{args.low:g}, {args.high:g}], stop time {args.stop_time:g} s, "
          f"{round(payload.stop_time / payload.interval)} output intervals, rtol {payload.rtol:g}; "
          f"FMU built in {build:.1f} s")
    print(f"{'':38} {'seconds':>8} {'cases/s':>8} {'ms/case':>8}")
    for label, seconds in rows.items():
        print(f"{label:38} {seconds:8.2f} {n / seconds:8.1f} {1000 * seconds / n:8.1f}")
    seq = rows["sequential loop, unpacked FMU"] / n
    one = rows["nhbridge sweep engine, 1 worker(s)"] / n
    print(f"LocalCluster start-up: {startup[1]:.1f} s (1 worker), {startup[2]:.1f} s (2 workers)")
    print(f"overhead per case (1 worker - sequential): {1000 * (one - seq):.1f} ms; Dask no-op task: "
          f"{1000 * noop:.2f} ms")
    print(f"paper estimate, 100,000 cases in 1 h: {math.ceil(100_000 * one / 3600)} single-threaded workers at "
          f"{1000 * one:.0f} ms/case; the scheduler's share {100_000 * noop:.0f} s of task overhead")


if __name__ == "__main__":
    main()
