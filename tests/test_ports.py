"""Ports (issue 13 requirement 4): an exported model with flanges, connected to Modelica components.

tests/models/sleigh_ports.toml is the Chaplygin sleigh with its heading and x position as flanges;
tests/models/PortAssembly.mo connects it to a motor through a torsion spring and to the ground through a
linear spring; tests/models/sleigh_assembly.toml is the same assembly written as one system file (the springs
as potential energy, the motor as a coordinate with a forcing torque), simulated natively as the reference.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import bridge
from bridge.cli import main
from bridge.derivation.methods import METHODS
from bridge.errors import BridgeError
from bridge.modelica.export import model_source
from bridge.modelica.ports import flow_symbol, library_files, library_source, port_forces
from bridge.simulation.simulate import simulate

ROOT = Path(__file__).parent.parent
MODELS = ROOT / "tests" / "models"
PORTED = MODELS / "sleigh_ports.toml"
ASSEMBLY = MODELS / "sleigh_assembly.toml"
#: the assembly's variables -> the combined system file's coordinates
PAIRS = {"sleigh.x": "x", "sleigh.y": "y", "sleigh.theta": "theta", "motor.phi": "phi_m"}
STOP, DT = 5.0, 0.01


def _ported(method: str = "lagrange"):
    return bridge.derive(bridge.load_system(PORTED), method)


def _all_ported() -> str:
    """The ported sleigh with y a port too: y is the dependent velocity of the reduced methods."""
    return PORTED.read_text().replace("[ports]\n", '[ports]\ny = "translational"\n')


def _with_force_inputs(system):
    """The ported system with an input force F_<q> added to the generalized force of every port coordinate."""
    text = _all_ported()
    inputs = "".join(f"F_{q} = {{ start = 0.0 }}\n" for q in system.ports)
    forces = "".join(f'{q} = "F_{q}"\n' for q in system.ports)
    return bridge.parse_system(text.replace("[ports]", f"[inputs]\n{inputs}[forces]\n{forces}[ports]"))


@pytest.mark.parametrize("method", sorted(METHODS))
def test_a_flow_enters_the_rows_as_a_generalized_force(method):
    """The port's flow adds to the forcing exactly what a force input on that coordinate adds when derived."""
    system = bridge.parse_system(_all_ported())
    assert set(system.ports) == {"x", "y", "theta"}
    try:
        eom = bridge.derive(system, method)
        forced = bridge.derive(_with_force_inputs(system), method)
    except BridgeError as exc:
        pytest.skip(f"{method} does not apply here: {exc}")
    rows = forced.forcing.shape[0]
    added = port_forces(eom, rows)
    for q in system.ports:
        reference = [sp.diff(f, sp.Symbol(f"F_{q}")) for f in forced.forcing]
        ours = [sp.diff(a, flow_symbol(q)) for a in added]
        assert any(r != 0 for r in reference)
        assert all(sp.simplify(r - o) == 0 for r, o in zip(reference, ours)), (q, reference, ours)


def test_ports_do_not_change_the_system_on_its_own():
    """Unconnected, the ported sleigh is the example's sleigh: the native run is the same."""
    plain = bridge.load_system(ROOT / "examples" / "chaplygin_sleigh.toml")
    a = simulate(bridge.derive(plain, "lagrange"), STOP, interval=DT, rtol=1e-10, atol=1e-12)
    b = simulate(_ported(), STOP, interval=DT, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(a.q, b.q, rtol=0, atol=1e-12)


def test_the_model_has_flanges_with_the_msl_structure():
    text = model_source(_ported())
    assert "  NHBridge.Mechanics.Rotational.Interfaces.Flange_a flange_theta " in text
    assert "  NHBridge.Mechanics.Translational.Interfaces.Flange_a flange_x " in text
    assert "  flange_theta.phi = theta;" in text and "  flange_x.s = x;" in text
    assert re.search(r"= [^;]*flange_theta\.tau;", text) and re.search(r"= [^;]*flange_x\.f;", text)
    msl = model_source(_ported(), msl=True)
    assert "  Modelica.Mechanics.Rotational.Interfaces.Flange_a flange_theta " in msl
    assert "  Modelica.Mechanics.Translational.Interfaces.Flange_a flange_x " in msl
    assert 'uses(Modelica(version="4.0.0"))' in msl and "NHBridge" not in msl
    assert "NHBridge" not in model_source(bridge.derive(bridge.load_system(ROOT / "examples" / "car.toml"),
                                                        "lagrange"))


#: the MSL 4.0's flanges (Modelica/Mechanics/{Rotational,Translational}/Interfaces/Flange.mo and Modelica.Units.SI):
#: (potential, quantity, unit) and (flow, quantity, unit)
MSL_FLANGES = {"Rotational": (("phi", "Angle", "rad"), ("tau", "Torque", "N.m")),
               "Translational": (("s", "Length", "m"), ("f", "Force", "N"))}


def test_the_local_flanges_are_the_msls():
    text = library_source()
    for library, ((p, pq, pu), (f, fq, fu)) in MSL_FLANGES.items():
        block = text.split(f"package {library} ")[1].split(f"end {library};")[0]
        for side in ("a", "b"):
            body = block.split(f"connector Flange_{side} ")[1].split(f"end Flange_{side};")[0]
            declarations = [line.strip() for line in body.splitlines()[1:3]]
            assert declarations[0].startswith(f'Real {p}(final quantity="{pq}", final unit="{pu}"')
            assert declarations[1].startswith(f'flow Real {f}(final quantity="{fq}", final unit="{fu}")')


def test_the_committed_connector_library_is_the_generated_one():
    for name, text in library_files().items():
        assert (ROOT / "modelica" / name).read_text(encoding="utf-8") == text, name
    assert sorted(p.name for p in (ROOT / "modelica" / "NHBridge").iterdir()) == sorted(
        Path(n).name for n in library_files())


@pytest.mark.parametrize("method", ["lagrange", "maggi"])
def test_the_ported_model_alone_in_both_compilers(method):
    """Unconnected flanges carry no flow (Modelica sets it to zero): the model matches the native run."""
    pytest.importorskip("rumoca")
    pytest.importorskip("pymoca")
    from bridge.validation.tool_checks import check_pymoca, check_rumoca

    eom = _ported(method)
    for report in (check_rumoca(eom), check_pymoca(eom)):
        assert report.balanced and set(report.errors) == {"x", "y", "theta"}
        assert report.max_error < 1e-6, report.summary()


def _native_assembly(stop: float = STOP):
    run = simulate(bridge.derive(bridge.load_system(ASSEMBLY), "lagrange"), stop, interval=DT, rtol=1e-10,
                   atol=1e-12)
    names = [c.name for c in run.eom.system.coordinates]
    return run.time, {n: run.q[:, i] for i, n in enumerate(names)}


def _compare(time_tool, signal, stop: float = STOP) -> dict[str, float]:
    t, native = _native_assembly(stop)
    errors = {}
    for variable, coordinate in PAIRS.items():
        ref = native[coordinate]
        tool = np.interp(t, np.asarray(time_tool, dtype=float), np.asarray(signal(variable), dtype=float))
        errors[variable] = float(np.abs(tool - ref).max() / np.ptp(ref))
    return errors


def _assembly_library(method: str) -> dict[str, str]:
    return {"PortedSleigh.mo": model_source(_ported(method)), **library_files()}


#: (method, stop time): the heading turns through pi/2 (at 1.44 s) and pi, where every fixed split of the reduced
#: methods is singular: maggi up to 1.2 s
ASSEMBLY_METHODS = [("lagrange", STOP), ("nielsen", STOP), ("maggi", 1.2)]


@pytest.mark.parametrize("method, stop", ASSEMBLY_METHODS)
def test_assembly_in_rumoca_matches_the_combined_system(method, stop, tmp_path):
    rumoca = pytest.importorskip("rumoca")
    lib = tmp_path / "lib"
    for name, text in _assembly_library(method).items():
        (lib / name).parent.mkdir(parents=True, exist_ok=True)
        (lib / name).write_text(text, encoding="utf-8")
    (tmp_path / "work").mkdir()
    model = rumoca.loads((MODELS / "PortAssembly.mo").read_text(), model="PortAssembly.Assembly",
                         filename=str(tmp_path / "work" / "PortAssembly.mo"), roots=[str(lib)])
    assert model.structure().is_balanced
    result = model.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=DT))
    errors = _compare(result.time, lambda n: result[n], stop)
    assert max(errors.values()) < 1e-6, errors


@pytest.mark.parametrize("method, stop", ASSEMBLY_METHODS)
def test_assembly_in_pymoca_matches_the_combined_system(method, stop):
    pytest.importorskip("pymoca")
    from bridge.tools.pymoca import simulate_pymoca

    run = simulate_pymoca((MODELS / "PortAssembly.mo").read_text(), "PortAssembly.Assembly", stop, DT, 1e-10,
                          _assembly_library(method))
    errors = _compare(run.time, run.__getitem__, stop)
    assert max(errors.values()) < 1e-6, errors


def test_cli_exports_with_the_msl_and_checks_with_the_local_copies(tmp_path, capsys):
    out = tmp_path / "PortedSleigh.mo"
    assert main(["modelica", str(PORTED), "--msl", "-o", str(out)]) == 0
    assert "Modelica.Mechanics.Rotational.Interfaces.Flange_a flange_theta" in out.read_text()
    out = tmp_path / "Local.mo"
    args = ["modelica", str(PORTED), "-o", str(out)]
    if _tools_present():
        args += ["--check", "rumoca,pymoca"]
    assert main(args) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "NHBridge" in printed  # says where the connectors are
    assert "NHBridge.Mechanics.Translational.Interfaces.Flange_a flange_x" in out.read_text()


def _tools_present() -> bool:
    try:
        import pymoca  # noqa: F401
        import rumoca  # noqa: F401
    except ImportError:
        return False
    return True
