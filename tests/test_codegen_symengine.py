"""C printed straight from symengine (bridge.codegen.symengine_c): compiled by gcc, it evaluates every kind of node
the printer writes as sympy evaluates the expression exactly, and the memoized conversion gives symengine's own
forms."""

from __future__ import annotations

import subprocess

import pytest
import symengine as se
import sympy as sp

from bridge.codegen.c import NhbCPrinter, cse_block
from bridge.codegen.symengine_c import SymengineCPrinter
from bridge.derivation.symengine_forms import convert_graph
from bridge.fmu.build import compiler

X, Y, Z = sp.symbols("x y z")

#: every branch of the printer: signs, denominators, powers (integer, rational, -1, 1/2, 1/3, E**x), numbers
#: (int, beyond 2^31, rational, float), the elementary functions, and nodes it hands to the sympy printer
EXPRESSIONS = [
    -2 * X * Y / Z, X / (Y * Z), -X / (Y + Z), X ** -1, 1 / (X * Y), sp.exp(-X) * Y, sp.exp(X - Y) / Z,
    sp.sqrt(X * X + Y * Y), X / sp.sqrt(Y * Y + 1), (Y * Y + 1) ** sp.Rational(-3, 2), (X * X + 2) ** sp.Rational(1, 3),
    (X - Y) ** 3 - (Y + Z) ** -2, sp.Rational(3, 4) * X - sp.Rational(1, 3) * Y, 2.5 * X - 1.25 * Y * Z,
    3_000_000_000 * X + 7, -(X + Y) * Z, -X ** 2, X - (Y - Z) * (Y + Z), sp.sin(X) * sp.cos(Y) - sp.tan(Z / 4),
    sp.atan2(Y, X) + sp.asin(X / 3) + sp.acos(Y / 3) + sp.atan(Z), sp.sinh(X) * sp.cosh(Y) + sp.tanh(Z),
    sp.log(X * X + 1) + sp.Abs(Y - Z), sp.Piecewise((X * Y, X > 0), (Y - Z, True)), sp.sign(X - Y) * Z,
    sp.Max(X, Y) - sp.Min(Y, Z), sp.pi * X + sp.E * Y, sp.floor(X * 3) + sp.ceiling(Y * 3), sp.Integer(0) * X,
    X * Y * Z / (X * X + Y * Y + 1) - X * Y / (X * X + Y * Y + 1),
]
POINTS = [(0.7, -1.3, 2.1), (-0.4, 0.9, -1.7), (1.9, 0.2, 0.55)]


def _run(tmp_path, functions: list[str], n: int) -> list[list[float]]:
    """Compile ``functions`` (each ``static void f(const double *v, double *out)``) and evaluate them at POINTS."""
    rows = ", ".join("{" + ", ".join(map(repr, p)) + "}" for p in POINTS)
    src = tmp_path / "exprs.c"
    src.write_text("#include <math.h>\n#include <stdio.h>\n" + "\n".join(functions)
                   + f"\nstatic const double P[][3] = {{{rows}}};\nint main(void) {{ double out[{n}];\n"
                   f"  for (int i = 0; i < {len(POINTS)}; ++i) {{ f(P[i], out);\n"
                   f'    for (int k = 0; k < {n}; ++k) printf("%.17g\\n", out[k]); }}\n  return 0; }}\n',
                   encoding="utf-8")
    exe = tmp_path / "exprs"
    subprocess.run([*compiler().split(), "-std=c99", "-O2", "-ffp-contract=off", "-Wall", "-Wextra", "-Werror",
                    "-o", str(exe), str(src), "-lm"], check=True)
    values = [float(v) for v in subprocess.run([str(exe)], check=True, capture_output=True, text=True).stdout.split()]
    return [values[i * n:(i + 1) * n] for i in range(len(POINTS))]


def _exact(expr, point) -> float:
    return float(expr.subs({s: sp.Rational(v) for s, v in zip((X, Y, Z), point, strict=True)}).evalf(40))


def _check(got: list[list[float]]) -> None:
    for point, row in zip(POINTS, got, strict=True):
        for expr, value in zip(EXPRESSIONS, row, strict=True):
            assert value == pytest.approx(_exact(expr, point), rel=1e-14, abs=1e-15), (expr, point)


def test_printed_nodes_evaluate_like_sympy(tmp_path):
    """Each expression printed on its own from its symengine form."""
    printer = SymengineCPrinter(NhbCPrinter({X: "v[0]", Y: "v[1]", Z: "v[2]"}))
    body = [f"    out[{k}] = {printer.doprint(e)};" for k, e in enumerate(convert_graph(e) for e in EXPRESSIONS)]
    _check(_run(tmp_path, ["static void f(const double *v, double *out)", "{", *body, "}"], len(EXPRESSIONS)))


def test_joint_cse_block_evaluates_like_sympy(tmp_path):
    """All expressions in one CSE pass (temporaries shared across them), as the generated model code is."""
    temps, values = cse_block(NhbCPrinter({X: "v[0]", Y: "v[1]", Z: "v[2]"}), EXPRESSIONS, "c")
    assert temps and all(t.startswith("    const double c_") for t in temps)
    body = [*temps, *(f"    out[{k}] = {v};" for k, v in enumerate(values))]
    _check(_run(tmp_path, ["static void f(const double *v, double *out)", "{", *body, "}"], len(EXPRESSIONS)))


def test_memoized_conversion_gives_symengines_forms():
    """convert_graph equals symengine.sympify expression by expression, and shares what the expressions share."""
    shared = (X * sp.sin(Y) + Z) ** 2
    exprs = [*EXPRESSIONS, shared * X, shared + Y]
    converted = [convert_graph(e) for e in exprs]
    assert converted == [se.sympify(e) for e in exprs]
    assert converted[-2].args[0] is not None and se.sympify(shared) in (*converted[-2].args, *converted[-1].args)
