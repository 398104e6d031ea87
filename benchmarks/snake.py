"""A scalable benchmark family: the planar wheeled snake of n rigid links.

Coordinates ``x, y`` (tail end of link 1) and ``th1 .. thn`` (absolute link angles): n + 2.
Link i has length L, mass m and inertia J about its centre

    xc_i = x + sum_{j<i} L cos th_j + L/2 cos th_i,   yc_i = y + sum_{j<i} L sin th_j + L/2 sin th_i.

A passive wheel at every link centre forbids sideways slip (n nonholonomic constraints)

    -sin(th_i) xc_i' + cos(th_i) yc_i' = 0,

leaving two degrees of freedom. Torsional springs k and dampers c act between neighbouring links:
``V = k/2 sum (th_{i+1} - th_i)^2``, ``D = c/2 sum (th_{i+1}' - th_i')^2``.

:func:`snake_toml` writes the nhbridge system file; :func:`snake_sympy_model` builds the same
system for ``sympy.physics.mechanics.LagrangesMethod`` and :func:`snake_sympy` forms its equations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp
from sympy.physics.mechanics import LagrangesMethod, ReferenceFrame, dynamicsymbols

__all__ = ["PARAMETERS", "SympySnake", "SympySnakeEquations", "snake_start", "snake_start_velocities",
           "snake_sympy", "snake_sympy_model", "snake_toml"]

#: parameter values shared by the system file and the sympy model
PARAMETERS: dict[str, tuple[float, str, str]] = {
    "L": (0.3, "m", "link length"),
    "m": (1.0, "kg", "link mass"),
    "J": (0.0075, "kg.m2", "link inertia about its centre"),
    "k": (2.0, "N.m/rad", "torsional spring between neighbouring links"),
    "c": (0.02, "N.m.s/rad", "torsional damper between neighbouring links"),
}
START_VELOCITY_X = 0.5
START_VELOCITY_TH1 = 0.2


def snake_start(n: int) -> dict[str, float]:
    """Start positions: the tail at the origin, an undulating shape th_i = 0.3 sin(i)."""
    start = {"x": 0.0, "y": 0.0}
    start.update({f"th{i}": 0.3 * math.sin(i) for i in range(1, n + 1)})
    return start


def snake_start_velocities(n: int, start: dict[str, float] | None = None,
                           vx: float = START_VELOCITY_X, vth1: float = START_VELOCITY_TH1) -> dict[str, float]:
    """Velocities satisfying the wheel constraints for given der(x), der(th1) (solved link by link).

    The sideways velocity of centre i is ``-sin(th_i) vx_i + cos(th_i) vy_i + L/2 th_i'`` with
    ``(vx_i, vy_i)`` the velocity of the tail end of link i; constraint 1 gives der(y), constraint i der(th_i).
    """
    q = start or snake_start(n)
    half = PARAMETERS["L"][0] / 2
    th = [q[f"th{i}"] for i in range(1, n + 1)]
    s1, c1 = math.sin(th[0]), math.cos(th[0])
    v = {"x": vx, "th1": vth1, "y": (s1 * vx - half * vth1) / c1}
    ex, ey = v["x"], v["y"]                       # velocity of the tail end of the current link
    for i in range(n):
        w = v[f"th{i + 1}"] if i == 0 else (math.sin(th[i]) * ex - math.cos(th[i]) * ey) / half
        v[f"th{i + 1}"] = w
        ex, ey = ex - 2 * half * math.sin(th[i]) * w, ey + 2 * half * math.cos(th[i]) * w
    return v


def _centre(axis: str, i: int) -> str:
    """xc_i or yc_i as text over x/y and the link angles."""
    fn = "cos" if axis == "x" else "sin"
    terms = [axis] + [f"L*{fn}(th{j})" for j in range(1, i)] + [f"L/2*{fn}(th{i})"]
    return " + ".join(terms)


def snake_toml(n: int, independent: bool = False) -> str:
    """The nhbridge system file (TOML text) of the snake with ``n`` links (n >= 2).

    The start velocities satisfy the constraints. With ``independent`` the file also lists
    ``[method] independent = ["x", "th1"]``, so nhbridge recomputes the dependent start velocities.
    """
    if n < 2:
        raise ValueError("the snake needs at least two links")
    start = snake_start(n)
    velocity = snake_start_velocities(n, start)
    lines = [f'name = "Snake{n}"',
             f'description = "Planar snake of {n} rigid links with a passive wheel at every link centre"',
             "[coordinates]"]
    for name in ["x", "y"] + [f"th{i}" for i in range(1, n + 1)]:
        linear = name in ("x", "y")
        unit, what = ("m", f"tail end of link 1, {name}") if linear else ("rad", f"angle of link {name[2:]}")
        lines.append(f'{name} = {{ start = {start[name]!r}, velocity = {velocity.get(name, 0.0)!r}, '
                     f'unit = "{unit}", description = "{what}" }}')
    lines.append("[parameters]")
    for name, (value, unit, what) in PARAMETERS.items():
        lines.append(f'{name} = {{ value = {value!r}, unit = "{unit}", description = "{what}" }}')
    lines.append("[definitions]")
    for i in range(1, n + 1):
        lines.append(f'xc{i} = "{_centre("x", i)}"')
        lines.append(f'yc{i} = "{_centre("y", i)}"')
    kinetic = " + ".join(f"m/2*(der(xc{i})^2 + der(yc{i})^2) + J/2*der(th{i})^2" for i in range(1, n + 1))
    potential = " + ".join(f"(th{i + 1} - th{i})^2" for i in range(1, n))
    dissipation = " + ".join(f"(der(th{i + 1}) - der(th{i}))^2" for i in range(1, n))
    lines += ["[energy]", f'kinetic = "{kinetic}"', f'potential = "k/2*({potential})"',
              f'dissipation = "c/2*({dissipation})"', "[constraints]", "holonomic = []", "nonholonomic = ["]
    lines += [f'  "-sin(th{i})*der(xc{i}) + cos(th{i})*der(yc{i})",' for i in range(1, n + 1)]
    lines += ["]", "[method]"] + (['independent = ["x", "th1"]'] if independent else [])
    lines += ["[simulation]", "stop_time = 10.0", ""]
    return "\n".join(lines)


@dataclass(frozen=True)
class SympySnake:
    """The snake for sympy.physics.mechanics: Lagrangian, constraints and damping torques."""

    n: int
    q: list[sp.Function]                   # dynamicsymbols x, y, th1..thn
    parameters: dict[str, sp.Symbol]
    lagrangian: sp.Expr
    nonholonomic: list[sp.Expr]            # linear in the q'
    forcelist: list[tuple[ReferenceFrame, object]]
    frame: ReferenceFrame

    def method(self) -> LagrangesMethod:
        return LagrangesMethod(self.lagrangian, self.q, forcelist=self.forcelist, frame=self.frame,
                               nonhol_coneqs=self.nonholonomic)


@dataclass(frozen=True)
class SympySnakeEquations:
    """``mass_matrix_full [q', q'', lambda] = forcing_full`` from LagrangesMethod."""

    model: SympySnake
    method: LagrangesMethod
    mass_matrix_full: sp.Matrix
    forcing_full: sp.Matrix


def snake_sympy_model(n: int) -> SympySnake:
    """Build the Lagrangian L = T - V, the wheel constraints and the damping torques with dynamicsymbols."""
    t = dynamicsymbols._t
    x, y = dynamicsymbols("x y")
    th = dynamicsymbols(f"th1:{n + 1}")
    P = {name: sp.Symbol(name) for name in PARAMETERS}
    Ll, m, J, k, c = (P[s] for s in ("L", "m", "J", "k", "c"))
    xc, yc = [], []
    ex, ey = x, y                     # tail end of the current link
    for i in range(n):
        xc.append(ex + Ll / 2 * sp.cos(th[i]))
        yc.append(ey + Ll / 2 * sp.sin(th[i]))
        ex, ey = ex + Ll * sp.cos(th[i]), ey + Ll * sp.sin(th[i])
    T = sum(m / 2 * (xc[i].diff(t) ** 2 + yc[i].diff(t) ** 2) + J / 2 * th[i].diff(t) ** 2 for i in range(n))
    V = k / 2 * sum((th[i + 1] - th[i]) ** 2 for i in range(n - 1))
    nonhol = [-sp.sin(th[i]) * xc[i].diff(t) + sp.cos(th[i]) * yc[i].diff(t) for i in range(n)]
    N = ReferenceFrame("N")
    # D = c/2 sum (th_{i+1}' - th_i')^2: torque -dD/dth_i' on link i (its angular velocity is th_i' N.z)
    thd = [s.diff(t) for s in th]
    torque = [sp.Integer(0)] * n
    for i in range(n - 1):
        rel = c * (thd[i + 1] - thd[i])
        torque[i] += rel
        torque[i + 1] -= rel
    forcelist = []
    for i in range(n):
        B = N.orientnew(f"B{i + 1}", "Axis", [th[i], N.z])
        forcelist.append((B, torque[i] * N.z))
    return SympySnake(n, [x, y, *th], P, T - V, nonhol, forcelist, N)


def snake_sympy(n: int, model: SympySnake | None = None) -> SympySnakeEquations:
    """LagrangesMethod: form_lagranges_equations, mass_matrix_full and forcing_full."""
    model = model or snake_sympy_model(n)
    lm = model.method()
    lm.form_lagranges_equations()
    return SympySnakeEquations(model, lm, lm.mass_matrix_full, lm.forcing_full)
