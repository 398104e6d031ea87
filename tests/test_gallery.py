"""The gallery's pages, built from their scripts into a temporary folder, and their figures checked against
independent references: closed forms, the published benchmark bicycle, another derivation method."""

from __future__ import annotations

import importlib.util
import itertools
import math
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "docs" / "gallery"
PAGES = ("stick_slip", "rolling_disk", "bicycle_eigenvalues", "rectifier", "cosim_belt", "sweep_belt",
         "validation_report", "animations")

# Slow as a whole (about 78 s of CPU): each test builds a gallery page from its script, which runs the
# simulations the page shows; the figures are checked against independent references.
pytestmark = pytest.mark.slow


def load(name: str):
    sys.path.insert(0, str(GALLERY))
    try:
        spec = importlib.util.spec_from_file_location(f"gallery_{name}", GALLERY / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # the pages' nhbridge commands run in this process: a child interpreter would cost about 2 s of CPU each to
        # start and import nhbridge (7 commands), and the pages check the figures, not the command's start-up
        # (the CLI as a process is tested in test_cli_commands)
        sys.modules["gallery"].IN_PROCESS = True
        return module
    finally:
        sys.path.remove(str(GALLERY))


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("gallery")


def build(name: str, out: Path) -> dict:
    summary = load(name).build(out)
    page = (out / f"{name}.md").read_text()
    pictures = sorted((out / name).glob("*.png"))
    assert pictures, f"{name}: no pictures"
    import matplotlib.image

    for png in pictures:
        assert f"{name}/{png.name}" in page, f"{name}.md does not show {png.name}"
        pixels = matplotlib.image.imread(png)
        assert pixels.shape[0] > 100 and float(pixels[..., :3].std()) > 0.02, f"{png} is blank"
    return summary


def test_every_page_is_in_the_gallery_index():
    index = (GALLERY / "index.md").read_text()
    for name in PAGES:
        assert name in index and (GALLERY / f"{name}.md").exists(), f"{name}: not committed or not in the index"


def test_stick_slip_switching_times_match_the_closed_form(out):
    s = build("stick_slip", out)
    p, f = s["parameters"], s["friction"]
    x_s, x_k = f["mu_static"] * p["m"] * p["g"] / p["k"], f["mu_kinetic"] * p["m"] * p["g"] / p["k"]
    omega, vb = math.sqrt(p["k"] / p["m"]), p["v_belt"]
    slip = (math.pi + 2 * math.atan2(vb / omega, x_s - x_k)) / omega
    stick = 2 * (x_s - x_k) / vb
    assert s["slip_starts"][0] == pytest.approx(x_s / vb, abs=1e-9)  # starts riding with the belt at x = 0
    assert len(s["stick_starts"]) >= 3
    for a, b in zip(s["slip_starts"], s["stick_starts"], strict=False):
        assert b - a == pytest.approx(slip, abs=1e-8)
    for a, b in zip(s["stick_starts"], s["slip_starts"][1:], strict=False):
        assert b - a == pytest.approx(stick, abs=1e-8)


def test_rolling_disk_conserves_energy_and_agrees_with_maggi(out):
    s = build("rolling_disk", out)
    assert s["energy_relative_drift"] < 1e-8
    assert s["lagrange_vs_maggi"] < 1e-6


def test_bicycle_self_stable_band_matches_the_benchmark(out):
    s = build("bicycle_eigenvalues", out)
    # Meijaard, Papadopoulos, Ruina, Schwab (2007), Proc. R. Soc. A 463, Table 2
    assert s["weave_speed"] == pytest.approx(4.29238253634111, abs=1e-7)
    assert s["capsize_speed"] == pytest.approx(6.02426201538837, abs=1e-7)
    at5 = [complex(*z) for z in s["eigenvalues_at_5"]]
    published = sorted([-14.07838969279822, -0.77534188219585 - 4.46486771378823j,
                        -0.77534188219585 + 4.46486771378823j, -0.32286642900409], key=lambda z: (z.real, z.imag))
    assert np.allclose(sorted(at5, key=lambda z: (z.real, z.imag)), published, atol=1e-7)


def test_rectifier_switches_on_at_the_knee_and_never_conducts_backwards(out):
    s = build("rectifier", out)
    p = s["parameters"]
    assert len(s["on"]) >= 4 and len(s["off"]) >= 4
    assert s["min_current"] >= -1e-9
    times = sorted([(t, "on") for t in s["on"]] + [(t, "off") for t in s["off"]])
    assert all(a[1] != b[1] for a, b in itertools.pairwise(times)), "on and off must alternate"
    for t, speed in zip(s["on"][1:], s["speed_at_on"][1:], strict=True):  # blocking: the diode sees U - ke*speed
        assert p["U0"] * math.sin(p["w"] * t) - p["ke"] * speed == pytest.approx(0.7, abs=2e-3)


def test_cosimulation_follows_the_monolithic_model(out):
    s = build("cosim_belt", out)
    assert s["max_abs_x"] < 1e-2 * s["range_x"]
    assert s["max_abs_v"] < 5e-2 * s["range_v"]


def test_sweep_amplitudes_match_the_limit_cycle(out):
    s = build("sweep_belt", out)
    assert set(s["status"]) == {"ok"}
    assert np.allclose(s["max_x"], s["closed_form"], atol=2e-4)


def test_validation_report_runs_pass_within_their_tolerances(out):
    s = build("validation_report", out)
    assert s["exit_code"] == 0 and s["status"] == "passed"
    passed = [r for r in s["runs"] if r["status"] == "passed"]
    assert len(passed) >= 8
    for r in passed:
        assert not r["max_rel"] > r["tolerance"], r


def test_animations_are_photographed_in_the_browser(out):
    pytest.importorskip("playwright.sync_api", reason="pip install playwright (the test extra has it)")
    import shutil

    if not shutil.which("chromium"):
        pytest.skip("no Chromium: apt-get install chromium (scripts/test.sh installs it on Debian)")
    s = build("animations", out)
    assert set(s["pages"]) == {"rolling_wheel", "bicycle", "snake"}
    assert all(size < 5_000_000 for size in s["pages"].values())
