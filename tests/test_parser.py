"""The whitelisting expression parser: grammar, exactness and refusals."""

from __future__ import annotations

import pytest
import sympy as sp

from bridge.model.expressions import MAX_DEPTH, ExpressionError, parse_expression

X, Y = sp.symbols("x y")
NAMES = {"x": X, "y": Y}


def parse(text: str) -> sp.Expr:
    def resolve(name, pos):
        if name in NAMES:
            return NAMES[name]
        raise ExpressionError(f"unknown name {name!r}", pos)

    return parse_expression(text, resolve, lambda e, pos: sp.Symbol("D") * e)


@pytest.mark.parametrize("text, expected", [
    ("1 + 2*3", 7),
    ("2^3^2", 512),                    # right associative
    ("2**3**2", 512),
    ("-2^2", -4),                      # power binds tighter than unary minus
    ("2^-1", sp.Rational(1, 2)),
    ("(1 + 2)*3", 9),
    ("0.1 + 0.2", sp.Rational(3, 10)),  # exact decimals, no float rounding
    ("1e-3", sp.Rational(1, 1000)),
    ("12/4/3", 1),                     # left associative
    ("pi", sp.pi),
])
def test_arithmetic(text, expected):
    assert parse(text) == expected


def test_functions_and_names():
    assert parse("atan2(y, x) + min(x, y, 1) + abs(x)") == sp.atan2(Y, X) + sp.Min(X, Y, 1) + sp.Abs(X)
    assert parse("sqrt(x)*exp(y) - log(x)") == sp.sqrt(X) * sp.exp(Y) - sp.log(X)
    assert parse("der(x*y)") == sp.Symbol("D") * X * Y


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('ls')", "string literals are not allowed"),
    ("x.__class__", "'.' is not allowed"),
    ("lambda: 1", "':' is not allowed"),
    ("foo(x)", "unknown function 'foo'"),
    ("sin(x=1)", "'=' is not allowed"),
    ("atan2(x)", "takes 2 argument"),
    ("sin(x, y)", "takes 1 argument"),
    ("x +", "ends unexpectedly"),
    ("(x", "expected ')'"),
    ("x)", "unexpected ')'"),
    ("", "empty"),
    ("x^100000", "too large"),
    ("x/0", "division by zero"),
    ("z", "unknown name 'z'"),
    ("θ + 1", "non-ascii"),
    ("x[0]", "'[' is not allowed"),
    ("sin", "is a function"),
    ("1e400", "too large"),
    ("x y", "unexpected 'y'"),
    ("__x", "not allowed"),
])
def test_refusals(text, fragment):
    with pytest.raises(ExpressionError) as info:
        parse(text)
    assert fragment.lower() in info.value.message.lower()


def test_depth_limit_before_python_recursion_limit():
    with pytest.raises(ExpressionError, match="nested too deep"):
        parse("(" * (MAX_DEPTH + 5) + "x" + ")" * (MAX_DEPTH + 5))
    assert parse("(" * (MAX_DEPTH // 2) + "x" + ")" * (MAX_DEPTH // 2)) == X


def test_no_eval_or_sympify_of_raw_text():
    """No call of eval/exec/sympify/parse_expr anywhere on the path from text to expression."""
    import ast
    import inspect

    import bridge.cosim.scenario as scenario
    import bridge.cosim.ssp as ssp
    import bridge.model.expressions as mod
    import bridge.model.loader as loader
    import bridge.validation.reference as reference
    import bridge.validation.settings as settings

    banned_names = {"eval", "exec", "sympify", "parse_expr", "S", "compile", "__import__"}
    banned_attrs = {"sympify", "parse_expr", "eval"}
    # system files, [reference]/[validation] tables, co-simulation scenarios and SSP packages are untrusted
    for module in (mod, loader, reference, settings, scenario, ssp):
        for node in ast.walk(ast.parse(inspect.getsource(module))):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name):
                    assert func.id not in banned_names, (module.__name__, func.id, node.lineno)
                elif isinstance(func, ast.Attribute):
                    assert func.attr not in banned_attrs, (module.__name__, func.attr, node.lineno)
