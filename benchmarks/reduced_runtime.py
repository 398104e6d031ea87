"""CPU time of native runs of every method against lagrange's and against the FMU of the same method.

Run from the repository root::

    python benchmarks/reduced_runtime.py [-o docs/benchmarks/reduced_runtime.md] [--only wheel,sleigh]
        [--methods maggi,appell] [--no-fmu] [--loads 0,2] [--timeout 600]

For the MSL rolling wheel (4 s), the Chaplygin sleigh (its stop time), the ball on a turntable
(``tests/models/turntable_ball.toml``, 6 s), the bicycle (5 s) and the 8-link wheeled snake (5 s, written by
``benchmarks/snake.py``), every method that applies (found by deriving it; a method that refuses the system is
left out) runs as ``nhbridge simulate`` in a child process; its CPU time (user + system, all threads, from
``getrusage`` of the child: import, derivation, compilation, integration and output) is the figure. The ratio is
that over lagrange's CPU time in the same condition. The FMU columns: the FMI 2 FMU of the same method (built
once, not timed) run by fmpy as Model Exchange (CVode) and as Co-Simulation (the FMU's own integrator,
communication step 0.01 s), both at the system's tolerance; CPU time of the ``simulate_fmu`` call alone, in this
process. Each condition is measured idle (nothing else started) and with ``N`` CPU-bound processes (busy
loops) started by the script for the measurement (``--loads``, default ``0,2``).
"""

from __future__ import annotations

import argparse
import datetime
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from snake import snake_toml  # noqa: E402
from timing import machine  # noqa: E402

METHODS = ("lagrange", "nielsen", "maggi", "appell", "chaplygin", "kane")
SNAKE_LINKS = 8
#: busy processes started -> the 1-minute load average at the start of each system's measurement in that condition
LOAD_AVERAGES: dict[int, list[float]] = {}


@dataclass(frozen=True)
class Case:
    """One system of the table: a label, its file and the simulated time."""

    key: str
    label: str
    path: Path
    stop: float


def cases(tmp: Path) -> list[Case]:
    snake = tmp / f"snake{SNAKE_LINKS}.toml"
    snake.write_text(snake_toml(SNAKE_LINKS), encoding="utf-8")
    return [
        Case("wheel", "MSL rolling wheel", ROOT / "examples" / "rolling_wheel.toml", 4.0),
        Case("sleigh", "Chaplygin sleigh", ROOT / "examples" / "chaplygin_sleigh.toml", 20.0),
        Case("turntable", "ball on a turntable", ROOT / "tests" / "models" / "turntable_ball.toml", 6.0),
        Case("bicycle", "bicycle", ROOT / "examples" / "engineering" / "bicycle.toml", 5.0),
        Case("snake", f"{SNAKE_LINKS}-link snake", snake, 5.0),
    ]


def applicable(case: Case, methods: tuple[str, ...]) -> dict:
    """method -> its equations, for the methods that derive the system (the others refuse it)."""
    import bridge
    from bridge.errors import BridgeError

    system = bridge.load_system(case.path)
    found = {}
    for method in methods:
        try:
            found[method] = bridge.derive(system, method)
        except BridgeError:
            continue
    return found


def cli_cpu(case: Case, method: str, tmp: Path, timeout: float) -> tuple[float | None, str]:
    """CPU seconds (user + system of the child) of ``nhbridge simulate``; None and why where it failed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "bridge.cli", "simulate", str(case.path), "--method", method,
           "--stop-time", repr(case.stop), "-q", "-o", str(tmp / f"{case.key}_{method}.csv")]
    try:
        # run outside the checkout: ``-m`` puts the working directory first on the path
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=tmp)
    except subprocess.TimeoutExpired:
        return None, f"stopped after {timeout:g} s (wall)"
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        return None, f"exit {proc.returncode}"
    return cpu, ""


def fmu_cpu(fmu: Path, case: Case, rtol: float, kind: str) -> str:
    """CPU seconds of fmpy's simulate_fmu (Model Exchange with CVode, or Co-Simulation), or its failure."""
    import fmpy

    kw = ({"fmi_type": "ModelExchange", "solver": "CVode", "output_interval": case.stop / 1000} if kind == "ME"
          else {"fmi_type": "CoSimulation", "output_interval": 0.01})
    t0 = time.process_time()
    try:
        fmpy.simulate_fmu(str(fmu), relative_tolerance=rtol, stop_time=case.stop, **kw)
    except Exception as exc:  # the FMU's failure is a table cell
        return f"stops ({str(exc).splitlines()[0][:40]})"
    return f"{time.process_time() - t0:.2f}"


def build(eom, case: Case, tmp: Path) -> Path | str:
    """The FMI 2 FMU of ``eom`` (not timed), or why it could not be built."""
    from bridge.errors import BridgeError
    from bridge.fmu.build import build_fmu

    fmu = tmp / f"{case.key}_{eom.method}.fmu"
    try:
        build_fmu(eom, fmu, 2)
    except BridgeError as exc:
        return f"no FMU ({str(exc)[:40]})"
    return fmu


class Load:
    """``count`` CPU-bound child processes (busy loops) while the block runs."""

    def __init__(self, count: int):
        self.count = count
        self.procs: list[subprocess.Popen] = []

    def __enter__(self):
        spin = "import os\nparent = os.getppid()\nwhile os.getppid() == parent:\n    pass"  # ends with the script
        self.procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(self.count)]
        return self

    def __exit__(self, *exc):
        for proc in self.procs:
            proc.kill()
            proc.wait()


def measure(selected: list[Case], methods: tuple[str, ...], loads: list[int], fmus: bool, timeout: float,
            tmp: Path) -> list[tuple]:
    """Rows (case, method, {load: (cpu, note)}, {load: (FMU ME cell, FMU CS cell)})."""
    rows = []
    for case in selected:
        found = applicable(case, methods)
        built = {method: build(eom, case, tmp) for method, eom in found.items()} if fmus else {}
        cells: dict = {method: {} for method in found}
        fmu_cells: dict = {method: {} for method in found}
        for load in loads:
            with Load(load):
                LOAD_AVERAGES.setdefault(load, []).append(os.getloadavg()[0])
                for method, eom in found.items():
                    cells[method][load] = cli_cpu(case, method, tmp, timeout)
                    cpu, note = cells[method][load]
                    fmu = built.get(method)
                    if isinstance(fmu, Path):
                        rtol = eom.system.rtol or 1e-10
                        fmu_cells[method][load] = (fmu_cpu(fmu, case, rtol, "ME"), fmu_cpu(fmu, case, rtol, "CS"))
                    else:
                        fmu_cells[method][load] = (fmu or "", fmu or "")
                    print(f"{case.label:22s} {method:10s} load {load}: {note or f'{cpu:.2f} s'} "
                          f"FMU {fmu_cells[method][load]}", file=sys.stderr, flush=True)
        rows += [(case, method, cells[method], fmu_cells[method]) for method in found]
    return rows


def rhs_rows(tmp: Path, blocks: int = 7, per_block: int = 500) -> list[str]:
    """Table rows: compiled calls and CPU microseconds per right-hand side, in this process.

    The bicycle, the rolling sphere and the 8-link snake by lagrange and every reduced method that applies: the
    compiled calls of one evaluation counted by wrapping them, the CPU time the smallest over ``blocks`` blocks of
    ``per_block`` evaluations at states near the start (BLAS on one thread, as in a native run).
    """
    import numpy as np

    import bridge
    from bridge.derivation.dense import single_threaded_blas
    from bridge.derivation.numeric_model import NumericModel
    from bridge.errors import BridgeError

    snake = tmp / f"snake{SNAKE_LINKS}.toml"
    snake.write_text(snake_toml(SNAKE_LINKS), encoding="utf-8")
    systems = [("bicycle", ROOT / "examples" / "engineering" / "bicycle.toml"),
               ("rolling sphere", ROOT / "examples" / "rolling_sphere.toml"), (f"{SNAKE_LINKS}-link snake", snake)]
    rows = []
    for label, path in systems:
        system = bridge.load_system(path)
        for method in ("lagrange", "nielsen", "maggi", "appell", "chaplygin"):
            try:
                eom = bridge.derive(system, method)
            except BridgeError:
                continue
            num = NumericModel(eom)
            calls = [0]

            def counted(f, calls=calls):
                def call(args):
                    calls[0] += 1
                    return f(args)
                return call

            x0 = num.state(np.array([c.start for c in system.coordinates], dtype=float),
                           np.array([c.velocity for c in system.coordinates], dtype=float))
            states = [x0 + 1e-6 * np.random.default_rng(k).standard_normal(x0.size) for k in range(100)]
            originals = num.chain.functions
            num.chain.functions = [counted(f) for f in originals]
            num.rhs(0.0, states[0])
            num.chain.functions = originals
            best = float("inf")
            with single_threaded_blas():
                for _ in range(blocks):
                    t0 = time.process_time()
                    for k in range(per_block):
                        num.rhs(0.0, states[k % 100])
                    best = min(best, (time.process_time() - t0) / per_block)
            rows.append(f"| {label} | {method} | {calls[0]} | {best * 1e6:.1f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def split_rows(tmp: Path) -> list[str]:
    """Table rows: CPU seconds of deriving and compiling the equations of a new split (what a split change costs
    the first time; later changes to it and later runs of the same equations reuse them)."""
    import numpy as np

    import bridge
    from bridge.derivation.methods import METHODS
    from bridge.derivation.numeric_model import NumericModel
    from bridge.simulation.split_choice import choose_new_split

    snake = tmp / f"snake{SNAKE_LINKS}.toml"
    snake.write_text(snake_toml(SNAKE_LINKS), encoding="utf-8")
    rows = []
    for label, path in [("bicycle", ROOT / "examples" / "engineering" / "bicycle.toml"),
                        (f"{SNAKE_LINKS}-link snake", snake)]:
        system = bridge.load_system(path)
        for method in ("maggi", "appell"):
            eom = bridge.derive(system, method)
            num = eom.numeric
            x = num.state(np.array([c.start for c in system.coordinates], dtype=float),
                          np.array([c.velocity for c in system.coordinates], dtype=float))
            qd = num.kinematics(0.0, x[: system.n], x[system.n:])
            ref = np.concatenate([[0.0], x[: system.n], qd, num.params, num.inputs])
            chosen = METHODS.get_method(method)
            ind = choose_new_split(system, eom.constraint_jacobian.tolist(), ref,
                                   lambda c, m=chosen, s=system: m.accepts_split(s, c),
                                   tuple(int(i) for i in num.independent_index))
            names = tuple(system.coordinates[i].name for i in ind)
            t0 = time.process_time()
            other = chosen.derive(system, names, reference=ref)
            t1 = time.process_time()
            NumericModel(other)
            t2 = time.process_time()
            rows.append(f"| {label} | {method} | {', '.join(eom.independent)} -> {', '.join(names)} | "
                        f"{t1 - t0:.2f} | {t2 - t1:.2f} |")
            print(rows[-1], file=sys.stderr, flush=True)
    return rows


def snake3_changes() -> str:
    """The split changes of the 3-link snake (maggi, from y, th2 independent, 10 s) and the run's CPU seconds."""
    import warnings

    import bridge

    system = bridge.load_system(ROOT / "tests" / "models" / "snake3.toml")
    eom = bridge.derive(system, "maggi", independent=["y", "th2"])
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = bridge.simulate(eom, 10.0)
    cpu = time.process_time() - t0
    times = ", ".join(f"{t:.3f}" for t, _ in result.repartitions)
    return (f"The 3-link snake (`tests/models/snake3.toml`, maggi, y and th2 independent at the start, 10 s) changes "
            f"split {len(result.repartitions)} times (at t = {times} s); the run (derivations of the new splits "
            f"included) takes {cpu:.2f} s CPU.")


def cell(value: tuple[float | None, str], reference: tuple[float | None, str]) -> str:
    cpu, note = value
    if cpu is None:
        return note
    ref = reference[0]
    return f"{cpu:.2f} ({cpu / ref:.2f}x)" if ref else f"{cpu:.2f}"


def table(rows: list[tuple], load: int, fmus: bool) -> str:
    """The table of one condition."""
    heads = ["nhbridge simulate CPU s (/ lagrange)"] + (["FMU ME CPU s", "FMU CS CPU s"] if fmus else [])
    out = ["| system | method | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(heads)]
    lagrange = {row[0].key: row[2] for row in rows if row[1] == "lagrange"}
    for case, method, by_load, fmu in rows:
        line = [cell(by_load[load], lagrange.get(case.key, {}).get(load, (None, "")))]
        line += list(fmu[load]) if fmus else []
        out.append(f"| {case.label} ({case.stop:g} s) | {method} | " + " | ".join(line) + " |")
    return "\n".join(out)


def condition(load: int) -> str:
    return "Idle" if load == 0 else f"Busy: {load} CPU-bound processes beside"


def load_note(load: int) -> str:
    """The range of the machine's load average seen in a condition (other users' work included)."""
    seen = LOAD_AVERAGES.get(load, [])
    return (f"1-minute load average at the start of each system: {min(seen):.1f} to {max(seen):.1f}.\n\n"
            if seen else "")


def worst_ratio(rows: list[tuple], loads: list[int]) -> str:
    """The largest CPU ratio of a method to lagrange's per condition."""
    lagrange = {row[0].key: row[2] for row in rows if row[1] == "lagrange"}
    parts = []
    for load in loads:
        ratios = [(by_load[load][0] / lagrange[case.key][load][0], case.label, method)
                  for case, method, by_load, _ in rows
                  if method != "lagrange" and case.key in lagrange and by_load[load][0] and lagrange[case.key][load][0]]
        if ratios:
            r, label, method = max(ratios)
            parts.append(f"{condition(load).lower()}: {r:.2f}x ({label}, {method})")
    return "; ".join(parts)


RHS_TEXT = """
## One right-hand side

The compiled calls of one evaluation of the right-hand side (counted by wrapping them) and its CPU time in
microseconds (the smallest mean over 7 blocks of 500 evaluations near the start state, in the script's process,
BLAS on one thread as in a native run). The reduced methods solve the split ``A_dep [B, beta] = -[A_ind, a0]``
(call 1), then its time derivative, whose right-hand side is quadratic in ``B`` and ``beta``, together with the mass
matrix, the forcing (affine in the derivative's unknowns) and the kinematics (call 2): two calls is the least the
chain allows (`bridge/derivation/stage_chain.py`).

| system | method | compiled calls | CPU us per right-hand side |
|---|---|---|---|
"""

SPLIT_TEXT = """
## A split change

CPU seconds of what a native run does the first time it changes to a split: derive the method for the new split
(the healthiest at the start state, as `bridge/simulation/split_choice.py` chooses) and compile it. A run derives
each split once, and later runs of the same equations object (a sweep, repeated `bridge.simulate` calls) reuse
every split derived before.

| system | method | split (independent) | derive CPU s | compile CPU s |
|---|---|---|---|---|
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=None, help="write the Markdown page here")
    parser.add_argument("--only", default=None, help="comma-separated keys: wheel, sleigh, turntable, bicycle, snake")
    parser.add_argument("--methods", default=",".join(METHODS), help="comma-separated methods (lagrange is always "
                        "run: the ratios refer to it)")
    parser.add_argument("--loads", default="0,2", help="comma-separated numbers of busy processes to run beside")
    parser.add_argument("--no-fmu", action="store_true", help="leave out the FMU columns")
    parser.add_argument("--timeout", type=float, default=600.0, help="time limit of one nhbridge simulate run")
    args = parser.parse_args(argv)
    methods = tuple(dict.fromkeys(["lagrange", *args.methods.split(",")]))
    loads = [int(x) for x in args.loads.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        selected = [c for c in cases(Path(tmp)) if not args.only or c.key in args.only.split(",")]
        rows = measure(selected, methods, loads, not args.no_fmu, args.timeout, Path(tmp))
        per_rhs = rhs_rows(Path(tmp)) if not args.only else []
        per_split = split_rows(Path(tmp)) if not args.only else []
        changes = snake3_changes() if not args.only else ""
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"# Native run time of the methods\n\nGenerated by `python benchmarks/reduced_runtime.py` on {date}.\n\n"
            + "```\n" + machine() + "\n```\n\n"
            "CPU time (user + system, all threads) of `nhbridge simulate FILE --method M --stop-time T` in a child "
            "process: import, derivation, compilation, integration (DOP853, the file's tolerances) and the output "
            "file; in brackets its ratio to lagrange's in the same condition. *Idle*: nothing started beside (on a "
            "shared machine other users' work still runs: see the load average); "
            "*busy*: CPU-bound processes (busy loops) started by the script run beside every measurement. The FMU "
            "columns: the FMI 2 FMU of the same method run by fmpy, Model Exchange (CVode) and Co-Simulation (the "
            "FMU's integrator, communication step 0.01 s), at the file's tolerance: CPU time of the run alone "
            "(building the FMU excluded) in the same condition.\n\n"
            + "\n\n".join(f"## {condition(load)}\n\n" + load_note(load) + table(rows, load, not args.no_fmu)
                            for load in loads)
            + "\n\nLargest ratio to lagrange: " + worst_ratio(rows, loads) + ".\n"
            + (RHS_TEXT + "\n".join(per_rhs) + "\n" if per_rhs else "")
            + (SPLIT_TEXT + "\n".join(per_split) + "\n\n" + changes + "\n" if per_split else ""))
    print(text)
    if args.output:
        from bridge.atomic import write_text

        write_text(Path(args.output), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
