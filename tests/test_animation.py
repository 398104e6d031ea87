"""``nhbridge animate``: one self-contained HTML page, checked in a real browser (headless Chromium driven by
Playwright, networking refused): the scene holds the system's bodies, stepping the slider to a time puts each body
where the run's own numbers put it, and the page draws something."""

from __future__ import annotations

import base64
import contextlib
import csv
import io
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import bridge
from bridge.animation import animate
from bridge.cli import main

ROOT = Path(__file__).resolve().parents[1]
WHEEL = ROOT / "examples" / "rolling_wheel.toml"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from browser import open_page, wait_until  # noqa: E402


def cli(*args) -> tuple[int, str]:
    """``nhbridge`` in this process (no interpreter to start): its exit code and its error output."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main([*map(str, args)])
    return code, err.getvalue()


def read_csv(path: Path) -> dict[str, np.ndarray]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return {name: np.array([float(r[k]) for r in rows[1:]]) for k, name in enumerate(rows[0])}


def page_data(path: Path) -> dict:
    text = path.read_text()
    return json.loads(re.search(r'<script id="scene-data" type="application/json">(.*?)</script>', text,
                                re.S).group(1).replace("<\\/", "</"))


def f64(b64: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(b64), dtype="<f8")


@pytest.fixture(scope="module")
def wheel_run(tmp_path_factory):
    """The MSL rolling wheel for 4 s, written by ``nhbridge simulate`` (CSV) and animated from that CSV."""
    folder = tmp_path_factory.mktemp("wheel")
    code, err = cli("simulate", WHEEL, "--interval", "0.01", "-o", folder / "wheel.csv", "--quiet")
    assert code == 0, err
    code, err = cli("animate", WHEEL, "--csv", folder / "wheel.csv", "-o", folder / "wheel.html")
    assert code == 0, err
    return folder, read_csv(folder / "wheel.csv")


def test_the_page_is_self_contained_and_small(wheel_run):
    folder, _ = wheel_run
    text = (folder / "wheel.html").read_text()
    assert not re.search(r"""(src|href)=["']https?:""", text)
    assert "connect-src" not in text and "default-src 'none'" in text  # the page may ask the network for nothing
    assert "The MIT License" in text  # three.js's licence travels with it
    assert (folder / "wheel.html").stat().st_size < 2_000_000


def test_the_browser_shows_the_wheel_where_the_run_puts_it(wheel_run):
    folder, run = wheel_run
    R = 0.3
    with open_page(folder / "wheel.html") as (page, refused):
        info = page.evaluate("({bodies: nhbridge.bodies, frames: nhbridge.frames, points: nhbridge.points})")
        assert info["bodies"] == ["wheel"] and info["frames"] == len(run["time"])
        assert info["points"] == ["wheel contact"]
        for k in (0, 137, len(run["time"]) - 1):
            page.locator("#time").fill(str(k))  # the time slider, as a person moves it
            t, pos, quat = page.evaluate("[nhbridge.time(), nhbridge.bodyPosition('wheel'), "
                                         "nhbridge.bodyQuaternion('wheel')]")
            row = int(np.argmin(np.abs(run["time"] - t)))
            assert t == run["time"][row]
            x, y, psi, theta = (run[c][row] for c in ("x", "y", "psi", "theta"))
            expected = np.array([x, y, R * math.cos(theta)])  # the wheel's centre, from the file's com
            assert np.allclose(pos, expected, rtol=1e-9, atol=1e-12)
            # the wheel's axle (its frame's y) is turned by yaw psi, then lean theta
            qx, qy, qz, qw = quat
            axle = np.array([2 * (qx * qy - qz * qw), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz + qx * qw)])
            closed = np.array([-math.sin(psi) * math.cos(theta), math.cos(psi) * math.cos(theta), math.sin(theta)])
            assert np.allclose(axle, closed, atol=1e-9)
            assert page.locator("#clock").inner_text() == f"t = {t:.3f} s"
        shot = folder / "wheel.png"
        page.screenshot(path=str(shot))
        assert page.evaluate("nhbridge.meshes()") >= 2  # the wheel and the contact marker
    assert not refused, f"the page asked the network for {refused}"
    import matplotlib.image

    pixels = matplotlib.image.imread(shot)[..., :3]
    assert pixels.std() > 0.02  # not blank
    wheel_colour = np.array([0x3B, 0x75, 0xAF]) / 255  # the first palette colour, shaded
    assert (np.abs(pixels - wheel_colour).sum(axis=-1) < 0.35).sum() > 50, "the wheel is not on the picture"


def test_play_advances_time(wheel_run):
    folder, run = wheel_run
    with open_page(folder / "wheel.html") as (page, _):
        page.select_option("#speed", "0.25")  # the 4 s run plays in 16 s: paused long before its end
        page.click("#play")
        wait_until(page, "nhbridge.time() > 0.05", timeout=30)
        assert page.locator("#play").inner_text() == "Pause"
        page.click("#play")  # pause
        assert page.locator("#play").inner_text() == "Play"
        t = page.evaluate("nhbridge.time()")
        page.wait_for_timeout(300)
        assert page.evaluate("nhbridge.time()") == t  # paused: the frame stays
        assert 0.05 < t < run["time"][-1]


def test_an_fmu_run_animates_like_the_native_run(tmp_path):
    """The FMU's CSV (fmpy, Co-Simulation) drawn from its columns: the centre positions in the page are the
    file's com evaluated on the FMU's samples."""
    fmpy = pytest.importorskip("fmpy")
    fmu = tmp_path / "wheel.fmu"
    assert cli("fmu", WHEEL, "-o", fmu, "--quiet")[0] == 0
    result = fmpy.simulate_fmu(str(fmu), fmi_type="CoSimulation", stop_time=1.0, output_interval=0.01)
    path = tmp_path / "fmu.csv"
    fmpy.write_csv(str(path), result)
    out = animate(system=bridge.load_system(WHEEL), csv=path, path=tmp_path / "fmu.html")
    data = page_data(out)
    (body,) = data["bodies"]
    positions = f64(body["positions"]).reshape(-1, 3)
    run = read_csv(path)
    assert positions.shape[0] == len(run["time"])
    assert np.allclose(positions[:, 0], run["x"], rtol=0, atol=0)
    assert np.allclose(positions[:, 2], 0.3 * np.cos(run["theta"]), rtol=1e-12, atol=1e-15)


BAD_SHAPES = [
    ('shape = { kind = "cylinder", radius = "-R", length = "0.05" }', "bodies.wheel.shape.radius",
     "a size must be positive"),
    ('shape = { kind = "torus", radius = "R" }', "bodies.wheel.shape.kind", "unknown shape kind 'torus'"),
    ('shape = { kind = "box", size = ["R", "R"] }', "bodies.wheel.shape.size", "expected three lengths"),
    ('shape = { kind = "sphere", radius = "Rr" }', "bodies.wheel.shape.radius", "did you mean 'R'"),
    ('shape = { kind = "sphere", radius = "R", colour = "red" }', "bodies.wheel.shape.colour",
     "did you mean 'color'"),
]


@pytest.mark.parametrize(("shape", "entry", "message"), BAD_SHAPES)
def test_bad_shapes_are_refused_before_anything_is_written(tmp_path, shape, entry, message):
    text = WHEEL.read_text().replace('inertia = "[I_long, I_axis, I_long]" }',
                                     f'inertia = "[I_long, I_axis, I_long]", {shape} }}')
    assert shape in text
    path = tmp_path / "wheel.toml"
    path.write_text(text)
    code, err = cli("animate", path, "-o", tmp_path / "out.html")
    assert code == 2, err
    assert entry in err and message.lower() in err.lower() and "Traceback" not in err
    assert not (tmp_path / "out.html").exists()


# Four command-line runs in this process: the exit code and an error output without a traceback are checked (a
# traceback would leave main() as an exception and fail the test).
def test_bad_points_and_runs_are_refused(tmp_path, wheel_run):
    folder, _ = wheel_run
    path = tmp_path / "wheel.toml"
    path.write_text(WHEEL.read_text() + '\n[animation]\npoints = { hub = { position = ["x", "yy", "0"] } }\n')
    code, err = cli("animate", path, "-o", tmp_path / "out.html")
    assert code == 2 and "animation.points.hub.position[1]" in err
    assert "did you mean 'y'" in err.lower()
    # a run of another system: its columns are not the wheel's coordinates
    other = tmp_path / "pendulum.csv"
    other.write_text("time,theta,der(theta)\n0,0.1,0\n0.1,0.09,-0.1\n")
    code, err = cli("animate", WHEEL, "--csv", other, "-o", tmp_path / "out.html")
    assert code == 2 and "no column for the coordinate(s) x, y, psi, phi" in err
    code, err = cli("animate", WHEEL, "--csv", folder / "wheel.csv", "--component", "mechanics",
                    "-o", tmp_path / "out.html")
    assert code == 2 and "Traceback" not in err
    code, err = cli("animate", ROOT / "examples" / "simple_pendulum.toml", "-o", tmp_path / "out.html")
    assert code == 2 and "nothing to draw" in err
    assert not (tmp_path / "out.html").exists()


# Slow (about 10 s of CPU): the size bound is a claim about a 10 s run at 100 frames per second of the 4-body
# bicycle; a shorter or sparser run would not test it.
@pytest.mark.slow
def test_a_ten_second_bicycle_at_100_frames_per_second_stays_under_5_mb(tmp_path):
    out = tmp_path / "bicycle.html"
    code, err = cli("animate", ROOT / "examples" / "engineering" / "bicycle_bodies.toml", "--stop-time", "10",
                    "--fps", "100", "-o", out)
    assert code == 0, err
    data = page_data(out)
    assert len(data["bodies"]) == 4 and f64(data["times"]).size == 1001
    assert out.stat().st_size < 5_000_000
