"""All methods against each other, and against closed-form results and first integrals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge import METHODS
from bridge.errors import BridgeError, DerivationError, SimulationError

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.toml"))


def load(name: str) -> bridge.System:
    return bridge.load_system(Path(__file__).parent.parent / "examples" / f"{name}.toml")


def applicable(system):
    out = []
    for name in METHODS:
        try:
            out.append(bridge.derive(system, name))
        except DerivationError:
            assert name == "chaplygin" or METHODS[name].applicable(system), f"{name} must apply to {system.name}"
    return out


def constraint_rows(num, t: float, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``A(q, t)`` and ``a0(q, t)`` of every constraint at velocity level, ``A q' + a0``, at one position.

    The velocity-level residuals are affine in q', so ``a0`` is the residual at q' = 0 and column i of ``A`` the
    residual at the unit velocity e_i less ``a0`` (exact up to rounding): n + 1 evaluations of the compiled
    residuals, where substituting the point into the symbolic Jacobian costs seconds for a bicycle.
    """
    n = len(q)
    h = len(num.eom.system.holonomic)
    a0 = num.constraint_residuals(t, q, np.zeros(n))[h:]
    A = np.column_stack([num.constraint_residuals(t, q, e)[h:] - a0 for e in np.eye(n)]) if n else np.zeros((0, 0))
    return A, a0


def random_consistent_state(system, rng, eom_ref):
    """Random positions; random independent velocities; dependent ones solved from A q' + a0 = 0.

    Holonomic constraints are satisfied by projecting the random positions with Newton's method (the first rows
    of A, the holonomic constraints at velocity level, are their Jacobian).
    """
    n = system.n
    num = eom_ref.numeric
    q = np.array([c.start for c in system.coordinates]) + rng.normal(scale=0.3, size=n)
    t = float(rng.uniform(0, 1))
    h = len(system.holonomic)
    if system.holonomic:
        for _ in range(50):
            res = num.constraint_residuals(t, q, np.zeros(n))[:h]
            if np.abs(res).max() < 1e-14:
                break
            J = constraint_rows(num, t, q)[0][:h]
            q -= np.linalg.lstsq(J, res, rcond=None)[0]
    qd = rng.normal(size=n)
    if system.m:
        A, a0 = constraint_rows(num, t, q)
        # minimum-norm correction onto A qd + a0 = 0
        qd = qd - np.linalg.pinv(A) @ (A @ qd + a0)
    return t, q, qd


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_methods_agree_on_accelerations(path):
    system = bridge.load_system(path)
    eoms = applicable(system)
    assert len(eoms) >= 4
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(5):
        t, q, qd = random_consistent_state(system, rng, eoms[0])
        accs = {}
        for eom in eoms:
            try:
                accs[eom.method] = eom.numeric.accelerations(t, q, qd)
            except SimulationError:
                continue  # e.g. a reduced split singular at this random state
        ref = accs["lagrange"]
        for method, acc in accs.items():
            scale = max(1.0, np.abs(ref).max())
            assert np.abs(acc - ref).max() <= 1e-10 * scale, (method, acc, ref)
            checked += 1
    assert checked >= 5 * 4


# Above 3 s of CPU for constant_speed_drive, dc_motor_drive and vibratory_exciter (up to about 6 s): every applicable
# method's equations, compiled and integrated over up to 3 s with the native solver to 1e-8 of the span; the methods
# are the subject, so none is dropped, and the horizon is what makes a wrong repartition or drift show.
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_methods_agree_on_trajectories(path):
    system = bridge.load_system(path)
    stop = min(system.stop_time, 3.0)
    runs = {}
    for eom in applicable(system):
        try:
            runs[eom.method] = bridge.simulate(eom, stop)
        except SimulationError as exc:
            # only a Chaplygin split can be impossible to re-partition (hydropulsator)
            assert eom.method == "chaplygin" and "singular" in str(exc) and "t = " in str(exc)
    ref = runs["lagrange"]
    span = np.ptp(ref.q, axis=0)
    span[span == 0] = 1.0
    for method, run in runs.items():
        err = (np.abs(run.q - ref.q) / span).max()
        assert err < 1e-8, (method, err)
        assert run.max_residual < 1e-7, (method, run.max_residual)


def test_sphere_first_integral():
    system = load("rolling_sphere")
    for method in ("chaplygin", "lagrange", "appell"):
        run = bridge.simulate(bridge.derive(system, method), 10.0)
        names = [c.name for c in system.coordinates]
        th = run.q[:, names.index("theta")]
        phid = run.qd[:, names.index("phi")]
        psid = run.qd[:, names.index("psi")]
        integral = np.cos(th) * phid + psid
        assert np.ptp(integral) < 1e-8 * max(1.0, abs(integral[0])), method
        assert np.ptp(th) > 1e-3  # the integral is not trivially constant


def test_skate_closed_form_through_repartition():
    system = load("skate")
    names = list(system.outputs)
    for method in ("lagrange", "maggi", "appell", "nielsen"):
        run = bridge.simulate(bridge.derive(system, method), 10.0)
        x_exact = run.outputs[:, names.index("x_exact")]
        y_exact = run.outputs[:, names.index("y_exact")]
        assert np.abs(run.q[:, 0] - x_exact).max() < 1e-8, method
        assert np.abs(run.q[:, 1] - y_exact).max() < 1e-8, method
        if method in ("maggi", "appell"):
            # theta = w t passes pi/2: the split with x independent is singular there
            assert run.repartitions and abs(run.repartitions[0][0] - np.pi / 2) < 1e-2


def test_fixed_split_that_turns_singular_stops_with_time():
    system = load("skate")
    eom = bridge.derive(system, "maggi", independent=["x"])
    import dataclasses

    fixed = dataclasses.replace(eom, system=dataclasses.replace(system, independent=("x",), fixed_split=True))
    with pytest.raises(SimulationError, match=r"t = 1\.5\d+.*singular"):
        bridge.simulate(fixed, 10.0)


def test_chaplygin_stops_where_its_only_split_is_singular():
    system = load("hydropulsator")
    eom = bridge.derive(system, "chaplygin")
    assert eom.dependent == ("phi",)  # x2 appears in the spring potential
    with pytest.raises(SimulationError, match="no other usable split"):
        bridge.simulate(eom, system.stop_time)


def test_not_chaplygin_names_the_condition():
    text = (Path(__file__).parent.parent / "examples" / "hydropulsator.toml").read_text()
    system = bridge.parse_system(text)
    with pytest.raises(DerivationError, match="dependent coordinate x2 appears in the generalized forces"):
        bridge.derive(system, "chaplygin", independent=["x1", "phi", "psi"])
    sleigh = load("chaplygin_sleigh")
    with pytest.raises(DerivationError, match="theta appears in the"):
        bridge.derive(sleigh, "chaplygin", independent=["x", "y"])


def test_cartesian_pendulum_matches_angle_pendulum():
    cart = bridge.simulate(bridge.derive(load("cartesian_pendulum"), "lagrange", baumgarte=(5.0, 5.0)), 10.0)
    ang = bridge.simulate(bridge.derive(load("simple_pendulum"), "lagrange"), 10.0)
    theta_cart = cart.outputs[:, list(cart.eom.outputs).index("theta")]
    assert np.abs(theta_cart - ang.q[:, 0]).max() < 1e-7


def test_baumgarte_reduces_drift():
    system = load("cartesian_pendulum")
    plain = bridge.simulate(bridge.derive(system, "lagrange"), 10.0, rtol=1e-8, atol=1e-10)
    stab = bridge.simulate(bridge.derive(system, "lagrange", baumgarte=(10.0, 10.0)), 10.0, rtol=1e-8, atol=1e-10)
    assert stab.max_residual < plain.max_residual


def test_pendulum_energy_and_small_angle_period():
    system = load("simple_pendulum")
    run = bridge.simulate(bridge.derive(system, "nielsen"), 10.0)
    p = system.parameter_values
    import sympy as sp

    m, g, length = (p[sp.Symbol(k)] for k in ("m", "g", "l"))
    energy = 0.5 * m * length**2 * run.qd[:, 0] ** 2 + m * g * length * (1 - np.cos(run.q[:, 0]))
    assert np.ptp(energy) < 1e-9 * energy.max()


def test_multipliers_are_constraint_forces():
    """Cartesian pendulum: lambda * grad(phi) is the rod force; at the bottom it balances m g + m v^2 / l."""
    system = load("cartesian_pendulum")
    eom = bridge.derive(system, "lagrange")
    num = eom.numeric
    import sympy as sp

    pv = system.parameter_values
    m, g, length = (pv[sp.Symbol(k)] for k in ("m", "g", "l"))
    v = 1.3
    q = np.array([0.0, -length])
    qd = np.array([v, 0.0])
    lam = num.multipliers(0.0, q, qd)[0]
    # holonomic phi = x^2 + y^2 - l^2: force on y is lambda * 2 y
    force_y = lam * 2 * q[1]
    assert force_y == pytest.approx(m * g + m * v**2 / length, rel=1e-12)


def test_independent_start_values_are_computed():
    text = (Path(__file__).parent.parent / "examples" / "chaplygin_sleigh.toml").read_text()
    text = text.replace("velocity = 0.16", "velocity = 99.0")
    with pytest.raises(BridgeError, match="start velocities violate"):
        bridge.parse_system(text)
    import tomllib

    data = tomllib.loads(text)
    data["method"] = {"independent": ["x", "theta"]}
    fixed = bridge.build_system(data)
    assert fixed.coordinate("y").velocity == pytest.approx(0.16, abs=1e-15)
    assert "der(y)" in fixed.adjusted_start


def test_independent_start_positions_are_computed():
    text = (Path(__file__).parent.parent / "examples" / "cartesian_pendulum.toml").read_text()
    import tomllib

    data = tomllib.loads(text)
    data["coordinates"]["y"]["start"] = -0.1  # off the circle
    data["method"] = {"independent": ["x"]}
    system = bridge.build_system(data)
    x, y = system.coordinate("x").start, system.coordinate("y").start
    length = data["parameters"]["l"]["value"]
    assert x**2 + y**2 == pytest.approx(length**2, rel=1e-13)
    assert x == data["coordinates"]["x"]["start"]


def test_sympy_built_system_equals_file():
    import sympy as sp

    from bridge import symbols as S

    file_system = load("chaplygin_sleigh")
    x, y, th = S.q("x"), S.q("y"), S.q("theta")
    xd, yd, thd = S.qd("x"), S.qd("y"), S.qd("theta")
    m, J, a = sp.symbols("m J a")
    data = {
        "name": "ChaplyginSleigh",
        "coordinates": {"x": {"start": 0.0, "velocity": 0.3}, "y": {"start": 0.0, "velocity": 0.16},
                        "theta": {"start": 0.0, "velocity": 0.8}},
        "parameters": {"m": {"value": 1.5}, "J": {"value": 0.12}, "a": {"value": 0.2}},
        "energy": {"kinetic": m / 2 * (xd**2 + yd**2) + J / 2 * thd**2},
        "constraints": {"nonholonomic": [-sp.sin(th) * xd + sp.cos(th) * yd - a * thd]},
    }
    built = bridge.build_system(data)
    for method in ("lagrange", "chaplygin"):
        e1, e2 = bridge.derive(built, method), bridge.derive(file_system, method)
        assert (e1.mass_matrix - e2.mass_matrix).applyfunc(sp.simplify) == sp.zeros(*e1.mass_matrix.shape)
        assert (e1.forcing - e2.forcing).applyfunc(sp.simplify) == sp.zeros(*e1.forcing.shape)
    assert x in built.q and y in built.q


def test_eom_is_immutable():
    eom = bridge.derive(load("chaplygin_sleigh"), "maggi")
    with pytest.raises(AttributeError):
        eom.method = "x"  # type: ignore[misc]
    assert eom.unknowns == eom.du  # no multipliers in a reduced method


def test_parameter_override_equals_edited_file():
    text = (Path(__file__).parent.parent / "examples" / "simple_pendulum.toml").read_text()
    base = bridge.parse_system(text)
    length = base.parameter_values[__import__("sympy").Symbol("l")]
    edited = bridge.parse_system(text.replace(f"value = {length}", "value = 1.7", 1))
    assert edited.parameter_values != base.parameter_values
    a = bridge.simulate(bridge.derive(base, "lagrange"), 3.0, parameters={"l": 1.7})
    b = bridge.simulate(bridge.derive(edited, "lagrange"), 3.0)
    c = bridge.simulate(bridge.derive(base, "lagrange"), 3.0)
    assert np.abs(a.q - b.q).max() < 1e-12
    assert np.abs(a.q - c.q).max() > 1e-3
    with pytest.raises(SimulationError, match="unknown parameter"):
        bridge.simulate(bridge.derive(base, "lagrange"), 1.0, parameters={"nope": 1.0})


def test_the_run_derivation_cache_hands_out_equal_private_copies(tmp_path):
    """tests/conftest.py's DerivationCache: what a second process reads back from the folder equals a fresh
    derivation (all but the derivation's own timing), each caller gets its own object, and another option is
    another entry."""
    import dataclasses

    from tests.conftest import DerivationCache

    path = Path(__file__).parent.parent / "examples" / "car.toml"
    first, second = DerivationCache(tmp_path), DerivationCache(tmp_path)  # two module processes of one run
    written = first.eom(path, "maggi")
    assert len(list(tmp_path.glob("*.pickle"))) == 1
    read = second.eom(path, "maggi")
    fresh = bridge.derive(load("car"), "maggi")
    assert read == written and read is not written and second.eom(path, "maggi") is not read
    assert dataclasses.replace(read, stats=fresh.stats) == fresh
    assert read.stats.diff_calls == fresh.stats.diff_calls
    other = second.eom(path, "maggi", independent=["x"])
    assert other.independent == ("x",) and len(list(tmp_path.glob("*.pickle"))) == 2
    t, q, qd = random_consistent_state(fresh.system, np.random.default_rng(2), fresh)
    np.testing.assert_array_equal(read.numeric.accelerations(t, q, qd), fresh.numeric.accelerations(t, q, qd))
