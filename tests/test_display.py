"""Display never blocks: the default rendering tidies within a time budget and stays exactly equal to the
derived equations; expressions beyond the budget are printed as derived; --simplify is opt-in."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sympy.parsing.sympy_parser import parse_expr

import bridge
from bridge.cli import main
from bridge.derivation import render

ROOT = Path(__file__).resolve().parents[1]


def _snake():
    spec = importlib.util.spec_from_file_location("snake_benchmark", ROOT / "benchmarks" / "snake.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


snake = _snake()


def _parse(text: str) -> sp.Expr:
    """Our own printed output back to sympy (test only): der(x) is the symbol named "der(x)"."""
    return parse_expr(text, local_dict={"der": lambda s: sp.Symbol(f"der({s})")})


def _agree(printed: list[str], derived: list[sp.Expr], rng: np.random.Generator, points: int = 4) -> None:
    """Each printed expression equals its derived one at random values of all symbols."""
    for text, expr in zip(printed, derived):
        shown = _parse(text)
        symbols = sorted(shown.free_symbols | sp.sympify(expr).free_symbols, key=str)
        for _ in range(points):
            values = {s: rng.uniform(-1.5, 1.5) for s in symbols}
            a, b = complex(sp.sympify(expr).evalf(subs=values)), complex(shown.evalf(subs=values))
            assert abs(a - b) <= 1e-10 * max(1.0, abs(a)), (text, expr)


@pytest.fixture(scope="module")
def snake4():
    return bridge.derive(bridge.parse_system(snake.snake_toml(4)), "lagrange")


def test_json_tidied_equals_derived(snake4):
    # a budget no load can exhaust: the default (1 s of wall time) is shared with everything else the machine
    # runs, and the assertion below is about what the tidy-up does, not how fast
    data = json.loads(render.to_json(snake4, budget=600.0))
    M, F = snake4.mass_matrix, snake4.forcing
    raw = json.loads(render.to_json(snake4, budget=0.0))
    assert sum(map(len, data["forcing"])) < 0.7 * sum(map(len, raw["forcing"]))   # the tidy-up did something
    rng = np.random.default_rng(4)
    _agree(data["forcing"], list(F), rng)
    _agree([x for row in data["mass_matrix"] for x in row], list(M), rng, points=2)


def test_nielsen_tidied_equal_derived():
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "car.toml"), "nielsen")
    data = json.loads(render.to_json(eom))
    rng = np.random.default_rng(3)
    _agree(data["forcing"], list(eom.forcing), rng)
    _agree([x for row in data["mass_matrix"] for x in row], list(eom.mass_matrix), rng, points=1)


def test_reduced_methods_render():
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "car.toml"), "maggi")
    for fmt, render_ in render.FORMATS.items():
        out = render_(eom)
        assert all(name in out for name in eom.independent + eom.dependent), fmt


def test_spent_budget_prints_as_derived(snake4):
    """With no budget left nothing is simplified: the output is the derived expressions' text."""
    data = json.loads(render.to_json(snake4, budget=0.0))
    assert data["forcing"] == [render._str(e) for e in snake4.forcing]
    text = render.to_text(snake4, budget=0.0)
    assert render._str(snake4.forcing[0]) in text


def test_simplify_on_request():
    eom = bridge.derive(bridge.load_system(ROOT / "examples" / "car.toml"), "lagrange")
    data = json.loads(render.to_json(eom, simplify=True))
    rng = np.random.default_rng(1)
    _agree(data["forcing"], list(eom.forcing), rng)
    _agree([x for row in data["mass_matrix"] for x in row], list(eom.mass_matrix), rng, points=1)


@pytest.mark.parametrize("fmt", ["text", "latex", "json"])
def test_cli_formats(fmt, tmp_path, capsys):
    path = tmp_path / "snake3.toml"
    path.write_text(snake.snake_toml(3))
    assert main(["derive", str(path), "--format", fmt]) == 0
    out = capsys.readouterr().out
    assert {"text": "equations (mass matrix", "latex": r"\begin{align}", "json": '"mass_matrix"'}[fmt] in out
    assert main(["derive", str(ROOT / "examples" / "chaplygin_sleigh.toml"), "-f", fmt, "--simplify"]) == 0
