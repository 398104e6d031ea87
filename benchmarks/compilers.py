"""Which export form do the Modelica compilers simulate correctly? Every system x method x form x compiler.

For every example (``examples/**/*.toml`` that is a system file: the co-simulation scenarios are not) and every
system under ``tests/models/``, by ``lagrange`` and by the reduced methods (``maggi``; ``chaplygin`` where it applies),
in every export form (:data:`bridge.modelica.forms.FORMS` that applies to the equations) and with both
compilers (Rumoca; pymoca + CasADi IDAS), the model is exported, compiled and simulated, each run in its
own child process with a time limit, and compared with nhbridge's native simulation: the largest error over
the coordinates, relative to each coordinate's range (``bridge.validation.tool_checks``'s measure). A run passes
below 1e-6.

    python benchmarks/compilers.py [-o docs/compilers.md] [--jobs 1] [--timeout 120] [--stop 4]
                                   [--bicycle-stop 1] [--bicycle-timeout 120] [--only car,skate]
    python benchmarks/compilers.py --target [-o docs/compilers.md]

``--target``: only the reduced methods (maggi, appell, chaplygin) whose build-time split turns singular before
the stop time, as ``nhbridge modelica --target`` writes them: Rumoca simulates the text that re-partitions
(form ``repartition``) over the whole run, pymoca the build-time split up to 0.9 of its singular time (it has no
``when``); the section of the file ``-o`` that holds them is replaced, the rest of the file kept.

Writes a Markdown table (per system, method and form: each compiler's error or failure, and the form the
automatic choice :func:`bridge.modelica.forms.choose_form` picks) and prints it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOLERANCE = 1e-6
TOOLS = ("rumoca", "pymoca")
METHODS = ("lagrange", "maggi", "chaplygin")
#: the Baumgarte-stabilised index-1 DAE: form name + this suffix, derived with these (alpha, beta)
BAUMGARTE_SUFFIX, BAUMGARTE = "+baumgarte", (5.0, 5.0)
#: the pseudo-form of ``--target``: the text ``nhbridge modelica --target TOOL`` writes, checked over the whole run
TARGET, TARGET_HEADING = "target", "## Reduced methods through split changes (`--target`)"
#: messages of the documented defects (docs/compiler-defects/README.md) -> their reproducer
DEFECTS = {"Unknown function pre": "SwitchedPymocaWhen.mo",
           "SymbolicSingular": "RumocaImplicitCoupledBlock.mo", "cannot be solved for": "RumocaCoupledLinearBlock.mo",
           "unmatched unknowns: -": "RumocaLinearOutputOfState.mo",
           "unmatched unknowns: lambda": "RumocaNoIndexReduction.mo",
           "Unknown function": "PymocaAcos.mo", "SplitLimitError": "the split is singular (not a compiler defect)"}


def system_files() -> list[Path]:
    """Every example that is a system file (``examples/**``), then every system under ``tests/models/``."""
    import bridge
    from bridge.errors import SystemFileError

    files = []
    for path in [*sorted((ROOT / "examples").rglob("*.toml")), *sorted((ROOT / "tests" / "models").glob("*.toml"))]:
        try:
            bridge.load_system(path)
        except SystemFileError as exc:  # a co-simulation scenario ([connections]), not a system
            print(f"not a system file, skipped: {path.relative_to(ROOT)} ({str(exc).splitlines()[0][:80]})",
                  file=sys.stderr)
            continue
        files.append(path)
    return files


def is_bicycle(path: Path) -> bool:
    """The Whipple bicycle files (examples/engineering/bicycle*.toml): a shorter horizon, their own time limit."""
    return path.stem.startswith("bicycle")


def one_run(path: str, method: str, form: str, tool: str, stop: float) -> dict:
    """Export ``path`` by ``method`` in ``form``, simulate it with ``tool`` to ``stop`` and compare (in this
    process): ``{"error": max error / range, "seconds": ...}`` or ``{"failure": message}``."""
    import bridge
    from bridge.errors import BridgeError, ExportError
    from bridge.modelica.forms import regular_horizon
    from bridge.tools.availability import missing_compiler
    from bridge.validation.tool_checks import simulate_form

    system = bridge.load_system(path)
    if form == TARGET:
        return target_run(system, method, tool, stop)
    baumgarte = form.endswith(BAUMGARTE_SUFFIX)  # the index-1 DAE Baumgarte-stabilised (a derivation option)
    form = form.removesuffix(BAUMGARTE_SUFFIX)
    eom = bridge.derive(system, method, baumgarte=BAUMGARTE if baumgarte else None)
    stop = regular_horizon(eom, stop)  # a reduced method: up to where its split stays regular
    missing = missing_compiler(tool)
    if missing:
        return {"failure": missing, "stop": stop}
    try:
        report = simulate_form(eom, form, tool, stop)
    except ExportError as exc:  # nhbridge's export refuses the system: no compiler ran
        return {"failure": " ".join(str(exc).split()), "stop": stop, "refused": True}
    except BridgeError as exc:
        return {"failure": " ".join(str(exc).split()), "stop": stop}
    named = sorted(set(re.findall(r"\b\w+\.mo\b", report.summary())))  # a defect the check names (late events)
    return {"error": report.max_error, "seconds": report.seconds, "stop": stop, "defects": named}


def target_run(system, method: str, tool: str, stop: float) -> dict:
    """The text ``nhbridge modelica --target tool`` writes, checked by nhbridge's check over ``stop`` (pymoca: to
    0.9 of the time its split turns singular): ``{"error", "seconds", "stop", "form"}`` or ``{"failure"}``."""
    import bridge
    from bridge.errors import BridgeError
    from bridge.tools.availability import missing_compiler
    from bridge.validation.tool_checks import CHECKERS

    missing = missing_compiler(tool)
    if missing:
        return {"failure": missing, "stop": stop}
    try:
        report = CHECKERS[tool](bridge.derive(system, method), "auto", stop)
    except BridgeError as exc:
        return {"failure": " ".join(str(exc).split()), "stop": stop}
    return {"error": report.max_error, "seconds": report.seconds, "stop": report.compared_until, "form": report.form}


def target_plan(only: set[str] | None, stop: float) -> list[tuple[Path, str, str, str, str]]:
    """(file, system name, method, TARGET, form) of every reduced method whose split turns singular before
    ``min(StopTime, stop)`` and that has a re-partitioning text: the examples, ``tests/models/`` and
    ``tests/models/repartition/``."""
    import bridge
    from bridge.derivation.methods import METHODS as REGISTRY
    from bridge.errors import BridgeError
    from bridge.modelica.forms import regular_horizon, target_form

    cases = []
    for path in [*system_files(), *sorted((ROOT / "tests" / "models" / "repartition").glob("*.toml"))]:
        if only and path.stem not in only:
            continue
        system = bridge.load_system(path)
        for method in ("maggi", "appell", "chaplygin"):
            if REGISTRY.get_method(method).applicable(system):
                continue
            try:
                eom = bridge.derive(system, method)
            except BridgeError:
                continue
            horizon = min(system.stop_time, stop)
            if target_form(eom, "rumoca") == "repartition" and regular_horizon(eom, horizon) < horizon:
                cases.append((path, system.name, method, TARGET, "repartition"))
    return cases


def target_table(rows: list[tuple[tuple, dict[str, dict]]]) -> str:
    out = ["| system | method | rumoca (`--target rumoca`) | form | pymoca (`--target pymoca`: build-time split) |",
           "|---|---|---|---|---|"]
    for (_path, name, method, _form, _chosen), results in rows:
        form = results["rumoca"].get("form", "")
        out.append(f"| {name} | {method} | {cell(results['rumoca'])} | {form} | {cell(results['pymoca'])} |")
    return "\n".join(out)


def target_section(args, rows) -> str:
    only = f" --only {args.only}" if args.only else ""
    intro = (f"Generated by `python benchmarks/compilers.py --target{only}` (stop time min(StopTime, {args.stop:g} s); "
             f"each run in a child process limited to {args.timeout:g} s). The reduced methods whose build-time "
             "split turns singular before the stop time, as `nhbridge modelica --target` writes them: for Rumoca "
             "the text that re-partitions (form `repartition`, `bridge.modelica.repartition`) over the whole run; "
             "pymoca has no `when` (`SwitchedPymocaWhen.mo`) and keeps the build-time split, compared to 0.9 of "
             "the time it turns singular (`forms.regular_horizon`). Cell as above (a failure: the check's message; "
             "a method with one usable split stops where it turns singular, as its native run does); form: the "
             "text Rumoca simulated.")
    return f"{TARGET_HEADING}\n\n{intro}\n\n" + target_table(rows) + "\n"


def replace_section(text: str, heading: str, section: str) -> str:
    """``text`` with the section under ``heading`` (to the next ``## `` heading) replaced, or ``section`` appended."""
    if heading not in text:
        return text.rstrip("\n") + "\n\n" + section
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[:start] + section + (text[end + 1:] if end >= 0 else "")


def child(path: Path, method: str, form: str, tool: str, stop: float, timeout: float) -> dict:
    """:func:`one_run` in a child process, killed after ``timeout`` seconds."""
    cmd = [sys.executable, __file__, "--one", json.dumps([str(path), method, form, tool, stop])]
    start = time.perf_counter()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}  # this checkout's bridge, wherever the package is installed
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            start_new_session=True, env=env)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        proc.communicate()
        return {"failure": f"timeout after {timeout:g} s", "wall": time.perf_counter() - start}
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    if proc.returncode != 0 or not lines:
        tail = (err.strip().splitlines() or ["no output"])[-1]
        return {"failure": f"crashed (exit {proc.returncode}): {tail}", "wall": time.perf_counter() - start}
    result = json.loads(lines[-1])
    result["wall"] = time.perf_counter() - start
    return result


def plan(only: set[str] | None, methods: tuple[str, ...]) -> list[tuple[Path, str, str, str, str]]:
    """(file, system name, method, form, chosen form) for every applicable combination."""
    import bridge
    from bridge.derivation.methods import METHODS as REGISTRY
    from bridge.modelica.forms import applicable_forms, choose_form

    cases = []
    for path in system_files():
        system = bridge.load_system(path)
        if only and path.stem not in only:
            continue
        for method in methods:
            if REGISTRY.get_method(method).applicable(system):
                continue
            eom = bridge.derive(system, method)
            chosen = choose_form(eom).form
            forms = list(applicable_forms(eom))
            if eom.multipliers:
                forms.append("implicit" + BAUMGARTE_SUFFIX)
            cases += [(path, system.name, method, form, chosen) for form in forms]
    return cases


def cell(result: dict) -> str:
    if "failure" in result:
        text = result["failure"]
        return "fails: " + (text[:140] + "..." if len(text) > 140 else text).replace("|", "/")
    mark = "ok" if result["error"] <= TOLERANCE else "WRONG"
    return f"{mark} {result['error']:.1e} (to {result['stop']:.3g} s; {result['wall']:.0f} s)"


def table(rows: list[tuple[tuple, dict[str, dict]]]) -> str:
    out = ["| system | method | form | rumoca | pymoca |", "|---|---|---|---|---|"]
    for (_path, name, method, form, chosen), results in rows:
        mark = f"**{form}** (auto)" if form == chosen else form
        out.append(f"| {name} | {method} | {mark} | {cell(results['rumoca'])} | {cell(results['pymoca'])} |")
    return "\n".join(out)


def note(result: dict) -> str:
    """The documented defect a failure names (docs/compiler-defects/), or what else it is."""
    text = result.get("failure", "")
    if not text:  # a wrong result whose check names a documented defect (Rumoca's late events on friction)
        wrong = result.get("error", 0.0) > TOLERANCE
        return ", ".join(f"`{d}`" for d in result.get("defects", [])) if wrong else ""
    if result.get("refused"):
        return "the export refuses it (no compiler ran)"
    for pattern, reproducer in DEFECTS.items():
        if pattern in text:
            return f"`{reproducer}`" if reproducer.endswith(".mo") else reproducer
    return "timeout" if "timeout" in text else "not a documented defect"


def summary(rows: list[tuple[tuple, dict[str, dict]]]) -> str:
    """The per-system, per-compiler table of the automatically chosen forms."""
    out = ["| system | method | chosen form | rumoca | pymoca | failure: documented defect |",
           "|---|---|---|---|---|---|"]
    for (_path, name, method, form, chosen), results in rows:
        if form == chosen:
            notes = "; ".join(f"{tool}: {note(results[tool])}" for tool in TOOLS if note(results[tool]))
            out.append(f"| {name} | {method} | {form} | {cell(results['rumoca'])} | {cell(results['pymoca'])} | "
                       f"{notes} |")
    return "\n".join(out)


def header(args) -> str:
    from importlib.metadata import version

    versions = ", ".join(f"{p} {version(p)}" for p in ("rumoca", "pymoca", "casadi"))
    return (f"# Modelica compilers on the exported forms\n\nGenerated by `python benchmarks/compilers.py` "
            f"({versions}; stop time min(StopTime, {args.stop:g} s), bicycle {args.bicycle_stop:g} s, a reduced "
            f"method's ended at 0.9 of the time its split becomes singular (`forms.regular_horizon`); "
            f"each run in a child process limited to {args.timeout:g} s, the bicycle's to "
            f"{args.bicycle_timeout or args.timeout:g} s). Cell: largest error over the "
            f"coordinates relative to each one's range against nhbridge's native simulation (`ok` below "
            f"{TOLERANCE:g}), the simulated horizon, and the wall time of the child process (import, "
            f"derivation, compilation, simulation, native reference); or the compiler's failure. **Bold**: the "
            f"form the automatic choice (`bridge.modelica.forms.choose_form`) exports. Defects: "
            f"`docs/compiler-defects/`.\n\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=None, help="write the Markdown table here")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--stop", type=float, default=4.0)
    parser.add_argument("--bicycle-stop", type=float, default=1.0)
    parser.add_argument("--bicycle-timeout", type=float, default=None, help="time limit of a bicycle run "
                        "(default: --timeout)")
    parser.add_argument("--only", default=None, help="comma-separated file stems")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--forms", default=None, help="comma-separated forms to run (default: all)")
    parser.add_argument("--chosen", action="store_true", help="only the form the automatic choice exports")
    parser.add_argument("--target", action="store_true", help="only the reduced methods whose split turns singular, "
                        "as --target writes them; replaces that section of -o")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        path, method, form, tool, stop = json.loads(args.one)
        print(json.dumps(one_run(path, method, form, tool, stop)), flush=True)
        return 0
    import bridge

    only = set(args.only.split(",")) if args.only else None
    cases = target_plan(only, args.stop) if args.target else plan(only, tuple(args.methods.split(",")))
    if args.forms:
        cases = [c for c in cases if c[3] in args.forms.split(",")]
    if args.chosen:
        cases = [c for c in cases if c[3] == c[4]]
    jobs = [(case, tool) for case in cases for tool in TOOLS]

    def run(job):
        (path, _, method, form, _), tool = job
        bicycle = is_bicycle(path)
        stop = args.bicycle_stop if bicycle else min(bridge.load_system(path).stop_time, args.stop)
        result = child(path, method, form, tool, stop, (args.bicycle_timeout or args.timeout) if bicycle
                       else args.timeout)
        print(f"{path.stem:22s} {method:10s} {form:18s} {tool:7s} {cell(result)}", file=sys.stderr, flush=True)
        return result

    with ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(run, jobs))
    rows = [(case, {tool: results[2 * k + j] for j, tool in enumerate(TOOLS)}) for k, case in enumerate(cases)]
    if args.target:
        section = target_section(args, rows)
        print(section)
        if args.output:
            from bridge.atomic import write_text

            old = Path(args.output).read_text(encoding="utf-8") if Path(args.output).exists() else ""
            write_text(Path(args.output), replace_section(old, TARGET_HEADING, section))
        return 0
    text = header(args) + "## The chosen forms\n\n" + summary(rows) + "\n"
    if not args.chosen:
        text += "\n## Every form\n\n" + table(rows) + "\n"
    print(text)
    if args.output:
        from bridge.atomic import write_text

        write_text(Path(args.output), text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
