"""Structural zeros: coefficients that are identically zero are replaced by ``0`` (a derivation post-pass).

A derivation may leave entries that are zero for every state and every parameter value but not in
sympy's automatic form, e.g. ``a cos(psi) sin(theta) cos(theta) (1 - cos(phi)^2 - sin(phi)^2)`` expanded.
Printed as they are, they make a Modelica tool's structural analysis see an incidence that is not
there (Rumoca: a structurally singular system). :func:`reduce_structural_zeros` returns the equations
with every such entry of ``K``, the acceleration map, ``M``, ``F``, the constraint Jacobian ``A``, the
velocity constraints and the auxiliary blocks ``L Z = R`` printed as 0, so that every exporter (Modelica,
C) receives the zeros; nothing else changes.

Policy (sound: an entry becomes 0 only when it is proved zero):

1. *numeric probe*: every entry ``e`` is evaluated at :data:`PROBES` random points (states, time,
   inputs and placeholders uniform in [-pi, pi], parameters uniform in [0.5, 2], independent of the
   file's values, so that a zero that holds for one parameter value only is kept). ``e`` is a candidate
   only if ``|e| <= RTOL * maj(e)`` at every probe where it is finite, with ``maj(e)`` the majorant (every
   sum replaced by the sum of absolute values: a bound of the round-off scale); at least two finite probes.
2. *symbolic proof*, for candidates only: expand (with trig sums), take the numerator over a common
   denominator, rewrite ``sin(x)^2 = 1 - cos(x)^2`` and expand again; the entry becomes 0 only when this
   gives exactly 0. Each proof has a wall-clock budget (:data:`ENTRY_SECONDS`) and the pass a total one
   (:data:`TOTAL_SECONDS`); an entry whose proof runs out of time is kept as it is. (The per-entry limit is a
   ``SIGALRM`` deadline, enforced in the main thread only; elsewhere only the total is checked between entries.)

The placeholders of the reduced methods are probed as free symbols: a zero that needs the split's
relation is missed (kept), never invented.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from .deadline import DerivationTimeout, deadline
from .eom import EquationsOfMotion

PROBES = 4
RTOL = 1e-9
ENTRY_SECONDS = 0.5
TOTAL_SECONDS = 5.0


@dataclass(frozen=True)
class ZeroReport:
    """What the pass did: entries looked at, numeric candidates, entries proved zero, time spent."""

    entries: int = 0
    candidates: int = 0
    zeros: int = 0
    timed_out: int = 0
    seconds: float = 0.0
    where: tuple[str, ...] = ()  # e.g. "mass_matrix[3, 5]"


_FUNCTIONS = {sp.sin: np.sin, sp.cos: np.cos, sp.tan: np.tan, sp.exp: np.exp, sp.log: np.log, sp.asin: np.arcsin,
              sp.acos: np.arccos, sp.atan: np.arctan, sp.sinh: np.sinh, sp.cosh: np.cosh, sp.tanh: np.tanh,
              sp.Abs: np.abs, sp.sign: np.sign, sp.atan2: np.arctan2}


class _Prober:
    """Value and round-off majorant of expressions at K points at once, memoized on the expression DAG.

    ``maj(a + b) = maj(a) + maj(b)``, ``maj(a b) = maj(a) maj(b)``, ``maj(a^n) = maj(a)^n`` (n a positive
    integer), ``|value|`` elsewhere: floating-point evaluation errs by a few ulps of ``maj``. Symbols get random
    values on first sight; an unsupported node evaluates to nan (inconclusive: the entry is kept).
    """

    def __init__(self, rng: np.random.Generator, parameters: set[sp.Symbol], k: int = PROBES):
        self.rng, self.parameters, self.k = rng, parameters, k
        self.memo: dict[sp.Basic, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, e: sp.Basic) -> tuple[np.ndarray, np.ndarray]:
        found = self.memo.get(e)
        if found is None:
            found = self.memo[e] = self._eval(e)
        return found

    def _eval(self, e: sp.Basic) -> tuple[np.ndarray, np.ndarray]:
        if e.is_Symbol:
            v = self.rng.uniform(0.5, 2.0, self.k) if e in self.parameters else self.rng.uniform(-np.pi, np.pi, self.k)
            return v, np.abs(v)
        if e.is_Number or e.is_NumberSymbol:
            try:
                v = np.full(self.k, float(e))
            except (TypeError, ValueError):  # zoo, nan: inconclusive
                v = np.full(self.k, np.nan)
            return v, np.abs(v)
        args = [self(a) for a in e.args]
        if e.is_Add:
            return sum((a[0] for a in args), np.zeros(self.k)), sum((a[1] for a in args), np.zeros(self.k))
        if e.is_Mul:
            return np.prod([a[0] for a in args], axis=0), np.prod([a[1] for a in args], axis=0)
        if e.is_Pow:
            (b, mb), (x, _) = args
            v = b ** x  # nan where not real (inconclusive)
            if e.exp.is_Integer and e.exp > 0:
                return v, mb ** int(e.exp)
            return v, np.abs(v)
        f = _FUNCTIONS.get(type(e))
        v = f(*[a[0] for a in args]) if f is not None else np.full(self.k, np.nan)
        return v, np.abs(v)


def _sin_squares_out(expr: sp.Expr) -> sp.Expr:
    """Rewrite ``sin(x)^k`` with ``k >= 2`` as ``sin(x)^(k mod 2) (1 - cos(x)^2)^(k div 2)``."""
    rules = {}
    for p in expr.atoms(sp.Pow):
        if isinstance(p.base, sp.sin) and p.exp.is_Integer and p.exp >= 2:
            k = int(p.exp)
            rules[p] = sp.sin(p.base.args[0]) ** (k % 2) * (1 - sp.cos(p.base.args[0]) ** 2) ** (k // 2)
    return expr.xreplace(rules) if rules else expr


def is_zero_symbolic(expr: sp.Expr) -> bool:
    """Prove cheaply that ``expr`` is identically zero (False: not proved, the entry may still be zero)."""
    e = sp.expand(expr, trig=True)
    if e == 0:
        return True
    num = sp.numer(sp.together(e))
    num = sp.expand(_sin_squares_out(sp.expand(num)))
    return num == 0


def _probe(exprs: list[sp.Expr], rng: np.random.Generator, parameters: set[sp.Symbol]) -> np.ndarray:
    """Return a mask of the entries that vanish (to round-off) at every finite probe (two finite probes at least)."""
    prober = _Prober(rng, parameters)
    out = np.zeros(len(exprs), dtype=bool)
    with np.errstate(all="ignore"):
        for i, e in enumerate(exprs):
            v, m = prober(e)
            ok = np.isfinite(v) & np.isfinite(m)
            out[i] = ok.sum() >= 2 and bool(np.all(~ok | (np.abs(v) <= RTOL * m)))
    return out


def _fields(eom: EquationsOfMotion) -> list[tuple[str, sp.ImmutableMatrix]]:
    out = [("kinematics", eom.kinematics), ("acceleration_map", eom.acceleration_map),
           ("mass_matrix", eom.mass_matrix), ("forcing", eom.forcing)]
    if eom.constraint_jacobian is not None:
        out.append(("constraint_jacobian", eom.constraint_jacobian))
    for k, stage in enumerate(getattr(eom, "auxiliary", ())):  # the reduced methods' implicit split
        out += [(f"auxiliary[{k}].matrix", stage.matrix), (f"auxiliary[{k}].rhs", stage.rhs)]
    if eom.velocity_constraints:
        out.append(("velocity_constraints", sp.ImmutableMatrix(list(eom.velocity_constraints))))
    return out


def reduce_structural_zeros(eom: EquationsOfMotion, seed: int = 20261123,
                            total_seconds: float = TOTAL_SECONDS) -> tuple[EquationsOfMotion, ZeroReport]:
    """Replace every entry of the equations proved identically zero by 0; return them and what was done."""
    start = time.perf_counter()
    fields = _fields(eom)
    entries = [(name, i, e) for name, mat in fields for i, e in enumerate(mat) if e != 0]
    if not entries:
        return eom, ZeroReport(seconds=time.perf_counter() - start)
    parameters = {p.symbol for p in eom.system.parameters}
    exprs = [sp.sympify(e) for _, _, e in entries]
    candidates = _probe(exprs, np.random.default_rng(seed), parameters)
    zero: set[tuple[str, int]] = set()
    timed_out = 0
    for (name, i, e), cand in zip(entries, candidates):
        if not cand:
            continue
        left = total_seconds - (time.perf_counter() - start)
        if left <= 0:
            timed_out += 1
            continue
        try:
            with deadline(min(ENTRY_SECONDS, left), "structural-zero test"):
                proved = is_zero_symbolic(e)
        except DerivationTimeout:  # only ours: an outer --timeout passes through as itself
            timed_out += 1
            continue
        if proved:
            zero.add((name, i))
    report = ZeroReport(len(entries), int(candidates.sum()), len(zero), timed_out, time.perf_counter() - start,
                        tuple(f"{name}[{_index(dict(fields)[name], i)}]" for name, i in sorted(zero)))
    if not zero:
        return eom, report
    return _replaced(eom, zero), report


def _index(mat: sp.ImmutableMatrix, i: int) -> str:
    r, c = divmod(i, mat.shape[1])
    return f"{r}, {c}" if mat.shape[1] > 1 else str(r)


def _zeroed(mat: sp.ImmutableMatrix, name: str, zero: set[tuple[str, int]]) -> sp.ImmutableMatrix:
    flat = [0 if (name, i) in zero else e for i, e in enumerate(mat)]
    return sp.ImmutableMatrix(mat.shape[0], mat.shape[1], flat)


def _replaced(eom: EquationsOfMotion, zero: set[tuple[str, int]]) -> EquationsOfMotion:
    changes = {name: _zeroed(getattr(eom, name), name, zero)
               for name in ("kinematics", "acceleration_map", "mass_matrix", "forcing")}
    if eom.constraint_jacobian is not None:
        changes["constraint_jacobian"] = _zeroed(eom.constraint_jacobian, "constraint_jacobian", zero)
    if getattr(eom, "auxiliary", ()):
        changes["auxiliary"] = tuple(
            replace(stage, matrix=_zeroed(stage.matrix, f"auxiliary[{k}].matrix", zero),
                    rhs=_zeroed(stage.rhs, f"auxiliary[{k}].rhs", zero))
            for k, stage in enumerate(eom.auxiliary))
    if eom.velocity_constraints:
        changes["velocity_constraints"] = tuple(
            sp.Integer(0) if ("velocity_constraints", i) in zero else e for i, e in enumerate(eom.velocity_constraints))
    return replace(eom, **changes)
