"""Common factors pulled out of sums (bridge.derivation.factors): exact, and fewer operations after CSE.

The reference is the expression itself: the pulled form must evaluate to the same numbers at random points
(no assumptions, no expansion), on the equations of the 8-link snake and the bicycle by lagrange and maggi (the
auxiliary split blocks included). The counts are counted by bridge.derivation.stats, with and without the pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy as sp

from bridge.derivation.factors import pull_common_factors, pull_common_factors_symengine
from bridge.derivation.stats import eom_exprs, eom_operation_count, operation_count
from bridge.derivation.symengine_forms import convert_graph, symengine_forms

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import snake  # noqa: E402


def test_small_cases():
    a, b, x, y = sp.symbols("a b x y")
    assert pull_common_factors([a * b * x + a * b**2 * y])[0] == a * b * (x + b * y)
    assert pull_common_factors([2 * a * x + 3 * a * y])[0] == a * (2 * x + 3 * y)
    assert pull_common_factors([x / a + y / a])[0] == x / a + y / a  # negative powers stay in the terms
    assert pull_common_factors([sp.sin(a * x + a * y)])[0] == sp.sin(a * (x + y))  # inner sums too


def test_small_cases_symengine():
    """The symengine form of the pass (the generated C's) pulls the same factors; a Piecewise is left whole."""
    a, b, x, y = se.symbols("a b x y")
    assert pull_common_factors_symengine([a * b * x + a * b**2 * y])[0] == a * b * (x + b * y)
    assert pull_common_factors_symengine([2 * a * x + 3 * a * y])[0] == a * (2 * x + 3 * y)
    assert pull_common_factors_symengine([x / a + y / a])[0] == x / a + y / a
    assert pull_common_factors_symengine([se.sin(a * x + a * y)])[0] == se.sin(a * (x + y))
    piecewise = se.Piecewise((a * x + a * y, x > 0), (y, True))
    assert pull_common_factors_symengine([piecewise + a * x])[0] == piecewise + a * x


SYSTEMS = {"snake8": snake.snake_toml(8), "bicycle": ROOT / "examples" / "engineering" / "bicycle.toml"}


# The largest equations of the examples are where pulling common factors must stay exact.
@pytest.mark.parametrize("method", ["lagrange", "maggi"])
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_exact_and_smaller(name, method, derivations):
    eom = derivations.eom(SYSTEMS[name], method)  # the pass is under test here, not the derivation
    exprs = eom_exprs(eom)
    pulled = pull_common_factors(exprs)
    symbols = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    # symengine's Lambdify: the same double-precision evaluation of both forms as sympy's lambdify, whose
    # printing and compiling of the bicycle's maggi equations alone took minutes of CPU; with common
    # subexpressions evaluated once (the values are the forms', to rounding: 8e-16 relative on the bicycle's maggi
    # equations). Both forms reach symengine through the product's graph conversion (symengine_forms); the
    # symengine pass starts from symengine's own tree conversion (symengine.sympify), so the comparison of the
    # two checks that conversion too.
    before, after = (se.Lambdify(symbols, symengine_forms(e), backend="lambda", cse=True) for e in (exprs, pulled))
    in_symengine = se.Lambdify(symbols, pull_common_factors_symengine([se.sympify(e) for e in exprs]),
                               backend="lambda", cse=True)
    rng = np.random.default_rng(5)
    for _ in range(3):
        point = rng.uniform(-1.5, 1.5, len(symbols))
        a, b = np.array(before(point), dtype=float).ravel(), np.array(after(point), dtype=float).ravel()
        assert np.abs(a - b).max() <= 1e-12 * max(1.0, np.abs(a).max())
        c = np.array(in_symengine(point), dtype=float).ravel()
        assert np.abs(a - c).max() <= 1e-12 * max(1.0, np.abs(a).max())
    plain = operation_count(exprs)
    assert eom_operation_count(eom) == operation_count(pulled) < plain
    if name == "snake8" and method == "lagrange":
        assert operation_count(pulled) < 0.8 * plain  # the snake's sums share link factors


def test_graph_conversion_is_symengines_own():
    """The graph conversion (each distinct node built once) gives the expression ``symengine.sympify`` gives, on
    every node kind: rebuilt arithmetic and functions, and what it converts whole (numbers, piecewise, undefined
    functions, other functions)."""
    x, y, z = sp.symbols("x y z")
    shared = sp.sin(x * y) + sp.Rational(3, 7) * z ** sp.Rational(1, 3)
    exprs = [shared ** 2 - 1 / shared + sp.exp(-x) * sp.log(y) / sp.tan(z),
             sp.Float("0.1") * sp.cos(shared) + sp.Function("f")(x) + sp.atan2(y, x) + sp.sign(z) * sp.pi,
             sp.Piecewise((shared, x > 0), (y, True)) + sp.sqrt(x ** 2 + 1)]
    for expr in exprs:
        assert convert_graph(expr) == se.sympify(expr)
