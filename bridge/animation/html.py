"""Writing the animation: one self-contained HTML file, the 3D library and the trajectories inside it.

The page needs no network: three.js (vendored from npm, MIT licence, its licence text kept in the page) is embedded
as a ``data:`` module behind an import map, the trajectories as base64 float64 arrays in a JSON block (exact
doubles, so a frame shows exactly the numbers of the result), and a Content-Security-Policy forbids every request.
The template holds layout only.

Examples
--------
>>> from bridge.animation.html import three_version
>>> three_version()
'0.170.0'
"""

from __future__ import annotations

import base64
import json
from importlib import resources
from pathlib import Path

import numpy as np

from ..atomic import write_text
from .scene import Scene

_PACKAGE = resources.files("bridge.animation")
THREE_VERSION = "0.170.0"


def three_version() -> str:
    """Return the version of the vendored three.js."""
    return THREE_VERSION


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype="<f8").tobytes()).decode("ascii")


def scene_json(scene: Scene) -> str:
    """Return the scene as the page reads it (arrays as base64 little-endian float64)."""
    data = {
        "name": scene.name,
        "extent": scene.extent,
        "size": scene.size,
        "up": list(scene.up),
        "centres": _b64(scene.centres()),
        "lines": [list(line) for line in scene.lines],
        "times": _b64(scene.times),
        "bodies": [{"name": b.name, "positions": _b64(b.positions), "quaternions": _b64(b.quaternions),
                    "shape": {"kind": b.shape.kind, "dimensions": list(b.shape.dimensions),
                              "offset": list(b.shape.offset), "axis": b.shape.axis, "color": b.shape.color}}
                   for b in scene.bodies],
        "points": [{"name": p.name, "positions": _b64(p.positions), "trace": p.trace, "color": p.color}
                   for p in scene.points],
    }
    # "</" cannot end the JSON block early: escape it as JSON allows
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def page(scene: Scene, title: str | None = None) -> str:
    """Return the whole HTML text of the animation of ``scene``."""
    import html

    template = (_PACKAGE / "template.html").read_text(encoding="utf-8")
    three = (_PACKAGE / "vendor" / "three.module.min.js").read_bytes()
    licence = (_PACKAGE / "vendor" / "three.LICENSE").read_text(encoding="utf-8")
    text = (template.replace("@@TITLE@@", html.escape(title or f"{scene.name}: nhbridge animation"))
            .replace("@@THREE@@", base64.b64encode(three).decode("ascii"))
            .replace("@@DATA@@", scene_json(scene)))
    notice = f"\n<!-- three.js {THREE_VERSION} (https://threejs.org), embedded under its licence:\n{licence}-->\n"
    return text.replace("</html>", notice + "</html>")


def write_page(scene: Scene, path: str | Path, title: str | None = None) -> Path:
    """Write the animation of ``scene`` to ``path`` atomically (an existing file is replaced whole or kept)."""
    return write_text(path, page(scene, title))
