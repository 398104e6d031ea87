"""Reading the ``[loads]`` table (a part of :class:`bridge.model.bodies.BodyReader`).

A force ``F`` (N components) at a point P contributes ``Q_i = F . dv_P/dq'_i`` with ``v_P = dP/dt``; a torque
``M`` on a body ``Q_i = M . dw/dq'_i`` (w the body's angular velocity, N components), and ``-M`` on its
``reaction`` body if given. Both may depend on velocities, inputs and time.
"""

from __future__ import annotations

from .body_entries import BodyEntries
from .multibody import Body, Load

LOAD_KEYS = {"force", "point", "torque", "body", "reaction", "description"}


class LoadTable(BodyEntries):
    """The loads part of the body tables' reader.

    It uses the reader's ``p``, ``b``, ``frames``, ``body_frame``, ``entries`` and ``vector``.
    """

    def _loads(self, bodies: dict[str, Body]) -> list[Load]:
        loads: list[Load] = []
        for name, spec in self.entries("loads", LOAD_KEYS, None).items():
            entry = f"loads.{name}"
            if ("force" in spec) == ("torque" in spec):
                self.p.add(entry, "a load is either a force (force, point) or a torque (torque, body)",
                           'write { force = "[..]", point = "P" } or { torque = "[..]", body = "B" }')
                continue
            if "force" in spec:
                loads += self._force(entry, name, spec)
            else:
                loads += self._torque(entry, name, spec, bodies)
        return loads

    def _force(self, entry: str, name: str, spec: dict) -> list[Load]:
        if "point" not in spec:
            self.p.add(f"{entry}.point", "the point of application is missing",
                       'add point = "P" (a point, a body or a position vector)')
            return []
        for key in ("body", "reaction"):
            if key in spec:
                self.p.add(f"{entry}.{key}", f"{key} belongs to a torque", "a force acts at its point")
                return []
        F = self.vector(f"{entry}.force", spec["force"], velocities=True, inputs_ok=True, what="the force")
        r = self.vector(f"{entry}.point", spec["point"], what="the point of application")
        if F is None or r is None:
            return []
        return [Load(name, "force", tuple(self.symbols.der(c, 0) for c in r), F)]

    def _torque(self, entry: str, name: str, spec: dict, bodies: dict[str, Body]) -> list[Load]:
        if "point" in spec:
            self.p.add(f"{entry}.point", "a torque acts on a body, not at a point", 'write body = "B"')
            return []
        M = self.vector(f"{entry}.torque", spec["torque"], velocities=True, inputs_ok=True, what="the torque")
        out = []
        for key, sign in (("body", 1), ("reaction", -1)):
            if key not in spec:
                if key == "body":
                    self.p.add(f"{entry}.body", "the body is missing", 'add body = "B"')
                continue
            bname = spec[key]
            if not isinstance(bname, str) or bname not in self.body_frame:
                self.p.add(f"{entry}.{key}", *self.not_a_body(bname))
                continue
            frame = self.frames[self.body_frame[bname]]
            if M is not None and frame is not None:
                out.append(Load(f"{name}.{key}", "torque", frame.omega_n, tuple(sign * c for c in M)))
        return out
