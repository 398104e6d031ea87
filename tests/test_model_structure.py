"""The model stage's structure: no import circle among its modules (function-level imports included), no private
name imported from another module, and the consistent start state shared by the loader and ``--set``
(:mod:`bridge.model.start_state`) against the closed form of a Cartesian pendulum."""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

from bridge.errors import SystemFileError
from bridge.model import parse_system

MODEL = Path(__file__).resolve().parent.parent / "bridge" / "model"


def _model_imports() -> dict[str, list[tuple[str, str]]]:
    """module -> [(imported module of bridge.model, imported name)] for every import anywhere in the module."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in MODEL.glob("*.py"):
        name = path.stem
        found[name] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 1:
                for alias in node.names:
                    target = node.module or alias.name  # "from . import symbols" imports a module
                    found[name].append((target.split(".")[0], alias.name))
    return found


def test_no_import_cycle_in_the_model_stage():
    imports = _model_imports()
    graph = {m: {t for t, _ in targets if t in imports and t != m} for m, targets in imports.items()}
    cycles = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append(" -> ".join([*trail[trail.index(nxt):], nxt]))
            elif nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert not cycles, f"import cycles in bridge.model: {cycles}"


def test_no_private_name_imported_across_model_modules():
    private = [f"{m} <- {t}.{n}" for m, targets in _model_imports().items() for t, n in targets
               if n.startswith("_") and not n.startswith("__")]
    assert not private, f"private names imported: {private}"


PENDULUM = """
name = "P"
[coordinates]
x = {{ start = {x}, velocity = {vx} }}
y = {{ start = -0.5, velocity = 0.0 }}
[parameters]
l = 0.8
[energy]
kinetic = "(der(x)^2 + der(y)^2)/2"
potential = "9.81*y"
[constraints]
holonomic = ["x^2 + y^2 - l^2"]
{method}
"""


def test_loader_completes_the_start_state_from_the_independent_coordinate():
    """With x independent, Newton finds y = -sqrt(l^2 - x^2) (from y = -0.5, the branch below) and the velocity
    constraint x x' + y y' = 0 gives y' = -x x'/y."""
    x, vx = 0.3, 1.2
    system = parse_system(PENDULUM.format(x=x, vx=vx, method='[method]\nindependent = ["x"]'))
    y = system.coordinate("y")
    assert y.start == pytest.approx(-math.sqrt(0.8**2 - x**2), rel=1e-12)
    assert y.velocity == pytest.approx(-x * vx / y.start, rel=1e-12)
    assert system.adjusted_start == ("y", "der(y)")


def test_with_values_makes_the_set_start_state_consistent_the_same_way():
    """Setting der(x) on a consistent state recomputes der(y) from the constraint (the shared start state)."""
    l, x = 0.8, 0.3
    y0 = -math.sqrt(l**2 - x**2)
    text = PENDULUM.format(x=x, vx=0.0, method="").replace("start = -0.5", f"start = {y0!r}")
    system = parse_system(text).with_values({"der(x)": 2.0})
    assert system.coordinate("x").velocity == 2.0
    assert system.coordinate("y").velocity == pytest.approx(-x * 2.0 / y0, rel=1e-12)


def test_an_inconsistent_start_without_a_split_is_refused_at_the_constraint():
    with pytest.raises(SystemFileError) as err:
        parse_system(PENDULUM.format(x=0.3, vx=0.0, method=""))
    assert "constraints.holonomic[1]" in str(err.value)
    assert "violate this constraint" in str(err.value)
