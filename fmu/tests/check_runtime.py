"""End-to-end check of the fixed FMU runtime (fmu/*.c) before the generator exists.

    python3 fmu/tests/check_runtime.py [--out DIR] [--keep]

Steps (each prints a line; the exit code is the number of failed checks):

1. C unit tests: nhb_lu_solve and nhb_lu_solve_many (test_linalg.c; also without the vector loop), the
   runtime through both FMI APIs (test_runtime.c with model_scalar.c; once more with DOP853 as the only
   Co-Simulation method), the edges of issue 11 (test_edges.c: tolerances, serialized states with fields
   out of range, states freed with their instance, huge steps, NaN/infinity at run time) and the
   Co-Simulation integrators with their dense output, and the FMU state,
   against the closed form of the harmonic oscillator (test_integrator.c with model_oscillator.c; DOPRI5
   only, DOP853 only, automatic choice), with -fsanitize=address,undefined when available.
2. Build the FMI 2.0 and FMI 3.0 pendulum FMUs (build_test_fmu.sh).
3. Exported symbols: exactly the functions of fmi2FunctionTypes.h / fmi3FunctionTypes.h.
4. fmpy.validation.validate_fmu: no problems.
5. Simulation with fmpy, Model Exchange (CVode, rtol 1e-10) and Co-Simulation (output interval 0.01,
   tolerance 1e-10), FMI 2 and 3; theta compared with scipy's solve_ivp of the same ODE: max error
   below 1e-7 (ME) and 1e-6 (CS). Also the energy output and a run with a constant input torque.
6. Error paths: l = 0 (singular mass matrix) as start value, and set during a Co-Simulation run,
   must raise a Python exception (fmpy's FMICallException), not crash the process.

Needs gcc, fmpy, numpy and scipy.
"""

from __future__ import annotations

import argparse
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
from scipy.integrate import solve_ivp

HERE = Path(__file__).resolve().parent
FMU_DIR = HERE.parent
STOP_TIME = 10.0
M, L, G = 1.2, 0.8, 9.81  # defaults of model_pendulum.c
THETA0, OMEGA0 = 1.0, 0.0
TOL_ME, TOL_CS = 1e-7, 1e-6

failures: list[str] = []


def report(ok: bool, what: str) -> None:
    print(("  ok    " if ok else "  FAIL  ") + what)
    if not ok:
        failures.append(what)


# ---------------------------------------------------------------------------------------------- #
# 1. C tests
# ---------------------------------------------------------------------------------------------- #

def sanitizer_flags(workdir: Path) -> list[str]:
    """-fsanitize=address,undefined if the compiler can link and run it here, else []."""
    probe = workdir / "probe.c"
    probe.write_text("int main(void) { return 0; }\n")
    flags = ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]
    try:
        subprocess.run(["gcc", *flags, str(probe), "-o", str(workdir / "probe")], check=True, capture_output=True)
        subprocess.run([str(workdir / "probe")], check=True, capture_output=True)
        return flags
    except (subprocess.CalledProcessError, OSError):
        return []


def defines(flags: list[str]) -> set[str]:
    """The macro names that ``-D`` flags define."""
    return {flag[2:].split("=")[0] for flag in flags if flag.startswith("-D")}


def object_for(source: Path, flags: list[str], compile_object, headers: str) -> Path:
    """The object of ``source`` under ``flags``, compiled once: a define changes the object only where the
    source (or a header of the runtime, which any source may include) names the macro."""
    relevant = [f for f in flags if not f.startswith("-D") or any(
        re.search(rf"\b{name}\b", source.read_text() + headers) for name in defines([f]))]
    return compile_object(source, tuple(relevant))


def run_c_tests(workdir: Path) -> None:
    print("C unit tests")
    san = sanitizer_flags(workdir)
    base = ["gcc", "-std=c99", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *san]
    files = runpy.run_path(str(FMU_DIR / "__init__.py"))  # the runtime's file lists
    runtime = [FMU_DIR / f for f in dict.fromkeys(files["runtime_sources"](2) + files["runtime_sources"](3))]
    forced = {"dopri5": ["-DNHB_CS_METHOD=0"], "dop853": ["-DNHB_CS_METHOD=1"]}  # one Co-Simulation method
    tests = {  # name: (sources, extra flags)
        "test_linalg": ([HERE / "test_linalg.c", FMU_DIR / "nhb_linalg.c"], []),
        "test_linalg_scalar": ([HERE / "test_linalg.c", FMU_DIR / "nhb_linalg.c"], ["-DNHB_LU_SCALAR"]),
        "test_runtime": ([HERE / "test_runtime.c", *runtime, HERE / "model_scalar.c"], []),
        "test_runtime_dop853": ([HERE / "test_runtime.c", *runtime, HERE / "model_scalar.c"], forced["dop853"]),
        "test_edges": ([HERE / "test_edges.c", *runtime, HERE / "model_scalar.c"], []),
        "test_integrator": ([HERE / "test_integrator.c", *runtime, HERE / "model_oscillator.c"], []),
        "test_integrator_dopri5": ([HERE / "test_integrator.c", *runtime, HERE / "model_oscillator.c"],
                                   forced["dopri5"]),
        "test_integrator_dop853": ([HERE / "test_integrator.c", *runtime, HERE / "model_oscillator.c"],
                                   forced["dop853"]),
    }
    includes = [f"-I{FMU_DIR}", f"-I{FMU_DIR / 'include' / 'fmi2'}", f"-I{FMU_DIR / 'include' / 'fmi3'}"]
    headers = "".join(h.read_text() for h in sorted(FMU_DIR.glob("*.h")))
    objects: dict[tuple[Path, tuple[str, ...]], Path | str] = {}  # (source, flags): object, or the compile error

    def compile_object(source: Path, flags: tuple[str, ...]) -> Path | str:
        # each runtime source is compiled once per set of defines it depends on, then linked into every test
        # program that needs it (the sanitizer build of the runtime is most of this step's cost)
        key = (source, flags)
        if key not in objects:
            obj = workdir / "objects" / f"{source.stem}.{len(objects)}.o"
            obj.parent.mkdir(exist_ok=True)
            build = subprocess.run([*base, *flags, *includes, "-c", str(source), "-o", str(obj)],
                                   capture_output=True, text=True)
            objects[key] = obj if build.returncode == 0 else f"{source.name}: {build.stderr}"
        return objects[key]

    for name, (sources, flags) in tests.items():
        exe = workdir / name
        built = [object_for(source, flags, compile_object, headers) for source in sources]
        errors = [b for b in built if isinstance(b, str)]
        if errors:
            report(False, f"{name}: compile\n" + "\n".join(errors))
            continue
        link = subprocess.run([*base, *map(str, built), "-lm", "-o", str(exe)], capture_output=True, text=True)
        if link.returncode != 0:
            report(False, f"{name}: link\n{link.stderr}")
            continue
        run = subprocess.run([str(exe)], capture_output=True, text=True)
        last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
        detail = "" if run.returncode == 0 else "\n" + run.stdout + run.stderr
        report(run.returncode == 0, f"{name} ({'with' if san else 'without'} sanitizers): {last}{detail}")


# ---------------------------------------------------------------------------------------------- #
# 2.-4. Build, exported symbols, validation
# ---------------------------------------------------------------------------------------------- #

def build_fmus(out: Path) -> dict[int, Path]:
    print("Build")
    result = subprocess.run(["bash", str(HERE / "build_test_fmu.sh"), str(out)], capture_output=True, text=True)
    for line in result.stdout.splitlines():
        if line.startswith("gcc") or line.startswith(os.environ.get("CC", "gcc")):
            print("    " + line)
    report(result.returncode == 0, "build_test_fmu.sh" + ("" if result.returncode == 0 else "\n" + result.stderr))
    return {2: out / "fmi2" / "Pendulum.fmu", 3: out / "fmi3" / "Pendulum.fmu"}


def check_exports(out: Path) -> None:
    print("Exported symbols")
    for version, platform in ((2, "linux64"), (3, "x86_64-linux")):
        header = (FMU_DIR / "include" / f"fmi{version}" / f"fmi{version}FunctionTypes.h").read_text()
        # every "typedef <ret> fmiNXxxTYPE(" is an API function; callbacks are (*...) pointer types
        expected = set(re.findall(rf"\b(fmi{version}\w+)TYPE\s*\(", header))
        so = out / f"fmi{version}" / "stage" / "binaries" / platform / "Pendulum.so"
        nm = subprocess.run(["nm", "-D", "--defined-only", str(so)], capture_output=True, text=True, check=True)
        exported = {line.split()[-1] for line in nm.stdout.splitlines() if line.split()[1:2] == ["T"]}
        missing, extra = expected - exported, exported - expected
        report(not missing and not extra,
               f"FMI {version}: {len(exported)} functions exported, {len(expected)} in fmi{version}FunctionTypes.h"
               + (f"; missing {sorted(missing)}" if missing else "") + (f"; extra {sorted(extra)}" if extra else ""))


def check_validation(fmus: dict[int, Path]) -> None:
    from fmpy.validation import validate_fmu

    print("fmpy.validation.validate_fmu")
    for version, fmu in fmus.items():
        problems = validate_fmu(str(fmu))
        report(problems == [], f"FMI {version}: {len(problems)} problem(s)" + "".join("\n    " + p for p in problems))


# ---------------------------------------------------------------------------------------------- #
# 5. Simulation against scipy
# ---------------------------------------------------------------------------------------------- #

def reference(times: np.ndarray, tau: float = 0.0) -> np.ndarray:
    """theta(t) of m l^2 theta'' = -m g l sin(theta) + tau, by scipy (DOP853, rtol 1e-13)."""
    def rhs(_t, x):
        return [x[1], (-M * G * L * np.sin(x[0]) + tau) / (M * L * L)]

    sol = solve_ivp(rhs, (0.0, STOP_TIME), [THETA0, OMEGA0], method="DOP853", t_eval=times, rtol=1e-13, atol=1e-15)
    assert sol.success, sol.message
    return sol.y


def simulate(fmu: Path, fmi_type: str, tau: float | None = None):
    import fmpy

    kwargs = dict(fmi_type=fmi_type, stop_time=STOP_TIME, relative_tolerance=1e-10, output_interval=0.01,
                  output=["theta", "omega", "energy"])
    if fmi_type == "ModelExchange":
        kwargs["solver"] = "CVode"
    if tau is not None:
        signal = np.array([(0.0, tau), (STOP_TIME, tau)], dtype=[("time", np.float64), ("tau", np.float64)])
        kwargs["input"] = signal
    return fmpy.simulate_fmu(str(fmu), **kwargs)


def check_simulations(fmus: dict[int, Path]) -> dict[str, float]:
    print("Simulation vs scipy solve_ivp (max |theta error| over [0, 10])")
    errors = {}
    for version, fmu in fmus.items():
        for fmi_type, tol in (("ModelExchange", TOL_ME), ("CoSimulation", TOL_CS)):
            tag = f"FMI {version} {'ME' if fmi_type == 'ModelExchange' else 'CS'}"
            result = simulate(fmu, fmi_type)
            t = result["time"]
            theta_ref, _omega_ref = reference(t)
            err = float(np.max(np.abs(result["theta"] - theta_ref)))
            errors[tag] = err
            energy = 0.5 * M * L**2 * result["omega"] ** 2 - M * G * L * np.cos(result["theta"])
            energy_ok = np.allclose(result["energy"], energy, rtol=0, atol=1e-12)
            drift = float(np.ptp(result["energy"]))
            report(err < tol and energy_ok and abs(t[-1] - STOP_TIME) < 1e-12 and len(t) == 1001,
                   f"{tag}: {len(t)} points, theta error {err:.2e} (limit {tol:g}), energy drift {drift:.1e}")

            # constant input torque: exercises the input path (ME: set in Continuous-Time Mode)
            tau = 0.3
            result = simulate(fmu, fmi_type, tau=tau)
            err_tau = float(np.max(np.abs(result["theta"] - reference(result["time"], tau)[0])))
            errors[tag + " tau=0.3"] = err_tau
            report(err_tau < tol, f"{tag} with input tau = {tau}: theta error {err_tau:.2e} (limit {tol:g})")
    return errors


# ---------------------------------------------------------------------------------------------- #
# 6. Error paths
# ---------------------------------------------------------------------------------------------- #

def check_error_paths(fmus: dict[int, Path], workdir: Path) -> None:
    import fmpy
    from fmpy import extract, read_model_description
    from fmpy.fmi2 import FMU2Slave
    from fmpy.fmi3 import FMU3Slave

    print("Error paths (must raise, not crash)")
    for version, fmu in fmus.items():
        for fmi_type in ("ModelExchange", "CoSimulation"):
            tag = f"FMI {version} {'ME' if fmi_type == 'ModelExchange' else 'CS'}"
            try:
                fmpy.simulate_fmu(str(fmu), fmi_type=fmi_type, stop_time=1.0, start_values={"l": 0.0})
                report(False, f"{tag}: l = 0 did not raise")
            except Exception as exc:  # any Python exception is the expected outcome
                report("ExitInitializationMode" in str(exc), f"{tag}: l = 0 -> {type(exc).__name__}: {exc}")

        # l = 0 set between communication steps (tunable parameter): doStep fails
        unzipdir = extract(str(fmu), unzipdir=str(workdir / f"unzip{version}"))
        md = read_model_description(unzipdir)
        vr = {v.name: v.valueReference for v in md.modelVariables}
        slave_cls = FMU2Slave if version == 2 else FMU3Slave
        slave = slave_cls(guid=md.guid, unzipDirectory=unzipdir, modelIdentifier=md.coSimulation.modelIdentifier,
                          instanceName="errorpath")
        slave.instantiate()
        if version == 2:
            slave.setupExperiment(tolerance=1e-8, startTime=0.0)
            slave.enterInitializationMode()
        else:
            slave.enterInitializationMode(tolerance=1e-8, startTime=0.0)
        slave.exitInitializationMode()
        t = 0.0
        for _ in range(10):
            slave.doStep(currentCommunicationPoint=t, communicationStepSize=0.01)
            t += 0.01
        (slave.setReal if version == 2 else slave.setFloat64)([vr["l"]], [0.0])
        try:
            slave.doStep(currentCommunicationPoint=t, communicationStepSize=0.01)
            report(False, f"FMI {version} CS: doStep after l = 0 did not raise")
        except Exception as exc:
            theta = (slave.getReal if version == 2 else slave.getFloat64)([vr["theta"]])[0]
            report(np.isfinite(theta), f"FMI {version} CS: doStep after setting l = 0 at t = {t:.2f} -> "
                                       f"{type(exc).__name__}: {exc} State still readable (theta = {theta:.6f})")
        slave.reset()
        slave.freeInstance()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, help="build directory (default: a temporary directory)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary build directory")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="nhb_runtime_"))
    out = args.out.resolve() if args.out else workdir / "build"
    try:
        run_c_tests(workdir)
        fmus = build_fmus(out)
        if failures:
            return len(failures)
        check_exports(out)
        check_validation(fmus)
        errors = check_simulations(fmus)
        check_error_paths(fmus, workdir)
        print("Measured max |theta error|: " + ", ".join(f"{k} {v:.2e}" for k, v in errors.items()))
    finally:
        if args.keep or args.out:
            print(f"build directory: {out}")
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print(f"{len(failures)} failure(s)")
    return len(failures)


if __name__ == "__main__":
    sys.exit(main())
