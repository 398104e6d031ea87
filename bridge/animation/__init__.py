"""Animation: a simulation's motion as one self-contained HTML page with a 3D scene (three.js).

``nhbridge animate FILE -o motion.html`` (or :func:`animate`) draws the system's bodies with their shapes, the
points named in ``[animation]`` and the tracks of the rolling contacts, with play/pause, a time slider, a speed
control, an orbit camera, a ground grid and the world axes. Any result can be animated: a native run, an FMU run or
a co-simulation from its CSV file.

Examples
--------
>>> import bridge, tempfile, pathlib
>>> from bridge.animation import animate
>>> system = bridge.load_system("examples/rolling_wheel.toml")           # doctest: +SKIP
>>> result = bridge.simulate(bridge.derive(system, "lagrange"), stop_time=1.0, interval=0.01)  # doctest: +SKIP
>>> animate(result, "wheel.html")                                         # doctest: +SKIP
PosixPath('wheel.html')
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .html import write_page
from .scene import Scene, build_scene
from .shapes import read_drawing
from .signals import check_columns, read_csv_signals

__all__ = ["Scene", "animate", "build_scene", "read_drawing", "scene_of"]


def file_tables(system) -> Mapping[str, Any] | None:
    """Return the system file's tables (for shapes and points), when the system was loaded from a file."""
    path = Path(system.source)
    if not path.is_file():
        return None
    with open(path, "rb") as fh:
        return tomllib.load(fh)


def scene_of(system, time, columns: Mapping[str, Any], fps: float = 100.0,
             tables: Mapping[str, Any] | None = None) -> Scene:
    """Return the :class:`Scene` of ``system`` along ``(time, columns)`` (``tables``: the file's, default read)."""
    check_columns(system, columns)
    drawing = read_drawing(system, tables if tables is not None else file_tables(system))
    return build_scene(system, drawing, time, columns, fps)


def animate(result=None, path: str | Path = "motion.html", *, system=None, csv: str | Path | None = None,
            prefix: str = "", fps: float = 100.0, tables: Mapping[str, Any] | None = None,
            title: str | None = None) -> Path:
    """Write the animation of a simulation result, or of a CSV run of ``system``, to one HTML file.

    Parameters
    ----------
    result : bridge.SimulationResult, optional
        A native run (its system is drawn).
    path : str or Path
        The HTML file to write (atomically).
    system : bridge.System, optional
        The system a CSV run belongs to (needed with ``csv``).
    csv : str or Path, optional
        A CSV run (``time`` and a column per coordinate), e.g. an FMU's or a co-simulation's.
    prefix : str
        Column prefix of the system in a co-simulation CSV (``"mechanics."``).
    fps : float
        Frames per second of simulated time (the result's samples are thinned to it, never interpolated).
    tables : mapping, optional
        The system file's tables, when the system was not loaded from a file.
    title : str, optional
        The page's title.

    Returns
    -------
    Path
        ``path``.

    Raises
    ------
    SystemFileError
        Bad shapes or points, a CSV that does not belong to the system, nothing to draw.
    """
    if result is not None:
        system = result.eom.system
        time, columns = result.time, result.columns()
    elif csv is not None and system is not None:
        time, columns = read_csv_signals(csv, prefix)
    else:
        raise TypeError("animate() needs a result, or a system and a csv file")
    scene = scene_of(system, time, columns, fps, tables)
    return write_page(scene, path, title)
