"""From linearization to control: python-control models, an LQR-stabilised bicycle, the closed loop as two FMUs.

References: python-control's own poles and LQR eigenvalues; the closed loop linearized again from the nonlinear
system with the law substituted (an independent path through derivation and linearization); the native
simulation of that nonlinear closed loop; the linear closed loop's matrix exponential.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
import scipy.linalg

control = pytest.importorskip("control")
fmpy = pytest.importorskip("fmpy")
pytest.importorskip("fmpy.validation")

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.control import StateFeedback, closed_loop_system, controller_fmu, lqr, read_gain, read_weights  # noqa: E402
from bridge.control.feedback import ControlError, check_against_system, measured_names  # noqa: E402
from bridge.cosim import prepare  # noqa: E402
from bridge.linearization.model import LinearModel  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
CONTROL = ROOT / "examples" / "control"
PLANT = CONTROL / "bicycle_steered.toml"
WEIGHTS = CONTROL / "bicycle_lqr.toml"
ROLL0 = 0.05  # the scenario's start roll, rad
T = 4.0


@pytest.fixture(scope="module")
def bike():
    system = bridge.load_system(PLANT)
    eom = bridge.derive(system, "lagrange")
    plant = bridge.linearize(eom)
    Q, R = read_weights(WEIGHTS, plant)
    return system, plant, lqr(plant, Q, R, measured_names(system, plant)), eom


# -- python-control models -------------------------------------------------------------------------------------
def test_linear_model_round_trips_through_control_statespace(bike):
    _, plant, _, _ = bike
    ss = plant.to_control()
    assert ss.state_labels == list(plant.states) == ["phi", "delta", "der(phi)", "der(delta)"]
    assert ss.input_labels == ["T_delta"] and ss.output_labels == list(plant.outputs)
    assert ss.name == "WhippleBicycleSteered"
    back = LinearModel.from_control(ss, plant)
    for name in "ABCD":
        assert np.array_equal(getattr(back, name), getattr(plant, name))
    np.testing.assert_allclose(np.sort_complex(control.poles(ss)), np.sort_complex(plant.eigenvalues()), rtol=1e-12)
    # 3 m/s is below the weave speed (4.29 m/s): the weave mode is unstable
    assert max(plant.eigenvalues().real) > 1.0
    renamed = control.ss(ss.A, ss.B, ss.C, ss.D, states=["a", "b", "c", "d"], inputs=ss.input_labels,
                          outputs=ss.output_labels)
    with pytest.raises(bridge.BridgeError, match="names differ"):
        LinearModel.from_control(renamed, plant)


# -- the law ---------------------------------------------------------------------------------------------------
def test_lqr_closed_loop_eigenvalues_equal_the_relinearized_nonlinear_closed_loop(bike):
    system, plant, law, _ = bike
    _, _, expected = control.lqr(plant.to_control(), *read_weights(WEIGHTS, plant))
    np.testing.assert_allclose(np.sort_complex(law.eigenvalues()), np.sort_complex(expected), rtol=1e-10)
    assert law.is_stable() and law.measured == ("roll", "steer", "roll_rate", "steer_rate")
    closed = closed_loop_system(system, law)
    assert [u.name for u in closed.inputs] == []
    relinearized = bridge.linearize(bridge.derive(closed, "lagrange"))
    assert relinearized.states == plant.states
    np.testing.assert_allclose(np.sort_complex(relinearized.eigenvalues()), np.sort_complex(law.eigenvalues()),
                               rtol=1e-10, atol=1e-10)


def test_gain_files_and_weights_are_checked(bike, tmp_path):
    _, plant, law, _ = bike
    csv = tmp_path / "K.csv"
    csv.write_text("der(delta),phi,delta,der(phi)\n" + ",".join(repr(float(v)) for v in law.K[0, [3, 0, 1, 2]]) + "\n")
    np.testing.assert_array_equal(read_gain(csv, plant), law.K)  # a header row reorders the columns by name
    np.save(tmp_path / "K.npy", law.K)
    np.testing.assert_array_equal(read_gain(tmp_path / "K.npy", plant), law.K)
    with pytest.raises(ControlError, match=r"K is 1x3, but the plant has 1 input\(s\) \(T_delta\) and 4 state"):
        StateFeedback(plant, law.K[:, :3], law.measured)
    with pytest.raises(ControlError) as info:
        lqr(plant, np.diag([1.0, -1.0, 1.0, 1.0]), [[0.0]])
    text = str(info.value)
    assert "Q: is not positive semi-definite (smallest eigenvalue -1)" in text
    assert "R: is not positive definite" in text
    # a coordinate the split does not keep as a state passes the check on the system file, not the one on the plant
    weights = tmp_path / "w.toml"
    weights.write_text('[Q]\nphi = 1.0\ntheta_R = 1.0\n[R]\nT_delta = 1.0\n')
    check_against_system(bike[0], weights)
    with pytest.raises(ControlError, match=r"Q.theta_R: is not a state of WhippleBicycleSteered"):
        read_weights(weights, plant)
    weights.write_text('[Q]\nroll = 1.0\n[R]\nT_delta = 1.0\n')
    with pytest.raises(ControlError, match=r"Q.roll: is not a state of WhippleBicycleSteered"):
        read_weights(weights, plant)
    secret = tmp_path / "passwd"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(ControlError) as info:
        read_gain(secret, plant)
    assert "root" not in str(info.value).replace(str(tmp_path), "")  # never quote the file


# -- the controller FMU ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", [2, 3])
def test_controller_fmu_applies_the_law_in_me_and_cs(bike, tmp_path, version):
    _, plant, law, _ = bike
    path = controller_fmu(law, tmp_path / f"ctrl{version}.fmu", fmi_version=version)
    assert fmpy.validation.validate_fmu(str(path)) == []
    md = fmpy.read_model_description(str(path))
    causal = {v.name: v.causality for v in md.modelVariables}
    assert all(causal[m] == "input" for m in law.measured) and causal["T_delta"] == "output"
    x = np.array([0.03, -0.02, 0.1, 0.4])
    expected = float(plant.u0[0] - law.K[0] @ (x - plant.x0))
    for kind in ("CoSimulation", "ModelExchange"):
        r = fmpy.simulate_fmu(str(path), fmi_type=kind, stop_time=0.1, output=["T_delta"],
                              start_values=dict(zip(law.measured, x.tolist())))
        assert r["T_delta"][0] == pytest.approx(expected, rel=1e-14, abs=1e-14)


# -- the closed loop: native and co-simulated ---------------------------------------------------------------------
@pytest.fixture(scope="module")
def native(bike):
    """The nonlinear closed loop simulated natively from the perturbed roll (tight tolerances)."""
    system, _, law, _ = bike
    closed = closed_loop_system(system, law).with_values(phi=ROLL0)
    return bridge.simulate(bridge.derive(closed, "lagrange"), T, rtol=1e-10, atol=1e-12, interval=0.002).columns()


@pytest.fixture(scope="module")
def cosim(bike, tmp_path_factory):
    _, _, law, _ = bike
    work = tmp_path_factory.mktemp("closed_loop")
    controller_fmu(law, work / "bicycle_controller.fmu")
    text = (CONTROL / "bicycle_closed_loop.toml").read_text()
    text = text.replace('system = "bicycle_steered.toml"', f"system = {json.dumps(str(PLANT))}")
    (work / "scenario.toml").write_text(text)
    with prepare(work / "scenario.toml", work / "build") as cs:
        yield cs


def test_roll_decays_within_the_time_the_linear_model_predicts(bike, native):
    _, plant, law, _ = bike
    t = native["time"]
    settle = t[np.nonzero(np.abs(native["phi"]) >= 0.01 * ROLL0)[0][-1] + 1]
    x0 = np.zeros(len(plant.states))
    x0[plant.states.index("phi")] = ROLL0
    Acl = plant.A - plant.B @ law.K
    roll = np.array([(scipy.linalg.expm(Acl * s) @ x0)[0] for s in t])
    predicted = t[np.nonzero(np.abs(roll) >= 0.01 * ROLL0)[0][-1] + 1]
    assert 0.5 < predicted < T - 0.5
    assert settle == pytest.approx(predicted, rel=0.1), (settle, predicted)


def test_cosimulated_closed_loop_converges_first_order_to_the_native_closed_loop(cosim, native):
    errors = []
    for h, every in ((0.004, 2), (0.002, 1)):  # the native run is sampled every 2 ms
        r = cosim.run(step=h, stop_time=T)
        ref = {k: v[::every] for k, v in native.items()}
        assert len(r.time) == len(ref["time"]) and np.allclose(r.time, ref["time"])
        errors.append(max(float(np.max(np.abs(r[f"bike.{o}"] - ref[s]))) / float(np.ptp(ref[s]))
                          for o, s in (("roll", "phi"), ("steer", "delta"), ("roll_rate", "der(phi)"))))
    order = math.log2(errors[0] / errors[1])
    assert errors[1] < 2e-2 and order == pytest.approx(1.0, abs=0.25), (errors, order)


# -- the command ---------------------------------------------------------------------------------------------------
def test_controller_command_reports_and_writes(tmp_path, capsys):
    out = tmp_path / "c.fmu"
    assert main(["controller", str(PLANT), "--lqr", str(WEIGHTS), "-o", str(out), "--json",
                 str(tmp_path / "k.json"), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "closed loop is asymptotically stable" in text and "measured by: roll, steer, roll_rate, steer_rate" in text
    data = json.loads((tmp_path / "k.json").read_text())
    assert data["stable"] and len(data["K"][0]) == 4 and out.is_file()
    # a gain that does not stabilise is reported, not refused
    np.savetxt(tmp_path / "zero.csv", np.zeros((1, 4)), delimiter=",")
    assert main(["controller", str(PLANT), "--gain", str(tmp_path / "zero.csv"), "-o", str(tmp_path / "z.fmu"),
                 "--quiet"]) == 0
    assert "NOT asymptotically stable" in capsys.readouterr().out


# About 9 s of CPU: each refusal comes after the steered bicycle is derived and linearized (its states and inputs
# are what the weights and the gain are checked against).
def test_controller_command_bad_input(tmp_path, capsys):
    """Each mistake is named; those the system file alone can show come before the derivation (a timeout of 1 ms
    would stop the bicycle's derivation with exit code 1)."""
    weights = tmp_path / "w.toml"
    weights.write_text('[Q]\nroll = 1.0\n[R]\nT_delta = 1.0\n')
    assert main(["controller", str(PLANT), "--lqr", str(weights), "-o", str(tmp_path / "c.fmu"), "--quiet",
                 "--timeout", "0.001"]) == 2
    err = capsys.readouterr().err
    assert "Q.roll: is not a state of WhippleBicycleSteered" in err and "Traceback" not in err
    weights.write_text('[Q]\nphi = -1.0\n[R]\nT_delta = 1.0\n')
    assert main(["controller", str(PLANT), "--lqr", str(weights), "-o", str(tmp_path / "c.fmu"), "--quiet",
                 "--timeout", "0.001"]) == 2
    assert "Q: is not positive semi-definite" in capsys.readouterr().err and not (tmp_path / "c.fmu").exists()
    np.savetxt(tmp_path / "K.csv", np.ones((2, 4)), delimiter=",")
    assert main(["controller", str(PLANT), "--gain", str(tmp_path / "K.csv"), "-o", str(tmp_path / "c.fmu"),
                 "--quiet", "--timeout", "0.001"]) == 2
    assert "K is 2x4, but the plant has 1 input(s)" in capsys.readouterr().err
    assert main(["controller", str(PLANT), "--gain", str(tmp_path / "none.npy"), "--quiet", "--timeout", "0.001"]) == 2
    assert "none.npy: cannot read the gain (no such file)" in capsys.readouterr().err
    assert main(["controller", str(ROOT / "examples" / "simple_pendulum.toml"), "--gain", str(tmp_path / "K.csv"),
                 "--quiet"]) == 2
    assert "has no [inputs]" in capsys.readouterr().err


# -- the gallery page's pictures ---------------------------------------------------------------------------------
# About 4 s of CPU: the gallery script's own functions (linear models at three speeds, two matplotlib pictures) are
# the subject; the runs are this module's shared fixtures.
def test_gallery_pictures(bike, native, cosim, tmp_path):
    """docs/gallery/bicycle_lqr.py's functions on this module's runs: the gain designed at 3 m/s stabilises the
    bicycle where the open loop is unstable; both pictures are written."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bicycle_lqr", ROOT / "docs" / "gallery" / "bicycle_lqr.py")
    gallery = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gallery)
    system, plant, law, eom = bike
    speeds = np.array([1.0, 3.0, 6.0])
    open_, closed = gallery.eigenvalues_against_speed(system, eom, law, speeds)
    assert open_[1].real.max() > 1.0 and closed[1].real.max() < -1.0  # at 3 m/s
    np.testing.assert_allclose(np.sort_complex(closed[1]), np.sort_complex(law.eigenvalues()), rtol=1e-9)
    r = cosim.run(step=0.002, stop_time=T)
    linear = gallery.linear_roll(plant, law, native["time"])
    assert np.max(np.abs(linear - native["phi"])) < 0.02 * ROLL0  # small roll: the linear model holds
    pictures = gallery.plot(tmp_path, speeds, open_, closed, native["time"], native["phi"], r["bike.roll"], linear,
                            0.002)
    assert [p.name for p in pictures] == ["eigenvalues.png", "roll.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000 for p in pictures)


# -- the closed loop's SSP in libcosim (the Open Simulation Platform's master) ---------------------------------------
def test_ssp_of_the_closed_loop_runs_in_libcosim_as_in_our_master(cosim, tmp_path):
    """The scenario as an SSP package, run by libcosim's fixed-step master (every component steps from the
    outputs of the step before: Jacobi), agrees with our Jacobi run of the same scenario.

    libcosim applies SSP parameter bindings only to parameters and inputs, so the bicycle's start roll (a state)
    is given to it as an initial value, as the scenario's ``start`` is given to our master."""
    pytest.importorskip("libcosimpy")
    from libcosimpy.CosimExecution import CosimExecution
    from libcosimpy.CosimLogging import CosimLogLevel, log_output_level
    from libcosimpy.CosimObserver import CosimObserver

    from bridge.cosim.ssp import write_ssp

    h, steps = 0.002, round(T / 0.002)
    ssp = write_ssp(cosim.plan, cosim.fmus, tmp_path / "closed_loop.ssp")
    ours = cosim.run(step=h, stop_time=steps * h, algorithm="jacobi")
    log_output_level(CosimLogLevel.WARNING)
    execution = CosimExecution.from_ssp_file(str(ssp), step_size=round(h * 1e9))
    observer = CosimObserver.create_last_value()
    execution.add_observer(observer)
    bike_index = execution.slave_index_from_instance_name("bike")
    refs = {v.name.decode(): v.reference for v in execution.slave_variables(bike_index)}
    assert execution.real_initial_value(bike_index, refs["phi"], ROLL0)
    roll = []
    for _ in range(steps):
        assert execution.step()
        roll.append(observer.last_real_values(bike_index, [refs["roll"]])[0])
    np.testing.assert_allclose(roll, ours["bike.roll"][1:], rtol=0, atol=1e-9 * ROLL0)
    assert abs(roll[-1]) < 0.01 * ROLL0  # stabilised
