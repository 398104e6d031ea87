"""How the native FMU scales with the wheeled snake's size: build time, right-hand-side cost, run time.

Writes ``docs/benchmarks/fmu_scaling.md`` (machine, date and every figure measured in the same run)::

    python benchmarks/fmu_scaling.py [--snake 4 8 12 16 20] [--no-bicycle] [--large 30 50] [--pydy 8 50]
                                     [--stop-time 5]

* **Build:** ``build_fmu`` (derivation excluded, as ``nhbridge fmu`` reports it), wall and CPU time (the process
  and the compilers), with an empty object cache (every C file compiled) and again with the same cache (an
  unchanged rebuild: the objects come from the cache); the code-generation share is timed on its own.
* **Right-hand side:** ``nhb_rhs`` ns per evaluation, compiled with the build's flags and called in a loop by a
  small C driver, against the operations of one evaluation after CSE
  (:func:`bridge.derivation.stats.operation_count`): ns per operation; and the share of its dense LU solve
  (``nhb_lu_solve`` of the runtime, timed alone on the evaluation's own matrix).
* **Run:** a ``--stop-time`` run of the same system natively (``bridge.simulate``, scipy DOP853 on the compiled
  symengine right-hand side), as Model Exchange (fmpy, CVode) and as Co-Simulation (the FMU's own solver),
  same tolerance, CPU time; each split into where it goes (:func:`run_times`: fmpy's fixed cost, fmpy's per
  step, the FMU's own functions; the native run's compiled right-hand side); ratios native / FMU, for the
  whole run and for the FMU's own share.
* **Large systems (``--large``):** each N derived by every method, the ``--build-methods`` built (cold and rebuild),
  run as Co-Simulation and their right-hand side timed, in a child process, with its peak resident memory.
* **PyDy:** the same snake (``benchmarks/snake.py``'s sympy model) through PyDy's ``generate_ode_function``
  (cython where it builds, else lambdify, with the reason), right-hand side µs per evaluation, for the sizes
  of ``--pydy`` (default: those of ``--snake``), in the same run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from timing import cpu_model, usable_cores  # noqa: E402

DRIVER = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <time.h>
extern const int NHB_NX; extern const double NHB_X0[], NHB_P0[], NHB_IN0[];
int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx,
            double *lam, char *msg, size_t msg_len);
int nhb_lu_solve(int n, double *A, double *b);
/* the model files are compiled with -Dnhb_lu_solve=bench_lu_solve: the first system solved is kept */
static double saved_A[65536], saved_b[256];
static int saved_n = -1;
int bench_lu_solve(int n, double *A, double *b)
{
    if (saved_n < 0 && n <= 256) {
        saved_n = n;
        memcpy(saved_A, A, sizeof(double) * n * n);
        memcpy(saved_b, b, sizeof(double) * n);
    }
    return nhb_lu_solve(n, A, b);
}
static double cpu_ns(void)
{
    struct timespec a;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    return a.tv_sec * 1e9 + a.tv_nsec;
}
int main(int argc, char **argv)
{
    static double x[8192], dx[8192], lam[8192], A[65536], b[256];
    int modes[256] = {0}, n = argc > 1 ? atoi(argv[1]) : 2000;
    char msg[256];
    double best = 1e30, best_lu = 1e30, best_copy = 1e30;
    for (int i = 0; i < NHB_NX; ++i) x[i] = NHB_X0[i];
    for (int r = 0; r < 5; ++r) {
        double a = cpu_ns();
        for (int k = 0; k < n; ++k) {
            x[0] += 1e-12;
            nhb_rhs(0.0, x, NHB_P0, NHB_IN0, modes, dx, lam, msg, sizeof msg);
        }
        double ns = (cpu_ns() - a) / n;
        if (ns < best) best = ns;
    }
    for (int r = 0; r < 5 && saved_n > 0; ++r) { /* the solve alone, less the copies that feed it */
        const size_t bytes = sizeof(double) * saved_n * saved_n;
        double a = cpu_ns(), c, ns;
        for (int k = 0; k < n; ++k) {
            memcpy(A, saved_A, bytes);
            memcpy(b, saved_b, sizeof(double) * saved_n);
            __asm__ volatile("" : : "r"(A), "r"(b) : "memory");
        }
        c = cpu_ns();
        for (int k = 0; k < n; ++k) {
            memcpy(A, saved_A, bytes);
            memcpy(b, saved_b, sizeof(double) * saved_n);
            nhb_lu_solve(saved_n, A, b);
        }
        ns = (cpu_ns() - c) / n;
        if (ns < best_lu) best_lu = ns;
        if ((c - a) / n < best_copy) best_copy = (c - a) / n;
    }
    printf("%.1f %.1f %d %.17g\n", best, saved_n > 0 ? best_lu - best_copy : 0.0, saved_n, dx[NHB_NX - 1]);
    return 0;
}
"""


def cpu_seconds() -> float:
    """CPU time of this process and its waited-for children (the compilers)."""
    s, c = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


def machine_line() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {cpu_model()}, {os.cpu_count()} logical cores ({usable_cores()} usable), "
            f"load average {load:.1f} at the start; {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC")


def derive(label: str, method: str = "lagrange"):
    from bicycle import bicycle_toml
    from snake import snake_toml

    import bridge

    text = bicycle_toml() if label == "bicycle" else snake_toml(int(label))
    return bridge.derive(bridge.parse_system(text, source=label), method)


def build_times(eom, tmp: Path) -> dict:
    """Code generation alone, then the build with an empty object cache and the unchanged rebuild."""
    from bridge.fmu.build import build_fmu
    from bridge.fmu.model_c import model_c
    from bridge.fmu.plan import build_plan
    from bridge.tools.objects import CACHE_ENV, object_cache

    c0 = time.process_time()
    model_c(build_plan(eom, 2))
    codegen = time.process_time() - c0
    os.environ[CACHE_ENV] = str(tmp / "objects")
    out = {"codegen_cpu": codegen}
    for key in ("cold", "warm"):
        w, c = time.perf_counter(), cpu_seconds()
        fmu = build_fmu(eom, tmp / f"{key}.fmu", 2)
        out[f"{key}_wall"], out[f"{key}_cpu"] = time.perf_counter() - w, cpu_seconds() - c
    out["hits"] = object_cache().stats["hit"]
    out["fmu"] = fmu
    return out


def rhs_cost(fmu: Path, tmp: Path) -> dict:
    """``nhb_rhs`` of the FMU's sources with the build's flags, called in a loop by a small C driver (best of 5
    loops, CPU time): ns per evaluation, and ns of its dense LU solve alone (the first system the evaluation
    solved, timed on copies) with the system's size."""
    import zipfile

    from bridge.fmu.build import unit_level
    from bridge.tools.gcc import compiler

    with zipfile.ZipFile(fmu) as zf:
        for name in zf.namelist():
            if name.startswith("sources/"):
                zf.extract(name, tmp)
    cc = compiler().split()
    objs = []
    model_files = sorted(f.name for f in (tmp / "sources").glob("model*.c"))  # model.c and its parts
    for name in (*model_files, "nhb_linalg.c"):
        path = tmp / "sources" / name
        obj = tmp / f"{name}.o"
        hook = ["-Dnhb_lu_solve=bench_lu_solve"] if name.startswith("model") else []
        subprocess.run([*cc, "-std=c99", "-O2", "-ffp-contract=off", *unit_level(path, compiler()), *hook, "-c",
                        str(path), "-o", str(obj), f"-I{tmp / 'sources'}"], check=True)
        objs.append(str(obj))
    (tmp / "driver.c").write_text(DRIVER)
    exe = tmp / "driver"
    subprocess.run([*cc, "-O2", "-o", str(exe), str(tmp / "driver.c"), *objs, "-lm"], check=True)
    ns, lu_ns, lu_n, _ = subprocess.run([str(exe), "2000"], capture_output=True, text=True, check=True).stdout.split()
    return {"ns": float(ns), "lu_ns": float(lu_ns), "lu_n": int(lu_n)}


def best_cpu(fn, repeat: int = 3) -> float:
    """The least CPU seconds of this process over ``repeat`` calls of ``fn`` (a loaded machine slows a run, never
    speeds it up)."""
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


class FmiCallTimer:
    """CPU time spent inside the FMU's functions during fmpy runs, per FMI function.

    fmpy sends every FMI call through ``_FMU._call``; inside this context that method times the C call itself
    (``time.thread_time_ns`` around it). The cost of the ctypes call and of the two clock readings is measured
    on a function that does nothing (``fmi2GetTypesPlatform``) and subtracted per call, so that
    :meth:`inside` is the time of the FMU's own code and the rest of a run is fmpy's.
    """

    def __init__(self):
        self.ns: dict[str, int] = {}
        self.calls: dict[str, int] = {}
        self.per_call_ns = 0.0

    def __enter__(self):
        from fmpy import fmi1

        self._fmi1 = fmi1
        self._saved = fmi1._FMU._call
        clock, ns, calls = time.thread_time_ns, self.ns, self.calls

        def _call(fmu, fname, *args):
            f = fmu._functions[fname]
            t0 = clock()
            res = f(*args)
            ns[fname] = ns.get(fname, 0) + clock() - t0
            calls[fname] = calls.get(fname, 0) + 1
            if f.restype == fmi1.c_int and res > fmi1.fmi1Warning:
                raise fmi1.FMICallException(function=fname, status=res)
            return res

        fmi1._FMU._call = _call
        return self

    def __exit__(self, *exc):
        self._fmi1._FMU._call = self._saved

    def calibrate(self, fmu: Path) -> None:
        """The per-call cost of ctypes and the clock, on ``fmi2GetTypesPlatform`` of ``fmu`` (least of 5 x 2000)."""
        import shutil

        from fmpy import extract, instantiate_fmu, read_model_description

        unzipped = extract(str(fmu))
        try:
            slave = instantiate_fmu(unzipped, read_model_description(unzipped), "CoSimulation")
            best = float("inf")
            for _ in range(5):
                self.reset()
                for _ in range(2000):
                    slave.getTypesPlatform()
                best = min(best, self.ns.get("fmi2GetTypesPlatform", 0) / 2000)
            slave.freeInstance()
        finally:
            shutil.rmtree(unzipped, ignore_errors=True)
        self.per_call_ns = best
        self.reset()

    def reset(self) -> None:
        self.ns.clear()
        self.calls.clear()

    def inside(self) -> float:
        """Seconds inside the FMU's functions since the last reset, less the per-call cost."""
        return max(0.0, (sum(self.ns.values()) - self.per_call_ns * sum(self.calls.values())) * 1e-9)


def run_times(eom, fmu: Path, stop: float, rtol: float = 1e-8) -> dict:
    """CPU seconds of a ``stop`` s run natively, as Model Exchange (fmpy, CVode) and as Co-Simulation (fmpy
    calling doStep every 0.01 s), each the least of 3 runs, and where they go.

    * native: the whole ``bridge.simulate``, its right-hand-side evaluations (``nfev``) and the compiled
      right-hand side's share (``nfev`` x the CPU time of one ``NumericModel.rhs`` call at the start state);
    * ME and CS: the whole ``fmpy.simulate_fmu``; fmpy's fixed cost (the same call for one output interval:
      unzip, XML, load, instantiate, initialize, clean up); the time inside the FMU's functions
      (:class:`FmiCallTimer`); the rest is fmpy's per step (its Python loop, CVode's Python callbacks, the
      ctypes calls, recording the results).
    """
    import fmpy

    import bridge

    eom.numeric  # noqa: B018 -- compiled outside the timed run, as the FMU is
    interval = stop / 500
    out: dict = {}
    result = {}

    def native():
        result["r"] = bridge.simulate(eom, stop, rtol=rtol, atol=rtol * 1e-2, interval=interval)

    out["native"] = best_cpu(native)
    out["native_nfev"] = int(result["r"].nfev)
    out["native_rhs_s"] = out["native_nfev"] * native_rhs_seconds(eom, result["r"])
    runs = {
        "me": lambda t_end: fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode",
                                              relative_tolerance=rtol, stop_time=t_end, output_interval=interval),
        "cs": lambda t_end: fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", relative_tolerance=rtol,
                                              stop_time=t_end, output_interval=0.01),
    }
    timer = FmiCallTimer()
    with timer:
        timer.calibrate(fmu)
        for key, run in runs.items():
            best = float("inf")
            for _ in range(3):
                timer.reset()
                run(stop)
                best = min(best, timer.inside())
            out[f"{key}_inside"] = best
            out[f"{key}_evals"] = timer.calls.get("fmi2GetDerivatives", 0)
    out["per_call_ns"] = timer.per_call_ns
    for key, run in runs.items():
        first = interval if key == "me" else 0.01  # one output interval
        out[key] = best_cpu(lambda run=run: run(stop))
        out[f"{key}_fixed"] = best_cpu(lambda run=run, first=first: run(first))
    return out


def native_rhs_seconds(eom, result) -> float:
    """CPU seconds of one call of the native right-hand side (``NumericModel.rhs``, single-threaded BLAS as in
    ``bridge.simulate``) at the run's start state."""
    import numpy as np

    from bridge.derivation.dense import single_threaded_blas

    num = eom.numeric
    x = num.state(np.asarray(result.q)[0], np.asarray(result.qd)[0])
    calls = 0
    with single_threaded_blas():
        c0 = time.process_time()
        while time.process_time() - c0 < 0.2:
            num.rhs(0.0, x)
            calls += 1
        return (time.process_time() - c0) / calls


def pydy_rhs(n: int) -> str:
    """µs per right-hand-side evaluation of the snake through PyDy's generate_ode_function, or why not."""
    import numpy as np
    from snake import snake_sympy

    try:
        from pydy.codegen.ode_function_generators import generate_ode_function
    except ImportError as exc:
        return f"PyDy not importable ({exc})"
    from sympy.physics.mechanics import dynamicsymbols

    eq = snake_sympy(n)
    q = eq.model.q
    # mass_matrix_full solves for [q', q'', lambda]: the multipliers ride along as extra "speeds" (they appear in
    # neither matrix), so that PyDy gets a square system of the same size and one evaluation costs the same solve.
    # PyDy's speeds are functions of time: q' becomes u_i (its cython printer has no Derivative)
    u = list(dynamicsymbols(f"u1:{len(q) + 1}"))
    to_speeds = {qi.diff(): ui for qi, ui in zip(q, u, strict=True)}
    mass = eq.mass_matrix_full.xreplace(to_speeds)
    forcing = eq.forcing_full.xreplace(to_speeds)
    qd = u + list(dynamicsymbols(f"lam1:{mass.shape[0] - 2 * len(q) + 1}"))
    constants = list(eq.model.parameters.values())
    failed = []
    for generator in ("cython", "lambdify"):
        try:
            rhs = generate_ode_function(forcing, q, qd, constants, mass_matrix=mass, generator=generator)
            x = np.full(mass.shape[0], 0.1)
            p = np.ones(len(constants))
            rhs(x, 0.0, p)
            t0 = time.process_time()
            k = 0
            while time.process_time() - t0 < 0.5:
                rhs(x, 0.0, p)
                k += 1
            why = f"; {'; '.join(failed)}" if failed else ""
            return f"{(time.process_time() - t0) / k * 1e6:.1f} µs per evaluation ({generator}{why})"
        except Exception as exc:
            failed.append(f"{generator} failed: {type(exc).__name__}: "
                          f"{str(exc).splitlines()[0][:160] if str(exc) else ''}")
    return f"PyDy could not generate it ({'; '.join(failed)})"


def one_large(n: int, method: str, stop: float, build: bool = True) -> dict:
    """Child process: derive the N-link snake with ``method``; with ``build`` build it twice and run it (CS).

    The first build has an empty object cache, the second is the unchanged rebuild; peak resident memory of the
    process and its compilers.
    """
    import fmpy

    from bridge.fmu.build import build_fmu
    from bridge.tools.objects import CACHE_ENV

    out: dict = {"n": n, "method": method}
    t0 = time.perf_counter()
    try:
        eom = derive(str(n), method)
    except Exception as exc:
        out["error"] = f"{type(exc).__name__}: {str(exc)[:120]}"
        return out
    out["derive"] = time.perf_counter() - t0
    if build:
        with tempfile.TemporaryDirectory() as tmp:
            os.environ[CACHE_ENV] = str(Path(tmp) / "objects")
            for key in ("build", "rebuild"):
                t0 = time.perf_counter()
                fmu = build_fmu(eom, Path(tmp) / f"{key}.fmu", 2)
                out[key] = time.perf_counter() - t0
            t0 = time.perf_counter()
            fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=stop, output_interval=0.01)
            out["run_cs"] = time.perf_counter() - t0
            (Path(tmp) / "rhs").mkdir()
            out.update(rhs_cost(fmu, Path(tmp) / "rhs"))
    out["peak_mb"] = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                         resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snake", type=int, nargs="*", default=[4, 8, 12, 16, 20])
    ap.add_argument("--no-bicycle", action="store_true")
    ap.add_argument("--large", type=int, nargs="*", default=[30, 50])
    ap.add_argument("--methods", default="lagrange,maggi,nielsen,appell,chaplygin,kane")
    ap.add_argument("--build-methods", default="lagrange,maggi",
                    help="the methods of --large that are also built and run (the others are derived only)")
    ap.add_argument("--stop-time", type=float, default=5.0)
    ap.add_argument("--no-pydy", action="store_true")
    ap.add_argument("--pydy", type=int, nargs="*", default=None,
                    help="the snake sizes of the PyDy comparison (default: those of --snake)")
    ap.add_argument("--output", type=Path, default=ROOT / "docs" / "benchmarks" / "fmu_scaling.md")
    ap.add_argument("--one", nargs=3, metavar=("N", "METHOD", "BUILD"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.one:
        print(json.dumps(one_large(int(args.one[0]), args.one[1], args.stop_time, args.one[2] == "1")))
        return 0
    from bridge.derivation.stats import eom_exprs, operation_count

    lines = ["# FMU scaling: build, right-hand side and run time against the system's size", "",
             f"Machine: {machine_line()}.", "",
             f"`python benchmarks/fmu_scaling.py {' '.join(argv if argv is not None else sys.argv[1:])}`; every figure "
             "from this one run. Build: derivation excluded; *cold*: empty object cache, *rebuild*: the same "
             "system again (objects from the cache). CPU includes the compilers.", "",
             "| system | states | derive s | codegen CPU s | build wall s (cold) | build CPU s (cold) "
             "| rebuild wall s | rebuild CPU s | rhs ns/eval | of which LU ns (size) | ops after CSE | ns/op |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    run_lines = ["", (f"**Run time** of a {args.stop_time:g} s run (rtol 1e-8), CPU seconds of this process, "
                      "each the least of 3 runs. *Native*: `bridge.simulate` (scipy DOP853), and the share of "
                      "its compiled right-hand side (evaluations x CPU of one `NumericModel.rhs` call). *ME*: "
                      "`fmpy.simulate_fmu` with CVode; *CS*: `fmpy.simulate_fmu` calling doStep every 0.01 s "
                      "(the FMU's own DOP853/DOPRI5). Each FMU run split into fmpy's fixed cost (the same call "
                      "for one output interval: unzip, XML, load, instantiate, initialize, clean up), the time "
                      "inside the FMU's functions (every FMI call timed, less the measured cost of a ctypes "
                      "call) and the rest, fmpy's per step (its Python loop, CVode's Python callbacks, the "
                      "ctypes calls, recording). *native/in FMU*: the ratio of our code alone, as a master "
                      "without per-call or fixed cost would see it."), "",
                 "| system | native s | native rhs evals | native compiled rhs s | ME s | ME fixed s | ME per step s "
                 "| ME in FMU s | ME rhs evals | CS s | CS fixed s | CS per step s | CS in FMU s | native/ME "
                 "| native/CS | native/(ME in FMU) | native/(CS in FMU) |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]

    def flush() -> None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text("\n".join(lines + run_lines) + "\n", encoding="utf-8")

    labels = [str(n) for n in args.snake] + ([] if args.no_bicycle else ["bicycle"])
    for label in labels:
        t0 = time.perf_counter()
        eom = derive(label)
        t_derive = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            b = build_times(eom, Path(tmp))
            rhs = rhs_cost(b["fmu"], Path(tmp))
            ops = operation_count(eom_exprs(eom))
            r = run_times(eom, b["fmu"], args.stop_time)
        name = "bicycle" if label == "bicycle" else f"snake N={label}"
        row = (f"| {name} | {eom.system.n + len(eom.u)} | {t_derive:.1f} | {b['codegen_cpu']:.2f} | "
               f"{b['cold_wall']:.2f} | {b['cold_cpu']:.2f} | {b['warm_wall']:.2f} | {b['warm_cpu']:.2f} | "
               f"{rhs['ns']:.0f} | {rhs['lu_ns']:.0f} ({rhs['lu_n']}) | {ops} | {rhs['ns'] / ops:.2f} |")
        run_row = (f"| {name} | {r['native']:.3f} | {r['native_nfev']} | {r['native_rhs_s']:.3f} | {r['me']:.3f} | "
                   f"{r['me_fixed']:.3f} | {r['me'] - r['me_fixed'] - r['me_inside']:.3f} | {r['me_inside']:.3f} | "
                   f"{r['me_evals']} | {r['cs']:.3f} | {r['cs_fixed']:.3f} | "
                   f"{r['cs'] - r['cs_fixed'] - r['cs_inside']:.3f} | {r['cs_inside']:.3f} | "
                   f"{r['native'] / r['me']:.1f}x | {r['native'] / r['cs']:.1f}x | "
                   f"{r['native'] / r['me_inside']:.1f}x | {r['native'] / r['cs_inside']:.1f}x |")
        print(row, run_row, sep="\n", flush=True)
        lines.append(row)
        run_lines.append(run_row)
        flush()
    lines += run_lines
    run_lines = []
    pydy_sizes = [] if args.no_pydy else args.snake if args.pydy is None else args.pydy
    if pydy_sizes:
        lines += ["", "PyDy (`generate_ode_function` on the same snake's sympy LagrangesMethod equations, "
                  "`mass_matrix_full`, `forcing_full`):", ""]
        for n in pydy_sizes:
            t0 = time.process_time()
            text = f"- snake N={n}: {pydy_rhs(n)}; forming and generating {time.process_time() - t0:.0f} s CPU"
            print(text, flush=True)
            lines.append(text)
            flush()
    if args.large:
        lines += ["", f"Large snakes, every method derived; {', '.join(args.build_methods.split(','))} also built "
                  f"(empty object cache, then the unchanged rebuild) and run for {args.stop_time:g} s as "
                  "Co-Simulation; one child process each (peak resident memory of the child and its compilers).",
                  "", "| N | method | derive s | build s (cold) | rebuild s | CS run s | rhs µs/eval | of which LU µs "
                  "(size) | peak MB |",
                  "|---|---|---|---|---|---|---|---|---|"]
        built = set(args.build_methods.split(","))
        for n in args.large:
            for method in args.methods.split(","):
                proc = subprocess.run([sys.executable, __file__, "--one", str(n), method, str(int(method in built)),
                                       "--stop-time", str(args.stop_time)], capture_output=True, text=True)
                try:
                    r = json.loads(proc.stdout.strip().splitlines()[-1])
                except (IndexError, json.JSONDecodeError):
                    r = {"error": (proc.stderr.strip().splitlines() or ["no output"])[-1][:120]}
                if "error" in r:
                    row = f"| {n} | {method} | {r['error']} | | | | | | |"
                elif "build" not in r:
                    row = f"| {n} | {method} | {r['derive']:.1f} | | | | | | {r['peak_mb']:.0f} |"
                else:
                    row = (f"| {n} | {method} | {r['derive']:.1f} | {r['build']:.1f} | {r['rebuild']:.1f} | "
                           f"{r['run_cs']:.2f} | {r['ns'] / 1e3:.1f} | {r['lu_ns'] / 1e3:.1f} ({r['lu_n']}) | "
                           f"{r['peak_mb']:.0f} |")
                print(row, flush=True)
                lines.append(row)
                flush()
    flush()
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
