"""The Python API: the public names, results by signal name, pandas, one-line reprs, a light import."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bridge

ROOT = Path(__file__).parent.parent
SLEIGH = ROOT / "examples" / "chaplygin_sleigh.toml"
CARTESIAN = ROOT / "examples" / "cartesian_pendulum.toml"


@pytest.fixture(scope="module")
def result():
    return bridge.simulate(bridge.derive(bridge.load_system(SLEIGH), "maggi"), 2.0)


def test_pipeline_functions_are_public():
    from bridge.fmu.build import build_fmu
    from bridge.modelica.export import write_model
    from bridge.validation.campaign import validate

    assert bridge.build_fmu is build_fmu and bridge.write_modelica is write_model and bridge.validate is validate
    for name in ("build_fmu", "write_modelica", "validate", "read_inputs"):
        assert name in bridge.__all__ and name in dir(bridge)


def test_write_modelica_and_validate_from_python(tmp_path):
    eom = bridge.derive(bridge.load_system(CARTESIAN), "lagrange")
    path = bridge.write_modelica(eom, tmp_path / "CartesianPendulum.mo")
    assert "model CartesianPendulum" in path.read_text()
    from bridge.validation.campaign import Options

    campaign = bridge.validate(str(CARTESIAN), Options(groups=("methods",), methods=("lagrange",),
                                                       overrides={"stop_time": 0.5}))
    assert [s.name for s in campaign.systems] == ["CartesianPendulum"] and campaign.exit_code == 0
    status = [r.status for r in campaign.systems[0].runs]
    assert "\n" not in repr(campaign) and repr(campaign).startswith("<Campaign 1 systems (CartesianPendulum): ")
    assert f"{len(status)} runs: {status.count('passed')} passed" in repr(campaign)


def test_result_indexable_by_signal_name(result):
    cols = result.columns()
    assert list(cols) == result.keys() and "der(theta)" in result and "nope" not in result
    k = result.names.index("theta")
    assert np.array_equal(result["der(theta)"], result.qd[:, k]) and np.array_equal(result["time"], result.time)
    with pytest.raises(KeyError, match=re.escape("did you mean 'der(theta)'")):
        result["der(theta"]


def test_to_pandas(result):
    pd = pytest.importorskip("pandas")
    frame = result.to_pandas()
    assert isinstance(frame, pd.DataFrame) and frame.index.name == "time"
    assert np.array_equal(frame["der(x)"].to_numpy(), result["der(x)"])


def test_to_pandas_without_pandas_is_a_clear_error(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)  # makes `import pandas` fail as when it is not installed
    with pytest.raises(bridge.BridgeError, match="pip install pandas"):
        result.to_pandas()


def test_reprs_are_one_informative_line(result):
    system, eom = result.eom.system, result.eom
    for obj, words in ((system, ["ChaplyginSleigh", "3 coordinates", "1 nonholonomic", "2 degrees of freedom"]),
                       (eom, ["ChaplyginSleigh", "maggi", "independent"]),
                       (result, ["ChaplyginSleigh", "maggi", "1001 samples", "t = 0 .. 2 s"])):
        text = repr(obj)
        assert "\n" not in text and len(text) < 250, text
        for word in words:
            assert word in text, (word, text)


def test_with_values_equals_load_system_overrides():
    a = bridge.load_system(CARTESIAN, overrides={"x": 0.5, "der(x)": "0.25"})
    b = bridge.load_system(CARTESIAN).with_values({"der(x)": 0.25}, x=0.5)
    assert a.coordinates == b.coordinates and a.coordinates[0].start == 0.5


def test_import_is_light_and_load_system_needs_no_plotting():
    code = ("import sys, bridge; bridge.load_system(sys.argv[1]); "
            "print(sorted(m for m in ('matplotlib', 'fmpy', 'lxml', 'pandas') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code, str(SLEIGH)], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_input_table_for_another_system_is_refused(tmp_path):
    car = bridge.load_system(ROOT / "examples" / "car.toml")
    (tmp_path / "in.csv").write_text("time,F\n0,50\n1,60\n")
    table = bridge.read_inputs(tmp_path / "in.csv", car)
    assert table.names == ("F",) and np.array_equal(table(0.5), [55.0])
    sleigh = bridge.derive(bridge.load_system(SLEIGH), "maggi")
    with pytest.raises(bridge.BridgeError, match="has the inputs none"):
        bridge.simulate(sleigh, 1.0, inputs=table)
