"""The systems whose reduced models re-partition, shared by the FMU and the Modelica re-partitioning tests.

Each crosses at least two split changes before its stop time. The reference is the closed form of the file's
``[reference]`` table where it has one, else the native lagrange run (which has no split to change).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import numpy as np

import bridge
from bridge.errors import ProblemCollector
from bridge.validation.reference import parse_reference

ROOT = Path(__file__).resolve().parent.parent
MODELS = Path(__file__).resolve().parent / "models" / "repartition"
SOURCES = {  # system: (file, stop time, the methods that apply)
    "knife_edge": (MODELS / "knife_edge_incline.toml", 4.0, ("maggi", "appell")),
    "skate": (ROOT / "examples" / "skate.toml", 4.0, ("maggi", "appell")),
    "sleigh": (MODELS / "sleigh_contact.toml", 3.0, ("maggi", "appell", "chaplygin")),
    "cart": (MODELS / "cart_turning.toml", 1.5, ("maggi", "appell", "chaplygin")),
    "double_pendulum": (MODELS / "cartesian_double_pendulum.toml", 3.0, ("maggi", "appell")),
}
_SYSTEMS: dict = {}
_REFERENCE: dict = {}


def system(source: str):
    """The system of ``source``, loaded once per process."""
    if source not in _SYSTEMS:
        _SYSTEMS[source] = bridge.load_system(SOURCES[source][0])
    return _SYSTEMS[source]


def reference(source: str) -> dict[str, np.ndarray]:
    """On a grid: the closed form of the file's [reference] where it has one, else the native lagrange run."""
    if source in _REFERENCE:
        return _REFERENCE[source]
    sysm = system(source)
    stop = SOURCES[source][1]
    t = np.linspace(0.0, stop, 401)
    problems = ProblemCollector()
    closed = parse_reference(tomllib.loads(SOURCES[source][0].read_text()).get("reference"), sysm, problems)
    assert not problems
    if closed:
        out = {"time": t, **{name: form(t) for name, form in closed.items() if not name.startswith("der(")}}
    else:
        run = bridge.simulate(bridge.derive(sysm, "lagrange"), stop, interval=stop / 400, rtol=1e-11)
        cols = run.columns()
        out = {"time": cols["time"], **{c.name: cols[c.name] for c in sysm.coordinates}}
    _REFERENCE[source] = out
    return out
