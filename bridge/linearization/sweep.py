"""``--sweep NAME=START:STOP:NUM``: the linear model along a parameter or a start value, and the stable range.

Each value is applied with :meth:`System.with_values` (so a start velocity keeps the state on the constraints) and
linearized with the same compiled Jacobians. The linear state is the same at every point: a coordinate or speed
is dropped only where it is cyclic (conserved) at every point of the sweep.

Stability at a value s is classified by ``g(s) = max Re lambda(s)`` with the tolerance ``tol = 1e-9 max(1, |lambda|)``:
*unstable* (g > tol), *marginal* (``|g| <= tol``: a neutral mode, e.g. the lean pair of a disk above its critical spin),
*stable* (g < -tol). Between neighbouring values of different class the boundary is found by Brent's method on
``g`` (a transversal crossing), ``g - tol`` or ``g + tol`` (into or out of marginal), to ``xtol = 1e-13 |s|``; for a
pair leaving the imaginary axis like ``sqrt(s_c - s)`` the offset of ``g = tol`` from ``s_c`` is of order tol^2.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.optimize

from ..derivation.dense import single_threaded_blas
from ..errors import BridgeError, Problem
from .model import LinearModel
from .outputs import TOL, sorted_modes
from .point import LinearizationError, OperatingPoint, operating_point

MAX_POINTS = 100_000

_SPEC = re.compile(r"\A\s*(?P<name>[^=]+?)\s*=\s*(?P<range>.+)\Z")


@dataclass(frozen=True)
class SweepSpec:
    """A linear sweep of one name (coordinate, velocity, parameter or input) over ``num`` values."""

    name: str
    start: float
    stop: float
    num: int

    @property
    def values(self) -> list[float]:
        """The swept values, ``linspace(start, stop, num)``."""
        return [float(x) for x in np.linspace(self.start, self.stop, self.num)]


def parse_sweep(text: str, system) -> SweepSpec:
    """Parse ``NAME=START:STOP:NUM``, NAME a parameter, a coordinate (start position), ``der(q)`` or an input."""
    from ..model.overrides import override_names

    m = _SPEC.match(text or "")
    hint = 'e.g. --sweep "der(theta_R)=0:-33.3:101" (NAME=START:STOP:NUM)'
    if not m:
        raise LinearizationError(Problem("--sweep", f"expected NAME=START:STOP:NUM, got {text!r}", hint))
    name = re.sub(r"der\(\s*(\w+)\s*\)", r"der(\1)", m["name"])
    names = override_names(system)
    if name not in names:
        import difflib

        close = difflib.get_close_matches(name, names, 3)
        raise LinearizationError(Problem(
            "--sweep", f"{name!r} is not a parameter, coordinate, der(coordinate) or input of {system.name}",
            (f"did you mean {', '.join(close)}? " if close else "") + f"names: {', '.join(names[:30])}"
            + (", ..." if len(names) > 30 else ""), system.source))
    parts = m["range"].split(":")
    if len(parts) != 3:
        raise LinearizationError(Problem("--sweep", f"{name}: expected START:STOP:NUM, got {m['range']!r}", hint))
    try:
        start, stop = float(parts[0]), float(parts[1])
    except ValueError:
        raise LinearizationError(Problem("--sweep", f"{name}: START and STOP must be numbers, got "
                                         f"{parts[0]!r} and {parts[1]!r}", hint)) from None
    try:
        num = int(parts[2])
    except ValueError:
        raise LinearizationError(Problem("--sweep", f"{name}: NUM must be a whole number of points, got "
                                         f"{parts[2]!r}", hint)) from None
    if not (math.isfinite(start) and math.isfinite(stop)):
        raise LinearizationError(Problem("--sweep", f"{name}: START and STOP must be finite numbers", hint))
    if not 2 <= num <= MAX_POINTS or start == stop:
        raise LinearizationError(Problem("--sweep", f"{name}: need 2 to {MAX_POINTS} points over a range of "
                                         f"nonzero length, got {num} points from {start:g} to {stop:g}", hint))
    return SweepSpec(name, start, stop, num)


class Sweep:
    """The linear models along one swept name (see the module docstring)."""

    def __init__(self, linearizer, system, spec: SweepSpec, given=None, cyclic: Sequence[str] | None = None,
                 keep_conserved: bool = False):
        self.lin, self.system, self.spec = linearizer, system, spec
        self.given = dict(given or {})
        self.cyclic, self.keep_conserved = cyclic, keep_conserved
        self.drop: tuple[list[str] | None, list[str] | None] = (cyclic, [] if keep_conserved else None)
        self._base: OperatingPoint | None = None
        self._nullity = 0

    def _point(self, value: float):
        """Return the consistent point with the swept value.

        Projected by the linearizer (fast) where it can keep the value, else by :meth:`System.with_values`.
        """
        name, system = self.spec.name, self.system
        if self._base is None:
            self._base = operating_point(system, self.given)
        base = self._base
        q, qd, params, inputs = base.q.copy(), base.qd.copy(), base.params.copy(), base.inputs.copy()
        cn = [c.name for c in system.coordinates]
        index = None
        if name in cn:
            index = cn.index(name)
            q[index] = value
        elif name.startswith("der(") and name[4:-1] in cn:
            index = system.n + cn.index(name[4:-1])
            qd[index - system.n] = value
        elif name in (pn := [p.name for p in system.parameters]):
            params[pn.index(name)] = value
        else:
            inputs[[w.name for w in system.inputs].index(name)] = value
        pt = self.lin.project(OperatingPoint(base.t, q, qd, params, inputs), index)
        if pt is None:
            pt = operating_point(system.with_values({name: value}), {**self.given, name: value})
        return pt

    def model_at(self, value: float, cyclic=None, conserved=None) -> LinearModel:
        """Return the linear model at the consistent point with the swept value ``value``.

        Parameters
        ----------
        value : float
            The swept name's value.
        cyclic, conserved : optional
            States and conserved combinations to drop, as :meth:`Linearizer.at` takes them.

        Returns
        -------
        LinearModel
            The model there.

        Raises
        ------
        LinearizationError
            When the model cannot be formed there (e.g. a singular split), naming the value.
        """
        try:
            pt = self._point(value)
            return self.lin.at(pt, cyclic=cyclic, conserved=conserved, keep_conserved=self.keep_conserved)
        except BridgeError as exc:
            hint = "sweep a range that avoids this value" if "singular" in str(exc) else ""
            raise LinearizationError(Problem("--sweep", f"at {self.spec.name} = {value:.12g}: {exc}", hint)) from exc

    def run(self) -> tuple[list[float], list[LinearModel]]:
        """Return every point of the sweep with one common linear state (BLAS on one thread: tiny solves)."""
        with single_threaded_blas():
            return self._run()

    def _run(self) -> tuple[list[float], list[LinearModel]]:
        values = self.spec.values
        first: list[LinearModel] = []
        singular = []
        for v in values:
            try:
                first.append(self.model_at(v, self.cyclic, None if not self.keep_conserved else []))
            except LinearizationError as exc:
                if "singular" not in str(exc):
                    raise
                singular.append((v, exc))
        if singular:
            where = ", ".join(f"{v:.12g}" for v, _ in singular[:6]) + (", ..." if len(singular) > 6 else "")
            raise LinearizationError(Problem(
                "--sweep", f"the sweep of {self.spec.name} crosses a singular point at {self.spec.name} = {where} "
                f"({len(singular)} of {len(values)} values): {singular[0][1]}",
                "sweep a range that avoids these values, or choose another split ([method] independent)",
                self.system.source))
        self._split_sign_changes(values)
        dropped = [d for d in first[0].dropped if all(d in m.dropped for m in first)]
        conserved = [c for c in first[0].conserved if all(c in m.conserved for m in first)]
        self.drop = (dropped if self.cyclic is None else list(self.cyclic), conserved)
        models = [m if (list(m.dropped), list(m.conserved)) == (self.drop[0], conserved)
                  else self.model_at(v, *self.drop) for v, m in zip(values, first)]
        return values, models

    def _split_sign_changes(self, values: list[float]) -> None:
        """Locate a split that turns singular between two swept values and report it.

        A sign change of its determinant is located by Brent's method.
        """
        det = [self.lin.split_determinant(self._point(v)) for v in values]
        where = []
        for k in range(len(values) - 1):
            if det[k] * det[k + 1] < 0:
                root = scipy.optimize.brentq(lambda s: self.lin.split_determinant(self._point(s)), values[k],
                                             values[k + 1], xtol=1e-13 * max(1.0, abs(values[k])))
                where.append(f"{root:.12g}")
        if where:
            dep = [c.name for i, c in enumerate(self.system.coordinates) if i not in (self.lin.independent or ())]
            raise LinearizationError(Problem(
                "--sweep", f"the sweep of {self.spec.name} crosses a singular split at {self.spec.name} = "
                f"{', '.join(where)}: the constraints cannot be solved there for the dependent coordinates or "
                f"velocities ({', '.join(dep)})", "sweep a range that avoids these values, or choose another split "
                "([method] independent or --independent)", self.system.source))

    def g(self, value: float) -> float:
        """Return the stability margin at ``value``: the largest real part of the kept eigenvalues of A.

        Parameters
        ----------
        value : float
            The swept name's value.

        Returns
        -------
        float
            Negative where asymptotically stable; its sign changes locate the crossings.
        """
        return _largest_real(self.model_at(value, *self.drop).A, self._nullity)

    def stability(self, values: list[float], models: list[LinearModel]) -> dict:
        """Return the stable and marginal ranges, and the crossings between classes found by root finding."""
        scale = max([1.0] + [float(np.abs(sorted_modes(m)[0]).max(initial=0.0)) for m in models])
        tol = TOL * scale
        self._nullity = min(_nullity(m.A) for m in models)
        g = [_largest_real(m.A, self._nullity) for m in models]

        def status(x: float) -> str:
            return "unstable" if x > tol else ("stable" if x < -tol else "marginal")

        st = [status(x) for x in g]
        crossings = []
        for k in range(len(values) - 1):
            a, b = st[k], st[k + 1]
            if a == b:
                continue
            shift = 0.0 if {a, b} == {"unstable", "stable"} else (tol if "unstable" in (a, b) else -tol)
            lo, hi = values[k], values[k + 1]
            xtol = 1e-13 * max(1.0, abs(lo), abs(hi))
            root = scipy.optimize.brentq(lambda s, c=shift: self.g(s) - c, lo, hi, xtol=xtol,
                                         rtol=4 * np.finfo(float).eps)
            w, _ = sorted_modes(self.model_at(root, *self.drop))
            top = w[np.argmax(w.real)] if len(w) else 0j
            kind = "oscillatory (complex pair)" if abs(top.imag) > tol else "real (divergence)"
            crossings.append({"value": float(root), "kind": kind, "from": a, "to": b,
                              "eigenvalue": [float(top.real), float(top.imag)]})
        edges = [values[0]] + [c["value"] for c in crossings] + [values[-1]]
        seg_status = [st[0]] + [c["to"] for c in crossings]
        ranges = {"stable": [], "marginal": [], "unstable": []}
        for (a, b), s in zip(itertools.pairwise(edges), seg_status):
            ranges[s].append(sorted([float(a), float(b)]))
        return {"name": self.spec.name, "tolerance": tol, "crossings": crossings, **ranges}


def _nullity(A: np.ndarray) -> int:
    """Return the number of singular values of A below 1e-10 of the largest.

    Left null vectors w, ``w^T A = 0``, are conserved linear combinations of the state (e.g. the disk's ``psi' -
    (I_a/I_d) W theta``).
    """
    if A.size == 0:
        return 0
    sv = np.linalg.svd(A, compute_uv=False)
    return int(np.sum(sv <= 1e-10 * max(sv[0], 1e-300)))


def _largest_real(A: np.ndarray, k: int) -> float:
    """Return the largest real part of the eigenvalues of A without the k zero ones of its conserved combinations.

    With V an orthonormal basis of range(A) (``w^T A = 0`` for the left null vectors), A is block triangular in
    ``[V, w]`` and ``eig(A) = eig(V^T A V) + {0} * k``. Deflating them keeps the root finding precise where a pair
    meets the structural zero (a triple root, whose computed eigenvalues scatter by eps^(1/3)).
    """
    if A.size == 0:
        return -math.inf
    if k:
        U = np.linalg.svd(A)[0]
        V = U[:, : A.shape[0] - k]
        A = V.T @ A @ V
        if A.size == 0:
            return 0.0
    return float(np.linalg.eigvals(A).real.max())


def stability_text(stab: dict) -> str:
    """Return the stability summary of a sweep as text.

    Parameters
    ----------
    stab : dict
        The sweep's stability record: ``name``, ``crossings``, ``stable`` and ``marginal`` ranges.

    Returns
    -------
    str
        One line per crossing and per stable or marginally stable range.
    """
    name = stab["name"]
    lines = []
    for c in stab["crossings"]:
        lines.append(f"  {name} = {c['value']:.12g}: {c['kind']} eigenvalue crosses, {c['from']} -> {c['to']}")
    for label in ("stable", "marginal"):
        for a, b in stab[label]:
            what = "asymptotically stable" if label == "stable" else "marginally stable (a neutral mode)"
            lines.append(f"  {what} for {a:.12g} <= {name} <= {b:.12g}")
    if not stab["stable"] and not stab["marginal"]:
        lines.append("  unstable over the whole sweep")
    return "stability along the sweep:\n" + "\n".join(lines) + "\n"
