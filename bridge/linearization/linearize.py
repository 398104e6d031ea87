"""The linear model in minimal form: ``x' = A x + B w``, ``y = C x + D w`` about a steady point.

States of the method's equations are ``(q, u)`` (full methods: ``u = q'``; reduced methods: the independent
velocities). The motion lives on the constraint manifold, so the minimal linear state is

* the coordinates left independent by the holonomic constraints ``phi(q) = 0`` (linearized,
  ``dq_dep = -Phi_dep^-1 Phi_ind dq_ind``, the dependent ones among the velocity split's dependent coordinates),
* the independent velocities of the split ``A(q) q' + a0 = 0`` (linearized, full methods:
  ``dq'_dep = -A_dep^-1 (A_ind dq'_ind + d(A q' + a0)/dq dq + d(a0)/dw dw)``),

i.e. ``d(q, u) = T dx + T_w dw``; then ``A = P J T`` and ``B = P (J T_w + J_w)`` with J the exact Jacobian of the
method's equations (:mod:`.jacobian`) and P the rows of the retained states. The flow keeps the manifold, so this
is the exact restriction: every method gives the same A, B, C, D.

Then *cyclic* coordinates (their columns of A and C vanish: nothing depends on them to first order, e.g. position
and heading of a vehicle) and *conserved* speeds (their rows and columns of A and rows of B vanish: decoupled and
neutral, e.g. a bicycle's forward speed about straight running) are dropped; each would only add an eigenvalue 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import scipy.linalg

from ..derivation import dense
from ..errors import BridgeError, Problem, SimulationError
from ..model import symbols as S
from ..model.mechanics import choose_independent, independent_from_names, to_se
from ..simulation.plot import rate_unit
from .jacobian import LazyCompiled, MethodJacobian, jacobian_exprs
from .model import LinearModel
from .point import LinearizationError, OperatingPoint, not_steady, operating_point, system_at

ZERO_TOL = 1e-10      # an entry below this times the largest one counts as zero (cyclic / conserved detection)
SINGULAR_TOL = 1e-10  # sigma_min / sigma_max of a split block below this: the split is singular


class Linearizer:
    """Compiled once per set of equations; :meth:`at` linearizes at any consistent point (sweeps reuse it)."""

    def __init__(self, eom, independent: Sequence[str] | None = None):
        system = eom.system
        self.eom, self.system = eom, system
        self.n, self.p = system.n, len(eom.u)
        self.jac = MethodJacobian(eom)
        q, qd = list(system.q), list(system.qd)
        inp = [w.symbol for w in system.inputs]
        full = [S.t, *q, *qd, *[p.symbol for p in system.parameters], *inp]
        self._hol = LazyCompiled(full, list(system.holonomic) + jacobian_exprs(system.holonomic, q))
        vc = system.velocity_constraints()
        self.m = len(vc)
        self._vel = LazyCompiled(full, list(vc) + jacobian_exprs(vc, q) + jacobian_exprs(vc, qd)
                                  + jacobian_exprs(vc, inp))
        outs = list(system.outputs.values())
        with_efforts = [k for k, e in system.outputs.items() if e.free_symbols & set(eom.efforts)]
        if with_efforts:
            raise LinearizationError(Problem(
                f"outputs.{with_efforts[0]}", f"the output(s) {', '.join(with_efforts)} contain efforts, whose "
                "derivatives linearize does not form (they are solved with the accelerations)",
                "linearize a copy of the system file without these outputs, or write them in coordinates, velocities "
                "and dynamic variables", system.source))
        self._out = LazyCompiled(full, outs + jacobian_exprs(outs, q) + jacobian_exprs(outs, qd)
                                  + jacobian_exprs(outs, inp))
        names = [c.name for c in system.coordinates]
        if eom.is_reduced:
            if independent and sorted(independent) != sorted(eom.independent):
                raise LinearizationError(f"independent {', '.join(independent)}: the equations of {eom.method} "
                                         f"were derived with the split {', '.join(eom.independent)}; derive them "
                                         "with the split wanted")
            self.independent: tuple[int, ...] | None = tuple(names.index(nm) for nm in eom.independent)
        elif independent or system.independent or self.m == 0:
            self.independent = (independent_from_names(system, independent or system.independent)
                                if self.m else tuple(range(self.n)))
        else:
            self.independent = None  # chosen at the first point, then kept
        self.holonomic_dependent: tuple[int, ...] | None = None

    # -- pieces ----------------------------------------------------------------
    def _full(self, pt: OperatingPoint) -> np.ndarray:
        return np.concatenate([[pt.t], pt.q, pt.qd, pt.params, pt.inputs])

    def _split(self, pt: OperatingPoint, full: np.ndarray, Vqd: np.ndarray) -> tuple[list[int], list[int]]:
        if self.independent is None:
            A, _ = self.system.constraint_matrix()
            rows = [[to_se(A[i, j]) for j in range(self.n)] for i in range(A.shape[0])]
            ind = choose_independent(self.system, rows, full)
            if ind is None:
                raise LinearizationError(Problem("constraints", "no choice of independent velocities is regular at "
                                                 "the operating point", "check the point", self.system.source))
            self.independent = tuple(ind)
        ind = list(self.independent)
        dep = [i for i in range(self.n) if i not in ind]
        return ind, dep

    def _check_block(self, M: np.ndarray, whole: np.ndarray, what: str, hint: str) -> None:
        """Check that the split's dependent block of the constraint Jacobian is regular.

        ``sigma_min(M) / sigma_max(whole)`` (the block of the dependent columns against the whole constraint Jacobian,
        as :func:`bridge.model.mechanics.split_health`) must exceed ``SINGULAR_TOL``.
        """
        if M.shape[0] == 0:
            return
        sv = np.linalg.svd(M, compute_uv=False)
        top = np.linalg.norm(whole, 2) if np.all(np.isfinite(whole)) else np.nan
        if not (np.all(np.isfinite(sv)) and top > 0 and sv[-1] > SINGULAR_TOL * top):
            raise LinearizationError(Problem("", f"{what} is singular at the operating point", hint,
                                             self.system.source))

    def _holonomic_split(self, Phi: np.ndarray, dep: list[int]) -> list[int]:
        h = Phi.shape[0]
        if h == 0:
            return []
        if self.holonomic_dependent is None:
            cols = Phi[:, dep]
            _, _, piv = scipy.linalg.qr(cols, pivoting=True, mode="economic")
            self.holonomic_dependent = tuple(sorted(dep[k] for k in piv[:h]))
        hd = list(self.holonomic_dependent)
        names = ", ".join(self.system.coordinates[i].name for i in hd)
        self._check_block(Phi[:, hd], Phi, f"the holonomic constraints solved for {names}",
                          "the dependent coordinates cannot be computed from the others here; choose another "
                          "split ([method] independent) or another point")
        return hd

    def project(self, pt: OperatingPoint, coordinate: int | None = None) -> OperatingPoint | None:
        """Return ``pt`` made consistent after a change of a parameter, an input, an independent coordinate or velocity.

        Newton on ``phi(q) = 0`` for the holonomic-dependent
        coordinates, then ``A_dep q'_dep = -(A_ind q'_ind + a0)``. None where that cannot keep the changed value (the
        caller then uses :meth:`System.with_values`) or before the split is known (after the first :meth:`at`).
        """
        if self.independent is None or (self.system.holonomic and self.holonomic_dependent is None):
            return None
        hd = list(self.holonomic_dependent or ())
        dep = [i for i in range(self.n) if i not in self.independent]
        if coordinate is not None and (coordinate in hd or (coordinate - self.n) in dep):
            return None
        q, qd, h, m, n = pt.q.copy(), pt.qd.copy(), len(self.system.holonomic), self.m, self.n
        for _ in range(50 if h else 0):
            vals = np.asarray(self._hol(np.concatenate([[pt.t], q, qd, pt.params, pt.inputs])), dtype=float).ravel()
            r, Phi = vals[:h], vals[h:].reshape(h, n)
            if np.abs(r).max() <= 1e-14 * max(1.0, float(np.abs(q).max())):
                break
            q[hd] -= dense.solve(Phi[:, hd], r)
        else:
            if h:
                return None
        if dep:
            vals = np.asarray(self._vel(np.concatenate([[pt.t], q, qd, pt.params, pt.inputs])), dtype=float).ravel()
            V, Vqd = vals[:m], vals[m + m * n: m + 2 * m * n].reshape(m, n)
            qd[dep] -= dense.solve(Vqd[:, dep], V)
        return OperatingPoint(pt.t, q, qd, pt.params, pt.inputs)

    def split_determinant(self, pt: OperatingPoint) -> float:
        """Return ``det(A_dep) det(Phi_dep)`` of the split at ``pt``.

        A change of sign between two points means the split is singular between them (after the first :meth:`at`).
        """
        full = self._full(pt)
        n, m = self.n, self.m
        out = 1.0
        if self.independent is not None and m:
            vals = np.asarray(self._vel(full), dtype=float).ravel()
            Vqd = vals[m + m * n: m + 2 * m * n].reshape(m, n)
            dep = [i for i in range(n) if i not in self.independent]
            out *= float(np.linalg.det(Vqd[:, dep]))
        if self.holonomic_dependent:
            h = len(self.system.holonomic)
            Phi = np.asarray(self._hol(full), dtype=float).ravel()[h:].reshape(h, n)
            out *= float(np.linalg.det(Phi[:, list(self.holonomic_dependent)]))
        return out

    # -- the linear model --------------------------------------------------------
    def at(self, pt: OperatingPoint, cyclic: Sequence[str] | None = None, keep_conserved: bool = False,
           check_steady: bool = True, conserved: Sequence[str] | None = None) -> LinearModel:
        """Return the linear model at ``pt`` (see the module docstring).

        ``cyclic``: None detects the cyclic coordinates, a list names them (each must be ignorable at the point), ``()``
        keeps every coordinate. ``conserved`` names the conserved speeds to drop (default: detected, none with
        ``keep_conserved``).
        """
        system, eom, n, p = self.system, self.eom, self.n, self.p
        full = self._full(pt)
        vals = np.asarray(self._vel(full), dtype=float).ravel()
        m, nw = self.m, len(system.inputs)
        Vq = vals[m: m + m * n].reshape(m, n)
        Vqd = vals[m + m * n: m + 2 * m * n].reshape(m, n)
        Vw = vals[m + 2 * m * n:].reshape(m, nw)
        Phi = np.asarray(self._hol(full), dtype=float).ravel()[len(system.holonomic):].reshape(-1, n)
        ind, dep = self._split(pt, full, Vqd)
        cn = [c.name for c in system.coordinates]
        self._check_block(Vqd[:, dep], Vqd, f"the velocity split (dependent {', '.join(cn[i] for i in dep)})",
                          "the constraints cannot be solved for the dependent velocities here; choose other "
                          "independent velocities ([method] independent or --independent) or another point")
        hd = self._holonomic_split(Phi, dep)
        qr = [i for i in range(n) if i not in hd]
        # the method's Jacobian at the point
        u = pt.qd[ind] if eom.is_reduced else pt.qd
        base = np.concatenate([[pt.t], pt.q, u, pt.params, pt.inputs])
        try:
            f0, J, Jw, _ = self.jac.evaluate(base)
        except SimulationError as exc:
            raise LinearizationError(Problem("", str(exc), "choose another point, or another split with [method] "
                                             "independent", system.source)) from exc
        # tangent map of the constraint manifold: d(q, u) = T [dq_r; du_ind] + Tw dw
        nq, ni = len(qr), len(ind)
        Tq = np.zeros((n, nq))
        Tq[qr, np.arange(nq)] = 1.0
        if hd:
            Tq[hd] = -dense.solve(Phi[:, hd], Phi[:, qr])
        Tqd = np.zeros((n, nq + ni))
        Tqdw = np.zeros((n, nw))
        Tqd[ind, nq + np.arange(ni)] = 1.0
        if dep:
            Ad = Vqd[:, dep]
            Tqd[dep] = -dense.solve(Ad, Vq @ np.hstack([Tq, np.zeros((n, ni))]) + Vqd[:, ind] @ Tqd[ind])
            Tqdw[dep] = -dense.solve(Ad, Vw)
        Tfull = np.hstack([Tq, np.zeros((n, ni))])
        if eom.is_reduced:
            T = np.vstack([Tfull, np.hstack([np.zeros((p, nq)), np.eye(ni)])])
            Tw = np.zeros((n + p, nw))
            speed_rows = [n + k for k in range(p)]
        else:
            T, Tw = np.vstack([Tfull, Tqd]), np.vstack([np.zeros((n, nw)), Tqdw])
            speed_rows = [n + i for i in ind]
        rows = qr + speed_rows
        A = J[rows] @ T
        B = J[rows] @ Tw + Jw[rows]
        # outputs y(q, q'), q' = K(q, u, w)
        ny = len(system.outputs)
        yv = np.asarray(self._out(full), dtype=float).ravel()
        y0 = yv[:ny]
        Yq = yv[ny: ny + ny * n].reshape(ny, n)
        Yqd = yv[ny + ny * n: ny + 2 * ny * n].reshape(ny, n)
        Yw = yv[ny + 2 * ny * n:].reshape(ny, nw)
        dqd, dqdw = J[:n] @ T, J[:n] @ Tw + Jw[:n]
        C = Yq @ Tfull + Yqd @ dqd
        D = Yqd @ dqdw + Yw
        states = [cn[i] for i in qr] + [f"der({cn[i]})" for i in ind]
        units = ([system.coordinates[i].unit for i in qr]
                 + [rate_unit(system.coordinates[i].unit) for i in ind])
        x0 = np.concatenate([pt.q[qr], pt.qd[ind]])
        # cyclic coordinates and conserved speeds
        drop_q = self._cyclic(A, C, states[:nq], cyclic)
        keep = [k for k in range(nq + ni) if k not in drop_q]
        if conserved is not None:
            found = self._conserved(A, B, keep, nq)
            conserved = [states.index(nm) for nm in conserved]
            if set(conserved) - set(found):
                bad = ", ".join(states[k] for k in sorted(set(conserved) - set(found)))
                raise LinearizationError(f"{bad}: not decoupled and neutral at this point, cannot be dropped")
        else:
            conserved = [] if keep_conserved else self._conserved(A, B, keep, nq)
        keep = [k for k in keep if k not in conserved]
        # steady: retained coordinates at rest, no speed accelerating
        residual = np.concatenate([f0[qr], f0[speed_rows]])
        check = [k for k in range(nq + ni) if k not in drop_q]
        names = [f"der({states[k]})" for k in check]
        bad = not_steady(system, names, residual[check], float(np.abs(pt.qd).max(initial=0.0)))
        if check_steady and bad:
            shown = ", ".join(f"{nm} = {r:.6g}" for nm, r in bad[:8])
            raise LinearizationError(Problem(
                "", f"the operating point is not steady: the retained states do not stay put ({shown})",
                "linearize about an equilibrium or a steady motion: set start values, parameters or inputs "
                "(--set NAME=VALUE) so that these rates and accelerations vanish", system.source))
        outputs = list(system.outputs)
        out_units = [system.output_units.get(k, "") for k in outputs]
        return LinearModel(
            system=system.name, method=eom.method, states=tuple(states[k] for k in keep),
            state_units=tuple(units[k] for k in keep), inputs=tuple(w.name for w in system.inputs),
            input_units=tuple(w.unit for w in system.inputs), outputs=tuple(outputs), output_units=tuple(out_units),
            A=A[np.ix_(keep, keep)], B=B[keep], C=C[:, keep], D=D, x0=x0[keep], u0=pt.inputs.copy(), y0=y0,
            point=pt.mapping(system), dropped=tuple(states[k] for k in drop_q),
            independent=tuple(cn[i] for i in ind), conserved=tuple(states[k] for k in conserved),
            residual=tuple(zip(names, (float(r) for r in residual[check]))))

    def _cyclic(self, A: np.ndarray, C: np.ndarray, coords: list[str], cyclic: Sequence[str] | None) -> list[int]:
        scale = max(1.0, float(np.abs(A).max(initial=0.0)))
        yscale = max(1.0, float(np.abs(C).max(initial=0.0)))
        nq = len(coords)
        if cyclic is None:  # only dropped states may depend on a dropped coordinate: grow the set to a fixed point
            dropped: list[int] = []
            while True:
                rows = [k for k in range(A.shape[0]) if k not in dropped]
                more = [k for k in range(nq) if k not in dropped
                        and np.abs(A[rows, k]).max(initial=0.0) <= ZERO_TOL * scale
                        and np.abs(C[:, k]).max(initial=0.0) <= ZERO_TOL * yscale]
                if not more:
                    return sorted(dropped)
                dropped += more
        named = [coords.index(nm) for nm in cyclic if nm in coords]
        rows = [k for k in range(A.shape[0]) if k not in named]
        zero_a = [k for k in range(nq) if np.abs(A[rows, k]).max(initial=0.0) <= ZERO_TOL * scale]
        problems = []
        out = []
        all_names = [c.name for c in self.system.coordinates]
        for nm in cyclic:
            if nm not in coords:
                why = ("it is not a coordinate" if nm not in all_names else
                       "it is a dependent coordinate of the holonomic constraints, not in the linear state")
                problems.append(Problem("cyclic", f"{nm!r} cannot be dropped: {why}",
                                        f"name coordinates among {', '.join(coords)}", self.system.source))
            elif coords.index(nm) not in zero_a:
                k = coords.index(nm)
                problems.append(Problem("cyclic", f"{nm!r} is not cyclic at this point: the equations depend on "
                                        f"it (largest coefficient {np.abs(A[:, k]).max():.6g})",
                                        "name only coordinates whose values do not enter the equations",
                                        self.system.source))
            else:
                out.append(coords.index(nm))
        if problems:
            raise LinearizationError(problems)
        return sorted(set(out))

    @staticmethod
    def _conserved(A: np.ndarray, B: np.ndarray, keep: list[int], nq: int) -> list[int]:
        sub = A[np.ix_(keep, keep)]
        scale = max(1.0, float(np.abs(sub).max(initial=0.0)))
        out = []
        for j, k in enumerate(keep):
            if k < nq:
                continue
            if (np.abs(sub[j]).max(initial=0.0) <= ZERO_TOL * scale
                    and np.abs(sub[:, j]).max(initial=0.0) <= ZERO_TOL * scale
                    and np.abs(B[k]).max(initial=0.0) <= ZERO_TOL * max(1.0, float(np.abs(B).max(initial=0.0)))):
                out.append(k)
        return out


def linearize(eom, at=None, *, cyclic: Sequence[str] | None = None, keep_conserved: bool = False,
              independent: Sequence[str] | None = None, given: Mapping[str, float] | None = None) -> LinearModel:
    """Return the linear model of ``eom`` about a steady point (default: the start state of its system).

    With the state ``x = (q, u)`` (cyclic coordinates and decoupled neutral speeds dropped) and the inputs ``w``,
    ``A = d(q', u')/dx`` and ``B = d(q', u')/dw`` at the point, where ``u'`` solves ``M u' = F`` (the mass matrix
    factorised numerically, never inverted symbolically); ``C`` and ``D`` are the outputs' derivatives. The
    Jacobians are exact (symbolic derivatives evaluated at the point).

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations, from :func:`bridge.derive`.
    at : mapping of str to float, or System, optional
        Names -> values (coordinates ``q``, start velocities ``der(q)``, parameters, inputs) applied to the start
        state with :meth:`System.with_values` (which makes it consistent with the constraints), or a
        :class:`System` whose start state is the point.
    cyclic : sequence of str, optional
        None detects the cyclic coordinates, a list names them, ``()`` keeps all.
    keep_conserved : bool, optional
        Keep decoupled neutral speeds in the state.
    independent : sequence of str, optional
        The split of a reduced method at the point (default the equations').
    given : mapping of str to float, optional
        Input values at the point; an input needs one unless its start value is written in the system file.

    Returns
    -------
    LinearModel
        A, B, C, D with names, units and the operating point.

    Raises
    ------
    LinearizationError
        When the point is not steady (its residual accelerations are listed) or the split is singular there.

    Examples
    --------
    A mass on a spring, ``m x'' = -k x + F``: ``A = [[0, 1], [-k/m, 0]]``, ``B = [[0], [1/m]]``.

    >>> import bridge
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.0, velocity = 0.0, unit = "m" }
    ... [parameters]
    ... m = { value = 2.0, unit = "kg" }
    ... k = { value = 8.0, unit = "N/m" }
    ... [inputs]
    ... F = { start = 0.0, unit = "N" }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... [forces]
    ... x = "F"
    ... [outputs]
    ... position = { expr = "x", unit = "m" }
    ... ''')
    >>> lin = bridge.linearize(bridge.derive(system), given={"F": 0.0})
    >>> lin.A.tolist(), lin.B.tolist()
    ([[0.0, 1.0], [-4.0, 0.0]], [[0.0], [0.5]])
    >>> lin.eigenvalues().imag.round(12).tolist()
    [2.0, -2.0]
    >>> bridge.linearize(bridge.derive(system), {"k": 18.0}, given={"F": 0.0}).eigenvalues().imag.round(12).tolist()
    [3.0, -3.0]
    """
    if not hasattr(eom, "mass_matrix"):
        raise BridgeError("linearize: expected EquationsOfMotion (bridge.derive(system, method))")
    system = system_at(eom.system, at)
    names = dict(given or {})
    if isinstance(at, Mapping):
        names.update(at)
    lin = Linearizer(eom, independent)
    with dense.single_threaded_blas():  # tiny factorisations and solves: no BLAS thread pool
        return lin.at(operating_point(system, names), cyclic=cyclic, keep_conserved=keep_conserved)
