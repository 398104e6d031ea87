"""bridge.from_mechanics and Kane's method against sympy.physics.mechanics on sympy's own examples.

The reference is sympy's KanesMethod (LagrangesMethod): its mass matrix and forcing, lambdified, solved with numpy
for u' at random states that satisfy the constraints; our q'' (every method) is turned into u' through the time
derivative of sympy's kinematic differential equations.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest
import symengine as se
import sympy as sp

import bridge
from bridge.errors import BridgeError, SystemFileError
from tests import mechanics_models as mm
from tests.test_methods import random_consistent_state

METHODS = ("lagrange", "nielsen", "maggi", "appell", "kane")


@functools.cache
def model(name: str):
    m = getattr(mm, name)()
    system = bridge.from_mechanics(getattr(m, "system", m.kane), parameters=m.parameters, start=m.start, name=name)
    return m, system


@functools.cache
def derived(name: str, method: str) -> bridge.EquationsOfMotion:
    """The equations of ``model(name)`` by ``method``, derived once per module (several tests use the bicycle's)."""
    return bridge.derive(model(name)[1], method)


def _lambdify(args, matrix):
    """``f(*values)`` -> the matrix's values (its shape), evaluated by symengine's Lambdify (lambda backend, CSE)."""
    f = se.Lambdify([se.sympify(a) for a in args], list(matrix), backend="lambda", cse=True)
    return lambda *values: np.asarray(f(np.asarray(values, dtype=float)), dtype=float).reshape(matrix.shape)


class SympyReference:
    """u' from sympy's KanesMethod and u, u' from our q, q', q'' through sympy's kinematic equations."""

    def __init__(self, m, system):
        from sympy.physics.mechanics import dynamicsymbols

        t = dynamicsymbols._t
        km = m.kane
        self.m, self.system = m, system
        self.q, self.u = list(km.q), list(km.u)
        qd, qdd = [x.diff(t) for x in self.q], [x.diff(t, 2) for x in self.q]
        ud = [x.diff(t) for x in self.u]
        self.plain = sp.symbols(f"Q0:{len(self.q)}"), sp.symbols(f"QD0:{len(self.q)}"), sp.symbols(
            f"QDD0:{len(self.q)}"), sp.symbols(f"U0:{len(self.u)}"), sp.symbols(f"UD0:{len(self.u)}")
        P, PD, PDD, U, UD = self.plain
        rename = {**dict(zip(qdd, PDD)), **dict(zip(ud, UD)), **dict(zip(qd, PD)), **dict(zip(self.q, P)),
                  **dict(zip(self.u, U))}
        par = list(m.parameters)
        pv = [m.parameters[k] for k in par]

        def plain(e):
            # one pass: xreplace matches a derivative as a whole before it would descend to the function inside
            return se.sympify(sp.Matrix(e).xreplace(rename))

        args = [*P, *PD, *U, *par]
        # sympy's matrices evaluated by symengine's Lambdify (sympy's lambdify with CSE took about 3 s of CPU to print
        # and compile the bicycle's; the same values): the expressions compared are still sympy's own
        self.M = _lambdify(args, plain(km.mass_matrix))
        self.F = _lambdify(args, plain(km.forcing))
        kde = sp.Matrix(km._k_ku_implicit * km.u + km._k_kqdot_implicit * sp.Matrix(qd) + km._f_k_implicit)
        kde_dot = kde.diff(t)
        self.kde = _lambdify([*P, *PD, *U, *par], plain(kde))
        self.kde_dot = _lambdify([*P, *PD, *PDD, *U, *UD, *par], plain(kde_dot))
        self.pv = pv
        self.names = [bridge.symbols.base_name(s) for s in system.q]

    def _split(self, x):
        """Values of sympy's coordinates from ours; the speeds without kinematic equations are int_<u>'."""
        return np.array([x[self.names.index(type(q).__name__)] for q in self.q])

    def speeds(self, q, qd):
        """u from (q, q'): the kinematic equations solved for the speeds in them; the others are their coordinate's
        rate."""
        return self._solve(lambda U: self.kde(*self._split(q), *self._split(qd), *U, *self.pv),
                           lambda name: qd[self.names.index(f"int_{name}")])

    def speed_rates(self, q, qd, qdd, u):
        return self._solve(lambda UD: self.kde_dot(*self._split(q), *self._split(qd), *self._split(qdd), *u, *UD,
                                                   *self.pv),
                           lambda name: qdd[self.names.index(f"int_{name}")])

    def _solve(self, residual, own):
        """The unknowns of an affine residual (found column by column), the others from their coordinates."""
        n = len(self.u)
        free = [i for i, u in enumerate(self.u) if f"int_{type(u).__name__}" not in self.names]
        x = np.zeros(n)
        for i, u in enumerate(self.u):
            if i not in free:
                x[i] = own(type(u).__name__)
        r0 = np.asarray(residual(x), dtype=float).ravel()
        J = np.zeros((len(r0), len(free)))
        for k, i in enumerate(free):
            e = x.copy()
            e[i] += 1.0
            J[:, k] = np.asarray(residual(e), dtype=float).ravel() - r0
        x[free] += np.linalg.lstsq(J, -r0, rcond=None)[0]
        return x

    def accelerations(self, q, qd):
        u = self.speeds(q, qd)
        args = [*self._split(q), *self._split(qd), *u, *self.pv]
        M = np.asarray(self.M(*args), dtype=float)
        F = np.asarray(self.F(*args), dtype=float).ravel()
        return u, np.linalg.solve(M, F)


def states(system, eom, count, seed=3):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        t, q, qd = random_consistent_state(system, rng, eom)
        yield t, q, qd


@pytest.mark.parametrize("name", ["rolling_disc", "rolling_disc_nonholonomic", "bicycle", "rolling_disc_system",
                                  "rolling_disc_constraint_forces"])
def test_accelerations_match_sympy(name):
    # slow for the bicycle (about 12 s of CPU): sympy's KanesMethod of the Whipple bicycle (3 s to form, shared through
    # model()) and its matrices evaluated by symengine are the independent reference; the five derivations and their
    # numeric models (compiled, about 1 s each) are shared with the bicycle tests below (derived())
    m, system = model(name)
    ref = SympyReference(m, system)
    eoms = {meth: derived(name, meth) for meth in METHODS}
    checked = 0
    for t, q, qd in states(system, eoms["lagrange"], 4):
        u, ud_sympy = ref.accelerations(q, qd)
        scale = max(1.0, np.abs(ud_sympy).max())
        for meth, eom in eoms.items():
            qdd = eom.numeric.accelerations(t, q, qd)
            ud = ref.speed_rates(q, qd, qdd, u)
            assert np.abs(ud - ud_sympy).max() <= 1e-12 * scale, (name, meth, ud, ud_sympy)
            checked += 1
    assert checked == 4 * len(METHODS)


BODY_EXAMPLES = sorted(p for p in (Path(__file__).parent.parent / "examples").rglob("*.toml")
                       if "[bodies" in p.read_text())


# Every method is the subject of the comparison: derived through the run's cache (conftest.py), whose first caller
# in the run derives each. Slow for bicycle_bodies (about 19 s of CPU alone): loading the bodies file and six
# derivations with their compiled numeric models, all of them compared, none replaceable by a smaller system.
@pytest.mark.parametrize("path", BODY_EXAMPLES, ids=lambda p: p.stem)
def test_kane_agrees_on_body_examples(path, derivations):
    """Every body-based example file: kane against every other method at random consistent states."""
    system = bridge.load_system(path)
    assert system.multibody is not None
    eoms = []
    for meth in bridge.METHODS:
        try:
            eoms.append(derivations.eom(path, meth))
        except bridge.DerivationError:
            assert meth == "chaplygin"  # the only method that may refuse a system with bodies
    assert eoms[0].method == "lagrange" and eoms[-1].method == "kane" and len(eoms) >= 5
    for t, q, qd in states(system, eoms[0], 4, seed=8):
        ref = eoms[0].numeric.accelerations(t, q, qd)
        for eom in eoms[1:]:
            acc = eom.numeric.accelerations(t, q, qd)
            assert np.abs(acc - ref).max() <= 1e-10 * max(1.0, np.abs(ref).max()), (eom.method, acc, ref)


def test_rolling_disc_start_values():
    _m, system = model("rolling_disc")
    assert system.coordinate("q2").start == pytest.approx(0.1)
    # u2 = 5 with q1' = 0 spins the disc, q3' = u2 - sin(q2) q1'; rolling moves the contact point, |C'| = r q3'
    assert system.coordinate("q3").velocity == pytest.approx(5.0)
    contact = np.hypot(system.coordinate("x_C").velocity, system.coordinate("y_C").velocity)
    assert contact == pytest.approx(0.3 * 5.0)
    assert system.multibody is not None and len(system.multibody.bodies) == 1
    assert system.potential != 0  # gravity became a potential (a uniform field on the one body)


def test_bicycle_structure():
    _m, system = model("bicycle")
    names = [c.name for c in system.coordinates]
    assert {"q1", "q2", "q4", "q5", "int_u3", "int_u6"} <= set(names)
    assert len(system.holonomic) == 1 and system.dof == 3
    # the start state satisfies the holonomic constraint (pitch q4 computed by the loader's Newton step)
    eom = derived("bicycle", "lagrange")
    q0 = np.array([c.start for c in system.coordinates])
    v0 = np.array([c.velocity for c in system.coordinates])
    assert np.abs(eom.numeric.constraint_residuals(0.0, q0, v0)).max() < 1e-9
    assert system.coordinate("int_u3").velocity == pytest.approx(5.0 / 0.3)


def test_bicycle_trajectories_agree():
    """One second of the imported bicycle at 5 m/s: kane (reduced, implicit split) follows lagrange."""
    _m, system = model("bicycle")
    runs = {meth: bridge.simulate(derived("bicycle", meth), 1.0) for meth in ("lagrange", "kane")}
    ref = runs["lagrange"]
    span = np.ptp(ref.q, axis=0)
    span[span == 0] = 1.0
    assert (np.abs(runs["kane"].q - ref.q) / span).max() < 1e-8
    assert runs["kane"].max_residual < 1e-8
    # rolling forward: the rear contact point advances about 5 m in the second
    names = [c.name for c in system.coordinates]
    advance = np.hypot(ref.q[-1, names.index("x_WR_cont")], ref.q[-1, names.index("y_WR_cont")])
    assert 4.5 < advance < 5.5


def lagrange_reference(m):
    """q'' from sympy's LagrangesMethod (mass matrix and forcing of the dynamic equations, lambdified)."""
    from sympy.physics.mechanics import dynamicsymbols

    t = dynamicsymbols._t
    lm = m.lagrange
    qs = list(lm.q)
    n = len(qs)
    P, PD = sp.symbols(f"P0:{n}"), sp.symbols(f"PD0:{n}")
    par = list(m.parameters)

    def plain(e):
        return sp.sympify(e).xreplace({q.diff(t): s for q, s in zip(qs, PD)}).xreplace(dict(zip(qs, P)))

    M = sp.lambdify([*P, *PD, *par], plain(lm.mass_matrix), "numpy")
    F = sp.lambdify([*P, *PD, *par], plain(lm.forcing), "numpy")
    values = list(m.parameters.values())
    return lambda q, qd: np.linalg.solve(np.asarray(M(*q, *qd, *values), dtype=float),
                                         np.asarray(F(*q, *qd, *values), dtype=float).ravel())


@pytest.mark.parametrize("name, methods", [("pendulum_lagrange", ("lagrange", "maggi", "kane")),
                                           ("disc_lagrange", ("lagrange", "maggi"))])
def test_lagrange_imports_match_sympy(name, methods):
    m = getattr(mm, name)()
    system = bridge.from_mechanics(m.lagrange, parameters=m.parameters, start=m.start, name=name)
    ref = lagrange_reference(m)
    rng = np.random.default_rng(1)
    n = system.n
    for meth in methods:
        eom = bridge.derive(system, meth)
        for _ in range(3):
            q, qd = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
            expected = ref(q, qd)
            assert np.abs(eom.numeric.accelerations(0.0, q, qd) - expected).max() <= 1e-12 * max(
                1.0, np.abs(expected).max()), meth
    if "kane" not in methods:
        # the disc's Lagrangian is formed from velocities with the rolling constraint embedded (the contact point
        # at rest): Kane's method on those bodies would describe the rolling disc, not this Lagrangian's motion
        assert system.multibody is None and "bodies" in bridge.METHODS["kane"].applicable(system)
    else:
        assert system.multibody is not None and len(system.multibody.loads) == 2


def test_lagrange_start_values():
    m = mm.pendulum_lagrange()
    system = bridge.from_mechanics(m.lagrange, parameters=m.parameters, start=m.start)
    assert system.coordinate("q1").start == pytest.approx(0.4)
    assert system.coordinate("q2").velocity == pytest.approx(-1.0)


def test_kane_refuses_energy_only_files():
    system = bridge.load_system("examples/simple_pendulum.toml")
    reason = bridge.METHODS["kane"].applicable(system)
    assert reason and "bodies" in reason
    with pytest.raises(bridge.DerivationError, match="Kane's method forms partial velocities from bodies"):
        bridge.derive(system, "kane")


def test_cli_lists_kane(capsys):
    from bridge.cli import main

    assert main(["methods"]) == 0
    out = capsys.readouterr().out
    assert "kane" in out and "Kane's equations" in out


# -- bad input -------------------------------------------------------------------------------------------------------
def _one_paragraph(exc: BridgeError) -> str:
    text = str(exc)
    assert "Traceback" not in text and "\n" not in text.strip()
    return text


def test_missing_parameter_values():
    m = mm.rolling_disc()
    r, _mass, _g = m.symbols
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(m.kane, parameters={r: 0.3})
    text = _one_paragraph(err.value)
    assert "without values" in text and "g" in text and "m" in text and "parameters=" in text


def test_unknown_start_symbol():
    from sympy.physics.mechanics import dynamicsymbols

    m = mm.rolling_disc()
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(m.kane, parameters=m.parameters, start={dynamicsymbols("w9"): 1.0})
    text = _one_paragraph(err.value)
    assert "w9" in text and "is not a" in text and "q1" in text


def test_inconsistent_dependent_speed_start_is_refused_with_its_residual():
    bike = model("bicycle")[0]  # sympy's bicycle of the tests above (KanesMethod took 3 s of CPU to form)
    u1 = bike.u[0]
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(bike.kane, parameters=bike.parameters, start={u1: 1.0})
    text = _one_paragraph(err.value)
    assert "start[u1(t)]" in text and "does not satisfy the constraints" in text and "residual" in text


def test_unsupported_object():
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(sp.Symbol("x"))
    text = _one_paragraph(err.value)
    assert "cannot import a Symbol" in text and "KanesMethod" in text


def test_coordinates_must_be_dynamicsymbols():
    from sympy.physics.mechanics import LagrangesMethod, Particle, Point, ReferenceFrame

    x, m = sp.symbols("x m")
    N = ReferenceFrame("N")
    P = Point("P")
    P.set_vel(N, 0)
    lm = LagrangesMethod.__new__(LagrangesMethod)  # sympy itself refuses plain symbols in its constructor
    lm._L, lm._q, lm._hol_coneqs, lm.coneqs = sp.Matrix([m * x**2]), sp.Matrix([x]), sp.Matrix(), sp.Matrix()
    lm._bodies, lm._forcelist, lm.inertial = [Particle("p", P, m)], [], N
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(lm, parameters={m: 1.0})
    assert "is not a dynamicsymbol" in _one_paragraph(err.value)


def _greek_pendulum():
    from sympy.physics.mechanics import KanesMethod, Particle, Point, ReferenceFrame, dynamicsymbols

    th, om = dynamicsymbols("θ ω")
    lam, m, g = sp.symbols("λ double g")  # the length; the mass named like a C keyword
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, om * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", lam * A.x)
    P.v2pt_theory(O, N, A)
    km = KanesMethod(N, q_ind=[th], u_ind=[om], kd_eqs=[th.diff() - om])
    km.kanes_equations([Particle("bob", P, m)], [(P, m * g * N.x)])
    return km, (th, om), (lam, m, g)


def test_names_are_sanitised_and_pendulum_is_exact():
    """Greek and reserved names become identifiers; a pendulum imported from Kane's method obeys
    theta'' = -g/l sin(theta) (the seed's Example 12.3.1, the simple pendulum, by Kane's method and Lagrange's)."""
    km, (th, om), (lam, m, g) = _greek_pendulum()
    system = bridge.from_mechanics(km, parameters={lam: 0.8, m: 1.2, g: 9.81}, start={th: 0.5, om: -0.3})
    assert [c.name for c in system.coordinates] == ["theta"]
    assert {p.name for p in system.parameters} == {"lamda", "double_", "g"}  # Unicode spells it LAMDA
    assert system.coordinate("theta").velocity == pytest.approx(-0.3)
    for meth in ("lagrange", "kane"):
        eom = bridge.derive(system, meth)
        for x in (-2.0, 0.3, 1.4):
            acc = eom.numeric.accelerations(0.0, np.array([x]), np.array([0.7]))
            assert acc[0] == pytest.approx(-9.81 / 0.8 * np.sin(x), rel=1e-12), meth


def test_specified_torque_becomes_an_input():
    """A driving torque T(t) on the pendulum's frame: m l^2 theta'' = -m g l sin(theta) + T, T the input."""
    from sympy.physics.mechanics import KanesMethod, Particle, Point, ReferenceFrame, dynamicsymbols

    th, om, T = dynamicsymbols("th om T")
    l, m, g = sp.symbols("l m g")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [th, N.z])
    A.set_ang_vel(N, om * N.z)
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * A.x)
    P.v2pt_theory(O, N, A)
    km = KanesMethod(N, q_ind=[th], u_ind=[om], kd_eqs=[th.diff() - om])
    km.kanes_equations([Particle("bob", P, m)], [(P, m * g * N.x), (A, T * N.z)])
    values = {l: 0.8, m: 1.2, g: 9.81}
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(km, parameters=values)
    assert "inputs={T(t): 0.0}" in _one_paragraph(err.value)
    system = bridge.from_mechanics(km, parameters=values, inputs={T: 0.7})
    assert [u.name for u in system.inputs] == ["T"] and system.inputs[0].start == 0.7
    for meth in ("lagrange", "kane"):
        acc = bridge.derive(system, meth).numeric.accelerations(0.0, np.array([0.4]), np.array([0.1]))
        assert acc[0] == pytest.approx((-1.2 * 9.81 * 0.8 * np.sin(0.4) + 0.7) / (1.2 * 0.8**2), rel=1e-12), meth


def test_bad_parameter_values():
    km, (_th, _om), (lam, m, g) = _greek_pendulum()
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(km, parameters={lam: 0.8, m: float("nan"), g: 9.81})
    assert "not a finite number" in _one_paragraph(err.value)
    with pytest.raises(SystemFileError) as err:
        bridge.from_mechanics(km, parameters={lam: 0.8, m: 1.0, g: 9.81, sp.Symbol("k"): 3.0})
    text = _one_paragraph(err.value)
    assert "k is not a parameter" in text and "λ" in text


def test_build_system_points_dynamicsymbols_to_from_mechanics():
    """The misleading message of the issue: dynamicsymbols given to build_system."""
    from sympy.physics.mechanics import dynamicsymbols

    q = dynamicsymbols("q")
    data = {"name": "X", "coordinates": {"q": {"start": 0.0}}, "parameters": {"m": {"value": 1.0}},
            "energy": {"kinetic": sp.Symbol("m") / 2 * q.diff() ** 2}}
    with pytest.raises(SystemFileError) as err:
        bridge.build_system(data)
    text = _one_paragraph(err.value)
    assert "q(t) is a function of time" in text and "bridge.from_mechanics" in text


def test_pydy_system_against_pydy_ode_function():
    """PyDy's System (its constants, initial conditions and specifieds taken over) against PyDy's own generated
    right-hand side (lambdify backend)."""
    pytest.importorskip("pydy", reason="pip install pydy (the test extra)")
    from pydy.models import n_link_pendulum_on_cart

    pydy_system = n_link_pendulum_on_cart(n=2, cart_force=True, joint_torques=False)
    km = pydy_system.eom_method
    pydy_system.constants = dict(zip(sorted(pydy_system.constants_symbols, key=str), [9.81, 0.5, 0.7, 1.0, 0.3, 0.4]))
    (force,) = pydy_system.specifieds_symbols
    pydy_system.specifieds = {force: 0.6}
    pydy_system.initial_conditions = {km.q[1]: 0.3, km.u[2]: -0.5}
    system = bridge.from_mechanics(pydy_system, name="PendulumOnCart")
    assert [u.name for u in system.inputs] == ["F"] and system.inputs[0].start == 0.6
    assert system.coordinate("q1").start == 0.3 and system.coordinate("q2").velocity == -0.5
    rhs = pydy_system.generate_ode_function(generator="lambdify")
    rng = np.random.default_rng(4)
    for meth in ("lagrange", "maggi", "kane"):
        eom = bridge.derive(system, meth)
        for _ in range(3):
            x = rng.uniform(-1, 1, 6)
            expected = rhs(x, 0.0, {force: 0.6}, pydy_system.constants)[3:]
            assert np.abs(eom.numeric.accelerations(0.0, x[:3], x[3:]) - expected).max() <= 1e-12 * max(
                1.0, np.abs(expected).max()), meth
