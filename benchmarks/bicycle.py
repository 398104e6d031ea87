"""The Whipple bicycle of the published benchmark, generated from its geometry.

Meijaard, Papadopoulos, Ruina, Schwab (2007), "Linearized dynamics equations for the balance and
steer of a bicycle: a benchmark and review", Proc. R. Soc. A 463, 1955-1982; parameters of its Table 1.

Four rigid bodies: rear wheel R, rear frame with rider B, front frame (fork and handlebar) H, front
wheel F; knife-edge wheels rolling without slip on level ground. Benchmark axes: x forward, y to the
right, z down; gravity along +z. Eight coordinates

    x, y      rear contact point          psi      yaw (about the vertical)
    phi       roll (about the yawed x)    pitch    rear-frame pitch (about the rolled y; 0 upright)
    theta_R   rear wheel angle            delta    steer angle (about the steer axis)
    theta_F   front wheel angle

with frames N -psi z-> A -phi x-> L (the rear wheel plane: L.z points from the rear wheel centre
to its contact) -pitch y-> R (rear frame, equal to the benchmark axes when upright) and
H = R rotated by delta about the steer axis e = (sin lam, 0, cos lam)_R. A body point with upright
benchmark coordinates (X, 0, Z) sits at ``W_R + X R.x + (Z + r_R) R.z`` (rear frame; W_R the rear
wheel centre) or ``O + (X - w - c) H.x + Z H.z`` (front frame; O = W_R + (w + c) R.x + r_R R.z is
where the steer axis meets the ground when upright).

Constraints: the front contact point ``C_F = W_F + r_F g/|g|``, ``g = N.z - (N.z . H.y) H.y`` lies on the
ground (one holonomic constraint, ``z(W_F) + r_F sqrt(1 - H32^2) = 0``, which fixes the pitch), and
the material points of both wheels at their contacts have zero horizontal velocity
``v_W + omega x (C - W)`` (four nonholonomic constraints). Three degrees of freedom remain: roll,
steer and the rear wheel angle (forward speed).

Run ``python benchmarks/bicycle.py [-o examples/bicycle.toml] [--speed 4.6]`` to write the system
file. The kinematics (direction cosines, positions, angular velocities) are written as
``[definitions]``; the energies and constraints refer to them, so the file stays small and nhbridge
differentiates through them.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import sympy as sp

__all__ = [
    "COORDINATES",
    "DEFAULT_SPEED",
    "PARAMETERS",
    "bicycle_toml",
    "consistent_state",
    "definitions",
    "eigenvalues",
    "roll_steer_jacobian",
    "start_velocities",
]

#: Table 1 of the benchmark: name -> (value, unit, description)
PARAMETERS: dict[str, tuple[float, str, str]] = {
    "w": (1.02, "m", "wheel base"),
    "c": (0.08, "m", "trail"),
    "lam": (math.pi / 10, "rad", "steer axis tilt (from the vertical)"),
    "g": (9.81, "m/s2", "gravity"),
    "r_R": (0.3, "m", "rear wheel radius"),
    "m_R": (2.0, "kg", "rear wheel mass"),
    "I_Rxx": (0.0603, "kg.m2", "rear wheel moment of inertia about a diameter"),
    "I_Ryy": (0.12, "kg.m2", "rear wheel moment of inertia about its axle"),
    "x_B": (0.3, "m", "rear body (frame and rider) centre of mass, x"),
    "z_B": (-0.9, "m", "rear body centre of mass, z (down)"),
    "m_B": (85.0, "kg", "rear body mass"),
    "I_Bxx": (9.2, "kg.m2", "rear body inertia xx"),
    "I_Bxz": (2.4, "kg.m2", "rear body inertia xz"),
    "I_Byy": (11.0, "kg.m2", "rear body inertia yy"),
    "I_Bzz": (2.8, "kg.m2", "rear body inertia zz"),
    "x_H": (0.9, "m", "front frame (fork and handlebar) centre of mass, x"),
    "z_H": (-0.7, "m", "front frame centre of mass, z (down)"),
    "m_H": (4.0, "kg", "front frame mass"),
    "I_Hxx": (0.05892, "kg.m2", "front frame inertia xx"),
    "I_Hxz": (-0.00756, "kg.m2", "front frame inertia xz"),
    "I_Hyy": (0.06, "kg.m2", "front frame inertia yy"),
    "I_Hzz": (0.00708, "kg.m2", "front frame inertia zz"),
    "r_F": (0.35, "m", "front wheel radius"),
    "m_F": (3.0, "kg", "front wheel mass"),
    "I_Fxx": (0.1405, "kg.m2", "front wheel moment of inertia about a diameter"),
    "I_Fyy": (0.28, "kg.m2", "front wheel moment of inertia about its axle"),
}

#: name -> (unit, description)
COORDINATES: dict[str, tuple[str, str]] = {
    "x": ("m", "rear contact point, x (forward at the start)"),
    "y": ("m", "rear contact point, y (to the right at the start)"),
    "psi": ("rad", "yaw angle of the rear frame"),
    "phi": ("rad", "roll angle (lean to the right positive)"),
    "pitch": ("rad", "pitch of the rear frame (0 when upright, fixed by the front contact)"),
    "theta_R": ("rad", "rear wheel rotation angle"),
    "delta": ("rad", "steer angle"),
    "theta_F": ("rad", "front wheel rotation angle"),
}

DEFAULT_SPEED = 4.6  # m/s, forward speed of the start state (inside the self-stable range)


def _text(expr: sp.Basic) -> str:
    """An expression in nhbridge's expression language (sympy's str form uses only + - * / ** and calls)."""
    out = sp.sstr(expr, order="none")
    if "I" in out.replace("I_", "") or "E" in out.replace("e", ""):
        raise ValueError(f"unexpected constant in {out}")
    return out


def _rot(axis: int, angle: sp.Symbol) -> sp.Matrix:
    """Direction cosines ``C`` with ``v_parent = C v_child`` for a child frame rotated by ``angle`` about ``axis``."""
    c, s = sp.cos(angle), sp.sin(angle)
    if axis == 0:
        return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == 1:
        return sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def definitions() -> dict[str, str]:
    """The ``[definitions]`` of the system file, in dependency order (name -> expression text)."""
    psi, phi, pitch, delta = sp.symbols("psi phi pitch delta")
    lam = sp.Symbol("lam")
    d: dict[str, str] = {}
    # direction cosines: N <- L (yaw, roll), L <- R (pitch), R <- H (steer about e)
    NL = _rot(2, psi) * _rot(0, phi)
    NR = NL * _rot(1, pitch)
    e = sp.Matrix([sp.sin(lam), 0, sp.cos(lam)])
    cd, sd = sp.cos(delta), sp.sin(delta)
    cross = sp.Matrix([[0, -e[2], e[1]], [e[2], 0, -e[0]], [-e[1], e[0], 0]])
    RH = cd * sp.eye(3) + sd * cross + (1 - cd) * e * e.T          # Rodrigues
    for i in range(3):
        for j in range(3):
            d[f"R{i + 1}{j + 1}"] = _text(NR[i, j])
    Rm = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"R{i + 1}{j + 1}"))
    for i in range(3):
        for j in range(3):
            d[f"S{i + 1}{j + 1}"] = _text(RH[i, j])
    Sm = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"S{i + 1}{j + 1}"))
    Hm = Rm * Sm
    for i in range(3):
        for j in range(3):
            d[f"H{i + 1}{j + 1}"] = _text(Hm[i, j])
    # points (N components): rear wheel centre, rear body, steer-axis ground point, front frame, front wheel
    Lz = NL[:, 2]
    r_R, r_F, w, c = sp.symbols("r_R r_F w c")
    x, y = sp.symbols("x y")
    Rx, Rz = sp.Matrix([sp.Symbol(f"R{i}1") for i in (1, 2, 3)]), sp.Matrix([sp.Symbol(f"R{i}3") for i in (1, 2, 3)])
    Hx, Hz = sp.Matrix([sp.Symbol(f"H{i}1") for i in (1, 2, 3)]), sp.Matrix([sp.Symbol(f"H{i}3") for i in (1, 2, 3)])
    WR = sp.Matrix([x, y, 0]) - r_R * Lz
    points = {"WR": WR}
    wr = sp.Matrix(sp.symbols("xWR yWR zWR"))
    points["B"] = wr + sp.Symbol("x_B") * Rx + (sp.Symbol("z_B") + r_R) * Rz
    points["O"] = wr + (w + c) * Rx + r_R * Rz
    o = sp.Matrix(sp.symbols("xO yO zO"))
    points["H"] = o + (sp.Symbol("x_H") - w - c) * Hx + sp.Symbol("z_H") * Hz
    points["WF"] = o - c * Hx - r_F * Hz
    for name, p in points.items():
        for k, axis in enumerate("xyz"):
            d[f"{axis}{name}"] = _text(p[k])
    # angular velocity of the rear frame in R components: yaw about N.z, roll about A.x, pitch about L.y
    dpsi, dphi, dpitch, ddelta = (sp.Symbol(f"der({s})") for s in ("psi", "phi", "pitch", "delta"))
    LR = _rot(1, pitch)
    w_L = _rot(0, phi).T * sp.Matrix([0, 0, dpsi]) + sp.Matrix([dphi, 0, 0])   # in L components
    w_R = LR.T * w_L + sp.Matrix([0, dpitch, 0])
    for k in range(3):
        d[f"wR{k + 1}"] = _text(sp.expand(w_R[k]))
    wRs = sp.Matrix([sp.Symbol(f"wR{k}") for k in (1, 2, 3)])
    w_H = Sm.T * wRs + ddelta * e                                    # in H components
    for k in range(3):
        d[f"wH{k + 1}"] = _text(w_H[k])
    # wheel angular velocities in N components (spin about the axle, R.y resp. H.y)
    wRw = Rm * (wRs + sp.Matrix([0, sp.Symbol("der(theta_R)"), 0]))
    wHs = sp.Matrix([sp.Symbol(f"wH{k}") for k in (1, 2, 3)])
    Hs = sp.Matrix(3, 3, lambda i, j: sp.Symbol(f"H{i + 1}{j + 1}"))
    wFw = Hs * (wHs + sp.Matrix([0, sp.Symbol("der(theta_F)"), 0]))
    for k, axis in enumerate("xyz"):
        d[f"w{axis}RW"] = _text(wRw[k])
    for k, axis in enumerate("xyz"):
        d[f"w{axis}FW"] = _text(wFw[k])
    # contact vectors: rear r_R L.z; front r_F (N.z - H32 H.y)/sqrt(1 - H32^2)
    for k, axis in enumerate("xyz"):
        d[f"{axis}CR"] = _text(r_R * Lz[k])
    d["sF"] = "sqrt(1 - H32^2)"
    d["xCF"] = "-r_F*H32*H12/sF"
    d["yCF"] = "-r_F*H32*H22/sF"
    d["zCF"] = "r_F*sF"
    return d


def _energies() -> tuple[str, str]:
    """Kinetic and potential energy texts over the definitions."""
    def trans(m: str, p: str) -> str:
        return f"{m}/2*(der(x{p})^2 + der(y{p})^2 + der(z{p})^2)"

    kinetic = " + ".join([
        trans("m_R", "WR"), "I_Rxx/2*(wR1^2 + wR3^2) + I_Ryy/2*(wR2 + der(theta_R))^2",
        trans("m_B", "B"), "I_Bxx/2*wR1^2 + I_Byy/2*wR2^2 + I_Bzz/2*wR3^2 + I_Bxz*wR1*wR3",
        trans("m_H", "H"), "I_Hxx/2*wH1^2 + I_Hyy/2*wH2^2 + I_Hzz/2*wH3^2 + I_Hxz*wH1*wH3",
        trans("m_F", "WF"), "I_Fxx/2*(wH1^2 + wH3^2) + I_Fyy/2*(wH2 + der(theta_F))^2",
    ])
    potential = "-g*(m_R*zWR + m_B*zB + m_H*zH + m_F*zWF)"
    return kinetic, potential


def _constraints() -> tuple[list[str], list[str]]:
    """Front contact on the ground; zero horizontal contact velocities of both wheels."""
    holonomic = ["zWF + r_F*sF"]
    nonholonomic = []
    for wheel, centre in (("R", "WR"), ("F", "WF")):
        w = {a: f"w{a}{wheel}W" for a in "xyz"}
        r = {a: f"{a}C{wheel}" for a in "xyz"}
        nonholonomic.append(f"der(x{centre}) + {w['y']}*{r['z']} - {w['z']}*{r['y']}")
        nonholonomic.append(f"der(y{centre}) + {w['z']}*{r['x']} - {w['x']}*{r['z']}")
    return holonomic, nonholonomic


def start_velocities(speed: float) -> dict[str, float]:
    """Upright straight-ahead motion at ``speed``: der(x) = v, der(theta_R) = -v/r_R, der(theta_F) = -v/r_F."""
    return {"x": speed, "theta_R": -speed / PARAMETERS["r_R"][0], "theta_F": -speed / PARAMETERS["r_F"][0]}


def bicycle_toml(speed: float = DEFAULT_SPEED, steer_torque: bool = False) -> str:
    """The nhbridge system file of the benchmark bicycle, upright and straight ahead at ``speed`` (m/s);
    ``steer_torque``: with the rider's steer torque ``T_delta`` as an input and the roll and steer rates as
    outputs (the plant of a steering controller)."""
    vel = start_velocities(speed)
    steered = (" The rider's steer torque T_delta (between rear and front frame) is an input; roll, steer and their "
               "rates are outputs." if steer_torque else "")
    lines = [f'name = "{"WhippleBicycleSteered" if steer_torque else "WhippleBicycle"}"',
             'description = """Whipple bicycle of the benchmark by Meijaard, Papadopoulos, Ruina and Schwab (2007), '
             'Proc. R. Soc. A 463, Table 1 parameters: rear wheel, rear frame with rider, front frame, front wheel; '
             f'knife-edge wheels rolling without slip on level ground; benchmark axes (x forward, z down).{steered} '
             'Generated by benchmarks/bicycle.py."""', "",
             "[coordinates]"]
    for name, (unit, what) in COORDINATES.items():
        lines.append(f'{name} = {{ start = 0.0, velocity = {vel.get(name, 0.0)!r}, unit = "{unit}", '
                     f'description = "{what}" }}')
    lines += ["", "[parameters]"]
    for name, (value, unit, what) in PARAMETERS.items():
        lines.append(f'{name} = {{ value = {value!r}, unit = "{unit}", description = "{what}" }}')
    lines += ["", "[definitions]  # direction cosines R (rear frame), S (steer), H (front frame); points; "
              "angular velocities"]
    lines += [f'{name} = "{text}"' for name, text in definitions().items()]
    kinetic, potential = _energies()
    holonomic, nonholonomic = _constraints()
    lines += ["", "[energy]", f'kinetic = "{kinetic}"', f'potential = "{potential}"', "", "[constraints]",
              "holonomic = [" + ", ".join(f'"{h}"' for h in holonomic) + "]  # front contact on the ground",
              "nonholonomic = [  # rear wheel (x, y), front wheel (x, y): no slip at the contacts"]
    lines += [f'  "{h}",' for h in nonholonomic]
    lines += ["]", "", "[outputs]",
              'speed = { expr = "-r_R*der(theta_R)", unit = "m/s", description = "forward speed of the rear wheel" }',
              'roll = { expr = "phi", unit = "rad", description = "roll angle" }',
              'steer = { expr = "delta", unit = "rad", description = "steer angle" }']
    if steer_torque:
        lines += ['roll_rate = { expr = "der(phi)", unit = "rad/s", description = "roll rate" }',
                  'steer_rate = { expr = "der(delta)", unit = "rad/s", description = "steer rate" }',
                  "", "[inputs]",
                  'T_delta = { start = 0.0, unit = "N.m", description = "steer torque of the rider on the front '
                  'frame" }',
                  "", "[forces]", 'delta = "T_delta"']
    lines += ["", "[method]", 'independent = ["phi", "delta", "theta_R"]  # roll, steer, rear wheel',
              "", "[simulation]", "stop_time = 5.0", ""]
    return "\n".join(lines)


def consistent_state(num, roll: float, steer: float, roll_rate: float, steer_rate: float,
                     speed: float, yaw: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(q, q') on the constraints: x = y = 0, psi = ``yaw``, wheel angles 0, the pitch from the front contact (Newton),
    der(theta_R) = -speed/r_R and the dependent velocities from A q' = 0.

    ``num`` is the :class:`NumericModel` of a full method (its constraint residuals are ``[phi; A q']``).
    """
    names = [c.name for c in num.eom.system.coordinates]
    ix = names.index
    q = np.zeros(len(names))
    q[ix("phi")], q[ix("delta")], q[ix("psi")] = roll, steer, yaw
    zero = np.zeros(len(names))
    for _ in range(50):                                   # Newton on phi(pitch) = 0, the slope by central differences
        r = num.constraint_residuals(0.0, q, zero)[0]
        if abs(r) < 1e-15:
            break
        e = np.zeros(len(names))
        e[ix("pitch")] = 1e-7
        slope = (num.constraint_residuals(0.0, q + e, zero)[0] - num.constraint_residuals(0.0, q - e, zero)[0]) / 2e-7
        q[ix("pitch")] -= r / slope
    A = np.array([num.constraint_residuals(0.0, q, unit)[1:] for unit in np.eye(len(names))]).T
    ind = [ix("phi"), ix("delta"), ix("theta_R")]
    dep = [i for i in range(len(names)) if i not in ind]
    qd = np.zeros(len(names))
    qd[ind] = roll_rate, steer_rate, -speed / num.params[[p.name for p in num.eom.system.parameters].index("r_R")]
    qd[dep] = np.linalg.solve(A[:, dep], -A[:, ind] @ qd[ind])
    return q, qd


def roll_steer_jacobian(num, speed: float, step: float = 1e-6, accelerations=None) -> np.ndarray:
    """d(phi', delta', phi'', delta'')/d(phi, delta, phi', delta') about upright straight-ahead motion.

    Central differences over consistent states (:func:`consistent_state`); the accelerations come from
    ``accelerations(q, q')`` (default: ``num.accelerations``). The forward speed, yaw and wheel angles are
    held: they decouple from roll and steer at first order about this motion.
    """
    names = [c.name for c in num.eom.system.coordinates]
    ir, isteer = names.index("phi"), names.index("delta")
    acc = accelerations or (lambda q, qd: num.accelerations(0.0, q, qd))

    def f(s: np.ndarray) -> np.ndarray:
        q, qd = consistent_state(num, *s, speed)
        a = acc(q, qd)
        return np.array([s[2], s[3], a[ir], a[isteer]])

    J = np.zeros((4, 4))
    for k in range(4):
        e = np.zeros(4)
        e[k] = step
        J[:, k] = (f(e) - f(-e)) / (2 * step)
    return J


def eigenvalues(num, speed: float) -> np.ndarray:
    """Eigenvalues of the linearized roll-steer dynamics at ``speed``, sorted."""
    return np.sort_complex(np.linalg.eigvals(roll_steer_jacobian(num, speed)))


def kanes_method():
    """The same bicycle for ``sympy.physics.mechanics.KanesMethod``: frames, points and rigid bodies built from the
    geometry above, speeds ``u = q'``, the pitch and the speeds of x, y, yaw, pitch and the front wheel dependent.

    Returns ``(KanesMethod, bodies, loads)``; ``kanes_equations(bodies, loads)`` forms the equations.
    The dependent speeds are solved by Cramer's rule (``constraint_solver="CRAMER"``): sympy's default LU solve
    of ``B_dep Ars = -B_ind`` returns a wrong ``Ars`` for this Jacobian (its steer column; seen as energy not
    conserved at g = 0 and a wrong steer equation), and NaN upright. With Cramer's rule the accelerations agree
    with the system file's to round-off (``tests/test_kane_peer.py``).
    """
    from sympy.physics.mechanics import KanesMethod, Point, ReferenceFrame, RigidBody, dynamicsymbols, inertia

    names = list(COORDINATES)
    q = dict(zip(names, dynamicsymbols(" ".join(names))))
    u = dict(zip(names, dynamicsymbols(" ".join(f"u_{n}" for n in names))))
    P = {name: sp.Symbol(name) for name in PARAMETERS}
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q["psi"], N.z])
    L = A.orientnew("L", "Axis", [q["phi"], A.x])
    R = L.orientnew("R", "Axis", [q["pitch"], L.y])
    H = R.orientnew("H", "Axis", [q["delta"], sp.sin(P["lam"]) * R.x + sp.cos(P["lam"]) * R.z])
    RW = R.orientnew("RW", "Axis", [q["theta_R"], R.y])
    FW = H.orientnew("FW", "Axis", [q["theta_F"], H.y])
    origin = Point("origin")
    origin.set_vel(N, 0)
    contact = origin.locatenew("contact", q["x"] * N.x + q["y"] * N.y)
    wr = contact.locatenew("WR", -P["r_R"] * L.z)
    body = wr.locatenew("B", P["x_B"] * R.x + (P["z_B"] + P["r_R"]) * R.z)
    axis = wr.locatenew("O", (P["w"] + P["c"]) * R.x + P["r_R"] * R.z)
    fork = axis.locatenew("Hc", (P["x_H"] - P["w"] - P["c"]) * H.x + P["z_H"] * H.z)
    wf = axis.locatenew("WF", -P["c"] * H.x - P["r_F"] * H.z)
    kd = [q[n].diff() - u[n] for n in names]
    to_u = {q[n].diff(): u[n] for n in names}
    for point in (contact, wr, body, axis, fork, wf):
        point.set_vel(N, point.pos_from(origin).dt(N).subs(to_u))
    for frame in (A, L, R, H, RW, FW):
        frame.set_ang_vel(N, frame.ang_vel_in(N).subs(to_u))
    h32 = H.y.dot(N.z)
    s_f = sp.sqrt(1 - h32 ** 2)
    rho_f = P["r_F"] * (N.z - h32 * H.y) / s_f
    holonomic = (wf.pos_from(origin) + rho_f).dot(N.z)
    v_rear = wr.vel(N) + RW.ang_vel_in(N).cross(P["r_R"] * L.z)
    v_front = wf.vel(N) + FW.ang_vel_in(N).cross(rho_f)
    velocity = [v_rear.dot(N.x), v_rear.dot(N.y), v_front.dot(N.x), v_front.dot(N.y),
                holonomic.diff(dynamicsymbols._t).subs(to_u)]
    independent, dependent = ["phi", "delta", "theta_R"], ["x", "y", "psi", "pitch", "theta_F"]
    km = KanesMethod(N, q_ind=[q[n] for n in names if n != "pitch"], u_ind=[u[n] for n in independent],
                     kd_eqs=kd, q_dependent=[q["pitch"]], configuration_constraints=[holonomic],
                     u_dependent=[u[n] for n in dependent], velocity_constraints=velocity,
                     constraint_solver="CRAMER")
    bodies = [
        RigidBody("rear_wheel", wr, RW, P["m_R"], (inertia(R, P["I_Rxx"], P["I_Ryy"], P["I_Rxx"]), wr)),
        RigidBody("rear_body", body, R, P["m_B"], (inertia(R, P["I_Bxx"], P["I_Byy"], P["I_Bzz"], 0, 0, P["I_Bxz"]),
                                                   body)),
        RigidBody("front_frame", fork, H, P["m_H"],
                  (inertia(H, P["I_Hxx"], P["I_Hyy"], P["I_Hzz"], 0, 0, P["I_Hxz"]), fork)),
        RigidBody("front_wheel", wf, FW, P["m_F"], (inertia(H, P["I_Fxx"], P["I_Fyy"], P["I_Fxx"]), wf)),
    ]
    loads = [(pt, P[m] * P["g"] * N.z) for pt, m in ((wr, "m_R"), (body, "m_B"), (fork, "m_H"), (wf, "m_F"))]
    return km, bodies, loads


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--output", default=None, help="write the system file here (default: standard output)")
    p.add_argument("--speed", type=float, default=DEFAULT_SPEED, help="forward speed of the start state, m/s")
    p.add_argument("--steer-torque", action="store_true",
                   help="with the steer torque T_delta as an input and the roll and steer rates as outputs")
    args = p.parse_args(argv)
    text = bicycle_toml(args.speed, args.steer_torque)
    if args.output:
        Path(args.output).write_text(text)
        print(f"wrote {args.output} ({len(text)} bytes)")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
