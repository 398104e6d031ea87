"""Gallery: three runs animated in 3D — the MSL rolling wheel, the Whipple bicycle and a wheeled snake.

Each page is written by ``nhbridge animate`` (one self-contained HTML file: three.js and the trajectories
inside, no network needed) and photographed in headless Chromium (Playwright) at a chosen time.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
from gallery import EXAMPLES, ROOT, main, nhbridge, table, write_page

NAME = "animations"
SNAKE_LINKS = 5


def snake_file(folder: Path, n: int = SNAKE_LINKS) -> Path:
    """The planar wheeled snake of ``benchmarks/snake.py`` with its joints and link centres as points to draw."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.snake import snake_toml

    joints = []
    for i in range(n + 1):
        xs = " + ".join(["x"] + [f"L*cos(th{j})" for j in range(1, i + 1)])
        ys = " + ".join(["y"] + [f"L*sin(th{j})" for j in range(1, i + 1)])
        trace = "true" if i == n else "false"
        joints.append(f'j{i} = {{ position = ["{xs}", "{ys}", "0.02"], trace = {trace} }}')
    text = snake_toml(n).replace('name = "Snake', 'name = "AnimatedSnake', 1)
    chain = ", ".join(f'"j{i}"' for i in range(n + 1))
    text += "\n[animation]\npoints = { " + ", ".join(joints) + " }\nlines = [[" + chain + "]]\n"
    path = folder / "snake.toml"
    path.write_text(text)
    return path


def screenshots(shots: list[tuple[Path, Path, float]]) -> None:
    """Open each ``(html, png, fraction)`` page in one headless Chromium (no network) and save a picture of it
    at that fraction of the run."""
    from playwright.sync_api import sync_playwright

    flags = ["--no-sandbox", "--disable-gpu", "--enable-unsafe-swiftshader", "--use-angle=swiftshader",
             "--disable-background-networking", "--disable-component-update", "--no-first-run"]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=flags)
        try:
            for html, png, frame_fraction in shots:  # a fresh context per page: nothing carries over
                context = browser.new_context(viewport={"width": 900, "height": 560}, offline=True)
                page = context.new_page()
                page.goto(html.resolve().as_uri())
                for _ in range(1200):  # the page's CSP forbids wait_for_function's string evaluation: poll
                    if page.evaluate("Boolean(window.nhbridge && window.nhbridge.ready)"):
                        break
                    page.wait_for_timeout(50)
                page.evaluate(f"nhbridge.show(Math.round({frame_fraction} * (nhbridge.frames - 1)))")
                png.parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(png))
                context.close()
        finally:
            browser.close()


def build(out: Path) -> dict:
    """Animate the three runs into ``out/animations/``, photograph them, write the page."""
    folder = out / NAME
    folder.mkdir(parents=True, exist_ok=True)
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        snake = snake_file(Path(tmp))
        cases = [("rolling_wheel", EXAMPLES / "rolling_wheel.toml", 4.0, 0.6,
                  "The MSL's RollingWheel: one body and a rolling-disk contact, its track on the ground."),
                 ("bicycle", EXAMPLES / "engineering" / "bicycle_bodies.toml", 5.0, 0.5,
                  "The Whipple bicycle at 4.6 m/s: four bodies, two wheels rolling without slipping."),
                 ("snake", snake, 6.0, 0.8,
                  f"A planar snake of {SNAKE_LINKS} links on passive wheels, drawn from [animation] points.")]
        for name, path, stop, _fraction, caption in cases:
            html = folder / f"{name}.html"
            nhbridge("animate", path, "--stop-time", str(stop), "--fps", "50", "-o", html)
            runs.append((name, caption, html.stat().st_size))
        screenshots([(folder / f"{name}.html", folder / f"{name}.png", fraction) for name, _, _, fraction, _ in cases])
    summary = {"pages": {name: size for name, _, size in runs}}
    figures = "\n\n".join(f"![{caption}]({NAME}/{name}.png)\n\n{caption} [Open the animation]({NAME}/{name}.html) "
                          f"({size / 1e6:.1f} MB, plays offline)." for name, caption, size in runs)
    text = f"""# Animations in 3D

`nhbridge animate` writes a run's motion as one HTML page: the bodies with their shapes (wheels and balls from the
rolling contacts by default), the points named in `[animation]`, the tracks of the contacts on the ground, with
play/pause, a time slider, a speed control and an orbit camera. Everything is inside the file — three.js and
the trajectories — so it opens anywhere without a network. A native run, an FMU's run or a co-simulation (from
its CSV) can be animated, so a person can look at an export as well:

```bash
nhbridge animate examples/rolling_wheel.toml -o wheel.html
nhbridge animate examples/engineering/bicycle_bodies.toml --stop-time 10 -o bicycle.html
nhbridge animate examples/rolling_wheel.toml --csv fmu_run.csv -o wheel_fmu.html   # an FMU's run
```

{figures}

{table(["page", "size"], [[f"{name}.html", f"{size / 1e6:.2f} MB"] for name, _, size in runs])}
"""
    write_page(out, NAME, text, summary)
    return summary


if __name__ == "__main__":
    raise SystemExit(main(build, NAME))
