"""Co-simulation (issue 6): the master against the monolithic model, SSP in and out, fmpy's SSP runner, bad input.

The scenario is the seeds' own case: the hydropulsator FMU (nhbridge) driven by two motor FMUs that nhbridge
did not make (Rumoca compiles them from examples/cosim/Motor.mo), against examples/cosim/
hydropulsator_monolithic.toml, the same coupled system in one model, simulated natively at rtol 1e-10.
"""

from __future__ import annotations

import csv
import math
import re
import zipfile
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

fmpy = pytest.importorskip("fmpy")
pytest.importorskip("rumoca")

import itertools  # noqa: E402

import bridge  # noqa: E402
from bridge.cli import main  # noqa: E402
from bridge.cosim import CosimError, CosimRunError, check_scenario, parse_scenario, prepare, read_ssp  # noqa: E402
from bridge.cosim.master import Master  # noqa: E402
from bridge.cosim.ssp import ssd_document, write_ssp  # noqa: E402
from bridge.model.units import compatible, parse_unit  # noqa: E402

ROOT = Path(__file__).parent.parent
COSIM = ROOT / "examples" / "cosim"
SCENARIO = COSIM / "hydropulsator_motors.toml"
COMMITTED_SSP = COSIM / "hydropulsator_motors.ssp"
T = 1.0                                              # stop time of the comparisons
STEPS = (0.02, 0.01, 0.005, 0.0025, 0.00125)         # all divide 0.02: every run has the coarse grid
PAIRS = {"pulsator.w_r": "der(phi)", "pulsator.w_d": "der(psi)", "pulsator.x1": "x1", "pulsator.x2": "x2",
         "pulsator.phi": "phi"}


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("cosim")


@pytest.fixture(scope="module")
def cosim(work):
    with prepare(SCENARIO, work / "build") as cs:
        yield cs


@pytest.fixture(scope="module")
def motors(cosim) -> dict[str, float]:
    """The motor parameters of the scenario, under the monolithic model's names."""
    params = {c.name: dict(c.parameters) for c in cosim.scenario.components}
    return {"M0r": params["motor_r"]["M0"], "w0r": params["motor_r"]["w0"],
            "M0d": params["motor_d"]["M0"], "w0d": params["motor_d"]["w0"]}


@pytest.fixture(scope="module")
def monolithic(motors):
    eom = bridge.derive(bridge.load_system(COSIM / "hydropulsator_monolithic.toml"), "lagrange")
    return eom, bridge.simulate(eom, T, interval=0.02, parameters=motors).columns()


def errors(result, reference, every: int) -> dict[str, float]:
    """Largest deviation from the monolithic run of each compared signal, on the 0.02 s grid."""
    return {sig: float(np.max(np.abs(result[sig][::every] - reference[col]))) for sig, col in PAIRS.items()}


def relative(errs: dict[str, float], reference) -> float:
    return max(errs[s] / np.ptp(reference[c]) if np.ptp(reference[c]) > 0 else errs[s] for s, c in PAIRS.items())


# -- the scenario and its checks ---------------------------------------------------------------------------
def test_scenario_file_is_read_into_a_frozen_scenario(cosim):
    sc = cosim.scenario
    assert [(c.name, c.kind) for c in sc.components] == [("pulsator", "system"), ("motor_r", "modelica"),
                                                         ("motor_d", "modelica")]
    assert [c.text for c in sc.connections] == ["pulsator.w_r -> motor_r.w", "motor_r.tau -> pulsator.Mr",
                                                "pulsator.w_d -> motor_d.w", "motor_d.tau -> pulsator.Md"]
    assert sc.master.step == 0.005 and sc.master.stop_time == 2.0 and sc.master.algorithm == "gauss-seidel"
    assert dict(sc.component("motor_r").parameters) == {"M0": 5.0, "w0": 50.0}
    with pytest.raises(AttributeError):
        sc.name = "x"  # frozen


def test_feedthrough_rollback_and_gauss_seidel_order(cosim):
    infos = cosim.plan.infos
    # nhbridge declares its outputs' dependencies: the speeds are states, no feedthrough from the torques
    assert infos["pulsator"].feedthrough["w_r"] == () and "w_r" in infos["pulsator"].declared
    # Rumoca declares none: FMI's rule, every input, so the static characteristic is feedthrough
    assert infos["motor_r"].feedthrough["tau"] == ("w",) and not infos["motor_r"].declared
    assert infos["motor_r"].generation_tool == "Rumoca" and not infos["motor_r"].made_by_nhbridge
    assert cosim.plan.order[0] == "pulsator"  # the motors step after the pulsator, with its new speeds
    assert infos["pulsator"].rollback == "fmu-state"  # the runtime's get/set/serialize FMU state
    assert infos["motor_r"].rollback == infos["motor_d"].rollback == "stateless"


def test_units():
    assert compatible("N.m", "J") and compatible("rad/s", "rad/s") and not compatible("rad/s", "rpm")
    assert not compatible("N.m", "rad/s") and not compatible("N", "m")
    assert parse_unit("N.m.s/rad").exponents == (1, 2, -1, 0, 0, 0, 0, -1)
    assert parse_unit("kg.m2").exponents[:2] == (1, 2) and parse_unit("furlong") is None


# -- the master against the monolithic model -----------------------------------------------------------
def test_initial_values_are_resolved_through_the_feedthrough(cosim, motors):
    """At t0 each motor's torque is M0 (1 - w(0)/w0) and the pulsator's input already holds it."""
    sc = replace(cosim.scenario, record=("pulsator.Mr", "pulsator.Md", "motor_r.tau", "motor_d.w"))
    with prepare(sc, cosim.folder / "init") as cs:
        r = cs.run(stop_time=0.01)
    assert r["motor_r.tau"][0] == pytest.approx(motors["M0r"] * (1 - 20.0 / motors["w0r"]), rel=1e-14)
    assert r["pulsator.Mr"][0] == r["motor_r.tau"][0]
    assert r["pulsator.Md"][0] == pytest.approx(motors["M0d"] * (1 - 10.0 / motors["w0d"]), rel=1e-14)
    assert r["motor_d.w"][0] == 10.0


def test_convergence_to_the_monolithic_model(cosim, monolithic):
    """First order in the communication step for Jacobi and Gauss-Seidel; Gauss-Seidel is the more accurate."""
    _, ref = monolithic
    table = {}
    for algorithm in ("jacobi", "gauss-seidel"):
        errs = []
        for h in STEPS:
            r = cosim.run(step=h, stop_time=T, algorithm=algorithm)
            assert r.time[-1] == T and len(r.time) == round(T / h) + 1
            errs.append(errors(r, ref, round(0.02 / h)))
        table[algorithm] = errs
        for sig in PAIRS:
            e = [x[sig] for x in errs]
            orders = [math.log2(a / b) for a, b in itertools.pairwise(e)]
            assert all(o >= 0.8 for o in orders), (algorithm, sig, e, orders)
            assert orders[-1] == pytest.approx(1.0, abs=0.15)  # zero-order hold: first order
        # h = 1.25 ms: within 1.2 % (Jacobi) and 0.5 % (Gauss-Seidel) of each signal's range (measured 0.9, 0.3)
        assert relative(errs[-1], ref) < {"jacobi": 1.2e-2, "gauss-seidel": 5e-3}[algorithm]
    for k in range(len(STEPS)):
        assert table["gauss-seidel"][k]["pulsator.w_r"] < 0.6 * table["jacobi"][k]["pulsator.w_r"]


def test_fmi3_component_with_fmi2_components(cosim, work):
    """The pulsator as an FMI 3.0 FMU (FMU3Slave) with the FMI 2.0 motors gives the FMI 2.0 result."""
    text = SCENARIO.read_text().replace('system = "pulsator.toml"', 'system = "pulsator.toml"\nfmi_version = 3')
    sc = parse_scenario(text, "fmi3.toml", COSIM)
    with prepare(sc, work / "fmi3") as cs3:
        assert cs3.plan.infos["pulsator"].fmi_version == 3
        r3 = cs3.run(stop_time=T)
    r2 = cosim.run(stop_time=T)
    assert np.max(np.abs(r3.values - r2.values)) < 1e-6


@pytest.mark.parametrize("rollback", ["declared", "reinit"])
def test_adaptive_step_keeps_the_tolerance(cosim, monolithic, motors, rollback):
    """Step doubling, error per unit step: the global error follows the tolerance and stays below its bound.

    "reinit" undoes the pulsator's steps by re-initializing it at the saved state (nhbridge FMUs), whatever
    the FMU declares; "declared" uses get/setFMUState, which nhbridge FMUs declare.
    """
    eom, _ = monolithic
    plan = cosim.plan
    assert plan.infos["pulsator"].rollback == "fmu-state"  # declared in modelDescription.xml
    if rollback == "reinit":
        pulsator = replace(plan.infos["pulsator"], can_get_set_state=False)
        assert pulsator.rollback == "reinit"
        plan = replace(plan, infos={**plan.infos, "pulsator": pulsator})
    previous = None
    for tol in (1e-2, 1e-3):
        settings = replace(cosim.scenario.master, step=0.001, stop_time=0.5, adaptive=True, tolerance=tol,
                           algorithm="jacobi")
        r = Master(plan, cosim.unzipdirs, settings).run()
        st = r.stats
        assert r.time[-1] == 0.5 and np.all(np.diff(r.time) > 0)
        assert st["smallest_step"] < st["largest_step"]  # the step really adapts
        ref = bridge.simulate(eom, 0.5, interval=0.5 / 2000, parameters=motors).columns()
        w = np.interp(r.time, ref["time"], ref["der(phi)"])
        err = float(np.max(np.abs(r["pulsator.w_r"] - w)))
        bound = tol * (1 + np.max(np.abs(w))) * 0.5  # tol (1 + |y|) (t_stop - t_start)
        assert err < bound, (tol, err, bound)
        if previous:
            assert err < 0.3 * previous[0] and st["steps"] > 3 * previous[1]
        previous = (err, st["steps"])


def test_adaptive_is_refused_for_a_stateful_fmu_without_rollback(cosim):
    infos = dict(cosim.plan.infos)
    infos["pulsator"] = replace(infos["pulsator"], generation_tool="SomeTool 1.0",  # not ours, no FMU state
                                can_get_set_state=False)
    with pytest.raises(CosimError) as exc:
        check_scenario(cosim.scenario.with_master(adaptive=True), infos)
    message = str(exc.value)
    assert "components.pulsator" in message and "canGetAndSetFMUstate" in message and "adaptive = false" in message
    check_scenario(cosim.scenario, infos)  # a fixed step is fine


def test_progress_is_shown_on_request(cosim, capsys):
    cosim.run(stop_time=0.05, step=0.01, progress=True)
    err = capsys.readouterr().err
    assert "cosim: t = 0.05 s of 0.05 s (100.0 %), 5 steps" in err


def test_a_step_the_fmu_rejects_stops_the_run_with_component_time_and_status(work, tmp_path):
    text = SCENARIO.read_text().replace("M0 = 5.0, w0 = 50.0", "M0 = 1e300, w0 = 50.0")
    sc = parse_scenario(text, "huge.toml", COSIM)
    with prepare(sc, work / "huge") as cs, pytest.raises(CosimRunError) as exc:
        cs.run()
    message = str(exc.value)
    # the runtime refuses the non-finite torque where it enters (SetReal) or where it makes the step fail (doStep)
    assert re.search(r"component pulsator \(pulsator\.toml\): (doStep\(h = 0\.005\)|SetReal) at t = 0(\.005)? s "
                     r"failed with status Error; the FMU logged: \[Error\] fmi2(DoStep|SetReal)", message), message


# -- SSP ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def ssp(cosim, work) -> Path:
    return write_ssp(cosim.plan, cosim.fmus, work / "system.ssp")


def test_ssp_is_accepted_by_fmpy_and_reads_back_to_the_same_scenario(cosim, ssp, work):
    from fmpy.ssp.ssd import read_ssd

    ssd = read_ssd(str(ssp), validate=True)  # fmpy checks it against the SSP 1.0 schema
    assert [c.name for c in ssd.system.elements] == ["pulsator", "motor_r", "motor_d"]
    assert [(c.startElement, c.startConnector, c.endElement, c.endConnector) for c in ssd.system.connections][1] == \
        ("motor_r", "tau", "pulsator", "Mr")
    assert {p.name: float(p.value) for p in ssd.system.elements[2].parameterBindings[0].parameterValues[0]
            .parameters} == {"M0": 3.0, "w0": 30.0}
    back = read_ssp(ssp, work)
    sc = cosim.scenario
    assert back.name == sc.name and back.master == sc.master and back.record == sc.record
    assert back.connections == tuple(replace(c, entry=b.entry) for c, b in zip(sc.connections, back.connections))
    assert [(c.name, c.parameters, c.start) for c in back.components] == \
        [(c.name, c.parameters, c.start) for c in sc.components]


def test_ssp_round_trip_gives_the_same_result(cosim, ssp, work):
    with prepare(ssp, work / "from_ssp") as back:
        for algorithm in ("jacobi", "gauss-seidel"):
            a = cosim.run(stop_time=0.5, algorithm=algorithm)
            b = back.run(stop_time=0.5, algorithm=algorithm)
            assert np.array_equal(a.time, b.time) and np.array_equal(a.values, b.values)


def test_gain_offset_and_suppressed_units_survive_the_round_trip(cosim, work):
    text = SCENARIO.read_text().replace('"motor_d.tau -> pulsator.Md",',
                                        '{ from = "motor_d.tau", to = "pulsator.Md", gain = 0.5, offset = 0.25, '
                                        'ignore_units = true },')
    sc = parse_scenario(text, "gain.toml", COSIM)
    plan = check_scenario(sc, cosim.plan.infos)
    xml = ssd_document(plan, {c.name: f"resources/{c.name}.fmu" for c in sc.components}).decode()
    assert '<ssc:LinearTransformation factor="0.5" offset="0.25"/>' in xml and 'suppressUnitConversion="true"' in xml
    path = write_ssp(plan, cosim.fmus, work / "gain.ssp")
    back = read_ssp(path, work)
    conn = back.connections[3]
    assert (conn.gain, conn.offset, conn.ignore_units) == (0.5, 0.25, True)
    with prepare(sc, work / "gain") as cs:
        r = cs.run(stop_time=0.01)
    assert r["pulsator.w_d"][0] == 10.0
    tau = 3.0 * (1 - 10.0 / 30.0)
    with prepare(replace(sc, record=("pulsator.Md",)), work / "gain2") as cs:
        assert cs.run(stop_time=0.01)["pulsator.Md"][0] == pytest.approx(0.5 * tau + 0.25, rel=1e-14)


def test_committed_ssp_matches_a_regenerated_one(ssp):
    """examples/cosim/hydropulsator_motors.ssp is `nhbridge ssp examples/cosim/hydropulsator_motors.toml`."""
    with zipfile.ZipFile(COMMITTED_SSP) as old, zipfile.ZipFile(ssp) as new:
        assert old.namelist() == new.namelist() == ["SystemStructure.ssd", "resources/Motor.fmu",
                                                    "resources/Pulsator.fmu"]
        assert old.read("SystemStructure.ssd") == new.read("SystemStructure.ssd")
        for member in ("resources/Motor.fmu", "resources/Pulsator.fmu"):  # binaries may differ; the interface not
            mds = [zipfile.ZipFile(z.open(member)).read("modelDescription.xml") for z in (old, new)]
            assert mds[0] == mds[1]


def test_fmpy_simulate_ssp_runs_our_package_and_converges_to_the_monolithic_model(ssp, cosim, motors):
    """fmpy's SSP master (FMI 2.0, Jacobi, connectors start at 0, no ParameterBindings: the values are passed in)."""
    from fmpy.ssp.simulation import simulate_ssp
    from fmpy.ssp.ssd import Parameter, ParameterSet

    pset = ParameterSet(parameters=[Parameter(name=f"{c.name}.{n}", type="Real", value=str(v))
                                    for c in cosim.scenario.components for n, v in c.parameters])
    eom = bridge.derive(bridge.load_system(COSIM / "hydropulsator_monolithic.toml"), "lagrange")
    errs = []
    for h in (0.01, 0.005):
        rows = simulate_ssp(str(ssp), stop_time=0.5, step_size=h, parameter_set=pset)
        ref = bridge.simulate(eom, 0.5 + 2 * h, interval=h, parameters=motors).columns()["der(phi)"]
        n = len(rows)  # row k holds the values after the step to (k + 1) h
        errs.append(float(np.max(np.abs(rows["pulsator.w_r"] - ref[1:n + 1]))))
    assert errs[1] < 0.6 * errs[0] and errs[1] < 2.0  # first order (its first step runs with zero torques)


def _ecos_run(path: Path, parameter_set: str | None, stop: float, h: float, names: list[str]) -> np.ndarray:
    """Ecos (ecospy) runs an SSP package: the values of ``names`` (``component.variable``) after each step."""
    ecospy = pytest.importorskip("ecospy", reason="Ecos is not installed: pip install ecospy (needs libtbb12)")
    rows = []
    with ecospy.EcosSimulation(ssp_path=str(path), step_size=h) as sim:
        assert sim.init(parameter_set=parameter_set)
        for _ in range(round(stop / h)):
            sim.step()
            rows.append([sim.get_real(n.replace(".", "::")) for n in names])
    return np.array(rows)


def test_ecos_runs_our_ssp_with_every_components_parameters(ssp, cosim):
    """Ecos applies the parameter sets of the one name given at start-up: the scenario's name selects every
    component's values (named after each component, motor_d would run on Motor.mo's defaults)."""
    sc = cosim.scenario
    params = {c.name: dict(c.parameters) for c in sc.components}
    names = ["motor_r.M0", "motor_r.w0", "motor_d.M0", "motor_d.w0", "pulsator.w_r", "motor_r.tau", "pulsator.w_d",
             "motor_d.tau"]
    h, stop = 0.005, 0.25
    rows = _ecos_run(ssp, sc.name, stop, h, names)
    got = dict(zip(names, rows.T))
    for comp in ("motor_r", "motor_d"):
        for p in ("M0", "w0"):
            assert np.all(got[f"{comp}.{p}"] == params[comp][p]), (comp, p)
    # Ecos's master is Jacobi: its run is nhbridge's Jacobi run on the same step (row k: after step k + 1), which
    # uses each motor's torque law M0*(1 - w/w0) with its own values
    ref = cosim.run(stop_time=stop, step=h, algorithm="jacobi")
    for sig in ("pulsator.w_r", "motor_r.tau", "pulsator.w_d", "motor_d.tau"):
        ours = ref[sig][1:len(rows) + 1]
        assert np.abs(got[sig] - ours).max() <= 1e-9 * np.ptp(ours), sig
    assert np.array_equal(_ecos_run(COMMITTED_SSP, sc.name, 2 * h, h, names[:4])[0],
                          [params["motor_r"]["M0"], params["motor_r"]["w0"], params["motor_d"]["M0"],
                           params["motor_d"]["w0"]])


# -- the command line and bad input ------------------------------------------------------------------------
def test_cli_cosim_ssp_and_back(work, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    out, png, package = tmp_path / "cosim.csv", tmp_path / "cosim.png", tmp_path / "system.ssp"
    assert main(["cosim", str(SCENARIO), "-o", str(out), "--plot", str(png), "--step", "0.01", "--stop-time",
                 "0.2", "--algorithm", "jacobi"]) == 0
    with open(out, newline="") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == ["time", "pulsator.x1", "pulsator.x2", "pulsator.phi", "pulsator.psi", "pulsator.w_r",
                       "pulsator.w_d", "motor_r.tau", "motor_d.tau"]
    assert len(rows) == 22 and float(rows[-1][0]) == 0.2
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["ssp", str(SCENARIO), "-o", str(package)]) == 0
    out2 = tmp_path / "back.csv"
    assert main(["cosim", str(package), "-o", str(out2), "--step", "0.01", "--stop-time", "0.2", "--algorithm",
                 "jacobi"]) == 0
    assert out2.read_text() == out.read_text()
    assert main(["cosim", str(SCENARIO), "-o", str(tmp_path / "a.csv"), "--adaptive", "--tolerance", "1e-2",
                 "--stop-time", "0.1"]) == 0
    assert "rejected steps" in capsys.readouterr().out


@pytest.fixture(scope="module")
def model_exchange_only(cosim, work) -> Path:
    """The pulsator FMU without its CoSimulation element."""
    src = cosim.fmus["pulsator"]
    target = work / "PulsatorME.fmu"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(target, "w") as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "modelDescription.xml":
                from lxml import etree

                root = etree.fromstring(data)
                root.remove(root.find("CoSimulation"))
                data = etree.tostring(root, xml_declaration=True, encoding="UTF-8")
            zout.writestr(item, data)
    return target


def bad_scenario(cosim, connections: str, extra: str = "", pulsator: str | None = None) -> str:
    fmus = cosim.fmus
    return f"""name = "Bad"
connections = [{connections}]
[components.pulsator]
fmu = "{pulsator or fmus['pulsator']}"
[components.motor_r]
fmu = "{fmus['motor_r']}"
parameters = {{ M0 = 5.0, w0 = 50.0 }}
[components.motor_d]
fmu = "{fmus['motor_d']}"
{extra}
[master]
step = 0.01
stop_time = 0.1
"""


OK_CONNECTIONS = '"pulsator.w_r -> motor_r.w", "motor_r.tau -> pulsator.Mr"'
BAD = {
    "missing variable": ('"pulsator.w_x -> motor_r.w", "motor_r.tau -> pulsator.Mr"', "",
                         ["connections[1]", "pulsator.w_x -> motor_r.w: pulsator has no variable 'w_x'",
                          "Did you mean 'w_r' or 'w_d'?"]),
    "output to output": ('"pulsator.w_r -> motor_r.tau"', "",
                         ["motor_r.tau is an output: an output cannot be connected to an output",
                          "Connect to an input of motor_r; its inputs are: w."]),
    "input as source": ('"motor_r.w -> pulsator.Mr"', "",
                        ["motor_r.w is an input",
                         "A connection goes from an output to an input; did you swap the two ends?"]),
    "unit mismatch": ('"pulsator.w_r -> motor_r.w", "motor_r.tau -> motor_d.w"', "",
                      ["unit mismatch: motor_r.tau is in 'N.m', motor_d.w in 'rad/s'",
                       "set ignore_units = true"]),
    "unit mismatch of a system-file output": ('"pulsator.relative_displacement -> motor_r.w"', "",
                                              ["unit mismatch: pulsator.relative_displacement is in 'm', "
                                               "motor_r.w in 'rad/s'"]),
    "algebraic loop": ('{ from = "motor_r.tau", to = "motor_d.w", ignore_units = true }, '
                       '{ from = "motor_d.tau", to = "motor_r.w", ignore_units = true }', "",
                       ["algebraic loop through direct feedthrough: motor_r.tau -> motor_d.w -> motor_d.tau -> "
                        "motor_r.w -> motor_r.tau", "break the loop"]),
    "input twice": ('"pulsator.w_r -> motor_r.w", "pulsator.w_d -> motor_r.w"', "",
                    ["connections[2]", "motor_r.w already has a source (connections[1]"]),
    "unknown parameter": (OK_CONNECTIONS, "parameters = { M1 = 2.0 }",
                          ["components.motor_d.parameters.M1: motor_d has no variable 'M1'.",
                           "Its parameters are: M0, w0."]),
    "expression as gain": ('{ from = "pulsator.w_r", to = "motor_r.w", gain = "2*3" }', "",
                           ["connections[1].gain: must be a finite number, got '2*3'", "not evaluated"]),
    "missing component": ('"pulsator.w_r -> motor_x.w"', "", ["no component 'motor_x'"]),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_is_reported_before_the_run(case, cosim, tmp_path, capsys):
    connections, extra, expected = BAD[case]
    path = tmp_path / "bad.toml"
    path.write_text(bad_scenario(cosim, connections, extra))
    out = tmp_path / "out.csv"
    assert main(["cosim", str(path), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    for text in expected:
        assert text in err, (case, err)
    assert not out.exists()


def test_a_model_exchange_only_fmu_is_refused(cosim, model_exchange_only, tmp_path, capsys):
    path = tmp_path / "me.toml"
    path.write_text(bad_scenario(cosim, OK_CONNECTIONS, pulsator=str(model_exchange_only)))
    assert main(["cosim", str(path), "-o", str(tmp_path / "out.csv")]) == 2
    err = capsys.readouterr().err
    assert "components.pulsator: PulsatorME.fmu has no Co-Simulation interface (Model Exchange only)" in err
    assert not (tmp_path / "out.csv").exists()


def test_all_problems_of_a_file_are_reported_at_once(cosim, tmp_path, capsys):
    path = tmp_path / "many.toml"
    path.write_text(bad_scenario(cosim, '"pulsator.w_x -> motor_r.w", "pulsator.w_r -> motor_r.tau"',
                                 "parameters = { M1 = 2.0 }"))
    assert main(["cosim", str(path), "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert "'w_x'" in err and "an output cannot be connected to an output" in err and "M1" in err


def test_a_failed_step_exits_with_1_and_writes_nothing(tmp_path, capsys):
    path = tmp_path / "huge.toml"
    path.write_text(SCENARIO.read_text().replace("M0 = 5.0, w0 = 50.0", "M0 = 1e300, w0 = 50.0")
                    .replace('"pulsator.toml"', f'"{COSIM / "pulsator.toml"}"')
                    .replace('"Motor.mo"', f'"{COSIM / "Motor.mo"}"'))
    assert main(["cosim", str(path), "-o", str(tmp_path / "o.csv"), "--stop-time", "0.1"]) == 1
    err = capsys.readouterr().err
    assert "simulation failed" in err and "component pulsator" in err and "Traceback" not in err
    assert not (tmp_path / "o.csv").exists()


def test_unsafe_ssp_sources_are_refused(tmp_path):
    ssd = COMMITTED_SSP
    with zipfile.ZipFile(ssd) as z:
        text = z.read("SystemStructure.ssd").decode().replace('source="resources/Pulsator.fmu"',
                                                              'source="../../etc/passwd.fmu"')
    bad = tmp_path / "bad.ssp"
    with zipfile.ZipFile(bad, "w") as z:
        z.writestr("SystemStructure.ssd", text)
    with pytest.raises(CosimError, match="is not a file inside the package"):
        read_ssp(bad, tmp_path)


def test_an_ssp_from_another_tool_with_ssv_file_and_without_our_annotation(cosim, work):
    """Parameter values from an .ssv file with a prefix; no nhbridge annotation: Jacobi, (stop - start) / 1000."""
    from lxml import etree

    from bridge.cosim.ssp import NS

    with zipfile.ZipFile(COMMITTED_SSP) as z:
        members = {n: z.read(n) for n in z.namelist()}
    root = etree.fromstring(members["SystemStructure.ssd"])
    for ann in root.findall("ssd:Annotations", NS):
        root.remove(ann)
    motor_r = root.find("ssd:System/ssd:Elements/ssd:Component[@name='motor_r']", NS)
    bindings = motor_r.find("ssd:ParameterBindings", NS)
    motor_r.remove(bindings)
    bindings = etree.SubElement(motor_r, f"{{{NS['ssd']}}}ParameterBindings")
    etree.SubElement(bindings, f"{{{NS['ssd']}}}ParameterBinding", source="resources/motor_r.ssv", prefix="motor_r.")
    members["SystemStructure.ssd"] = etree.tostring(root)
    members["resources/motor_r.ssv"] = f"""<?xml version="1.0" encoding="UTF-8"?>
<ssv:ParameterSet xmlns:ssv="{NS['ssv']}" version="1.0" name="motors"><ssv:Parameters>
<ssv:Parameter name="motor_r.M0"><ssv:Real value="5.0"/></ssv:Parameter>
<ssv:Parameter name="motor_r.w0"><ssv:Real value="50.0"/></ssv:Parameter>
<ssv:Parameter name="other.x"><ssv:Real value="1.0"/></ssv:Parameter>
</ssv:Parameters></ssv:ParameterSet>""".encode()
    path = work / "foreign.ssp"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    sc = read_ssp(path, work)
    assert sc.component("motor_r").parameters == (("M0", 5.0), ("w0", 50.0))
    assert (sc.master.step, sc.master.algorithm, sc.record) == (0.002, "jacobi", ())
    with prepare(path, work / "foreign") as foreign:
        assert foreign.plan.record[:3] == ("pulsator.w_r", "pulsator.w_d", "pulsator.relative_displacement")
        a = foreign.run(stop_time=0.4)
    b = cosim.run(stop_time=0.4, step=0.002, algorithm="jacobi")
    assert np.array_equal(a["pulsator.w_r"], b["pulsator.w_r"]) and np.array_equal(a["motor_r.tau"], b["motor_r.tau"])


def test_fmpy_logging_is_safe_after_a_cosimulation(built_fmu, capfd):
    """fmpy's FMI 2 logger proxy forwards every instance's messages to one Python logger held in a C global.
    After a co-simulation (also one whose slaves were never freed) an FMU that logs through fmpy's default
    callbacks must neither find a freed logger there (a segfault) nor have its messages swallowed."""
    import gc

    from bridge.cosim import prepare
    from bridge.cosim.slaves import Slave

    with prepare(SCENARIO) as cosim:
        cosim.run(step=0.01, stop_time=0.05)
    free, Slave.free = Slave.free, lambda self: None  # an interrupted run: slaves left behind
    try:
        with prepare(SCENARIO) as cosim:
            cosim.run(step=0.01, stop_time=0.02)
    finally:
        Slave.free = free
    gc.collect()
    fmu = built_fmu.build(ROOT / "examples" / "simple_pendulum.toml", "lagrange", 2)
    capfd.readouterr()
    with pytest.raises(Exception, match="status 3"):
        fmpy.simulate_fmu(str(fmu), fmi_type="ModelExchange", stop_time=0.1, start_values={"m": 0.0})
    assert "the mass matrix is singular" in capfd.readouterr().out


def test_modelica_component_compiles_alone_beside_a_conflicting_file(tmp_path, monkeypatch):
    """Rumoca compiles the component's file alone: a working directory holding a file of the same name and another
    .mo declaring the same class (with another stall torque) is not loaded ('Duplicate class' before), and the
    FMU has the file's own value."""
    import fmpy

    from bridge.cosim.components import build_modelica_fmu

    source = tmp_path / "src" / "Motor.mo"
    source.parent.mkdir()
    source.write_text((COSIM / "Motor.mo").read_text())
    work = tmp_path / "work"
    work.mkdir()
    (work / "Motor.mo").write_text((COSIM / "Motor.mo").read_text())
    (work / "Copy.mo").write_text((COSIM / "Motor.mo").read_text().replace("= 4.0", "= 7.0"))
    monkeypatch.chdir(work)
    fmu = build_modelica_fmu(source, "Motor", tmp_path / "Motor.fmu")
    md = fmpy.read_model_description(str(fmu), validate=False)  # Rumoca's XML fails fmpy's schema (README)
    starts = {v.name: float(v.start) for v in md.modelVariables if v.start is not None and v.name == "M0"}
    assert starts == {"M0": 4.0}
