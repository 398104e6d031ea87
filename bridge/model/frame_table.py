"""Reading the ``[frames]`` table (a part of :class:`bridge.model.bodies.BodyReader`).

Each entry rotates a frame from its ``parent`` (default N): ``axis``/``angle`` (x, y or z), a sequence
``axes``/``angles`` (``axes = "zyx"``: about z, then the new y, then the newer x), or direction cosines
``dcm`` (``v_parent = C v_child``, checked to be a rotation at the start state and three states near it, and for
all states where ``C^T C - 1`` reduces to 0 cheaply; a ``dcm`` of the coordinates that does not is watched during
native runs (:attr:`~bridge.model.multibody.Multibody.rotation_watch`), one of ``t`` that does not is refused).
Parents are checked first (known, no cycle, at most :data:`MAX_FRAME_DEPTH` deep); each frame is then built after
its parent (:mod:`.frames`), and the composed rotation kept within :data:`MAX_FRAME_NODES` operations per entry.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from . import symbols as S
from .body_entries import BodyEntries
from .expressions import tree_size
from .frames import AXES, Frame, oriented, orthonormal_identically, rotate
from .names import suggest as _suggest
from .vectors import parse_matrix

#: frames in one chain of parents from N
MAX_FRAME_DEPTH = 200
#: operations in one entry of a frame's direction cosines or angular velocity, checked after each composed rotation
MAX_FRAME_NODES = 5_000


class FrameTable(BodyEntries):
    """The frames part of the body tables' reader.

    It uses the reader's ``p``, ``b``, ``frames``, ``frame_specs``, ``scalar_entry``, ``values`` and
    ``_parse``/``_check``.
    """

    # -- frames --------------------------------------------------------------------------
    def _frames(self) -> None:
        """Check parents (known, no cycle), then build each frame after its parent."""
        parents: dict[str, str | None] = {}
        for name, spec in self.frame_specs.items():
            parent = spec.get("parent", "N")
            if not isinstance(parent, str):
                self.p.add(f"frames.{name}.parent", "expected a frame name", 'write parent = "N"')
                parents[name] = None
            elif parent != "N" and parent not in self.frame_specs:
                self.p.add(f"frames.{name}.parent", f"unknown parent frame {parent!r}",
                           _suggest(parent, ["N", *self.frame_specs]) or "declare it under [frames] or use N")
                parents[name] = None
            else:
                parents[name] = parent
        in_cycle: set[str] = set()
        settled: set[str] = set()  # frames whose chain of parents was walked already
        for name in self.frame_specs:
            chain, on_chain, cur = [name], {name}, parents[name]
            while cur is not None and cur != "N" and cur not in on_chain and cur not in settled:
                chain.append(cur)
                on_chain.add(cur)
                cur = parents.get(cur)
            settled.update(chain)
            if cur in on_chain:
                cycle = chain[chain.index(cur):]
                in_cycle.update(cycle)
                self.p.add(f"frames.{cur}.parent", "the frames' parents form a cycle: "
                           + " -> ".join([*cycle, cur]), "each chain of parents must end at N, the inertial frame")
        for name in self.frame_specs:
            self.frames[name] = None
        depth = self._depths(parents, in_cycle)
        for name in sorted((n for n in depth if depth[n] <= MAX_FRAME_DEPTH), key=depth.__getitem__):
            base = self.frames.get(parents[name])  # type: ignore[arg-type]
            if base is not None:  # else the parent's problem is reported there
                self.frames[name] = self._rotation(name, base, self.frame_specs[name])

    def _depths(self, parents: dict[str, str | None], in_cycle: set[str]) -> dict[str, int]:
        """Return each frame's number of rotations from N (frames with a broken parent chain left out).

        A frame deeper than :data:`MAX_FRAME_DEPTH` is reported once, at the first frame of its chain beyond the limit.
        """
        depth: dict[str, int] = {"N": 0}
        for name in self.frame_specs:
            chain: list[str] = []
            cur: str | None = name
            while cur is not None and cur not in depth:
                if cur in in_cycle:
                    break
                chain.append(cur)
                cur = parents.get(cur)
            else:
                if cur is not None:
                    for k, frame in enumerate(reversed(chain)):
                        depth[frame] = depth[cur] + k + 1
        del depth["N"]
        for name, d in depth.items():
            if d == MAX_FRAME_DEPTH + 1:
                path: list[str] = [name]
                up = parents[name]
                while up is not None and up != "N":
                    path.append(up)
                    up = parents[up]
                path = ["N", *reversed(path)]
                shown = " -> ".join([*path[:3], "...", *path[-2:]])
                self.p.add(f"frames.{name}.parent", f"the chain of parents {shown} is {d} frames deep, more than "
                           f"the limit of {MAX_FRAME_DEPTH} frames", "give a frame further down the chain by "
                           "its direction cosines (dcm) relative to N, or merge rotations into one frame's sequence")
        return depth

    def _rotation(self, name: str, parent: Frame, spec: dict) -> Frame | None:
        entry = f"frames.{name}"
        if "dcm" in spec:
            if any(k in spec for k in ("axis", "angle", "axes", "angles")):
                self.p.add(entry, "give either dcm or axis/angle (axes/angles), not both", "remove one of them")
                return None
            return self._dcm(entry, name, parent, spec["dcm"])
        if "axes" in spec or "angles" in spec:
            axes, angles = spec.get("axes"), spec.get("angles")
            if not isinstance(angles, list):
                self.p.add(f"{entry}.angles", "expected a list of angle expressions, one per axis",
                           'write axes = "zyx", angles = ["a1", "a2", "a3"]')
                return None
        else:
            axes, angles = spec.get("axis"), [spec.get("angle")]
            if angles[0] is None:
                self.p.add(f"{entry}.angle", "the angle is missing",
                           'add angle = "<expression>" (or dcm = "[[..], [..], [..]]")')
                return None
        key = "axes" if "axes" in spec or "angles" in spec else "axis"
        if not isinstance(axes, str) or not axes or any(a not in AXES for a in axes):
            self.p.add(f"{entry}.{key}", f"bad rotation axis {axes!r}: axes are x, y or z",
                       'write axis = "z", or a sequence axes = "zyx" with one angle per letter')
            return None
        if len(axes) != len(angles):
            self.p.add(f"{entry}.angles", f"{len(axes)} axes but {len(angles)} angles", "give one angle per axis")
            return None
        frame = parent
        for k, (axis, text) in enumerate(zip(axes, angles)):
            sub = f"{entry}.angle" if key == "axis" else f"{entry}.angles[{k + 1}]"
            angle = self.scalar_entry(sub, text, what="a rotation angle")
            if angle is None:
                return None
            frame = rotate(frame, name, axis, angle, self.symbols.der(angle, 0))
            if not self._small(entry, frame):
                return None
        return frame

    def _dcm(self, entry: str, name: str, parent: Frame, text: Any) -> Frame | None:
        rows = self.parse_entry(f"{entry}.dcm", text, parse_matrix, "the direction cosines")
        if rows is None:
            return None
        if not isinstance(rows, list):
            self.p.add(f"{entry}.dcm", "expected a 3x3 matrix", 'write dcm = "[[c, -s, 0], [s, c, 0], [0, 0, 1]]"')
            return None
        flat = [x for r in rows for x in r]
        if not self.check_entry(f"{entry}.dcm", flat, velocities=False, inputs_ok=False, what="the direction cosines"):
            return None
        C = sp.Matrix(rows)
        rng = np.random.default_rng(0)
        for k in range(3):
            shift = None if k == 0 else rng.uniform(-0.5, 0.5, len(self.symbols.coordinates))
            M = self.values(flat, shift).reshape(3, 3)
            err = np.abs(M.T @ M - np.eye(3)).max() if np.all(np.isfinite(M)) else np.inf
            if not err < 1e-9 or np.linalg.det(M) < 0:
                self.p.add(f"{entry}.dcm", "the direction cosines are not a rotation (C^T C = 1, det C = +1) "
                           f"at {'the start state' if k == 0 else 'a state near it'} (error {err:.3g})",
                           "give the rows of C with v_parent = C v_child, orthonormal and right-handed")
                return None
        if C.free_symbols & (self.symbols.position_symbols() | {S.t}) and not orthonormal_identically(C):
            if S.t in C.free_symbols:
                self.p.add(f"{entry}.dcm", "the direction cosines depend on t and could not be shown to stay a "
                           "rotation (C^T C - 1 does not reduce to 0 with sin^2 + cos^2 = 1)",
                           "write the frame as rotations about its axes (axis/angle or axes/angles: angles may "
                           "depend on t), or give C in sines and cosines of the angles")
                return None
            self.rotation_watch.append((name, sp.ImmutableMatrix(C)))  # watched during native runs
        frame = oriented(parent, name, C, lambda e: self.symbols.der(e, 0))
        return frame if self._small(entry, frame) else None

    def _small(self, entry: str, frame: Frame) -> bool:
        """Return whether the composed rotation and angular velocities stay within the node budget; else a problem."""
        parts = [*frame.rotation, *frame.omega, *frame.omega_n]
        if all(tree_size(e, MAX_FRAME_NODES) <= MAX_FRAME_NODES for e in parts):
            return True
        self.p.add(entry, f"the rotation of frame {frame.name} composed with its parents' is too large (more than "
                   f"{MAX_FRAME_NODES} operations in an entry of its direction cosines or angular velocity)",
                   "rotations that depend on the coordinates grow with each frame of a chain: give the frame's "
                   "direction cosines relative to N (dcm), or use fewer frames")
        return False

