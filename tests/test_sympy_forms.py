"""The shared-subexpression symengine -> sympy conversion gives exactly ``sympy.sympify``'s expression.

* on the derived equations of real systems (every symengine expression a method converts), the result has the
  same ``srepr`` as ``sympy.sympify`` of the symengine expression;
* expressions with functions (one-argument ones, two-argument ones, Piecewise, constants) convert the same;
* the numeric model compiles the symengine origin of a converted entry, which evaluates like the entry itself.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy as sp

import bridge
from bridge.derivation.symengine_forms import symengine_form
from bridge.model import mechanics
from bridge.model.sympy_forms import symengine_origin, sympy_form

ROOT = Path(__file__).parent.parent


@pytest.mark.parametrize(("path", "method"), [("examples/rolling_wheel.toml", "appell"),
                                              ("examples/chaplygin_sleigh.toml", "maggi"),
                                              ("examples/rolling_disk.toml", "lagrange")])
def test_conversion_of_derived_equations_is_sympify(path, method, monkeypatch):
    converted = []
    original = mechanics.to_sp

    def recording(expr):
        if isinstance(expr, se.Basic):
            converted.append(expr)
        return original(expr)

    monkeypatch.setattr(mechanics, "to_sp", recording)
    system = bridge.load_system(ROOT / path)
    bridge.derive(system, method)
    assert len(converted) > 10
    for expr in converted:
        assert sp.srepr(sympy_form(expr)) == sp.srepr(expr._sympy_())


def test_functions_and_shared_subexpressions_convert_as_sympify():
    x, y = se.symbols("x y")
    shared = se.sin(x) * se.cos(y) + x ** 2 / 3
    exprs = [
        shared * (1 + shared) - se.exp(shared) / (2 + shared) ** se.Rational(3, 2),
        se.atan2(y, x) + se.Abs(x - y) + se.sqrt(x ** 2 + y ** 2) * se.pi,
        se.Piecewise((x, se.Lt(x, 0)), (shared, True)) + se.sign(y) + se.log(1 + x ** 2),
        se.Max(x, y) - se.Min(x, shared) + se.tanh(shared) + se.Float(0.25) * x,
        se.Integer(0), se.Integer(7), x,
    ]
    for expr in exprs:
        assert sp.srepr(sympy_form(expr)) == sp.srepr(expr._sympy_())


def test_origin_is_kept_and_compiled():
    x, y = se.symbols("x y")
    expr = (se.sin(x) + y) ** 2 * se.cos(x) - 2 * (x + y)
    converted = sympy_form(expr)
    assert symengine_origin(converted) is expr
    assert symengine_form(converted) is expr
    f = sp.lambdify(sp.symbols("x y"), converted, "math")
    g = se.Lambdify([x, y], [symengine_form(converted)])
    rng = np.random.default_rng(3)
    for a, b in rng.uniform(-2, 2, (5, 2)):
        assert float(g([a, b])[0]) == pytest.approx(f(a, b), rel=1e-14, abs=1e-14)
    assert symengine_origin(sp.Symbol("not_converted_here") + 1) is None
