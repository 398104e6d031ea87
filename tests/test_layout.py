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

# The stages in pipeline order; a module may import from its own stage and from earlier ones only. tools/ (running
# external programs on files and text: gcc and the cross compilers with their object cache, Rumoca, pymoca, omc, the
# FMU sandbox) lies below everything that writes; codegen (what every writer shares) lies below the writers
# modelica/ and fmu/, which call tools/ to compile; backends/ gives the exported Modelica to the other compilers
# (their simulations and FMUs); validation/ compares those runs with the native simulation. A stage's command
# module (``bridge.<stage>.command``) may use every stage, as the CLI does.
RANK = {"bridge.errors": 0, "bridge.atomic": 0, "bridge.version": 0, "bridge.kept": 0,
        "bridge.tools": 1, "bridge.model": 2,
        "bridge.derivation": 3, "bridge.simulation": 4, "bridge.codegen": 5, "bridge.modelica": 6, "bridge.fmu": 7,
        "bridge.backends": 8, "bridge.linearization": 8, "bridge.validation": 9, "bridge.cosim": 9,
        "bridge.control": 9, "bridge.animation": 9, "bridge.sweeps": 10, "bridge.commandline": 11, "bridge.cli": 11,
        "bridge.pytest_plugin": 11}
STAGES = sorted(RANK, key=RANK.get)


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
                backwards.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {names} from the package root "
                                 "(import them from their module, e.g. bridge.version)")
                continue
            there = stage(mod)
            if there is not None and RANK[there] > RANK[stage(here)]:
                backwards.append(f"{path.relative_to(PACKAGE.parent)}:{line} ({stage(here)} -> {there})")
    assert not backwards, "imports against the pipeline:\n" + "\n".join(backwards)


KNOWN = {module_name(p)[0] for p in SOURCES}


def import_graph() -> dict[str, set[str]]:
    """Module -> the bridge modules it imports, function-level imports (and ``TYPE_CHECKING`` blocks) included;
    ``from package import name`` counts as an import of the submodule ``package.name`` where one exists."""
    graph: dict[str, set[str]] = {}
    for path in SOURCES:
        here = module_name(path)[0]
        deps = set()
        for mod, names, _, _ in imports(path):
            for n in names or [""]:
                sub = f"{mod}.{n}" if n else mod
                deps.add(sub if sub in KNOWN else mod)
        graph[here] = deps & KNOWN - {here}
    return graph


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The cycles of ``graph``: its strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_finds_a_planted_cycle():
    """The checker itself: a circle through a function-level import is found, a chain is not."""
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert strongly_connected(graph) == [["a", "b", "c"]]
    assert strongly_connected({"a": {"b"}, "b": set()}) == []
    source = "def f():\n    from .b import g\n"
    tree = ast.parse(source)
    assert any(isinstance(n, ast.ImportFrom) and n.module == "b" for n in ast.walk(tree))


def test_no_import_cycles_between_modules():
    """No cycle among the modules of bridge/, function-level imports included (a lazy import that closes a circle
    only hides it: import order then matters, and no stage can be read, tested or replaced alone)."""
    cycles = strongly_connected(import_graph())
    assert not cycles, "import cycles (each line: the modules of one circle):\n" + "\n".join(
        ", ".join(c) for c in cycles)


def test_no_private_names_imported_across_modules():
    """A name starting with ``_`` belongs to its module: another module imports none (it asks for a public name)."""
    found = []
    for path in SOURCES:
        here = module_name(path)[0]
        for mod, names, line, _ in imports(path):
            for n in names:
                if n.startswith("_") and not n.startswith("__") and mod != here:
                    found.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports {n} from {mod}")
            if any(part.startswith("_") and not part.startswith("__") for part in mod.split(".")):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} imports the private module {mod}")
    assert not found, "private names imported across modules:\n" + "\n".join(found)


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


MAX_LINES = 800
ROOT = PACKAGE.parent
#: files of bridge/ and fmu/ allowed over MAX_LINES, each with its reason (none at present); fmu/include holds the
#: FMI standard's own headers, which are not nhbridge's text and are not counted
LONG_FILES: dict[str, str] = {}


def test_no_file_is_over_800_lines():
    """Every source file of ``bridge/`` and the C runtime ``fmu/`` is at most about 800 lines (a longer one is cut
    along its sections, or named in LONG_FILES with the reason)."""
    files = [*PACKAGE.rglob("*.py"), *(p for p in (ROOT / "fmu").rglob("*")
                                       if p.suffix in (".c", ".h", ".py") and "include" not in p.parts)]
    assert len(files) > 100
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    unexplained = {f: n for f, n in long.items() if f not in LONG_FILES}
    assert not unexplained, f"files over {MAX_LINES} lines (cut them, or add them to LONG_FILES with the reason): " \
                            f"{unexplained}"
    stale = sorted(set(LONG_FILES) - set(long))
    assert not stale, f"LONG_FILES names files no longer over {MAX_LINES} lines: {stale}"
