"""The snake benchmark: nhbridge's equations agree with sympy.physics.mechanics' LagrangesMethod."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sympy.physics.mechanics import dynamicsymbols

import bridge

SNAKE_FILE = Path(__file__).resolve().parents[1] / "benchmarks" / "snake.py"
N_LINKS = 3
METHODS = ["lagrange", "nielsen", "maggi"]
INDEPENDENT = ["x", "th1"]


def _load_snake():
    spec = importlib.util.spec_from_file_location("snake_benchmark", SNAKE_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


snake = _load_snake()


class Reference:
    """LagrangesMethod's equations of the snake, as numeric functions of plain (q, q') values."""

    def __init__(self, n: int):
        eqs = snake.snake_sympy(n)
        model = eqs.model
        t = dynamicsymbols._t
        self.nq = len(model.q)
        q = sp.symbols(f"q0:{self.nq}")
        qd = sp.symbols(f"qd0:{self.nq}")
        plain = {}
        for f, a, b in zip(model.q, q, qd, strict=True):
            plain[f.diff(t)] = b     # replaced before the function itself (xreplace matches whole subtrees)
            plain[f] = a
        params = [model.parameters[name] for name in snake.PARAMETERS]
        self.values = [value for value, _, _ in snake.PARAMETERS.values()]
        args = [*q, *qd, *params]
        MM = eqs.mass_matrix_full.xreplace(plain)
        F = eqs.forcing_full.xreplace(plain)
        g = sp.Matrix(model.nonholonomic).xreplace(plain)
        A = g.jacobian(qd)
        a0 = g.xreplace({b: 0 for b in qd})
        assert not (MM.free_symbols | F.free_symbols | A.free_symbols) - set(args)
        self._dyn = sp.lambdify(args, [MM, F], "numpy")
        self._con = sp.lambdify(args, [A, a0], "numpy")

    def constrained_velocities(self, q: np.ndarray, qd_ind: np.ndarray, ind: list[int]) -> np.ndarray:
        """All velocities from the independent ones: A[:, dep] qd_dep = -(A[:, ind] qd_ind + a0)."""
        A, a0 = (np.asarray(x, dtype=float) for x in self._con(*q, *np.zeros(self.nq), *self.values))
        dep = [i for i in range(self.nq) if i not in ind]
        qd = np.zeros(self.nq)
        qd[ind] = qd_ind
        qd[dep] = np.linalg.solve(A[:, dep], -(A[:, ind] @ qd_ind + a0.ravel()))
        assert np.abs(A @ qd + a0.ravel()).max() < 1e-12
        return qd

    def accelerations(self, q: np.ndarray, qd: np.ndarray) -> np.ndarray:
        """Solve mass_matrix_full [q', q'', lambda] = forcing_full; return q''."""
        MM, F = (np.asarray(x, dtype=float) for x in self._dyn(*q, *qd, *self.values))
        sol = np.linalg.solve(MM, F.ravel())
        assert np.allclose(sol[: self.nq], qd, rtol=1e-12, atol=1e-12)
        return sol[self.nq: 2 * self.nq]


@pytest.fixture(scope="module")
def reference() -> Reference:
    return Reference(N_LINKS)


@pytest.fixture(scope="module")
def states(reference: Reference) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(20240611)
    names = ["x", "y"] + [f"th{i}" for i in range(1, N_LINKS + 1)]
    ind = [names.index(nm) for nm in INDEPENDENT]
    out = []
    for _ in range(3):
        q = np.concatenate([rng.uniform(-1.0, 1.0, 2), rng.uniform(-0.9, 0.9, N_LINKS)])
        qd = reference.constrained_velocities(q, rng.uniform(-1.0, 1.0, 2), ind)
        out.append((q, qd))
    return out


@pytest.fixture(scope="module")
def system() -> bridge.System:
    return bridge.parse_system(snake.snake_toml(N_LINKS), source="snake3")


@pytest.mark.parametrize("method", METHODS)
def test_accelerations_match_lagranges_method(method, system, reference, states):
    independent = INDEPENDENT if method == "maggi" else None
    eom = bridge.derive(system, method, independent=independent)
    for q, qd in states:
        expected = reference.accelerations(q, qd)
        got = eom.numeric.accelerations(0.0, q, qd)
        assert np.abs(got - expected).max() <= 1e-9 * np.abs(expected).max(), (method, got, expected)


def test_start_velocities_satisfy_constraints(system):
    res = bridge.derive(system, "lagrange").numeric.constraint_residuals(
        0.0, np.array([c.start for c in system.coordinates]), np.array([c.velocity for c in system.coordinates]))
    assert np.abs(res).max() < 1e-12


@pytest.mark.parametrize("n", [2, 5, 12])
def test_snake_toml_parses(n):
    system = bridge.parse_system(snake.snake_toml(n), source=f"snake{n}")
    assert system.n == n + 2
    assert len(system.nonholonomic) == n
    assert system.dof == 2
    assert system.name == f"Snake{n}"


def test_independent_split_accepted_for_long_snakes():
    """The solvability test of [method] independent is scale-free (det ~ (L/2)^(n-1) is tiny for n = 16)."""
    system = bridge.parse_system(snake.snake_toml(16, independent=True))
    assert system.independent == ("x", "th1")
