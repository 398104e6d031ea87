"""Equations printed in the seed documents (/work/shared/seeds), as sympy objects.

Plain data module for the tests (it contains no tests).  For every example whose
seed prints equations it exposes, per printed equation, a ``SeedEquation`` with

* ``printed``   -- the equation as printed/OCR'd, transcribed literally where legible
                   (``None`` where it is not legible at all),
* ``corrected`` -- the form re-derived by hand and checked with sympy (never copied),
* ``note``      -- where printed and corrected differ: what exactly the print has,
                   whether it is an OCR error or a printed typo, and why the correction
                   is right; otherwise empty or a remark on legibility/conventions.

A discrepancy is exactly an entry whose ``printed`` differs from ``corrected``
(``None`` inside ``printed`` marks an illegible equation, not an error).  Remarks on the
seeds' text that involve no equation are collected in ``TEXT_NOTES``.

Conventions
-----------
* Symbols follow docs/api-contract.md: coordinate ``x`` -> ``Symbol("x")``, velocity
  ``Symbol("der(x)")``, acceleration ``Symbol("der(der(x))")``, parameters and inputs by
  their name in the example files (examples/*.toml), time ``Symbol("t")``, multiplier
  ``Symbol("lambda[1]")``.  All symbols are plain (no assumptions).
* An equation is an expression ``lhs - rhs`` (== 0); an equation set is a tuple of them.
  Matrices are ``sympy.ImmutableMatrix`` in the seed's own row/column order (stated in the
  section comment where it differs from the coordinate order of the example file: the
  car's matrices are ordered phi, x, y).
* Definitions of the example files are substituted (car: ``l = a + b`` and the steering
  angle ``steer = steer0 + steer1*sin(steer_w*t)``; the seed's steering angle theta is
  this ``steer``).  Generalized forces of the examples are substituted for the seed's
  generic torques (constant speed drive: M1, M2; hydropulsator: H_r, H_d; see the
  ``*_FORCES`` dicts).  Where the example adds a force the seed does not have (car drag
  c_d) an extra ``corrected``-only entry is given.
* Multipliers use the seeds' sign convention  d/dt(dT/dq') - dT/dq = Q + lambda*B  where
  B are the coefficients of the velocity constraint *as written in the seed* (constant
  speed drive: (x - c)*phi1' - R*phi2' = 0; hydropulsator: x2' - c/(2A)(1+cos 2psi) phi' = 0).
  A core package using the opposite sign has lambda -> -lambda.
* ``*_DEPENDENT`` dicts map dependent velocities and accelerations to expressions of the
  independent ones (from the constraints and their time derivatives), for substituting
  into the full (Lagrange/Maggi) forms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy import Rational, cos, sin

__all__ = [
    "ALL",
    "CAR",
    "CARTESIAN_PENDULUM",
    "CAR_DEPENDENT",
    "CAR_STEER",
    "DRIVE",
    "DRIVE_DEPENDENT",
    "DRIVE_FORCES",
    "EXCITER",
    "EXCITER_DIFFERENTIATION_COUNTS",
    "HYDRO",
    "HYDRO_DEPENDENT",
    "HYDRO_FORCES",
    "PENDULUM",
    "SPHERE",
    "SPHERE_DEPENDENT",
    "TEXT_NOTES",
    "SeedEquation",
    "lam",
    "q",
    "qd",
    "qdd",
    "t",
]


@dataclass(frozen=True)
class SeedEquation:
    label: str          # equation number(s) in the seed, e.g. "(3.12)"
    printed: Any        # as printed (literal transcription), None if illegible
    corrected: Any      # re-derived form
    note: str = ""      # discrepancy and its justification, or a remark ("" if nothing to say)


# --- symbols (api-contract conventions; defined here so the module does not import bridge) ---
def q(name: str) -> sp.Symbol:
    return sp.Symbol(name)


def qd(name: str) -> sp.Symbol:
    return sp.Symbol(f"der({name})")


def qdd(name: str) -> sp.Symbol:
    return sp.Symbol(f"der(der({name}))")


def lam(k: int) -> sp.Symbol:
    return sp.Symbol(f"lambda[{k}]")


t = sp.Symbol("t")
M = sp.ImmutableMatrix


def _p(names: str):
    return sp.symbols(names)


# =====================================================================================
# Do Sanh, "A form of equation of motion for Chaplyghin's systems", Example 1:
# uniform sphere rolling on a horizontal plane  (examples/rolling_sphere.toml)
# Coordinate order of the seed's matrices: theta, phi, psi, x, y  (= the example file).
# =====================================================================================
J, m, a = _p("J m a")
th, ph, ps, x, y = q("theta"), q("phi"), q("psi"), q("x"), q("y")
thd, phd, psd, xd, yd = qd("theta"), qd("phi"), qd("psi"), qd("x"), qd("y")
thdd, phdd, psdd = qdd("theta"), qdd("phi"), qdd("psi")
sth, cth, sps, cps = sin(th), cos(th), sin(ps), cos(ps)

_sph_B = M([[a * sps, -a * sth * cps, 0],
            [-a * cps, -a * sth * sps, 0]])
_sph_Bdot = M([[a * cps * psd, a * (sth * sps * psd - cth * cps * thd), 0],
               [a * sps * psd, -a * (sth * cps * psd + cth * sps * thd), 0]])
_sph_A = M([[J, 0, 0, 0, 0],
            [0, J, J * cth, 0, 0],
            [0, J * cth, J, 0, 0],
            [0, 0, 0, m, 0],
            [0, 0, 0, 0, m]])

SPHERE_DEPENDENT = {
    xd: a * sps * thd - a * sth * cps * phd,
    yd: -(a * cps * thd + a * sth * sps * phd),
    qdd("x"): a * sps * thdd - a * sth * cps * phdd + _sph_Bdot[0, 0] * thd + _sph_Bdot[0, 1] * phd,
    qdd("y"): -(a * cps * thdd + a * sth * sps * phdd) + _sph_Bdot[1, 0] * thd + _sph_Bdot[1, 1] * phd,
}

SPHERE = {
    "T": SeedEquation(
        "(3.1)",
        printed=J / 2 * (thd**2 + phd**2 + 2 * cth * phd * psd) + m / 2 * (xd**2 + yd**2),
        corrected=J / 2 * (thd**2 + phd**2 + psd**2 + 2 * cth * phd * psd) + m / 2 * (xd**2 + yd**2),
        note="Printed (3.1) lacks the term J/2*der(psi)^2.  For a sphere (all central moments J) "
             "T_rot = J/2*|omega|^2 and with Euler angles |omega|^2 = theta'^2 + phi'^2 + psi'^2 "
             "+ 2 cos(theta) phi' psi'.  The paper's own inertia matrix (3.4) has A[psi,psi] = J, "
             "i.e. it contains the term, so (3.1) is a printing omission (not OCR).",
    ),
    "A": SeedEquation("(3.4)", printed=_sph_A, corrected=_sph_A,
                      note=""),  # consistent with the corrected T, not with printed (3.1)
    "G": SeedEquation(
        "(3.3)",
        printed=M([-J * sth * phd * psd, J * sth * thd * psd, J * sth * thd * phd, 0, 0]),
        corrected=M([-J * sth * phd * psd, J * sth * thd * psd, J * sth * thd * phd, 0, 0]),
        note="",  # G = dT/dq - Adot*q' (so that A q'' = Q + G); checked
    ),
    "B": SeedEquation("(3.6)", printed=_sph_B, corrected=_sph_B, note=""),
    "Bdot": SeedEquation(
        "(3.6)",
        printed=M([[a * cos(psd) * psd, a * (sth * sps * psd - cth * sps * thd), 0],
                   [a * sin(psd) * psd, -a * (sth * cps * psd + cth * sps * thd), 0]]),
        corrected=_sph_Bdot,
        note="Bdot in (3.6) as OCR'd: entries (1,1) and (2,1) read 'a c psi' psi'' and "
             "'a s psi' psi'' (literally a*cos(psi')*psi', a*sin(psi')*psi'): OCR error, the dot "
             "of psi' was duplicated onto the argument of c(.)/s(.); d/dt(a sin psi) = a cos(psi) psi', "
             "d/dt(-a cos psi) = a sin(psi) psi'.  Entry (1,2) reads a(s th s psi psi' - c th s psi th'), "
             "but d/dt(-a sin(th) cos(psi)) = a(s th s psi psi' - c th c psi th'): s psi -> c psi in "
             "the second term (printed typo; the same matrix inside (3.10) has c th c psi th').",
    ),
    "Bdot_in_A_star": SeedEquation("(3.10)", printed=_sph_Bdot, corrected=_sph_Bdot, note=""),
    "A_sigma": SeedEquation(
        "(3.9)",
        printed=M([[J + m * a**2, 0, 0], [0, J + m * a**2 * sth**2, J * cth], [0, J * cth, J]]),
        corrected=M([[J + m * a**2, 0, 0], [0, J + m * a**2 * sth**2, J * cth], [0, J * cth, J]]),
        note="",
    ),
    "A_star": SeedEquation(
        "(3.10)",
        printed=M([[0, m * a**2 * sth * psd, 0],
                   [-m * a**2 * sth * psd, m * a**2 * sth * cth * thd, 0],
                   [0, 0, 0]]),
        corrected=M([[0, m * a**2 * sth * psd, 0],
                     [-m * a**2 * sth * psd, m * a**2 * sth * cth * thd, 0],
                     [0, 0, 0]]),
        note="",  # = B^T A2 Bdot with the correct Bdot; checked
    ),
    "equations": SeedEquation(
        "(3.12)",
        printed=(
            (J + m * a**2) * thdd - (J * sth * psd * phd - m * a**2 * sth * phd * psd),
            (J + m * a**2 * sth**2) * phdd + J * cth * psdd
            - (J * sth * thd * psd + m * a**2 * sth * psd * thd - m * a**2 * sth * cth * thd * phd),
            J * cth * phdd + J * psdd - J * sth * thd * phd,
        ),
        corrected=(
            (J + m * a**2) * thdd + J * sth * phd * psd + m * a**2 * sth * phd * psd,
            (J + m * a**2 * sth**2) * phdd + J * cth * psdd
            - (J * sth * thd * psd + m * a**2 * sth * psd * thd - m * a**2 * sth * cth * thd * phd),
            J * cth * phdd + J * psdd - J * sth * thd * phd,
        ),
        note="First equation printed as (J + m a^2) theta'' = +J s(theta) psi' phi' - m a^2 s(theta) phi' psi'; "
             "the J term must be -J s(theta) phi' psi': it is the first entry of G_sigma, printed "
             "with the minus sign in (3.3), (3.8) and (3.11) (printed typo in the development). "
             "Physical check: the corrected equation gives theta'' = -s(theta) phi' psi', which "
             "holds for a sphere rotating with a constant horizontal angular velocity "
             "(theta' = w cos psi, phi' s(theta) = w sin psi, psi' = -phi' cos theta); the printed one "
             "does not.  Rows are the theta, phi, psi equations (D E = 0 with D = [E_3 B^T]).",
    ),
    "first_integral": SeedEquation("after (3.12)", printed=cth * phd + psd, corrected=cth * phd + psd,
                                   note=""),
}

# =====================================================================================
# Do Sanh, Example 2: car with prescribed steering angle (examples/car.toml)
# Seed order: sigma = (phi), xi = (x, y); A is ordered (phi, x, y).
# The seed's steering angle theta(t) is the example's definition `steer`.
# =====================================================================================
Jc, mc, ac, bc, F, c_d = _p("J m a b F c_d")
steer0, steer1, steer_w = _p("steer0 steer1 steer_w")
CAR_STEER = steer0 + steer1 * sin(steer_w * t)
_st = CAR_STEER
_std = sp.diff(CAR_STEER, t)           # theta' of the seed
_l = ac + bc                            # l (definition in car.toml)
fi, fid, fidd = q("phi"), qd("phi"), qdd("phi")
xcd, ycd = qd("x"), qd("y")
sf, cf = sin(fi), cos(fi)
_ctg = cos(_st) / sin(_st)
_car_B = M([_l * _ctg * cf - bc * sf, _l * _ctg * sf + bc * cf])
_car_Bdot_T = M([[-(_l * cf / sin(_st)**2 * _std + _l * _ctg * sf * fid + bc * cf * fid),
                  _l * _ctg * cf * fid - _l / sin(_st)**2 * sf * _std - bc * sf * fid]])
_car_Asig = Jc + mc * (_l**2 * _ctg**2 + bc**2)

CAR_DEPENDENT = {
    xcd: _car_B[0] * fid,
    ycd: _car_B[1] * fid,
    qdd("x"): _car_B[0] * fidd + _car_Bdot_T[0] * fid,
    qdd("y"): _car_B[1] * fidd + _car_Bdot_T[1] * fid,
}

CAR = {
    "T": SeedEquation("(3.13)", printed=Jc / 2 * fid**2 + mc / 2 * (xcd**2 + ycd**2),
                      corrected=Jc / 2 * fid**2 + mc / 2 * (xcd**2 + ycd**2), note=""),
    "constraints": SeedEquation(
        "(3.14)",
        printed=(xcd * sf - ycd * cf + bc * fid,
                 xcd * sin(fi + _st) - ycd * cos(fi + _st) - ac * cos(_st) * fid),
        corrected=(xcd * sf - ycd * cf + bc * fid,
                   xcd * sin(fi + _st) - ycd * cos(fi + _st) - ac * cos(_st) * fid),
        note="",
    ),
    "C_xi": SeedEquation("(3.17)", printed=M([[sf, -cf], [sin(fi + _st), -cos(fi + _st)]]),
                         corrected=M([[sf, -cf], [sin(fi + _st), -cos(fi + _st)]]), note=""),
    "C_sigma": SeedEquation(
        "(3.17)",
        printed=M([-bc, ac * cos(_st)]),
        corrected=M([bc, -ac * cos(_st)]),
        note="Printed C_sigma = [-b; a c(theta)], but by (2.20)/(2.22) C_sigma holds the "
             "coefficients of phi' in (3.14), which are +b and -a c(theta) (printed sign typo).  "
             "(3.18) and the middle expression of (3.19), -C_xi^-1 [-b; a c(theta)], use the printed "
             "C_sigma and evaluate to -B; the final B printed in (3.19) is nevertheless right: it "
             "solves C_xi B = -C_sigma with the correct C_sigma (checked with l = a + b).",
    ),
    "B": SeedEquation("(3.19)", printed=_car_B, corrected=_car_B,
                      note=""),  # solves C_xi B = -C_sigma (correct C_sigma) using l = a + b
    "A": SeedEquation(
        "(3.20)",
        printed=M([[1, 0, 0], [0, mc, 0], [0, 0, mc]]),
        corrected=M([[Jc, 0, 0], [0, mc, 0], [0, 0, mc]]),
        note="Printed A[phi,phi] = 1; from T (3.13) it is J = d2T/dphi'^2 (OCR error: 'J' read as "
             "'1'; (3.21) correctly has A1 = ||J||).",
    ),
    "Bdot_T": SeedEquation("(3.22)", printed=_car_Bdot_T, corrected=_car_Bdot_T, note=""),
    "Bdot_in_A_star": SeedEquation(
        "(3.26)",
        printed=M([_l * cf / sin(_st)**2 * _std + _l * _ctg * sf * fid + bc * cf * fid,
                   _l * _ctg * cf * fid - _l / sin(_st)**2 * sf * _std - bc * sf * fid]),
        corrected=_car_Bdot_T.T,
        note="The Bdot column written inside (3.26) has lost the overall minus sign of its first "
             "entry, which (3.22) has: d/dt(l ctg(theta) c(phi) - b s(phi)) = -(l c(phi) theta'/s^2(theta) "
             "+ l ctg(theta) s(phi) phi' + b c(phi) phi') (printed typo).",
    ),
    "A_sigma": SeedEquation("(3.25)", printed=_car_Asig, corrected=_car_Asig, note=""),
    "A_star": SeedEquation(
        "(3.26)",
        printed=-mc * _l**2 * _ctg**2 * _std / sin(_st)**2,
        corrected=-mc * _l**2 * _ctg * _std / sin(_st)**2,
        note="Printed A* = -m l^2 ctg^2(theta) theta'/s^2(theta); B^T A2 Bdot evaluates to "
             "-m l^2 ctg(theta) theta'/s^2(theta) (all b-terms and the phi' terms cancel; the "
             "remaining term is -m (l ctg theta)(l theta'/s^2 theta) (c^2 phi + s^2 phi)).  Printed "
             "typo, repeated in (3.29)/(3.30).  Check: A_sigma' = -2 m l^2 ctg theta theta'/s^2 theta "
             "= 2 A*, as required by d/dt(A_sigma phi') - ... for this one-degree-of-freedom system.",
    ),
    "BtQ_xi": SeedEquation("(3.27)", printed=F * _l * _ctg, corrected=F * _l * _ctg, note=""),
    "equation": SeedEquation(
        "(3.30)",
        printed=_car_Asig * fidd - F * _l * _ctg - mc * _l**2 * _ctg**2 * _std / sin(_st)**2 * fid,
        corrected=_car_Asig * fidd - F * _l * _ctg - mc * _l**2 * _ctg * _std / sin(_st)**2 * fid,
        note="ctg^2(theta) in the last term should be ctg(theta) (follows from the A* typo in (3.26)).",
    ),
    "equation_normalized": SeedEquation(
        "(3.32)",
        printed=fidd - _l * _ctg / ((Jc + mc * bc**2) / mc + _l**2 * _ctg**2)
        * (fid * _std / sin(_st)**2 + F / mc),
        corrected=fidd - _l * _ctg / ((Jc + mc * bc**2) / mc + _l**2 * _ctg**2)
        * (_l * fid * _std / sin(_st)**2 + F / mc),
        note="Printed phi'' = l ctg/(k^2 + l^2 ctg^2) * (phi' theta'/s^2(theta) + f) with "
             "k^2 = (J + m b^2)/m, f = F/m: the first term in the bracket misses the factor l. "
             "Dividing the corrected (3.30) by m(k^2 + l^2 ctg^2) gives l ctg(...)(l phi' theta'/s^2 + f) "
             "(dimension check: l theta' phi'/s^2 is an acceleration like f, theta' phi' is not). "
             "Printed typo (k^2, f substituted here).",
    ),
    "equation_with_drag": SeedEquation(
        "(3.30) + drag of car.toml (not printed)",
        printed=None,
        corrected=_car_Asig * fidd - F * _l * _ctg - mc * _l**2 * _ctg * _std / sin(_st)**2 * fid
        + c_d * (_l**2 * _ctg**2 + bc**2) * fid,
        note="Not in the seed: the example's dissipation c_d/2 (x'^2 + y'^2) adds "
             "B^T(-c_d B phi') = -c_d (l^2 ctg^2 + b^2) phi' to the right-hand side.",
    ),
}

# =====================================================================================
# Case study 4.4.5.1, constant speed drive (Novoselov)  (examples/constant_speed_drive.toml)
# Coordinates phi1, phi2, x.  Seed torques M1, M2 replaced by the example's forces.
# Maggi / Gibbs-Appell kinematic parameters: e1 = phi1', e2 = x'.
# =====================================================================================
I1, I2, I3, m3, ms, mb, lr, R, aa, c, k2, k3, x0 = _p("I1 I2 I3 m3 ms mb l R a c k2 k3 x0")
M0, w0, Mr_, cr = _p("M0 w0 Mr cr")
p1, p2, xx = q("phi1"), q("phi2"), q("x")
p1d, p2d, xxd = qd("phi1"), qd("phi2"), qd("x")
p1dd, p2dd, xxdd = qdd("phi1"), qdd("phi2"), qdd("x")
DRIVE_FORCES = {"M1": M0 * (1 - p1d / w0), "M2": -Mr_ - cr * p2d}
_M1, _M2 = DRIVE_FORCES["M1"], DRIVE_FORCES["M2"]
_K2 = I2 + R**2 / aa**2 * I3 + Rational(1, 2) * mb * (4 * lr**2 - xx**2)   # phi2 inertia
_Kx = m3 + ms + 2 * lr**2 * mb / (4 * lr**2 - xx**2)                      # x inertia
_Ix = I2 + R**2 / aa**2 * I3
DRIVE_DEPENDENT = {
    p2d: (xx - c) / R * p1d,
    p2dd: (xx - c) / R * p1dd + xxd * p1d / R,
}
_M2_indep = _M2.subs(p2d, (xx - c) / R * p1d)
_x_eq = (_Kx * xxdd + 2 * lr**2 * mb * xx * xxd**2 / (4 * lr**2 - xx**2)**2
         + Rational(1, 2) * mb * xx * p2d**2 + (k2 + k3) * (xx - x0))
_ga1_mass = I1 + _Ix * (xx - c)**2 / R**2 + mb * (xx - c)**2 * (4 * lr**2 - xx**2) / (2 * R**2)
_ga1_gyro = _Ix * (xx - c) / R**2 + mb / (2 * R**2) * (xx - c) * (4 * lr**2 - 3 * xx**2 + 2 * c * xx)
_ga2_lhs = (_Kx * xxdd + mb * (Rational(1, 2) * (xx - c)**2 / R**2 * p1d**2
                               + 2 * lr**2 / (4 * lr**2 - xx**2)**2 * xxd**2) * xx)

DRIVE = {
    "T": SeedEquation(
        "(4.314)",
        printed=I1 / 2 * p1d**2 + Rational(1, 2) * _K2 * p2d**2 + Rational(1, 2) * _Kx * xxd**2,
        corrected=I1 / 2 * p1d**2 + Rational(1, 2) * _K2 * p2d**2 + Rational(1, 2) * _Kx * xxd**2,
        note="Only partly legible in the OCR; re-derived: two balls at radius h = sqrt(4l^2-x^2)/2 "
             "with v^2 = h^2 phi2'^2 + l^2 vartheta'^2, x = 2 l cos(vartheta) => l^2 vartheta'^2 = "
             "l^2 x'^2/(4l^2-x^2); pulley phi3' = R/a phi2'.",
    ),
    "V": SeedEquation("(4.315)", printed=(k2 + k3) / 2 * (xx - x0)**2,
                      corrected=(k2 + k3) / 2 * (xx - x0)**2, note=""),
    "constraint": SeedEquation("(4.305)", printed=(xx - c) * p1d - R * p2d,
                               corrected=(xx - c) * p1d - R * p2d, note=""),
    "lagrange": SeedEquation(
        "(4.343)",
        printed=(
            I1 * p1dd - (_M1 + lam(1) * (xx - c)),
            _K2 * p2dd - mb * xx * xxd * p2d - (_M2 - lam(1) * R),
            None,
        ),
        corrected=(
            I1 * p1dd - (_M1 + lam(1) * (xx - c)),
            _K2 * p2dd - mb * xx * xxd * p2d - (_M2 - lam(1) * R),
            _x_eq,
        ),
        note="Equations 1-2 legible and right.  Equation 3 is only partly legible (the middle term "
             "is garbled: '28m ... x5'); re-derived: d/dt(dT/dx') = K_x x'' + 4 l^2 mb x x'^2/(4l^2-x^2)^2, "
             "dT/dx = -mb x phi2'^2/2 + 2 l^2 mb x x'^2/(4l^2-x^2)^2, so the velocity terms are "
             "+2 l^2 mb x x'^2/(4l^2-x^2)^2 + mb x phi2'^2/2.  (The OCR of (4.342) shows "
             "'4 l mb x/(4l^2-x^2)' for the first: exponents lost.)  Multiplier convention "
             "Q + lambda*B with B = (x - c, -R, 0).",
    ),
    "maggi": SeedEquation(
        "(4.345)",
        printed=(
            I1 * p1dd + (xx - c) / R * (_K2 * p2dd - mb * xx * xxd * p2d) - (_M1 + (xx - c) / R * _M2),
            _x_eq,
        ),
        corrected=(
            I1 * p1dd + (xx - c) / R * (_K2 * p2dd - mb * xx * xxd * p2d) - (_M1 + (xx - c) / R * _M2),
            _x_eq,
        ),
        note="Legible and right (C11 = 1, C12 = (x-c)/R, C23 = 1).  Contains the dependent phi2', "
             "phi2''; substitute DRIVE_DEPENDENT to get the reduced form.  (The text after (4.348) "
             "says multiplying the Lagrange equation gives 'an equation identical to (4.341)'; "
             "(4.345) is meant.)",
    ),
    "gibbs_appell": SeedEquation(
        "(4.348)",
        printed=(
            (I1 + _Ix * (xx - c)**2 / R**2 + (xx - c)**2 * (4 * lr**2 - xx**2) / (2 * R**2)) * p1dd
            + _ga1_gyro * p1d * xxd - (_M1 + (xx - c) / R * _M2_indep),
            _ga2_lhs + (k2 - k3) * (xx - x0),
        ),
        corrected=(
            _ga1_mass * p1dd + _ga1_gyro * p1d * xxd - (_M1 + (xx - c) / R * _M2_indep),
            _ga2_lhs + (k2 + k3) * (xx - x0),
        ),
        note="In terms of e1 = phi1', e2 = x' (e1' = phi1'', e2' = x'').  (a) The ball term of the "
             "e1' coefficient is OCR'd as (x-c)^2(4l^2-x^2)/(2R^2) without m_b (also in (4.347)); it "
             "must be m_b (x-c)^2(4l^2-x^2)/(2R^2): dimensionally kg.m^2 is needed, and it is "
             "the phi2'' inertia m_b(4l^2-x^2)/2 times ((x-c)/R)^2 (OCR loss or printed omission, "
             "undecidable).  (b) The right-hand side of the second equation is printed "
             "-(k2 - k3)(x - x0); it is -(k2 + k3)(x - x0) by (4.316)/(4.326) (OCR or printed typo).  "
             "The e1 e2 coefficient (I2 + R^2 I3/a^2)(x-c)/R^2 + m_b (x-c)(4l^2-3x^2+2cx)/(2R^2) is "
             "right: it equals (x-c)/R^2 [K_2 - m_b x (x-c)] from the Maggi form.  M2 is taken at "
             "phi2' = (x-c)/R phi1'.",
    ),
}

# =====================================================================================
# Case study 4.4.5.2, rotary hydropulsator  (examples/hydropulsator.toml)
# Coordinates x1, x2, phi, psi (seed's q1..q4).  H_r = hr*phi', H_d = hd*psi'.
# =====================================================================================
m1, m2, Ir, Id, kh, ch, Ah, hr, hd, Mr, Md = _p("m1 m2 Ir Id k c A hr hd Mr Md")
x1, x2, hph, hps = q("x1"), q("x2"), q("phi"), q("psi")
x1d, x2d, hphd, hpsd = qd("x1"), qd("x2"), qd("phi"), qd("psi")
x1dd, x2dd, hphdd, hpsdd = qdd("x1"), qdd("x2"), qdd("phi"), qdd("psi")
HYDRO_FORCES = {"Hr": hr * hphd, "Hd": hd * hpsd}
_Hr, _Hd = HYDRO_FORCES["Hr"], HYDRO_FORCES["Hd"]
_beta = ch / (2 * Ah) * (1 + cos(2 * hps))
HYDRO_DEPENDENT = {
    x2d: _beta * hphd,
    x2dd: ch / (2 * Ah) * ((1 + cos(2 * hps)) * hphdd - 2 * hphd * hpsd * sin(2 * hps)),
}

HYDRO = {
    "T": SeedEquation("(4.361)",
                      printed=m1 / 2 * x1d**2 + m2 / 2 * x2d**2 + Ir / 2 * hphd**2 + Id / 2 * hpsd**2,
                      corrected=m1 / 2 * x1d**2 + m2 / 2 * x2d**2 + Ir / 2 * hphd**2 + Id / 2 * hpsd**2,
                      note=""),
    "V": SeedEquation("(4.362)", printed=kh / 2 * (x1 - x2)**2, corrected=kh / 2 * (x1 - x2)**2, note=""),
    "constraint": SeedEquation("(4.356)", printed=x2d - _beta * hphd, corrected=x2d - _beta * hphd,
                               note=""),
    "lagrange": SeedEquation(
        "(4.366)-(4.369)",
        printed=(
            m1 * x1dd + kh * x1 - kh * x2,
            m2 * x2dd + kh * x2 - kh * x1 - lam(1),
            Ir * hphdd + _Hr - (Mr - lam(1) * _beta),
            Id * hpsdd + _Hd - Md,
        ),
        corrected=(
            m1 * x1dd + kh * x1 - kh * x2,
            m2 * x2dd + kh * x2 - kh * x1 - lam(1),
            Ir * hphdd + _Hr - (Mr - lam(1) * _beta),
            Id * hpsdd + _Hd - Md,
        ),
        note="Right.  Multiplier convention Q + lambda*B with B = (0, 1, -c/(2A)(1+cos 2psi), 0) "
             "(4.363).  (The count 'l = 5 - b = 3' before (4.357) is an OCR of 's - b'.)",
    ),
    "rotor_reduced": SeedEquation(
        "(4.370)",
        printed=(Ir * hphdd
                 + m2 * (ch / (2 * Ah))**2 * ((1 + cos(2 * hps)) * hphdd - 2 * hphd * hpsd * sin(2 * hps))
                 * (1 + cos(2 * hps))
                 - kh * ch / (2 * Ah) * (x1 - x2) * (1 + cos(2 * hps)) + _Hr - Mr),
        corrected=(Ir * hphdd
                   + m2 * (ch / (2 * Ah))**2 * ((1 + cos(2 * hps)) * hphdd - 2 * hphd * hpsd * sin(2 * hps))
                   * (1 + cos(2 * hps))
                   - kh * ch / (2 * Ah) * (x1 - x2) * (1 + cos(2 * hps)) + _Hr - Mr),
        note="Badly OCR'd but every legible piece agrees with the derivation "
             "(4.368) + c/(2A)(1+cos 2psi)*(4.367) with x2'' from the differentiated constraint; "
             "'m_z(v;;)' is m2 (c/2A)^2.",
    ),
    "reduced_system": SeedEquation(
        "(4.371)-(4.373)",
        printed=(m1 * x1dd + kh * x1 - kh * x2, Id * hpsdd + _Hd - Md, x2 - ch / Ah * hph * cos(hps)),
        corrected=(m1 * x1dd + kh * x1 - kh * x2, Id * hpsdd + _Hd - Md, x2d - ch / Ah * cos(hps)**2 * hphd),
        note="(4.373) is OCR'd as 'x2 = c/A phi cos psi' (dots and the square lost): it is the "
             "constraint (4.356) rewritten with 1 + cos 2psi = 2 cos^2 psi, i.e. "
             "x2' = c/A cos^2(psi) phi' (OCR error).  (4.371), (4.372) repeat (4.366), (4.369).",
    ),
}

# =====================================================================================
# Vibratory exciter, 'On Lagrange's equations of the second kind and Nielsen's equations'
# (examples/vibratory_exciter.toml).  q1 = xC, q2 = yC, q3 = varphi, q4 = theta.
# =====================================================================================
Me, me_, ee, I1e, I2e = _p("M m e I1 I2")
xC, yC, vf, te = q("xC"), q("yC"), q("varphi"), q("theta")
xCd, yCd, vfd, ted = qd("xC"), qd("yC"), qd("varphi"), qd("theta")
xCdd, yCdd, vfdd, tedd = qdd("xC"), qdd("yC"), qdd("varphi"), qdd("theta")
c1, s1 = cos(vf - te), sin(vf - te)
cv, sv = cos(vf), sin(vf)
me = me_ * ee
_exc_T = (Me / 2 * xCd**2 + Me / 2 * yCd**2 + I1e / 2 * vfd**2 - I2e * vfd * ted + I2e / 2 * ted**2
          + me * xCd * vfd * c1 - me * xCd * vfd * cv + me * yCd * vfd * s1 - me * yCd * vfd * sv
          - me * xCd * ted * c1 - me * yCd * ted * s1)
_exc_Tdot = (Me * xCd * xCdd + Me * yCd * yCdd + I1e * vfd * vfdd - I2e * (vfdd * ted + vfd * tedd)
             + I2e * ted * tedd
             + me * (xCdd * vfd * c1 + xCd * vfdd * c1 - xCd * vfd * s1 * (vfd - ted))
             - me * (xCdd * vfd * cv + xCd * vfdd * cv - xCd * vfd**2 * sv)
             + me * (yCdd * vfd * s1 + yCd * vfdd * s1 + yCd * vfd * c1 * (vfd - ted))
             - me * (yCdd * vfd * sv + yCd * vfdd * sv + yCd * vfd**2 * cv)
             - me * (xCdd * ted * c1 + xCd * tedd * c1 - xCd * ted * s1 * (vfd - ted))
             - me * (yCdd * ted * s1 + yCd * tedd * s1 + yCd * ted * c1 * (vfd - ted)))
_n1 = Me * xCdd + me * (vfdd * c1 - vfd * s1 * (vfd - ted) - vfdd * cv + vfd**2 * sv
                        - tedd * c1 + ted * s1 * (vfd - ted))
_n2 = Me * yCdd + me * (vfdd * s1 + vfd * c1 * (vfd - ted) - vfdd * sv - vfd**2 * cv
                        - tedd * s1 - ted * c1 * (vfd - ted))
_n3 = I1e * vfdd - I2e * tedd + me * (xCdd * c1 - 2 * xCd * vfd * s1 + xCd * ted * s1 - xCdd * cv
                                     + 2 * xCd * vfd * sv + yCdd * s1 + 2 * yCd * vfd * c1
                                     - yCd * ted * c1 - yCdd * sv - 2 * yCd * vfd * cv
                                     + xCd * ted * s1 - yCd * ted * c1)
_n4_tail = (xCd * vfd * s1 - yCd * vfd * c1 - xCdd * c1 + xCd * vfd * s1 - 2 * xCd * ted * s1
            - yCd * vfd * c1 + 2 * yCd * ted * c1)
kx, ky, Mdx, cdx, kt, ct, theta_ref = _p("kx ky Md cd kt ct theta_ref")
_exc_Q = {"xC": -kx * xC, "yC": -ky * yC, "varphi": Mdx - cdx * vfd, "theta": -kt * (te - theta_ref) - ct * ted}
_exc_dTdq = {"xC": 0, "yC": 0,
             "varphi": me * (-xCd * vfd * s1 + xCd * vfd * sv + yCd * vfd * c1 - yCd * vfd * cv
                             + xCd * ted * s1 - yCd * ted * c1),
             "theta": me * (xCd * vfd * s1 - yCd * vfd * c1 - xCd * ted * s1 + yCd * ted * c1)}
_nielsen = {"xC": _n1, "yC": _n2, "varphi": _n3,
            "theta": -I2e * vfdd + I2e * tedd + me * (_n4_tail - yCdd * s1)}

EXCITER = {
    "T": SeedEquation("T (11 terms)", printed=_exc_T, corrected=_exc_T, note=""),
    "dT_dxCdot": SeedEquation(
        "dT/dq1'",
        printed=Me * xCd + me * (I1e * vfd * c1 - I1e * vfd * cv - I1e * ted * c1),
        corrected=Me * xCd + me * (vfd * c1 - vfd * cv - ted * c1),
        note="Printed m e [I_1 phi' cos(phi-theta) - I_1 phi' cos phi - I_1 theta' cos(phi-theta)]: the "
             "author writes d(xC')/d(xC') = 1 explicitly ('1 *' as in the Nielsen part) and the OCR "
             "turned '1' into 'I_1' (OCR error); the factor is 1.",
    ),
    "dT_dthetadot": SeedEquation(
        "dT/dq4'",
        printed=I2e * vfd - I2e * ted - me * (xCd * I1e * c1 + yCd * I1e * s1),
        corrected=-I2e * vfd + I2e * ted - me * (xCd * c1 + yCd * s1),
        note="Two discrepancies: 'I_1' for the explicit factor 1 (OCR error, as in dT/dxC'), and the "
             "I2 terms are printed as I2 phi' - I2 theta' while d/dtheta' of (-I2 phi' theta' + "
             "I2/2 theta'^2) is -I2 phi' + I2 theta' (printed sign typo; the Nielsen result "
             "dTdot/dtheta' = -I2 phi'' + I2 theta'' + ... in the same paper has the right sign).",
    ),
    "ddt_dT_dxCdot": SeedEquation(
        "d/dt(dT/dq1')",
        printed=Me * xCdd + me * (vfdd * c1 - vfd * s1 * (vfd - ted) - tedd * c1 + ted * s1 * (vfd - ted)),
        corrected=_n1,
        note="The print drops the time derivative of -phi' cos(phi): the terms - phi'' cos(phi) + "
             "phi'^2 sin(phi) are missing inside m e [...] (printed omission; its own dT/dxC' contains "
             "-phi' cos phi, and the Nielsen dTdot/dxC' in the same paper contains both terms).",
    ),
    "ddt_dT_dthetadot": SeedEquation(
        "d/dt(dT/dq4')",
        printed=I2e * vfdd - I2e * tedd - me * (xCdd * c1 - xCd * s1 * (vfd - ted) + yCdd * s1
                                                + yCd * c1 * (vfd - ted)),
        corrected=-I2e * vfdd + I2e * tedd - me * (xCdd * c1 - xCd * s1 * (vfd - ted) + yCdd * s1
                                                   + yCd * c1 * (vfd - ted)),
        note="Sign of the I2 terms inherited from the printed dT/dtheta' (printed typo); the m e "
             "bracket is right.",
    ),
    "Tdot": SeedEquation("dT/dt", printed=_exc_Tdot, corrected=_exc_Tdot, note=""),
    "nielsen_dTdot_dqdot": SeedEquation(
        "dTdot/dq'",
        printed=(_n1, _n2, _n3, -I2e * vfdd + I2e * tedd + me * (_n4_tail - yCd * s1)),
        corrected=(_n1, _n2, _n3, _nielsen["theta"]),
        note="dTdot/dq1'..dq3' are right.  In dTdot/dtheta' the print has '- yC' * 1 * sin(phi-theta)' "
             "where d/dtheta' of -m e yC'' theta' sin(phi-theta) (in Tdot) gives -yC'' sin(phi-theta): one "
             "dot lost (OCR error; the parallel -xC'' cos(phi-theta) term has both dots).",
    ),
    # Not printed: the full equations of the example, forces of vibratory_exciter.toml
    "equations": SeedEquation(
        "(1) and (2) with the example's forces (not printed)",
        printed=None,
        corrected=tuple(_nielsen[k] - 2 * _exc_dTdq[k] - _exc_Q[k] for k in ("xC", "yC", "varphi", "theta")),
        note="Lagrange (1) d/dt(dT/dq') - dT/dq = Q and Nielsen (2) dTdot/dq' - 2 dT/dq = Q are the same "
             "equations because dTdot/dq' = d/dt(dT/dq') + dT/dq.  Q = -dV/dq + forces "
             "(springs kx, ky; Md - cd*varphi'; -kt*(theta - theta_ref) - ct*theta').",
    ),
}

EXCITER_DIFFERENTIATION_COUNTS = {
    # as counted in the seed for the 11-term T (s = 4)
    "lagrange": {"partial": 18, "time": 50, "total": 68},
    "nielsen": {"time": 38, "partial": 38, "total": 76},
}

# =====================================================================================
# Huston, Dynamics of Mechanical Systems, Example 12.3.1: simple pendulum
# (examples/simple_pendulum.toml) and its Cartesian form (examples/cartesian_pendulum.toml)
# =====================================================================================
mp, lp, gp = _p("m l g")
pth, pthd, pthdd = q("theta"), qd("theta"), qdd("theta")
PENDULUM = {
    "K": SeedEquation("(12.3.7)", printed=Rational(1, 2) * mp * lp**2 * pthd**2,
                      corrected=Rational(1, 2) * mp * lp**2 * pthd**2,
                      note=""),  # OCR 'K = 12 ml theta 2' = 1/2 m l^2 theta'^2
    "P": SeedEquation("potential (not printed in the seed excerpt)", printed=None,
                      corrected=mp * gp * lp * (1 - cos(pth)), note="Not printed in the excerpt."),
    "equation": SeedEquation(
        "(12.3.3)/(12.3.5) applied (not printed in the seed excerpt)",
        printed=None,
        corrected=mp * lp**2 * pthdd + mp * gp * lp * sin(pth),
        note="(12.3.4) is OCR'd with 'F_1 = -dP/dq_r' for F_r (OCR error, no effect).",
    ),
}
px, py = q("x"), q("y")
pxd, pyd, pxdd, pydd = qd("x"), qd("y"), qdd("x"), qdd("y")
CARTESIAN_PENDULUM = {
    "lagrange": SeedEquation(
        "Section 4.2 form (not printed for this system)",
        printed=None,
        corrected=(mp * pxdd - lam(1) * 2 * px, mp * pydd + mp * gp - lam(1) * 2 * py),
        note="Multiplier convention Q + lambda*dphi/dq with phi = x^2 + y^2 - l^2.",
    ),
    "eliminated": SeedEquation(
        "derived (not printed)",
        printed=None,
        corrected=(mp * (px * pydd - py * pxdd) + mp * gp * px,
                   px * pxdd + py * pydd + pxd**2 + pyd**2),
        note="Moment about the pivot (multiplier eliminated) and the twice-differentiated constraint; "
             "with x = l sin(theta), y = -l cos(theta) the first is l * (m l^2 theta'' + m g l sin theta)/l.",
    ),
}

TEXT_NOTES = {
    "rolling_sphere": (
        "Text says theta, psi, phi are chosen independent, but all matrices use the order "
        "theta, phi, psi (then x, y).",
    ),
    "car": (
        "(3.24) reads 'Q_sigma(1x1) = O, G_xi(1x2) = O': G_sigma (1x1) and G_xi (2x1) are meant "
        "(G = 0 because A is constant); the Q_sigma label duplicates (3.23).",
        "Text says the constraints are 'of the form (2.16)'; (2.18) is meant.",
    ),
    "constant_speed_drive": (
        "'l = 5 - b = 2' (before (4.322)/(4.324)) is the OCR of 's - b' with s = 3, b = 1.",
        "After eliminating lambda the text says the result is 'identical to (4.341)'; (4.345) is meant.",
    ),
    "hydropulsator": (
        "'l = 5 - b = 3' before (4.357) is the OCR of 's - b' with s = 4, b = 1.",
        "The text says further rotation of the disposer reverses the flow, but (4.351)/(4.356) use "
        "1 + cos(2 psi) = 2 cos^2(psi) >= 0, which never reverses: the platform moves in strokes "
        "in one direction (the example follows (4.356) as printed).",
    ),
    "vibratory_exciter": (
        "The seed's claim that Nielsen needs 2s + 1 instead of 3s differentiations refers to "
        "the number of derivative 'headers'; the paper's own counts are 68 (Lagrange) vs 76 (Nielsen).",
    ),
}

ALL = {
    "rolling_sphere": SPHERE,
    "car": CAR,
    "constant_speed_drive": DRIVE,
    "hydropulsator": HYDRO,
    "vibratory_exciter": EXCITER,
    "simple_pendulum": PENDULUM,
    "cartesian_pendulum": CARTESIAN_PENDULUM,
}
