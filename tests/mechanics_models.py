"""sympy.physics.mechanics models for the from_mechanics and kane tests, written as sympy's own sources do.

* :func:`rolling_disc`: sympy's documentation "A rolling disc, with Kane's method" (also sympy's test_kane.py
  ``test_rolling_disc``): formed from the contact point up, speeds = angular velocity components in the lean frame.
* :func:`rolling_disc_nonholonomic`: sympy's test_kane2.py ``test_aux_dep`` disc (yaw, lean, spin and the height of
  the centre as a dependent coordinate; disc-centre velocities as dependent speeds with velocity constraints),
  without its auxiliary speeds and contact forces.
* :func:`bicycle`: sympy's test_kane3.py Whipple bicycle (Meijaard et al. 2007 benchmark parameters), crudely
  ported from Autolev: 4 coordinates, 6 speeds (the wheel angles are ignorable and have no coordinate),
  3 nonholonomic constraints and 1 configuration constraint.
* :func:`disc_lagrange`: the rolling disc by Lagrange's method (sympy's documentation "A rolling disc using
  Lagrange's Method").
"""

from __future__ import annotations

from types import SimpleNamespace

from sympy import Matrix, acos, cos, pi, sin, sqrt, symbols
from sympy.physics.mechanics import (
    KanesMethod,
    LagrangesMethod,
    Lagrangian,
    Point,
    ReferenceFrame,
    RigidBody,
    cross,
    dot,
    dynamicsymbols,
    inertia,
)


def _disc(contact_velocity=None) -> SimpleNamespace:
    """The documentation's rolling disc: yaw q1, lean q2, spin q3, body-fixed speeds u1..u3 in the lean frame L,
    the contact point C moving with ``contact_velocity(Y, L)`` (at rest by default), the centre Dmc = C + r L.z."""
    q1, q2, q3, u1, u2, u3 = dynamicsymbols("q1 q2 q3 u1 u2 u3")
    r, m, g = symbols("r m g")
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    w_R_N_qd = R.ang_vel_in(N)
    R.set_ang_vel(N, u1 * L.x + u2 * L.y + u3 * L.z)
    C = Point("C")
    C.set_vel(N, 0 if contact_velocity is None else contact_velocity(Y, L))
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    return SimpleNamespace(q1=q1, q2=q2, q3=q3, u1=u1, u2=u2, u3=u3, r=r, m=m, g=g, N=N, Y=Y, L=L, R=R, C=C,
                           Dmc=Dmc, I=inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2),
                           kd=[dot(R.ang_vel_in(N) - w_R_N_qd, uv) for uv in L])


def rolling_disc(form: bool = True) -> SimpleNamespace:
    d = _disc()
    q1, q2, q3, u1, u2, u3, r, m, g = d.q1, d.q2, d.q3, d.u1, d.u2, d.u3, d.r, d.m, d.g
    N, Y, R, Dmc, I, kd = d.N, d.Y, d.R, d.Dmc, d.I, d.kd
    ForceList = [(Dmc, -m * g * Y.z)]
    BodyD = RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    KM = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd)
    if form:
        KM.kanes_equations([BodyD], ForceList)
    return SimpleNamespace(kane=KM, q=[q1, q2, q3], u=[u1, u2, u3], parameters={r: 0.3, m: 2.0, g: 9.81},
                           start={q2: 0.1, u2: 5.0}, symbols=(r, m, g))


def rolling_disc_nonholonomic() -> SimpleNamespace:
    t, r, m, g, I, J = symbols("t r m g I J")
    q = dynamicsymbols("q:4")
    qd = [qi.diff(t) for qi in q]
    u = dynamicsymbols("u:6")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q[0], N.z])
    B = A.orientnew("B", "Axis", [q[1], A.x])
    C = B.orientnew("C", "Axis", [q[2], B.y])
    C.set_ang_vel(N, u[0] * B.x + u[1] * B.y + u[2] * B.z)
    P = Point("P")
    P.set_vel(N, 0)
    O = P.locatenew("O", q[3] * A.z + r * sin(q[1]) * A.y)
    O.set_vel(N, u[3] * A.x + u[4] * A.y + u[5] * A.z)
    w_c_n_qd = qd[0] * A.z + qd[1] * B.x + qd[2] * B.y
    v_o_n_qd = O.pos_from(P).diff(t, A) + cross(A.ang_vel_in(N), O.pos_from(P))
    kindiffs = Matrix([dot(w_c_n_qd - C.ang_vel_in(N), uv) for uv in B] + [dot(v_o_n_qd - O.vel(N), A.z)])
    f_c = Matrix([dot(-r * B.z, A.z) - q[3]])
    f_v = Matrix([dot(O.vel(N) - (P.vel(N) + cross(C.ang_vel_in(N), O.pos_from(P))), ai).expand() for ai in A])
    disc = RigidBody("disc", O, C, m, (inertia(B, I, J, I), O))
    kane = KanesMethod(N, q_ind=q[:3], u_ind=u[:3], kd_eqs=kindiffs, q_dependent=q[3:],
                       configuration_constraints=f_c, u_dependent=u[3:], velocity_constraints=f_v)
    kane.kanes_equations([disc], [(O, m * g * A.z)])
    return SimpleNamespace(kane=kane, q=list(q), u=list(u),
                           parameters={r: 0.3, m: 2.0, g: -9.81, I: 0.045, J: 0.09},
                           start={q[1]: 0.2, q[3]: -0.3 * cos(0.2), u[1]: 4.0, u[2]: 0.5})


def bicycle() -> SimpleNamespace:
    q1, q2, q4, q5 = dynamicsymbols("q1 q2 q4 q5")
    q1d, q2d, q4d, q5d = dynamicsymbols("q1 q2 q4 q5", 1)
    u1, u2, u3, u4, u5, u6 = dynamicsymbols("u1 u2 u3 u4 u5 u6")
    WFrad, WRrad, htangle, forkoffset = symbols("WFrad WRrad htangle forkoffset")
    forklength, framelength, forkcg1 = symbols("forklength framelength forkcg1")
    forkcg3, framecg1, framecg3, Iwr11 = symbols("forkcg3 framecg1 framecg3 Iwr11")
    Iwr22, Iwf11, Iwf22, Iframe11 = symbols("Iwr22 Iwf11 Iwf22 Iframe11")
    Iframe22, Iframe33, Iframe31, Ifork11 = symbols("Iframe22 Iframe33 Iframe31 Ifork11")
    Ifork22, Ifork33, Ifork31, g = symbols("Ifork22 Ifork33 Ifork31 g")
    mframe, mfork, mwf, mwr = symbols("mframe mfork mwf mwr")
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    R = Y.orientnew("R", "Axis", [q2, Y.x])
    Frame = R.orientnew("Frame", "Axis", [q4 + htangle, R.y])
    WR = ReferenceFrame("WR")
    TempFrame = Frame.orientnew("TempFrame", "Axis", [-htangle, Frame.y])
    Fork = Frame.orientnew("Fork", "Axis", [q5, Frame.x])
    TempFork = Fork.orientnew("TempFork", "Axis", [-htangle, Fork.y])
    WF = ReferenceFrame("WF")
    WR_cont = Point("WR_cont")
    WR_mc = WR_cont.locatenew("WR_mc", WRrad * R.z)
    Steer = WR_mc.locatenew("Steer", framelength * Frame.z)
    Frame_mc = WR_mc.locatenew("Frame_mc", -framecg1 * Frame.x + framecg3 * Frame.z)
    Fork_mc = Steer.locatenew("Fork_mc", -forkcg1 * Fork.x + forkcg3 * Fork.z)
    WF_mc = Steer.locatenew("WF_mc", forklength * Fork.x + forkoffset * Fork.z)
    WF_cont = WF_mc.locatenew("WF_cont", WFrad * (dot(Fork.y, Y.z) * Fork.y - Y.z).normalize())
    Y.set_ang_vel(N, u1 * Y.z)
    R.set_ang_vel(Y, u2 * R.x)
    WR.set_ang_vel(Frame, u3 * Frame.y)
    Frame.set_ang_vel(R, u4 * Frame.y)
    Fork.set_ang_vel(Frame, u5 * Fork.x)
    WF.set_ang_vel(Fork, u6 * Fork.y)
    WR_cont.set_vel(N, 0)
    WR_mc.v2pt_theory(WR_cont, N, WR)
    Steer.v2pt_theory(WR_mc, N, Frame)
    Frame_mc.v2pt_theory(WR_mc, N, Frame)
    Fork_mc.v2pt_theory(Steer, N, Fork)
    WF_mc.v2pt_theory(Steer, N, Fork)
    WF_cont.v2pt_theory(WF_mc, N, WF)
    Frame_I = (inertia(TempFrame, Iframe11, Iframe22, Iframe33, 0, 0, Iframe31), Frame_mc)
    Fork_I = (inertia(TempFork, Ifork11, Ifork22, Ifork33, 0, 0, Ifork31), Fork_mc)
    WR_I = (inertia(Frame, Iwr11, Iwr22, Iwr11), WR_mc)
    WF_I = (inertia(Fork, Iwf11, Iwf22, Iwf11), WF_mc)
    BodyFrame = RigidBody("BodyFrame", Frame_mc, Frame, mframe, Frame_I)
    BodyFork = RigidBody("BodyFork", Fork_mc, Fork, mfork, Fork_I)
    BodyWR = RigidBody("BodyWR", WR_mc, WR, mwr, WR_I)
    BodyWF = RigidBody("BodyWF", WF_mc, WF, mwf, WF_I)
    kd = [q1d - u1, q2d - u2, q4d - u4, q5d - u5]
    conlist_speed = [WF_cont.vel(N) & Y.x, WF_cont.vel(N) & Y.y, WF_cont.vel(N) & Y.z]
    conlist_coord = [WF_cont.pos_from(WR_cont) & Y.z]
    FL = [(Frame_mc, -mframe * g * Y.z), (Fork_mc, -mfork * g * Y.z), (WF_mc, -mwf * g * Y.z),
          (WR_mc, -mwr * g * Y.z)]
    BL = [BodyFrame, BodyFork, BodyWR, BodyWF]
    KM = KanesMethod(N, q_ind=[q1, q2, q5], q_dependent=[q4], configuration_constraints=conlist_coord,
                     u_ind=[u2, u3, u5], u_dependent=[u1, u4, u6], velocity_constraints=conlist_speed,
                     kd_eqs=kd, constraint_solver="CRAMER")
    KM.kanes_equations(BL, FL)
    # the benchmark values, as test_kane3.py enters them
    PaperRadRear = 0.3
    PaperRadFront = 0.35
    HTA = (pi / 2 - pi / 10).evalf()
    TrailPaper = 0.08
    rake = (-(TrailPaper * sin(HTA) - (PaperRadFront * cos(HTA)))).evalf()
    PaperWb = 1.02
    PaperFrameCgX = 0.3
    PaperFrameCgZ = 0.9
    PaperForkCgX = 0.9
    PaperForkCgZ = 0.7
    FrameLength = (PaperWb * sin(HTA) - (rake - (PaperRadFront - PaperRadRear) * cos(HTA))).evalf()
    FrameCGNorm = ((PaperFrameCgZ - PaperRadRear - (PaperFrameCgX / sin(HTA)) * cos(HTA)) * sin(HTA)).evalf()
    FrameCGPar = (PaperFrameCgX / sin(HTA) + (PaperFrameCgZ - PaperRadRear - PaperFrameCgX / sin(HTA) * cos(HTA))
                  * cos(HTA)).evalf()
    tempa = PaperForkCgZ - PaperRadFront
    tempb = PaperWb - PaperForkCgX
    tempc = (sqrt(tempa**2 + tempb**2)).evalf()
    PaperForkL = (PaperWb * cos(HTA) - (PaperRadFront - PaperRadRear) * sin(HTA)).evalf()
    ForkCGNorm = (rake + (tempc * sin(pi / 2 - HTA - acos(tempa / tempc)))).evalf()
    ForkCGPar = (tempc * cos((pi / 2 - HTA) - acos(tempa / tempc)) - PaperForkL).evalf()
    values = {WFrad: PaperRadFront, WRrad: PaperRadRear, htangle: HTA, forkoffset: rake, forklength: PaperForkL,
              framelength: FrameLength, forkcg1: ForkCGPar, forkcg3: ForkCGNorm, framecg1: FrameCGNorm,
              framecg3: FrameCGPar, Iwr11: 0.0603, Iwr22: 0.12, Iwf11: 0.1405, Iwf22: 0.28, Ifork11: 0.05892,
              Ifork22: 0.06, Ifork33: 0.00708, Ifork31: 0.00756, Iframe11: 9.2, Iframe22: 11, Iframe33: 2.8,
              Iframe31: -2.4, mfork: 4, mframe: 85, mwf: 3, mwr: 2, g: 9.81}
    v = 5.0  # forward (u3 > 0), inside the benchmark's stable speed range 4.29 ... 6.02 m/s
    return SimpleNamespace(kane=KM, q=[q1, q2, q4, q5], u=[u1, u2, u3, u4, u5, u6],
                           parameters={k: float(x) for k, x in values.items()},
                           start={q2: 0.02, u2: 0.05, u3: v / PaperRadRear, u5: 0.1})


def disc_lagrange() -> SimpleNamespace:
    q1, q2, q3 = dynamicsymbols("q1 q2 q3")
    q1d, _q2d, q3d = dynamicsymbols("q1 q2 q3", 1)
    r, m, g = symbols("r m g")
    N = ReferenceFrame("N")
    Y = N.orientnew("Y", "Axis", [q1, N.z])
    L = Y.orientnew("L", "Axis", [q2, Y.x])
    R = L.orientnew("R", "Axis", [q3, L.y])
    C = Point("C")
    C.set_vel(N, 0)
    Dmc = C.locatenew("Dmc", r * L.z)
    Dmc.v2pt_theory(C, N, R)
    I = inertia(L, m / 4 * r**2, m / 2 * r**2, m / 4 * r**2)
    BodyD = RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    BodyD.potential_energy = m * g * dot(Dmc.pos_from(C), Y.z)
    Lag = Lagrangian(N, BodyD)
    lm = LagrangesMethod(Lag, [q1, q2, q3], bodies=[BodyD], frame=N)
    lm.form_lagranges_equations()
    return SimpleNamespace(lagrange=lm, q=[q1, q2, q3], parameters={r: 0.3, m: 2.0, g: 9.81},
                           start={q2: 0.1, q1d: 0.0, q3d: 5.0})


def pendulum_lagrange() -> SimpleNamespace:
    """sympy's double pendulum of particles by Lagrange's method, gravity as a force list (as its docs write it)."""
    from sympy.physics.mechanics import Particle

    q1, q2 = dynamicsymbols("q1 q2")
    l, m, g = symbols("l m g")
    N = ReferenceFrame("N")
    A = N.orientnew("A", "Axis", [q1, N.z])
    B = N.orientnew("B", "Axis", [q2, N.z])
    O = Point("O")
    O.set_vel(N, 0)
    P = O.locatenew("P", l * A.x)
    R = P.locatenew("R", l * B.x)
    P.set_vel(N, P.pos_from(O).dt(N))
    R.set_vel(N, R.pos_from(O).dt(N))
    ParP, ParR = Particle("ParP", P, m), Particle("ParR", R, m)
    lm = LagrangesMethod(Lagrangian(N, ParP, ParR), [q1, q2], forcelist=[(P, m * g * N.x), (R, m * g * N.x)],
                         bodies=[ParP, ParR], frame=N)
    lm.form_lagranges_equations()
    return SimpleNamespace(lagrange=lm, q=[q1, q2], parameters={l: 0.7, m: 1.3, g: 9.81},
                           start={q1: 0.4, q2.diff(): -1.0})


def rolling_disc_system() -> SimpleNamespace:
    """The documentation's rolling disc as a sympy.physics.mechanics.System (fixed point C, uniform gravity)."""
    from sympy.physics.mechanics import System

    d = _disc()
    q1, q2, q3, u1, u2, u3, r, m, g, N = d.q1, d.q2, d.q3, d.u1, d.u2, d.u3, d.r, d.m, d.g, d.N
    disc = RigidBody("disc", d.Dmc, d.R, m, (d.I, d.Dmc))
    system = System(N, d.C)
    system.add_coordinates(q1, q2, q3)
    system.add_speeds(u1, u2, u3)
    system.add_kdes(*d.kd)
    system.add_bodies(disc)
    system.apply_uniform_gravity(-g * N.z)
    system.validate_system()
    system.form_eoms()
    return SimpleNamespace(system=system, kane=system.eom_method, q=[q1, q2, q3], u=[u1, u2, u3],
                           parameters={r: 0.25, m: 1.5, g: 9.81}, start={q2: -0.2, u2: 3.0, u1: 0.5})


def rolling_disc_constraint_forces() -> SimpleNamespace:
    """sympy's documentation "A rolling disc, with Kane's method and constraint forces": auxiliary speeds u4..u6 at
    the contact point and the contact forces f1..f3 (functions of time) along them."""
    u4, u5, u6, f1, f2, f3 = dynamicsymbols("u4 u5 u6 f1 f2 f3")
    d = _disc(lambda Y, L: u4 * L.x + u5 * cross(Y.z, L.x) + u6 * Y.z)
    q1, q2, q3, u1, u2, u3, r, m, g = d.q1, d.q2, d.q3, d.u1, d.u2, d.u3, d.r, d.m, d.g
    N, Y, L, R, C, Dmc, I, kd = d.N, d.Y, d.L, d.R, d.C, d.Dmc, d.I, d.kd
    ForceList = [(Dmc, -m * g * Y.z), (C, f1 * L.x + f2 * cross(Y.z, L.x) + f3 * Y.z)]
    BodyD = RigidBody("BodyD", Dmc, R, m, (I, Dmc))
    KM = KanesMethod(N, q_ind=[q1, q2, q3], u_ind=[u1, u2, u3], kd_eqs=kd, u_auxiliary=[u4, u5, u6])
    KM.kanes_equations([BodyD], ForceList)
    return SimpleNamespace(kane=KM, q=[q1, q2, q3], u=[u1, u2, u3], parameters={r: 0.3, m: 2.0, g: 9.81},
                           start={q2: 0.1, u2: 5.0})
