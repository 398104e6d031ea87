"""Rotation kinematics of the ``[frames]`` table: chained elementary rotations or given direction cosines.

A frame F is rotated from its parent P by direction cosines ``C`` (``v_P = C v_F``); then

* ``R_F = R_P C``  (``v_N = R_F v_F``, N the inertial frame with ``R_N = 1``),
* about a unit axis e (x, y or z, the same in P and F) by an angle theta(q, t): ``C = rot_e(theta)`` and
  ``w_F = C^T w_P + theta' e`` (F components), ``w_F = w_P + theta' R_P e`` (N components),
* for given direction cosines: ``skew(w_rel) = C^T C'`` (F components), ``w_F = C^T w_P + w_rel``.

Each angular velocity is kept in both bases: N components are free of the frame's own angle (a wheel's spin
angle does not appear in its axle's direction), F components are what the inertia tensor multiplies.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

Vector = tuple[sp.Expr, sp.Expr, sp.Expr]
AXES = {"x": 0, "y": 1, "z": 2}
ZERO: Vector = (sp.Integer(0), sp.Integer(0), sp.Integer(0))


@dataclass(frozen=True)
class Frame:
    """A frame: ``rotation`` R (``v_N = R v_F``), angular velocity relative to N in F and in N components."""

    name: str
    rotation: sp.ImmutableMatrix
    omega: Vector       # F components
    omega_n: Vector     # N components

    def axis(self, letter: str) -> Vector:
        """Return the unit vector F.x/.y/.z in N components."""
        return tuple(self.rotation[:, AXES[letter]])


INERTIAL = Frame("N", sp.ImmutableMatrix.eye(3), ZERO, ZERO)


def elementary(axis: str, angle: sp.Expr) -> sp.Matrix:
    """Return the direction cosines ``C`` (``v_parent = C v_child``) of a rotation by ``angle`` about ``axis``.

    A constant angle whose cosine and sine sympy leaves unevaluated (``cos(3/100)``) gets them as floats: products
    of such terms along a chain of frames would otherwise grow with every frame.
    """
    c, s = sp.cos(angle), sp.sin(angle)
    if not angle.free_symbols and (c.has(sp.cos, sp.sin) or s.has(sp.cos, sp.sin)):
        c, s = sp.Float(c.evalf(17)), sp.Float(s.evalf(17))
    if axis == "x":
        return sp.Matrix([[1, 0, 0], [0, c, -s], [0, s, c]])
    if axis == "y":
        return sp.Matrix([[c, 0, s], [0, 1, 0], [-s, 0, c]])
    return sp.Matrix([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rotate(parent: Frame, name: str, axis: str, angle: sp.Expr, rate: sp.Expr) -> Frame:
    """Return ``parent`` rotated about its ``axis`` by ``angle`` whose time derivative is ``rate``."""
    C = elementary(axis, angle)
    k = AXES[axis]
    e = [sp.Integer(1) if i == k else sp.Integer(0) for i in range(3)]
    wp = sp.Matrix(parent.omega)
    w = C.T * wp + rate * sp.Matrix(e)
    R = sp.Matrix(parent.rotation) * C
    w_n = tuple(parent.omega_n[i] + rate * parent.rotation[i, k] for i in range(3))
    return Frame(name, sp.ImmutableMatrix(R), tuple(w), w_n)


def oriented(parent: Frame, name: str, C: sp.Matrix, der: Callable[[sp.Expr], sp.Expr]) -> Frame:
    """Return ``parent`` turned by given direction cosines ``C`` (``v_parent = C v_child``)."""
    C = sp.Matrix(C)
    Cd = C.applyfunc(der)
    W = C.T * Cd
    w_rel = sp.Matrix([W[2, 1], W[0, 2], W[1, 0]])
    R = sp.Matrix(parent.rotation) * C
    w = C.T * sp.Matrix(parent.omega) + w_rel
    w_n = sp.Matrix(parent.omega_n) + R * w_rel
    return Frame(name, sp.ImmutableMatrix(R), tuple(w), tuple(w_n))


#: operations of one direction-cosine entry above which :func:`orthonormal_identically` does not try
MAX_PROOF_NODES = 300


def orthonormal_identically(C: sp.Matrix) -> bool:
    """Return whether ``C^T C = 1`` holds for every value of its symbols, decided cheaply.

    Each entry of ``C^T C - 1`` reduces to 0 by :func:`bridge.model.trig.reduce_trig` (angle sums expanded, ``sin^2 = 1
    - cos^2``). False when it does not or the entries exceed :data:`MAX_PROOF_NODES` operations (not proven; it may
    still hold).
    """
    from .expressions import tree_size
    from .trig import reduce_trig

    if any(tree_size(e, MAX_PROOF_NODES) > MAX_PROOF_NODES for e in C):
        return False
    E = sp.Matrix(C).T * sp.Matrix(C) - sp.eye(3)
    for i in range(3):
        for j in range(i, 3):
            if reduce_trig(E[i, j], 20 * MAX_PROOF_NODES, angle_sums=True) != 0:
                return False
    return True
