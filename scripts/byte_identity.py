#!/usr/bin/env python3
"""Byte identity of everything nhbridge generates, across git revisions.

For every system file under ``examples/`` and every derivation method, run the exporting commands of the CLI
(in-process, no simulation, no compiled binaries compared) and keep what they write:

* ``nhbridge modelica`` (every method; for lagrange also ``--constraint-level index1|given`` and ``--msl``),
* ``nhbridge fmu`` FMI 2 and FMI 3 (every method; the archive is unpacked, ``binaries/`` left out),
* ``nhbridge fmu --backend rumoca`` (lagrange; Rumoca's generated C and modelDescription.xml),
* ``nhbridge linearize --json --modelica --fmu`` (lagrange),
* ``nhbridge ssp`` for every co-simulation scenario (the SSD and the unpacked FMUs inside).

A command that fails leaves ``<name>.exit`` with its exit code and its error message (paths replaced by
``<ROOT>``/``<OUT>``), so a changed refusal shows as well. ``manifest.json`` holds the sha256 of every file.

The C compiler is a stub that writes an empty library (``CC``): binaries are not generated text, and compiling
the runtime for every FMU would dominate the run. Each example runs in a fresh interpreter with
``PYTHONHASHSEED=0`` and the tree first on ``sys.path`` (no install needed, the venv only supplies the
dependencies; the runtime and Modelica library packages are mapped to the tree's top-level ``fmu/`` and
``modelica/`` the way ``setup.py`` maps them); a worker refuses to run when ``bridge`` comes from elsewhere.

Usage::

    python3 scripts/byte_identity.py --out /tmp/bi              # manifest of the working tree
    python3 scripts/byte_identity.py --compare main             # working tree against revision main
    python3 scripts/byte_identity.py --compare main --only 'examples/car*'
    python3 scripts/byte_identity.py --rev main --out /tmp/bi          # baseline in /tmp/bi/main
    python3 scripts/byte_identity.py --against /tmp/bi/main           # working tree against the baseline
    python3 scripts/byte_identity.py --compare main --skip 'examples/*/bicycle*'   # the bicycles take longest
    python3 scripts/byte_identity.py --compare main --only 'examples/engineering/bicycle.toml' --methods lagrange

Exit code: 0 identical (or manifest written), 1 differences, 2 bad usage.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import fnmatch
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
METHODS = ["lagrange", "nielsen", "maggi", "appell", "chaplygin", "kane"]
STUB_CC = """#!/bin/sh
# byte_identity.py: no binary is compared; write an empty library where -o points
out=""
while [ $# -gt 0 ]; do
  if [ "$1" = "-o" ]; then out="$2"; shift; fi
  shift
done
[ -n "$out" ] && mkdir -p "$(dirname "$out")" && : > "$out"
exit 0
"""


# ----------------------------------------------------------------------------------------------------- worker side

def _map_package(name: str, folder: Path) -> None:
    """Register ``name`` as the package in ``folder`` (what setup.py's package_dir does for an install)."""
    import importlib.util

    init = folder / "__init__.py"
    spec = importlib.util.spec_from_file_location(name, init if init.exists() else None,
                                                  submodule_search_locations=[str(folder)])
    if spec is None:  # a folder without __init__.py: a namespace-like package
        import importlib.machinery

        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(folder)]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if spec.loader is not None:
        spec.loader.exec_module(module)


def unpack_archive(archive: Path, into: Path) -> None:
    """Unpack a .fmu/.ssp without ``binaries/``; nested FMUs unpacked in turn. The archive is removed."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            parts = Path(info.filename).parts
            if info.is_dir() or "binaries" in parts or ".." in parts or info.filename.startswith("/"):
                continue
            target = into / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
            if target.suffix == ".fmu":
                unpack_archive(target, target.with_name(target.name + ".d"))
    archive.unlink()


def _run(main, argv: list[str], out: Path, label: str, tree: Path) -> None:
    """One CLI command in-process; on failure ``label.exit`` records the exit code and the message."""
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception as exc:  # a traceback is a behaviour to record, not to stop on
            code = f"exception {type(exc).__name__}: {exc}"
    if code not in (0, None):
        text = err.getvalue().replace(str(out), "<OUT>").replace(str(tree), "<ROOT>")
        (out / f"{label}.exit").write_text(f"exit {code}\n{text}", encoding="utf-8")


def worker(tree: Path, example: str, out: Path) -> None:
    """Every export of one example file of ``tree`` into ``out`` (run inside a fresh interpreter)."""
    sys.path.insert(0, str(tree))
    import bridge

    if not Path(bridge.__file__).resolve().is_relative_to(tree.resolve()):
        sys.exit(f"byte_identity: imported bridge from {bridge.__file__}, not from {tree}")
    import bridge.fmu
    import bridge.modelica

    _map_package("bridge.fmu.runtime", tree / "fmu")
    _map_package("bridge.modelica.library", tree / "modelica")
    from bridge.cli import main

    os.chdir(tree)
    out.mkdir(parents=True, exist_ok=True)
    data = tomllib.loads((tree / example).read_text(encoding="utf-8"))
    if "components" in data:  # a co-simulation scenario
        _run(main, ["ssp", "-q", example, "-o", str(out / "scenario.ssp")], out, "ssp", tree)
        if (out / "scenario.ssp").exists():
            unpack_archive(out / "scenario.ssp", out / "scenario.ssp.d")
        return
    if "coordinates" not in data:  # a controller spec or other non-system file
        return
    chosen = os.environ.get("BYTE_IDENTITY_METHODS")
    for method in METHODS if not chosen else [m for m in METHODS if m in chosen.split(",")]:
        m = out / method
        m.mkdir(exist_ok=True)
        _run(main, ["modelica", "-q", "-m", method, example, "-o", str(m / "model.mo")], m, "modelica", tree)
        if (m / "modelica.exit").exists():  # the method does not apply: the FMUs would fail the same way
            continue
        for version in ("2", "3"):
            fmu = m / f"fmi{version}.fmu"
            _run(main, ["fmu", "-q", "-m", method, "--fmi-version", version, example, "-o", str(fmu)], m,
                 f"fmi{version}", tree)
            if fmu.exists():
                unpack_archive(fmu, m / f"fmi{version}.fmu.d")
        if method != "lagrange":
            continue
        for level in ("index1", "given"):
            _run(main, ["modelica", "-q", "--constraint-level", level, example, "-o", str(m / f"{level}.mo")], m,
                 f"modelica-{level}", tree)
        _run(main, ["modelica", "-q", "--msl", example, "-o", str(m / "msl.mo")], m, "modelica-msl", tree)
        _run(main, ["fmu", "-q", "--backend", "rumoca", example, "-o", str(m / "rumoca.fmu")], m, "rumoca", tree)
        if (m / "rumoca.fmu").exists():
            unpack_archive(m / "rumoca.fmu", m / "rumoca.fmu.d")
        lin = m / "linearize"
        lin.mkdir()
        _run(main, ["linearize", "-q", example, "--json", str(lin / "linear.json"), "--modelica",
                    str(lin / "linear.mo"), "--fmu", str(lin / "linear.fmu")], lin, "linearize", tree)
        if (lin / "linear.fmu").exists():
            unpack_archive(lin / "linear.fmu", lin / "linear.fmu.d")


# ----------------------------------------------------------------------------------------------------- driver side

def examples(tree: Path, only: list[str], skip: list[str] = ()) -> list[str]:
    """The example files of ``tree`` (relative paths) matching ``only`` (all when empty) and no glob of ``skip``,
    the largest first (they take longest)."""
    files = sorted((tree / "examples").rglob("*.toml"), key=lambda p: (-p.stat().st_size, str(p)))
    names = [p.relative_to(tree).as_posix() for p in files]
    return [n for n in names if (not only or any(fnmatch.fnmatch(n, g) for g in only))
            and not any(fnmatch.fnmatch(n, g) for g in skip)]


def generate(jobs: list[tuple[Path, str, Path]], workers: int, cc: Path, methods: str | None = None) -> list[str]:
    """Run every (tree, example, out) job in its own interpreter, ``workers`` at a time (``methods``: a comma list
    of derivation methods, default all); the failures."""
    env = {**os.environ, "PYTHONHASHSEED": "0", "CC": str(cc), "BYTE_IDENTITY_METHODS": methods or ""}
    env.pop("PYTHONPATH", None)

    def one(job: tuple[Path, str, Path]) -> str | None:
        tree, example, out = job
        proc = subprocess.run([sys.executable, __file__, "--worker", str(tree), example, str(out)], env=env,
                              capture_output=True, text=True)
        print(f"  {tree.name}: {example}" + ("" if proc.returncode == 0 else " FAILED"), flush=True)
        if proc.returncode:
            return f"{tree}: {example}: worker exit {proc.returncode}\n{proc.stderr[-2000:]}"
        return None

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return [r for r in pool.map(one, jobs) if r]


def manifest(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (posix relative path -> hex), written to ``manifest.json``."""
    folder.mkdir(parents=True, exist_ok=True)
    result = {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
              for p in sorted(folder.rglob("*")) if p.is_file() and p.name != "manifest.json"}
    (folder / "manifest.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return result


def compare(a: Path, b: Path, label_a: str, label_b: str, lines: int, keep_base_manifest: bool = False) -> int:
    """Print the files that differ between the manifests of ``a`` and ``b``; the number of differences.
    ``keep_base_manifest``: read ``a``'s manifest.json as written (an earlier run) instead of rehashing."""
    ma = json.loads((a / "manifest.json").read_text(encoding="utf-8")) if keep_base_manifest else manifest(a)
    mb = manifest(b)
    differ = 0
    for name in sorted(set(ma) | set(mb)):
        if ma.get(name) == mb.get(name):
            continue
        differ += 1
        if name not in ma or name not in mb:
            print(f"ONLY IN {label_a if name in ma else label_b}: {name}")
            continue
        print(f"DIFFERS: {name}")
        try:
            ta = (a / name).read_text(encoding="utf-8").splitlines()
            tb = (b / name).read_text(encoding="utf-8").splitlines()
        except UnicodeDecodeError:
            print("  (binary)")
            continue
        diff = list(difflib.unified_diff(ta, tb, f"{label_a}/{name}", f"{label_b}/{name}", lineterm="", n=1))
        for line in diff[:lines]:
            print("  " + line)
        if len(diff) > lines:
            print(f"  ... {len(diff) - lines} more diff lines")
    print(f"{len(set(ma) | set(mb))} files, {differ} differ")
    return differ


def _add_worktree(rev: str, out: Path) -> Path | None:
    """A throwaway detached worktree of ``rev`` in ``out``; None for an unknown revision."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", rev + "^{commit}"],
                         capture_output=True, text=True)
    if sha.returncode:
        return None
    tree = out / f"tree-{sha.stdout.strip()[:10]}"
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(tree), sha.stdout.strip()],
                   check=True, capture_output=True)
    return tree


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="folder for the generated files (default: a temporary folder, "
                        "kept when given)")
    parser.add_argument("--compare", metavar="REV", help="also generate git revision REV (a throwaway worktree) "
                        "and compare it with the working tree")
    parser.add_argument("--rev", metavar="REV", help="generate git revision REV instead of the working tree "
                        "(into OUT/REV; a baseline for --against)")
    parser.add_argument("--against", type=Path, metavar="DIR", help="compare the working tree with the files of "
                        "an earlier run (DIR: the folder holding manifest.json, e.g. OUT/main)")
    parser.add_argument("--only", action="append", default=[], metavar="GLOB",
                        help="example files matching GLOB only (repeatable), e.g. 'examples/car*'")
    parser.add_argument("--skip", action="append", default=[], metavar="GLOB",
                        help="leave out example files matching GLOB (repeatable), e.g. 'examples/*/bicycle*'")
    parser.add_argument("--methods", metavar="M[,M]", help="derivation methods to export with (default: all "
                        f"{len(METHODS)}: {','.join(METHODS)})")
    parser.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 2, help="parallel workers")
    parser.add_argument("--diff-lines", type=int, default=30, help="unified diff lines shown per file")
    parser.add_argument("--worker", nargs=3, metavar=("TREE", "EXAMPLE", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(Path(args.worker[0]), args.worker[1], Path(args.worker[2]))
        return 0
    if sum(x is not None for x in (args.compare, args.rev, args.against)) > 1:
        parser.error("--compare, --rev and --against exclude each other")
    if args.against is not None and not (args.against / "manifest.json").is_file():
        parser.error(f"--against {args.against}: no manifest.json there (write one with --out)")
    keep = args.out is not None
    out = args.out.resolve() if keep else Path(tempfile.mkdtemp(prefix="nhbridge-bytes-"))
    out.mkdir(parents=True, exist_ok=True)
    cc = out / "stub-cc"
    cc.write_text(STUB_CC)
    cc.chmod(0o755)
    trees: dict[str, Path] = {} if args.rev else {"working": ROOT}
    added = []
    try:
        for rev in filter(None, (args.compare, args.rev)):
            tree = _add_worktree(rev, out)
            if tree is None:
                print(f"byte_identity: unknown git revision {rev!r}", file=sys.stderr)
                return 2
            added.append(tree)
            trees[rev] = tree
        chosen = examples(ROOT, args.only, args.skip)
        jobs = [(tree, ex, out / label.replace("/", "_") / ex.removesuffix(".toml"))
                for ex in chosen for label, tree in trees.items() if (tree / ex).is_file()]
        for label, tree in trees.items():
            absent = [ex for ex in chosen if not (tree / ex).is_file()]
            if absent:  # an example added later: its files show as only in the other tree
                print(f"byte_identity: {len(absent)} example(s) not in {label}: {', '.join(absent)}", flush=True)
        for label in trees:
            shutil.rmtree(out / label.replace("/", "_"), ignore_errors=True)
        print(f"byte_identity: {len(jobs)} example runs into {out}", flush=True)
        failures = generate(jobs, max(1, args.jobs), cc, args.methods)
        for f in failures:
            print(f, file=sys.stderr)
        if args.compare or args.against:
            base = args.against.resolve() if args.against else out / args.compare.replace("/", "_")
            label = str(args.against) if args.against else args.compare
            differ = compare(base, out / "working", label, "working", args.diff_lines,
                             keep_base_manifest=args.against is not None)
            return 1 if differ or failures else 0
        folder = out / next(iter(trees)).replace("/", "_")
        files = manifest(folder)
        print(f"{len(files)} files; manifest {folder / 'manifest.json'}")
        return 1 if failures else 0
    finally:
        for tree in added:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                           capture_output=True)
        if not keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
