"""Structural zeros: identically zero coefficients reach the Modelica text and the C source as 0.

The system: a homogeneous ball rolling without slipping on a turntable turning at the constant rate
Omega. Rolling: the contact point moves with the table, ``v_centre + omega x (-a e_z) = Omega e_z x r``,
i.e. ``x' - a omega_y + Omega y = 0`` and ``y' + a omega_x - Omega x = 0`` (affine in the velocities).
The space-frame angular velocity is written as a modeller computing it from body axes would:
``omega = R(psi, theta, phi) omega_body`` (z-x-z Euler angles) expanded, so the coefficient of ``der(psi)``
is ``a sin(theta) cos(theta) cos(psi) (sin(phi)^2 + cos(phi)^2 - 1)`` expanded: identically zero, not in
sympy's automatic form. The true incidence is computed independently with ``sympy.simplify``.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

from bridge.derivation.methods.base import derive
from bridge.derivation.zeros import is_zero_symbolic, reduce_structural_zeros
from bridge.fmu.layout import layout
from bridge.fmu.model_c import model_c
from bridge.fmu.plan import CModelPlan
from bridge.model.loader import parse_system
from bridge.modelica.export import model_source

TH, PH, PS, DTH, DPH, DPS = sp.symbols("theta phi psi dtheta dphi dpsi")


def _space_angular_velocity() -> sp.Matrix:
    """``R omega_body`` expanded (z-x-z Euler angles), without simplification."""
    def rz(a):
        return sp.Matrix([[sp.cos(a), -sp.sin(a), 0], [sp.sin(a), sp.cos(a), 0], [0, 0, 1]])

    def rx(a):
        return sp.Matrix([[1, 0, 0], [0, sp.cos(a), -sp.sin(a)], [0, sp.sin(a), sp.cos(a)]])

    body = sp.Matrix([DPS * sp.sin(TH) * sp.sin(PH) + DTH * sp.cos(PH),
                      DPS * sp.sin(TH) * sp.cos(PH) - DTH * sp.sin(PH),
                      DPS * sp.cos(TH) + DPH])
    return sp.expand(rz(PS) * rx(TH) * rz(PH) * body)


def _text(expr: sp.Expr) -> str:
    out = sp.sstr(expr).replace("**", "^")
    for name in ("theta", "phi", "psi"):
        out = out.replace(f"d{name}", f"der({name})")
    return out


KINETIC = ("J/2*((der(psi)*sin(theta)*sin(phi) + der(theta)*cos(phi))^2 + (der(psi)*sin(theta)*cos(phi) "
           "- der(theta)*sin(phi))^2 + (der(psi)*cos(theta) + der(phi))^2) + m/2*(der(x)^2 + der(y)^2)")


def turntable_ball() -> str:
    w = _space_angular_velocity()
    return f"""
name = "TurntableBall"
description = "Homogeneous ball rolling without slipping on a turntable turning at the constant rate Omega"

[coordinates]
theta = {{ start = 0.7, velocity = 0.5, unit = "rad" }}
phi   = {{ start = 0.2, velocity = 2.0, unit = "rad" }}
psi   = {{ start = 0.3, velocity = -1.0, unit = "rad" }}
x     = {{ start = 0.1, velocity = 0.0, unit = "m" }}
y     = {{ start = 0.0, velocity = 0.0, unit = "m" }}

[parameters]
m = {{ value = 2.0, unit = "kg" }}
a = {{ value = 0.1, unit = "m" }}
J = {{ value = 0.008, unit = "kg.m2" }}
Omega = {{ value = 1.5, unit = "rad/s" }}

[energy]
kinetic = "{KINETIC}"
potential = "0"

[constraints]
holonomic = []
nonholonomic = [
  "der(x) - a*({_text(w[1])}) + Omega*y",
  "der(y) + a*({_text(w[0])}) - Omega*x",
]

[method]
independent = ["theta", "phi", "psi"]

[simulation]
stop_time = 4.0
"""


@pytest.fixture(scope="module")
def system():
    return parse_system(turntable_ball(), "turntable_ball.toml")


def test_the_constraints_are_the_rolling_condition():
    w = sp.simplify(_space_angular_velocity())
    assert sp.simplify(w[0] - (DTH * sp.cos(PS) + DPH * sp.sin(TH) * sp.sin(PS))) == 0
    assert sp.simplify(w[1] - (DTH * sp.sin(PS) - DPH * sp.sin(TH) * sp.cos(PS))) == 0
    assert "der(psi)" in turntable_ball().split("nonholonomic")[1]  # the zero coefficient is in the text


def _nonzero(e: sp.Expr) -> bool:
    """Whether ``e`` is not identically zero, independently of the pass under test: a value above 1e-12 at a
    random point, evaluated to 30 digits (where an identically zero entry gives round-off near 1e-30), proves it
    nonzero; an entry (near) zero there is decided by ``sympy.simplify`` (which took 2 to 5 s of CPU per method
    when it decided every entry)."""
    if e == 0:
        return False
    rng = np.random.default_rng(0)
    point = {s: sp.Rational(int(rng.integers(300, 1700)), 1000) for s in sorted(e.free_symbols, key=str)}
    value = sp.N(e, 30, subs=point)
    if value.is_number and abs(complex(value)) > 1e-12:
        return True
    return sp.simplify(e) != 0


def _true_pattern(mat: sp.Matrix, before: sp.Matrix) -> np.ndarray:
    return np.array([[_nonzero(e) for e in row] for row in before.tolist()], dtype=bool).reshape(mat.shape)


def _pattern(mat: sp.Matrix) -> np.ndarray:
    return np.array([e != 0 for e in mat], dtype=bool).reshape(mat.shape)


@pytest.mark.parametrize("method", ["lagrange", "maggi"])
def test_derivation_finds_exactly_the_true_zeros(system, method):
    eom = derive(system, method)
    assert eom.constraint_jacobian is not None
    A = eom.constraint_jacobian
    # the raw derivation (before the pass) is recovered from the system: A's psi column is not zero as printed
    psi = [c.name for c in system.coordinates].index("psi")
    raw = [sp.diff(g, sp.Symbol("der(psi)")) for g in system.velocity_constraints()]
    assert all(e != 0 for e in raw) and all(sp.simplify(e) == 0 for e in raw)
    assert all(A[k, psi] == 0 for k in range(A.shape[0]))
    for name in ("mass_matrix", "constraint_jacobian", "forcing", "kinematics"):
        mat = getattr(eom, name)
        np.testing.assert_array_equal(_pattern(mat), _true_pattern(mat, mat), err_msg=name)


def test_the_pass_reports_and_keeps_the_nonzero_entries(system):
    from bridge.derivation.methods.base import METHODS
    from bridge.model.mechanics import Differentiator

    raw = METHODS.get_method("lagrange")._derive(system, Differentiator(system), system.independent, None)
    reduced, report = reduce_structural_zeros(raw)
    assert report.zeros == 6 and report.timed_out == 0  # A[0..1, psi] and the lambda columns/rows of M
    truth = {(name, i) for name in ("mass_matrix", "constraint_jacobian")
             for i, e in enumerate(getattr(raw, name)) if e != 0 and not _nonzero(e)}
    assert len(truth) == report.zeros
    for name, i in truth:
        assert getattr(reduced, name)[i] == 0
    for name in ("mass_matrix", "forcing", "kinematics", "constraint_jacobian"):
        for i, e in enumerate(getattr(raw, name)):
            if (name, i) not in truth:
                assert getattr(reduced, name)[i] == e  # untouched, not re-simplified


def test_the_mo_and_model_c_carry_the_true_incidence(system):
    eom = derive(system, "lagrange")
    truth = _pattern(eom.mass_matrix)  # equal to the simplify() pattern (test above)
    unknowns = [f"der(der_{S})" for S in ("theta", "phi", "psi", "x", "y")] + ["lambda[1]", "lambda[2]"]
    mo = model_source(eom, level="index1", accelerations="implicit")  # the form whose rows are M der(v) = F
    rows = [line for line in mo.split("// dynamics")[1].splitlines()[1:]
            if " = " in line and not line.strip().startswith("//")][: len(unknowns)]
    incidence = np.array([[u in row.split(" = ")[0] for u in unknowns] for row in rows])
    np.testing.assert_array_equal(incidence, truth)
    assert not incidence[2, 5:].any()  # der(psi)'s row carries no multiplier
    c = model_c(CModelPlan(eom, layout(eom), "{00000000-0000-0000-0000-000000000000}"))
    body = c.split("int nhb_rhs(")[1].split("nhb_lu_solve")[0]
    values = dict(re.findall(r"^\s*M\[(\d+)\] = (.*);$", body, flags=re.M))
    c_pattern = np.array([values[str(k)].strip() not in ("0", "0.0") for k in range(truth.size)]).reshape(truth.shape)
    np.testing.assert_array_equal(c_pattern, truth)


def test_zero_tests_are_sound():
    x, y, _p = sp.symbols("x y p")
    assert is_zero_symbolic(sp.sin(x) ** 2 * sp.cos(y) + sp.cos(x) ** 2 * sp.cos(y) - sp.cos(y))
    assert is_zero_symbolic(sp.sin(x + y) - sp.sin(x) * sp.cos(y) - sp.cos(x) * sp.sin(y))
    assert not is_zero_symbolic(sp.sin(x) ** 2 - sp.cos(x) ** 2)
    assert not is_zero_symbolic(1e-14 * x)


def test_tiny_and_parameter_dependent_entries_are_kept(system):
    """A coefficient that is small, or zero only at the file's parameter value, is not structurally zero."""
    from dataclasses import replace

    eom = derive(system, "lagrange")
    a = next(p.symbol for p in system.parameters if p.name == "a")
    M = eom.mass_matrix.as_mutable()
    M[0, 0] = 1e-14 * sp.cos(sp.Symbol("theta"))
    M[0, 1] = (a - sp.Rational(1, 10)) * sp.sin(sp.Symbol("phi"))  # a = 0.1 in the file
    reduced, report = reduce_structural_zeros(replace(eom, mass_matrix=sp.ImmutableMatrix(M)))
    assert report.zeros == 0
    assert reduced.mass_matrix[0, 0] == M[0, 0] and reduced.mass_matrix[0, 1] == M[0, 1]


def test_rumoca_simulates_the_ball_on_the_turntable(system):
    pytest.importorskip("rumoca", reason='pip install --only-binary rumoca "rumoca>=0.9.9,<0.10"')
    from bridge.validation.tool_checks import check_rumoca

    report = check_rumoca(derive(system, "lagrange"), stop_time=2.0)
    assert report.balanced
    assert report.max_error < 1e-6, report.summary()


def test_no_negative_zero_start_values():
    """A start value -0.0 (e.g. a computed dependent velocity) is printed as 0.0, never ``start=-0.0``."""
    text = turntable_ball().replace('y     = { start = 0.0,', 'y     = { start = -0.0,')
    mo = model_source(derive(parse_system(text, "turntable_ball.toml"), "lagrange"))
    assert "-0.0" not in mo and 'Real y(start=0.0' in mo


def test_pymoca_simulates_the_ball_on_the_turntable(system):
    pytest.importorskip("pymoca", reason='pip install "pymoca==0.12.*" "casadi<3.7"')
    from bridge.validation.tool_checks import check_pymoca

    report = check_pymoca(derive(system, "lagrange"), stop_time=2.0)
    assert report.max_error < 1e-6, report.summary()
