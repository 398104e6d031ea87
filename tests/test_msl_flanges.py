"""Ports exported with --msl: the flanges are the Modelica Standard Library's, compiled and simulated.

A model exported with ``nhbridge modelica --msl`` declares its ports as ``Modelica.Mechanics.Rotational.
Interfaces.Flange_a`` / ``Modelica.Mechanics.Translational.Interfaces.Flange_a`` with ``uses(Modelica(version=
"4.0.0"))``. ``tests/models/MslPortAssembly.mo`` connects the ported sleigh (``tests/models/sleigh_ports.toml``)
to a motor, springs and a fixed point written against the MSL's flange names; both compilers compile it with a
library named ``Modelica`` and simulate it, and the sleigh and motor are compared with the native simulation of
``tests/models/sleigh_assembly.toml`` (the same mechanics as one system file).

Two libraries:

* ``tests/models/msl/Modelica``: a stand-in written for these tests with the MSL 4.0.0's layout (a folder per
  package, ``within`` clauses), class names and declarations of what the export and the assembly refer to
  (``Modelica.Units.SI`` types; ``Flange`` and its extensions ``Flange_a``, ``Flange_b``). It is not the MSL's
  text (which is not redistributed with nhbridge).
* the real MSL where one is on ``MODELICAPATH`` (a folder holding ``Modelica/``, ``Complex.mo``): the files the
  flanges need (:data:`MSL_CLOSURE`, their text as the MSL ships it: licence header, icons, documentation) are
  loaded from there.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bridge.cli import main
from bridge.tools.pymoca import PYMOCA_MISSING
from bridge.tools.rumoca import RUMOCA_MISSING
from tests.test_ports import MODELS, PORTED, _compare

STAND_IN = MODELS / "msl"
ASSEMBLY = MODELS / "MslPortAssembly.mo"
#: the MSL 4.0.0 files that the flanges need, relative to the folder holding Modelica/ (Modelica.Units needs the
#: top-level Complex record; every package.mo up the tree; Flange_a/b extend Flange)
MSL_CLOSURE = ["Complex.mo", "Modelica/package.mo", "Modelica/Icons.mo", "Modelica/Units.mo",
               "Modelica/Mechanics/package.mo",
               *(f"Modelica/Mechanics/{kind}/{name}" for kind in ("Rotational", "Translational")
                 for name in ("package.mo", "Interfaces/package.mo", "Interfaces/Flange.mo",
                              "Interfaces/Flange_a.mo", "Interfaces/Flange_b.mo"))]
#: (method, stop time): the heading passes pi/2 at 1.44 s, where maggi's fixed split is singular
METHODS = [("lagrange", 5.0), ("maggi", 1.2)]


def _msl_on_path() -> Path | None:
    """The first folder on MODELICAPATH that holds the MSL (Modelica/package.mo), or None."""
    for folder in filter(None, os.environ.get("MODELICAPATH", "").split(os.pathsep)):
        if (Path(folder) / "Modelica" / "package.mo").is_file():
            return Path(folder)
    return None


def _library(which: str) -> dict[str, str]:
    """Relative path -> text of the library named Modelica: the stand-in, or the real MSL's closure."""
    if which == "stand-in":
        return {p.relative_to(STAND_IN).as_posix(): p.read_text(encoding="utf-8") for p in STAND_IN.rglob("*.mo")}
    root = _msl_on_path()
    if root is None:
        pytest.skip("no Modelica Standard Library on MODELICAPATH (neither Rumoca nor pymoca ships one): e.g. "
                    "git clone --depth 1 --branch v4.0.0 https://github.com/modelica/ModelicaStandardLibrary msl; "
                    "MODELICAPATH=$PWD/msl")
    missing = [name for name in MSL_CLOSURE if not (root / name).is_file()]
    assert not missing, f"the MSL at {root} lacks {missing}"
    return {name: (root / name).read_text(encoding="utf-8") for name in MSL_CLOSURE}


def _exported(method: str, tmp_path: Path) -> str:
    """The ported sleigh exported by the CLI with --msl."""
    out = tmp_path / "PortedSleigh.mo"
    assert main(["modelica", str(PORTED), "--method", method, "--msl", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "  Modelica.Mechanics.Rotational.Interfaces.Flange_a flange_theta " in text
    assert "  Modelica.Mechanics.Translational.Interfaces.Flange_a flange_x " in text
    assert 'uses(Modelica(version="4.0.0"))' in text and "NHBridge" not in text
    return text


def _write(files: dict[str, str], folder: Path) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.mark.parametrize("library", ["stand-in", "msl"])
@pytest.mark.parametrize("method, stop", METHODS)
def test_the_msl_assembly_in_rumoca_matches_the_combined_system(library, method, stop, tmp_path, monkeypatch):
    rumoca = pytest.importorskip("rumoca", reason=RUMOCA_MISSING)
    files = {**_library(library), "PortedSleigh.mo": _exported(method, tmp_path)}
    monkeypatch.delenv("MODELICAPATH", raising=False)  # Rumoca reads it too: the library is given as the root, and
    # a second Modelica package from MODELICAPATH leaves the model's own classes unresolved
    root = _write(files, tmp_path / "lib")
    (tmp_path / "work").mkdir()
    model = rumoca.loads(ASSEMBLY.read_text(encoding="utf-8"), model="MslPortAssembly.Assembly",
                         filename=str(tmp_path / "work" / ASSEMBLY.name), roots=[str(root)])
    assert model.structure().is_balanced
    result = model.simulate((0.0, stop), config=rumoca.SimConfig(rtol=1e-10, atol=1e-12, dt=0.01))
    errors = _compare(result.time, lambda n: result[n], stop)
    assert max(errors.values()) < 1e-6, errors


@pytest.mark.parametrize("library", ["stand-in", "msl"])
@pytest.mark.parametrize("method, stop", METHODS)
def test_the_msl_assembly_in_pymoca_matches_the_combined_system(library, method, stop, tmp_path):
    pytest.importorskip("casadi", reason=PYMOCA_MISSING)
    pytest.importorskip("pymoca", reason=PYMOCA_MISSING)
    from bridge.tools.pymoca import simulate_pymoca

    files = {**_library(library), "PortedSleigh.mo": _exported(method, tmp_path)}
    run = simulate_pymoca(ASSEMBLY.read_text(encoding="utf-8"), "MslPortAssembly.Assembly", stop, 0.01, 1e-10,
                          files)
    errors = _compare(run.time, run.__getitem__, stop)
    assert max(errors.values()) < 1e-6, errors


def test_the_stand_in_declares_the_flanges_as_the_export_refers_to_them():
    """Every class the --msl export names exists in the stand-in at the MSL's path, with the MSL's variables."""
    files = _library("stand-in")
    for kind, (potential, flow) in {"Rotational": ("SI.Angle phi", "flow SI.Torque tau"),
                                    "Translational": ("SI.Position s", "flow SI.Force f")}.items():
        base = files[f"Modelica/Mechanics/{kind}/Interfaces/Flange.mo"]
        assert f"within Modelica.Mechanics.{kind}.Interfaces;" in base
        assert f"  {potential} " in base and f"  {flow} " in base
        for side in ("a", "b"):
            assert "  extends Flange;" in files[f"Modelica/Mechanics/{kind}/Interfaces/Flange_{side}.mo"]
