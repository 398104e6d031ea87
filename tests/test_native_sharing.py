"""What the native models share and what each keeps: compiled callables per equations object, buffers per model.

A forced oscillator ``m x'' = -k x + F`` with an output ``k x`` is checked against its closed form; models of the
same equations with other parameter values or driven by an input table share the compiled callables but never
their evaluation buffers.
"""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import bridge
from bridge.derivation.numeric_model import NumericModel, compiled_parts
from bridge.model.numeric import compile_exprs
from bridge.simulation.driven import DrivenModel
from bridge.simulation.inputs import InputTable

FORCED = """
name = "Forced"
[coordinates]
x = { start = 0.5, velocity = 0.0, unit = "m" }
[parameters]
m = { value = 2.0, unit = "kg" }
k = { value = 8.0, unit = "N/m" }
[inputs]
F = { start = 1.0, unit = "N" }
[energy]
kinetic = "m/2*der(x)^2"
potential = "k/2*x^2"
[forces]
x = "F"
[outputs]
spring = "k*x"
"""


@pytest.fixture(scope="module")
def eom():
    return bridge.derive(bridge.parse_system(FORCED), "lagrange")


def _accel(x: float, m: float, k: float, f: float) -> float:
    return (-k * x + f) / m


def test_arguments_named_like_cse_temporaries():
    """symengine names its CSE temporaries x0, x1, ...: arguments of those names still get their own values."""
    x0, x1 = sp.symbols("x0 x1")
    f = compile_exprs([x1, x0], [sp.sin(x0 * x1) + x0 * x1, (x0 * x1) ** 2 + x0])
    a, b = 0.7, 0.3  # x1, x0
    assert np.allclose(f(np.array([a, b])), [np.sin(a * b) + a * b, (a * b) ** 2 + b], rtol=1e-15, atol=0)


def test_models_with_other_parameters_share_the_compiled_callables(eom):
    base = eom.numeric
    stiff = NumericModel(eom, {"k": 18.0})
    assert stiff.chain is base.chain is compiled_parts(eom).chain
    x = np.array([0.3, -0.2])
    for _ in range(2):  # alternately: each model's kept evaluation is its own
        assert base.rhs(0.0, x)[1] == pytest.approx(_accel(0.3, 2.0, 8.0, 1.0), rel=1e-14)
        assert stiff.rhs(0.0, x)[1] == pytest.approx(_accel(0.3, 2.0, 18.0, 1.0), rel=1e-14)
    stiff.set_parameters({"m": 4.0})  # the same state after a parameter change: evaluated again
    assert stiff.rhs(0.0, x)[1] == pytest.approx(_accel(0.3, 4.0, 18.0, 1.0), rel=1e-14)


def test_a_driven_model_keeps_its_own_buffers(eom):
    base = eom.numeric
    table = InputTable(("F",), np.array([0.0, 10.0]), np.array([[3.0], [3.0]]))
    driven = DrivenModel(base, table)
    x = np.array([0.1, 0.0])
    for _ in range(2):
        assert driven.rhs(1.0, x)[1] == pytest.approx(_accel(0.1, 2.0, 8.0, 3.0), rel=1e-14)
        assert base.rhs(1.0, x)[1] == pytest.approx(_accel(0.1, 2.0, 8.0, 1.0), rel=1e-14)


def test_returned_arrays_are_not_the_buffers(eom):
    """A later evaluation at another state leaves what an earlier call returned unchanged."""
    num = NumericModel(eom)
    q, u = np.array([0.2]), np.array([0.5])
    qd, sol, dx = num.kinematics(0.0, q, u), num.solve(0.0, q, u), num.rhs(0.0, np.array([0.2, 0.5]))
    num.rhs(0.0, np.array([-1.0, 2.0]))
    assert qd.tolist() == [0.5] and dx.tolist() == [0.5, _accel(0.2, 2.0, 8.0, 1.0)]
    assert sol[0] == pytest.approx(_accel(0.2, 2.0, 8.0, 1.0), rel=1e-14)


def test_batched_outputs_and_residuals_of_a_run(eom):
    """The run's outputs (one batched call per segment) against the closed form and the per-sample call."""
    result = bridge.simulate(eom, 2.0, interval=0.25, parameters={"k": 18.0})
    w = np.sqrt(18.0 / 2.0)
    exact = 1.0 / 18.0 + (0.5 - 1.0 / 18.0) * np.cos(w * result.time)  # x from rest under a constant force
    assert np.allclose(result.q[:, 0], exact, rtol=0, atol=1e-8)
    assert np.allclose(result["spring"], 18.0 * exact, rtol=0, atol=1e-7)
    num = NumericModel(eom, {"k": 18.0})
    one_by_one = [num.outputs(t, q, qd)[0] for t, q, qd in zip(result.time, result.q, result.qd)]
    assert np.array_equal(result["spring"], np.array(one_by_one))
    assert result.residuals.shape == (len(result.time), 0)
