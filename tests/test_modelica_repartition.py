"""The Modelica text of a reduced method re-partitions where its split turns singular (form ``repartition``).

The systems of ``tests/test_fmu_repartition.py`` (each turns its split singular at least twice), exported by
maggi, appell and chaplygin as ``bridge.modelica.repartition`` writes them, compiled and simulated by Rumoca 0.9
and compared with the closed form of the file's [reference] or the native lagrange run (1e-6 of the range).
pymoca 0.12 has no when-clause (``docs/compiler-defects/SwitchedPymocaWhen.mo``): the test shows it refuses the
text, and its target keeps the build-time split.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.errors import ValidationError
from bridge.modelica.forms import candidates, exportable, target_form
from bridge.modelica.repartition import repartition_source

from .repartition_cases import SOURCES, reference

rumoca = pytest.importorskip("rumoca")

ROOT = Path(__file__).parent.parent
MODELS = ROOT / "tests" / "models" / "repartition"
CASES = [(s, m) for s, (_, _, methods) in SOURCES.items() for m in methods]
#: the split changes each run makes at least (default 2). The cart turning in place: its split of x, theta turns
#: singular at theta = pi/2, and the text's health (det-based, 3 constraints) ranks theta, phi_l first there, a
#: split whose health is constant: one change to 1.5 s
CHANGES = {"cart": 1}


def run_rumoca(text: str, name: str, stop: float):
    with tempfile.TemporaryDirectory() as tmp:
        model = rumoca.loads(text, model=name, filename=str(Path(tmp) / f"{name}.mo"), roots=[])
        return model.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=stop / 400))


def deviation(result, ref: dict[str, np.ndarray]) -> float:
    """Largest deviation of the run's coordinates from the reference, relative to each one's range."""
    worst = 0.0
    for name, values in ref.items():
        if name == "time":
            continue
        sig = np.interp(ref["time"], np.asarray(result.time), np.asarray(result[name], dtype=float))
        span = max(float(np.ptp(values)), 1e-3 * max(1.0, float(np.abs(values).max())))
        worst = max(worst, float(np.abs(sig - values).max()) / span)
    return worst


@pytest.mark.parametrize("source,method", CASES)
def test_rumoca_follows_the_motion_through_split_changes(source, method, derivations):
    """Rumoca's run of the repartition text changes the split (at least twice; the cart once) and stays within 1e-6
    of the range."""
    eom = derivations.eom(SOURCES[source][0], method)
    assert exportable(eom)
    text = repartition_source(eom)
    stop = SOURCES[source][1]
    result = run_rumoca(text, eom.system.name, stop)
    split = np.asarray(result["nhb_split"], dtype=float)
    assert np.count_nonzero(np.diff(split)) >= CHANGES.get(source, 2)
    assert float(result.time[-1]) == pytest.approx(stop)
    assert deviation(result, reference(source)) < 1e-6
    for k in range(eom.system.m):  # the velocity constraints hold through the changes
        assert np.abs(np.asarray(result[f"residual[{k + 1}]"], dtype=float)).max() < 1e-6


def test_the_cart_text_compiles_balanced(derivations):
    """The cart's text (3 constraints, 9 candidate splits) compiles in Rumoca and is balanced."""
    for method in SOURCES["cart"][2]:
        eom = derivations.eom(SOURCES["cart"][0], method)
        with tempfile.TemporaryDirectory() as tmp:
            model = rumoca.loads(repartition_source(eom), model=eom.system.name,
                                 filename=str(Path(tmp) / f"{eom.system.name}.mo"), roots=[])
            structure = model.structure()
        assert structure.is_balanced
        assert structure.n_states == 2 * eom.system.n  # the coordinates and every velocity


def test_every_split_change_picks_a_regular_split(derivations):
    """The knife edge's splits (dependent y, x: theta's column of A is 0) and its choices: dependent y while
    |cos theta| is the larger, x after theta passes pi/2 (closed form theta = w t)."""
    eom = derivations.eom(SOURCES["knife_edge"][0], "maggi")
    names = [c.name for c in eom.system.coordinates]
    assert [tuple(names[j] for j in c.dependent) for c in candidates(eom)] == [("y",), ("x",)]
    result = run_rumoca(repartition_source(eom), eom.system.name, 4.0)
    theta = np.asarray(result["theta"], dtype=float)
    split = np.asarray(result["nhb_split"], dtype=float)
    # where the split is 1 (dependent y), |cos theta| stays above 1e-3; where 2 (dependent x), |sin theta| does
    assert np.abs(np.cos(theta[split == 1])).min() > 1e-3
    assert np.abs(np.sin(theta[split == 2])).min() > 1e-3


def test_real_singularity_stops_with_the_native_message():
    """Two constraints that become dependent (z = pi): the model's assert stops Rumoca with the native message."""
    sysm = bridge.load_system(MODELS / "singular_constraints.toml")
    eom = bridge.derive(sysm, "maggi")
    with pytest.raises(rumoca.RumocaError) as stopped:
        run_rumoca(repartition_source(eom), sysm.name, 4.0)
    text = str(stopped.value)
    assert "no split of the velocities is regular" in text
    assert "constraints.nonholonomic[1], constraints.nonholonomic[2] are dependent" in text
    t_stop = float(text[text.index("at t = ") + 7:].split()[0])
    assert 1.0 + t_stop < np.pi  # before z = pi, where the constraints are dependent
    assert np.pi - (1.0 + t_stop) < 0.01


def test_pymoca_keeps_the_build_time_split(derivations):
    """pymoca has no when-clause and parses no indexed call: it refuses the repartition text, and its target form
    keeps the split."""
    from bridge.tools.pymoca import simulate_pymoca

    pytest.importorskip("pymoca")
    eom = derivations.eom(SOURCES["knife_edge"][0], "maggi")
    assert target_form(eom, "rumoca") == "repartition"
    assert target_form(eom, "pymoca") != "repartition"
    with pytest.raises(ValidationError, match="pymoca rejected the exported model"):
        simulate_pymoca(repartition_source(eom), eom.system.name, 4.0, 0.01, 1e-8)


def test_methods_without_a_split_keep_their_form(derivations):
    """lagrange has no split to re-partition: no repartition text, and every target keeps the chosen form."""
    eom = derivations.eom(SOURCES["knife_edge"][0], "lagrange")
    assert not exportable(eom)
    assert target_form(eom, "rumoca") == target_form(eom, "pymoca") != "repartition"


# -- DEFECT CANARIES (docs/compiler-defects/): the Rumoca defects the repartition text avoids --------------------
DEFECTS = ROOT / "docs" / "compiler-defects"


def _reproducer(name: str, stop: float):
    """Rumoca's result for the reproducer ``name``, or the RumocaError it raised."""
    try:
        return run_rumoca((DEFECTS / f"{name}.mo").read_text(encoding="utf-8"), name, stop)
    except rumoca.RumocaError as exc:
        return exc


def test_rumoca_still_feeds_reinit_back():
    """reinit(u, 2*u) never settles; reinit(u, 2*pre(u)) sets u = 2 (the text has no reinit)."""
    outcome = _reproducer("RumocaReinitIterates", 1.0)
    assert isinstance(outcome, rumoca.RumocaError), "Rumoca now simulates RumocaReinitIterates: use slots + reinit"
    assert "discrete event equations did not converge" in str(outcome)
    text = (DEFECTS / "RumocaReinitIterates.mo").read_text().replace("reinit(u, 2*u)", "reinit(u, 2*pre(u))")
    result = run_rumoca(text, "RumocaReinitIterates", 1.0)
    u = np.asarray(result["u"], dtype=float)
    assert u[0] == 1.0 and u[-1] == pytest.approx(2.0)


def test_rumoca_still_reads_pre_of_an_algebraic_variable_as_zero():
    """u = pre(v) = 2 after t = 0.5; Rumoca gives 0."""
    result = _reproducer("RumocaReinitPreAlgebraic", 1.0)
    assert not isinstance(result, Exception), result
    u = np.asarray(result["u"], dtype=float)
    assert u[-1] == 0.0, "Rumoca now re-initialises from pre(v): slots + reinit would work"


def test_rumoca_still_reads_a_function_matrix_result_by_columns():
    """twoColumns(1)[2, 1] is 3; Rumoca gives X[1, 2] = 2 (nhb_solve returns a vector)."""
    result = _reproducer("RumocaFunctionMatrixResult", 0.1)
    assert not isinstance(result, Exception), result
    assert float(np.asarray(result["x21"], dtype=float)[0]) == 2.0, "Rumoca now indexes matrix results by rows"


def test_rumoca_still_rejects_a_computed_index_in_a_function():
    """b[p] := 0 with p found in the function is not lowered (nhb_solve swaps rows with constant indices)."""
    outcome = _reproducer("RumocaFunctionVariableIndex", 0.1)
    assert isinstance(outcome, rumoca.RumocaError), "Rumoca now lowers b[p] := ...: nhb_solve may use loops"
    assert "dynamic assignment target `b[p]` is unsupported" in str(outcome)


def test_check_rumoca_simulates_the_repartition_text_over_the_whole_run(derivations):
    """``check_rumoca`` on the knife edge by maggi (its build-time split turns singular at 1.21 s): the text
    that re-partitions, over the whole 4 s, within 1e-6 of the native run; the horizon of the target is 4 s."""
    from bridge.modelica.forms import regular_horizon
    from bridge.validation.tool_checks import check_rumoca

    eom = derivations.eom(SOURCES["knife_edge"][0], "maggi")
    assert regular_horizon(eom, 4.0) < 1.5  # the build-time split: 0.9 of its singular time
    assert regular_horizon(eom, 4.0, tool="rumoca") == 4.0
    report = check_rumoca(eom, stop_time=4.0)
    assert report.form == "repartition"
    assert report.balanced and report.max_error < 1e-6, report.summary()


def test_cli_writes_the_text_for_the_target(tmp_path, derivations):
    """``nhbridge modelica --target rumoca`` writes the repartition text of a reduced method, ``--target pymoca``
    and no target the build-time split's text (the same as ``model_source``); lagrange is the same for every
    target."""
    from bridge.cli import main
    from bridge.modelica.export import model_source

    path = str(SOURCES["knife_edge"][0])
    eom = derivations.eom(SOURCES["knife_edge"][0], "maggi")
    assert main(["modelica", path, "--method", "maggi", "--target", "rumoca", "-o", str(tmp_path / "r.mo")]) == 0
    assert (tmp_path / "r.mo").read_text() == repartition_source(eom)
    for extra, name in ((["--target", "pymoca"], "p.mo"), ([], "n.mo")):
        assert main(["modelica", path, "--method", "maggi", *extra, "-o", str(tmp_path / name)]) == 0
        assert (tmp_path / name).read_text() == model_source(eom)
    lagrange = derivations.eom(SOURCES["knife_edge"][0], "lagrange")
    assert main(["modelica", path, "--method", "lagrange", "--target", "rumoca", "-o", str(tmp_path / "l.mo")]) == 0
    assert (tmp_path / "l.mo").read_text() == model_source(lagrange)
    assert main(["modelica", path, "--method", "maggi", "--target", "rumoca", "-o", str(tmp_path / "r.txt")]) == 2


# -- --target with --package, --msl, ports, efforts, switched elements, a constraint level -------------------------
def _knife_edge_with_a_diode(tmp_path) -> Path:
    """The knife edge plus an electric circuit (a charge with an ideal diode): a system with a switched element."""
    text = SOURCES["knife_edge"][0].read_text()
    text = text.replace('theta = { start = 0.0, velocity = 1.3,', 'qe = { start = 0.0, velocity = 0.0, unit = "C", '
                        'description = "charge" }\ntheta = { start = 0.0, velocity = 1.3,', 1)
    text = text.replace('J/2*der(theta)^2"', 'J/2*der(theta)^2 + 0.1/2*der(qe)^2"', 1)
    text = text.replace("[simulation]", '[diodes]\nd1 = { flow = "der(qe)", forward_voltage = 0.7, description = '
                        '"a diode" }\n\n[simulation]', 1)
    path = tmp_path / "knife_edge_diode.toml"
    path.write_text(text[:text.index("[reference]")])
    return path


def test_cli_target_writes_the_repartition_text_inside_a_package(tmp_path, derivations):
    """``--package P --target rumoca``: each reduced model of the package is its repartition text within P, and
    Rumoca simulates the package's knife edge through a split change as it does the single file."""
    from bridge.cli import main

    files = [str(SOURCES[s][0]) for s in ("knife_edge", "skate")]
    assert main(["modelica", *files, "--method", "maggi", "--target", "rumoca", "--package", "P",
                 "-o", str(tmp_path)]) == 0
    for source in ("knife_edge", "skate"):
        eom = derivations.eom(SOURCES[source][0], "maggi")
        text = (tmp_path / "P" / f"{eom.system.name}.mo").read_text()
        assert text == repartition_source(eom, within="P")
    assert (tmp_path / "P" / "package.order").read_text().split() == ["KnifeEdgeIncline", "InclinedSkate"]
    model = rumoca.loads((tmp_path / "P" / "KnifeEdgeIncline.mo").read_text(), model="P.KnifeEdgeIncline",
                         filename=str(tmp_path / "P" / "KnifeEdgeIncline.mo"), roots=[str(tmp_path)])
    result = model.simulate((0.0, 4.0), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=0.01))
    assert np.count_nonzero(np.diff(np.asarray(result["nhb_split"], dtype=float))) >= 2
    assert deviation(result, reference("knife_edge")) < 1e-6


def test_cli_target_with_msl_and_no_ports_is_the_repartition_text(tmp_path, derivations):
    """``--msl`` changes only the connectors of [ports]: without ports, ``--target rumoca --msl`` is the same
    repartition text."""
    from bridge.cli import main

    path = str(SOURCES["knife_edge"][0])
    assert main(["modelica", path, "--method", "maggi", "--target", "rumoca", "--msl", "-o",
                 str(tmp_path / "m.mo")]) == 0
    assert (tmp_path / "m.mo").read_text() == repartition_source(derivations.eom(SOURCES["knife_edge"][0], "maggi"))


@pytest.mark.parametrize("case", ["ports", "efforts", "level", "package"])
def test_cli_target_refuses_what_the_repartition_text_cannot_hold(tmp_path, capsys, case):
    """A reduced method with [ports] (with or without --msl), effort unknowns or a hand-chosen constraint level:
    exit 2, the message names the system, the method and the feature, and nothing is written (in a package,
    not even the systems the text could hold)."""
    from bridge.cli import main

    ports, efforts = str(MODELS.parent / "sleigh_ports.toml"), str(ROOT / "examples" / "dc_motor_drive.toml")
    out = tmp_path / "out.mo"
    args, expected = {
        "ports": ([ports, "--msl", "-o", str(out)], "PortedSleigh by maggi has [ports]"),
        "efforts": ([efforts, "-o", str(out)], "DcMotorDrive by maggi has effort unknowns"),
        "level": ([str(SOURCES["knife_edge"][0]), "--constraint-level", "index1", "-o", str(out)],
                  "KnifeEdgeIncline by maggi: --constraint-level index1"),
        "package": ([str(SOURCES["knife_edge"][0]), ports, "--package", "P", "-o", str(tmp_path)],
                    "PortedSleigh by maggi has [ports]"),
    }[case]
    assert main(["modelica", *args, "--method", "maggi", "--target", "rumoca"]) == 2
    err = capsys.readouterr().err
    assert f"--target rumoca: {expected}" in err and "Traceback" not in err
    assert "To fix:" in err
    assert not out.exists() and not (tmp_path / "P").exists()


def test_cli_target_with_switched_elements(tmp_path, capsys):
    """A switched element (an ideal diode): maggi cannot carry it (exit 2, the derivation says so before any
    export); lagrange, which has no split, writes its chosen form for every target."""
    from bridge.cli import main
    from bridge.modelica.export import model_source

    path = _knife_edge_with_a_diode(tmp_path)
    assert main(["modelica", str(path), "--method", "maggi", "--target", "rumoca", "-o", str(tmp_path / "m.mo")]) == 2
    assert "method 'maggi' cannot carry d1" in capsys.readouterr().err
    assert not (tmp_path / "m.mo").exists()
    assert main(["modelica", str(path), "--method", "lagrange", "--target", "rumoca", "-o",
                 str(tmp_path / "l.mo")]) == 0
    assert (tmp_path / "l.mo").read_text() == model_source(bridge.derive(bridge.load_system(path), "lagrange"))


def test_rumoca_still_generates_no_fmu_of_the_repartition_text(derivations):
    """DEFECT CANARY: Rumoca's fmi2 code generation rejects nhb_solve (a local swapped under an if without an
    earlier binding; with one, an element of a matrix local has no C symbol), so ``nhbridge fmu --backend
    rumoca`` builds the build-time split's text (bridge.backends.fmu) and the native FMU re-partitions."""
    from bridge.tools.rumoca import codegen_fmi2

    text = repartition_source(derivations.eom(SOURCES["knife_edge"][0], "maggi"))
    with pytest.raises(RuntimeError, match="if-statement assignment to `nhb_lu_t` requires an existing binding"):
        codegen_fmi2(rumoca, text, "KnifeEdgeIncline")
    bound = text.replace("    nhb_lu_r := nhb_lu_b;\n", "    nhb_lu_r := nhb_lu_b;\n    nhb_lu_t := 0;\n", 1)
    with pytest.raises(RuntimeError, match="missing emitted symbol for source reference `nhb_lu_M"):
        codegen_fmi2(rumoca, bound, "KnifeEdgeIncline")
