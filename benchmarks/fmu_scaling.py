"""How the native FMU scales with the wheeled snake's size: build time, right-hand-side cost, run time.

Writes ``docs/benchmarks/fmu_scaling.md`` (machine, date and every figure measured in the same run)::

    python benchmarks/fmu_scaling.py [--snake 4 8 12 16 20] [--bicycle] [--large 30 50] [--stop-time 5]

* **Build:** ``build_fmu`` (derivation excluded, as ``nhbridge fmu`` reports it), wall and CPU time (the process
  and the compilers), with an empty object cache (every C file compiled) and again with the same cache (an
  unchanged rebuild: the objects come from the cache); the code-generation share is timed on its own.
* **Right-hand side:** ``nhb_rhs`` ns per evaluation, compiled with the build's flags and called in a loop by a
  small C driver, against the operations of one evaluation after CSE
  (:func:`bridge.derivation.stats.operation_count`): ns per operation.
* **Run:** a ``--stop-time`` run of the same system natively (``bridge.simulate``, scipy DOP853 on the compiled
  symengine right-hand side), as Model Exchange (fmpy, CVode) and as Co-Simulation (the FMU's own solver),
  same tolerance; ratios native / FMU.
* **Large systems (``--large``):** each N derived by every method, the ``--build-methods`` built (cold and rebuild)
  and run as Co-Simulation in a child
  process, with its peak resident memory.
* **PyDy:** the same snake (``benchmarks/snake.py``'s sympy model) through PyDy's ``generate_ode_function``
  (cython where it builds, else lambdify), right-hand side µs per evaluation, in the same run.
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
#include <stddef.h>
#include <time.h>
extern const int NHB_NX; extern const double NHB_X0[], NHB_P0[], NHB_IN0[];
int nhb_rhs(double t, const double *x, const double *p, const double *in, const int *modes, double *dx,
            double *lam, char *msg, size_t msg_len);
int main(int argc, char **argv)
{
    static double x[8192], dx[8192], lam[8192];
    int modes[256] = {0}, n = argc > 1 ? atoi(argv[1]) : 2000;
    char msg[256];
    double best = 1e30;
    for (int i = 0; i < NHB_NX; ++i) x[i] = NHB_X0[i];
    for (int r = 0; r < 5; ++r) {
        struct timespec a, b;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
        for (int k = 0; k < n; ++k) {
            x[0] += 1e-12;
            nhb_rhs(0.0, x, NHB_P0, NHB_IN0, modes, dx, lam, msg, sizeof msg);
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
        double ns = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / n;
        if (ns < best) best = ns;
    }
    printf("%.1f %.17g\n", best, dx[NHB_NX - 1]);
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


def rhs_cost(fmu: Path, tmp: Path) -> tuple[float, str]:
    """ns per nhb_rhs evaluation (best of 5 loops, CPU time) of the FMU's sources with the build's flags."""
    import zipfile

    from bridge.fmu.build import unit_level
    from bridge.tools.gcc import compiler

    src = tmp / "src"
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
        subprocess.run([*cc, "-std=c99", "-O2", "-ffp-contract=off", *unit_level(path, compiler()), "-c", str(path),
                        "-o", str(obj), f"-I{tmp / 'sources'}"], check=True)
        objs.append(str(obj))
    (tmp / "driver.c").write_text(DRIVER.replace("#include <time.h>", "#include <time.h>\n#include <stdlib.h>"))
    exe = tmp / "driver"
    subprocess.run([*cc, "-O2", "-o", str(exe), str(tmp / "driver.c"), *objs, "-lm"], check=True)
    del src
    ns, value = subprocess.run([str(exe), "2000"], capture_output=True, text=True, check=True).stdout.split()
    return float(ns), value


def run_times(eom, fmu: Path, stop: float, rtol: float = 1e-8) -> tuple[float, float, float]:
    """Seconds of a ``stop`` s run: native, ME (CVode), CS."""
    import fmpy

    import bridge

    eom.numeric  # noqa: B018 -- compiled outside the timed run, as the FMU is
    interval = stop / 500

    def timed(fn) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    native = timed(lambda: bridge.simulate(eom, stop, rtol=rtol, atol=rtol * 1e-2, interval=interval))
    me = timed(lambda: fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", solver="CVode", relative_tolerance=rtol,
                                         stop_time=stop, output_interval=interval))
    cs = timed(lambda: fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", relative_tolerance=rtol, stop_time=stop,
                                         output_interval=0.01))
    return native, me, cs


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
    # neither matrix), so that PyDy gets a square system of the same size and one evaluation costs the same solve
    qd = [s.diff() for s in q] + list(dynamicsymbols(f"lam1:{eq.mass_matrix_full.shape[0] - 2 * len(q) + 1}"))
    constants = list(eq.model.parameters.values())
    for generator in ("cython", "lambdify"):
        try:
            rhs = generate_ode_function(eq.forcing_full, q, qd, constants, mass_matrix=eq.mass_matrix_full,
                                        generator=generator)
            x = np.full(eq.mass_matrix_full.shape[0], 0.1)
            p = np.ones(len(constants))
            rhs(x, 0.0, p)
            t0 = time.process_time()
            k = 0
            while time.process_time() - t0 < 0.5:
                rhs(x, 0.0, p)
                k += 1
            return f"{(time.process_time() - t0) / k * 1e6:.1f} µs per evaluation ({generator})"
        except Exception as exc:
            last = f"{generator}: {type(exc).__name__}: {str(exc).splitlines()[0][:160] if str(exc) else ''}"
    return f"PyDy could not generate it ({last})"


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
             "| rebuild wall s | rebuild CPU s | rhs ns/eval | ops after CSE | ns/op | native s | ME s | CS s "
             "| native/ME | native/CS |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    def flush() -> None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")

    labels = [str(n) for n in args.snake] + ([] if args.no_bicycle else ["bicycle"])
    for label in labels:
        t0 = time.perf_counter()
        eom = derive(label)
        t_derive = time.perf_counter() - t0
        with tempfile.TemporaryDirectory() as tmp:
            b = build_times(eom, Path(tmp))
            ns, _ = rhs_cost(b["fmu"], Path(tmp))
            ops = operation_count(eom_exprs(eom))
            native, me, cs = run_times(eom, b["fmu"], args.stop_time)
        name = "bicycle" if label == "bicycle" else f"snake N={label}"
        row = (f"| {name} | {eom.system.n + len(eom.u)} | {t_derive:.1f} | {b['codegen_cpu']:.2f} | "
               f"{b['cold_wall']:.2f} | {b['cold_cpu']:.2f} | {b['warm_wall']:.2f} | {b['warm_cpu']:.2f} | "
               f"{ns:.0f} | {ops} | "
               f"{ns / ops:.2f} | {native:.3f} | {me:.3f} | {cs:.3f} | {native / me:.1f}x | {native / cs:.1f}x |")
        print(row, flush=True)
        lines.append(row)
        flush()
    if not args.no_pydy:
        lines += ["", "PyDy (`generate_ode_function` on the same snake's sympy LagrangesMethod equations, "
                  "`mass_matrix_full`, `forcing_full`):", ""]
        for n in args.snake:
            text = f"- snake N={n}: {pydy_rhs(n)}"
            print(text, flush=True)
            lines.append(text)
            flush()
    if args.large:
        lines += ["", f"Large snakes, every method derived; {', '.join(args.build_methods.split(','))} also built "
                  f"(empty object cache, then the unchanged rebuild) and run for {args.stop_time:g} s as "
                  "Co-Simulation; one child process each (peak resident memory of the child and its compilers).",
                  "", "| N | method | derive s | build s (cold) | rebuild s | CS run s | peak MB |",
                  "|---|---|---|---|---|---|---|"]
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
                    row = f"| {n} | {method} | {r['error']} | | | | |"
                elif "build" not in r:
                    row = f"| {n} | {method} | {r['derive']:.1f} | | | | {r['peak_mb']:.0f} |"
                else:
                    row = (f"| {n} | {method} | {r['derive']:.1f} | {r['build']:.1f} | {r['rebuild']:.1f} | "
                           f"{r['run_cs']:.2f} | {r['peak_mb']:.0f} |")
                print(row, flush=True)
                lines.append(row)
                flush()
    flush()
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
