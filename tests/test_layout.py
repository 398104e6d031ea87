"""The package layout shows the pipeline: one subpackage per stage, imports running one way, no circles.

Read statically from the source (``ast``), function-level imports included, so a lazy import that runs
against the pipeline is caught as well as a module-level one.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "bridge"

# The stages in pipeline order; a module may import from its own stage and from earlier ones only.
STAGES = ["bridge.errors", "bridge.atomic", "bridge.model", "bridge.derivation", "bridge.simulation",
          "bridge.modelica", "bridge.fmu", "bridge.linearization", "bridge.validation", "bridge.cosim",
          "bridge.control", "bridge.sweeps", "bridge.commandline", "bridge.cli", "bridge.pytest_plugin"]
RANK = {"bridge.errors": 0, "bridge.atomic": 0, "bridge.model": 1, "bridge.derivation": 2, "bridge.simulation": 3,
        "bridge.modelica": 4, "bridge.fmu": 5, "bridge.linearization": 6, "bridge.validation": 7,
        "bridge.cosim": 7, "bridge.control": 7, "bridge.sweeps": 8, "bridge.commandline": 9, "bridge.cli": 9,
        "bridge.pytest_plugin": 9}


def is_command_module(module: str) -> bool:
    """``bridge.<stage>.command``: the stage's ``nhbridge`` sub-commands (it may use every stage, as the CLI does)."""
    parts = module.split(".")
    return len(parts) == 3 and parts[0] == "bridge" and parts[2] == "command"


def module_name(path: Path) -> tuple[str, bool]:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def stage(module: str) -> str | None:
    if is_command_module(module):  # a stage's command.py is the command line's face of it: ranked with the CLI
        return "bridge.cli"
    for s in sorted(RANK, key=len, reverse=True):
        if module == s or module.startswith(s + "."):
            return s
    return None


def imports(path: Path) -> list[tuple[str, list[str], int, bool]]:
    """(absolute module, imported names, line, at module level) for every bridge import in the file."""
    name, is_pkg = module_name(path)
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = {id(n) for n in tree.body}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_pkg else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod == "bridge" or mod.startswith("bridge."):
                found.append((mod, [a.name for a in node.names], node.lineno, id(node) in top))
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("bridge"):
                    found.append((a.name, [], node.lineno, id(node) in top))
    return found


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_belongs_to_a_stage():
    orphans = [str(p.relative_to(PACKAGE.parent)) for p in SOURCES
               if module_name(p)[0] != "bridge" and stage(module_name(p)[0]) is None]
    assert not orphans, f"modules outside the pipeline's stages: {orphans}"


def test_imports_run_one_way():
    backwards = []
    for path in SOURCES:
        here = module_name(path)[0]
        if here == "bridge":
            continue  # the public API re-exports every stage
        for mod, names, line, _ in imports(path):
            if mod == "bridge":
                assert names == ["__version__"], f"{path}:{line}: import from the package root: {names}"
                continue
            there = stage(mod)
            if there is not None and RANK[there] > RANK[stage(here)]:
                backwards.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({stage(here)} -> {there})")
    assert not backwards, "imports against the pipeline:\n" + "\n".join(backwards)


def test_no_import_cycles_between_modules():
    """No cycle among module-level imports (a cycle makes import order matter and hides layering)."""
    graph: dict[str, set[str]] = {}
    known = {module_name(p)[0] for p in SOURCES}
    for path in SOURCES:
        here = module_name(path)[0]
        deps = set()
        for mod, names, _, top in imports(path):
            if not top or mod == "bridge":
                continue
            for n in names or [""]:
                sub = f"{mod}.{n}" if n else mod
                deps.add(sub if sub in known else mod)
        graph[here] = deps & known - {here}
    cycles, state = [], {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                if nxt.startswith(node + ".") or node.startswith(nxt + "."):
                    continue  # a package importing its own submodules (its __init__) is not a cycle
                cycles.append(" -> ".join([*trail[trail.index(nxt):], nxt]) if nxt in trail else f"{node}->{nxt}")
            elif not state.get(nxt):
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize("heavy", ["sympy", "matplotlib", "fmpy", "lxml", "scipy"])
def test_import_bridge_is_light(heavy):
    """``import bridge`` loads none of the heavy libraries; they come with the stage that needs them."""
    code = f"import sys, bridge; bridge.BridgeError; print({heavy!r} in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_public_api_names_resolve():
    import bridge

    for name in bridge.__all__:
        assert getattr(bridge, name) is not None
    assert callable(bridge.load_system) and callable(bridge.derive) and callable(bridge.simulate)
    with pytest.raises(AttributeError):
        bridge.no_such_name  # noqa: B018
