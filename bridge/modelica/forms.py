"""Export forms, and which one a system gets: the text both Modelica compilers simulate correctly.

The same equations of motion can be written in several Modelica texts (:mod:`bridge.modelica.export`):

* ``implicit``: accelerations implicit in ``sum_j M_ij der(der_q_j) = F_i``; the constraints of a
  multiplier DAE at acceleration level (index 1; Baumgarte-stabilised when the derivation was);
* ``variables``: the same equations with the accelerations as algebraic variables ``der_der_q``
  (``der(der_q) = der_der_q``, ``M der_der_q = F``): a semi-explicit index-1 DAE;
* ``given``: a multiplier DAE with the constraints as written (positions and velocities); the tool
  reduces the index;
* ``normal``: as ``implicit``, with every coupled linear block of the split of a reduced method,
  ``L Z = R`` (``L = A_dep(q, t)``), written as its normal equations ``(L^T L) Z = L^T R`` (the same
  solution wherever ``L`` is regular; products only, nothing inverted). The diagonal of ``L^T L`` holds
  the squared column norms of ``L``, positive wherever ``L`` is regular, and ``L^T L`` is symmetric
  positive definite: a tool that solves the block row by row on the diagonal matching (Rumoca 0.9,
  ``docs/compiler-defects/``) never meets a vanishing pivot, and Gauss-Seidel sweeps on it converge.
  The price is the squared condition number of the block;
* ``variables-normal``: a multiplier DAE with the accelerations as algebraic variables and the whole
  linear block ``K [der_der_q, lambda] = F`` (``K = [M, -A^T; A, 0]``) as its normal equations
  ``(K^T K) [der_der_q, lambda] = K^T F``: a purely algebraic block (no derivative in it) with a
  diagonal that never vanishes.

The reduced ODE is a method (maggi, appell, chaplygin), not a text: every form above applies to it
(``given`` is the same as ``implicit`` there, as there are no constraint equations left).
:func:`choose_form` picks the default text from structural properties of the equations and says why.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace

import numpy as np
import sympy as sp

from ..derivation.eom import AuxiliaryStage, EquationsOfMotion
from ..derivation.split_free import repartitions, split_free_form
from ..errors import ExportError
from ..kept import kept
from .switched import elements as _switched_elements


@dataclass(frozen=True)
class Form:
    """One Modelica text of the equations: the constraint level and how accelerations appear."""

    name: str
    level: str           # export level: "index1" or "given"
    accelerations: str   # "implicit" or "variables"
    description: str
    normal: bool = False  # coupled split blocks as normal equations
    normal_dynamics: bool = False  # the block of accelerations and multipliers as normal equations


FORMS = {
    "implicit": Form("implicit", "index1", "implicit", "accelerations implicit in M der(v) = F, constraints at "
                     "acceleration level (index 1)"),
    "variables": Form("variables", "index1", "variables", "accelerations as algebraic variables der_der_q "
                      "(semi-explicit index-1 DAE)"),
    "given": Form("given", "given", "implicit", "constraints as given (positions, velocities): index reduction "
                  "left to the tool"),
    "normal": Form("normal", "index1", "implicit", "as implicit, the coupled blocks of the split as normal "
                   "equations (L^T L) Z = L^T R", normal=True),
    "variables-normal": Form("variables-normal", "index1", "variables", "accelerations and multipliers as "
                             "algebraic variables, their linear block as normal equations (K^T K) x = K^T F",
                             normal=True, normal_dynamics=True),
}


@dataclass(frozen=True)
class Choice:
    """The form :func:`choose_form` picked and why (the reason goes into the model's Documentation)."""

    form: str
    reason: str

    @property
    def level(self) -> str:
        """The constraint level of the chosen form (``given`` or ``index1``)."""
        return FORMS[self.form].level

    @property
    def accelerations(self) -> str:
        """How the chosen form writes the accelerations (``implicit`` or ``variables``)."""
        return FORMS[self.form].accelerations


def _is_coupled(L: sp.Matrix) -> bool:
    """Return whether some row of the linear block ``L`` holds more than one of its unknowns."""
    return any(sum(1 for j in range(L.shape[1]) if L[i, j] != 0) > 1 for i in range(L.shape[0]))


def coupled_blocks(eom: EquationsOfMotion) -> list[str]:
    """Return the linear blocks of the split that couple their unknowns (some row holds more than one of them).

    The blocks a tool must solve simultaneously at every evaluation; ``"stage k (r x r)"`` for each.
    """
    out = []
    for k, stage in enumerate(eom.auxiliary):
        L = stage.matrix
        if _is_coupled(L):
            out.append(f"stage {k + 1} ({L.shape[0]}x{L.shape[1]})")
    return out


def normal_growth(eom: EquationsOfMotion) -> float:
    """Return how many times the normal equations of the coupled split blocks write each entry, on average.

    0 without a coupled block.

    A block ``L Z = R`` writes every nonzero entry of ``L`` and ``R`` once. Its normal equations write the products
    ``L_ki L_kj`` (``k`` in ``S_i & S_j``, ``S_i`` the rows where column ``i`` of ``L`` is nonzero) and
    ``L_ki R_kj`` (``k`` in ``S_i & T_j``, ``T_j`` likewise for ``R``), each entry printed out in full (the
    split is not shared by the export's CSE pass), so the ratio::

        g = (sum_ij |S_i & S_j| + sum_ij |S_i & T_j|) / (nnz(L) + nnz(R))

    is the factor by which the text of the blocks grows: ``r`` for a dense ``r x r`` block, 2 for a union of
    dense 2 x 2 blocks, less for triangular ones.
    """
    products = entries = 0
    for stage in eom.auxiliary:
        L, R = stage.matrix, stage.rhs
        if not _is_coupled(L):
            continue
        S = [{k for k in range(L.shape[0]) if L[k, i] != 0} for i in range(L.shape[1])]
        T = [{k for k in range(R.shape[0]) if R[k, j] != 0} for j in range(R.shape[1])]
        products += sum(len(a & b) for a in S for b in S) + sum(len(a & b) for a in S for b in T)
        entries += sum(map(len, S)) + sum(map(len, T))
    return products / entries if entries else 0.0


def applicable_forms(eom: EquationsOfMotion) -> tuple[str, ...]:
    """Return the forms that give different texts for these equations.

    ``given`` only for a multiplier DAE with constraints, ``normal`` only for a split with a coupled block.
    """
    forms = ["implicit", "variables"]
    if eom.multipliers:
        forms.append("given")
    if coupled_blocks(eom):
        forms.append("normal")
    if eom.multipliers:
        forms.append("variables-normal")
    return tuple(forms)


def normal_split(eom: EquationsOfMotion) -> EquationsOfMotion:
    """Return the same equations with every coupled split block ``L Z = R`` replaced by ``(L^T L) Z = L^T R``."""
    stages = []
    for stage in eom.auxiliary:
        L, R = stage.matrix, stage.rhs
        if _is_coupled(L):
            stage = AuxiliaryStage(stage.unknowns, sp.ImmutableMatrix(L.T * L), sp.ImmutableMatrix(L.T * R))
        stages.append(stage)
    return replace(eom, auxiliary=tuple(stages))


def start_values(eom: EquationsOfMotion) -> dict[sp.Symbol, sp.Float]:
    """Return the values of time, coordinates, velocities, parameters and inputs at the start of the exported model."""
    from ..model import symbols as S

    system = eom.system
    values: dict[sp.Symbol, float] = {S.t: 0.0, **system.parameter_values, **system.input_values}
    values.update({c.symbol: c.start for c in system.coordinates})
    values.update({c.velocity_symbol: c.velocity for c in system.coordinates})
    return {symbol: sp.Float(value) for symbol, value in values.items()}


def _nonzero_at(expr: sp.Expr, values: dict[sp.Symbol, sp.Float]) -> bool:
    """Return whether ``expr`` (structurally nonzero) is nonzero at ``values``.

    Where it does not evaluate to a number there, it counts as nonzero.
    """
    try:
        return abs(complex(expr.xreplace(values).evalf())) > 1e-15
    except (TypeError, ValueError, ZeroDivisionError):
        return True


def derivative_rows(eom: EquationsOfMotion) -> dict[int, int]:
    """Return the row from which Rumoca 0.9 takes each acceleration of a multiplier DAE exported implicitly.

    Rows of ``M [der(v), lambda] = F`` (dynamics rows, then constraint rows, as exported): acceleration -> row, both as
    indices of the mass matrix ``M``.

    Rumoca 0.9.13 (``rumoca-phase-solve``, ``solve_model/state_derivative_ordering.rs``) takes, for every state in
    declaration order, the first row not yet taken whose coefficient of ``der(state)`` is nonzero at the start
    values; the rows left over become its algebraic rows. The coordinates' rows ``der(q) = der_q`` come first and
    take the coordinates; the velocities ``der_q`` follow in the order of the coordinates.
    """
    M, n = eom.mass_matrix, len(eom.u)
    values = start_values(eom)
    taken: dict[int, int] = {}
    for k in range(n):
        row = next((r for r in range(M.shape[0]) if r not in taken.values() and M[r, k] != 0
                    and _nonzero_at(M[r, k], values)), None)
        if row is not None:
            taken[k] = row
    return taken


def coupled_derivative_block(eom: EquationsOfMotion) -> list[str]:
    """Return the coordinates Rumoca 0.9 solves from a coupled block that a constraint row also holds.

    The accelerations Rumoca 0.9 solves from a coupled block of its derivative rows (:func:`derivative_rows`: a taken
    row holds several accelerations) while a row it leaves to the algebraic part (a constraint row) holds one of them:
    the structure it factorises as "SymbolicSingular" (``docs/compiler-defects/RumocaImplicitCoupledRow.mo``,
    ``RumocaImplicitCoupledBlock.mo``). Empty without multipliers (an ODE has no algebraic rows).
    """
    if not eom.multipliers:
        return []
    M, n = eom.mass_matrix, len(eom.u)
    taken = derivative_rows(eom)
    component = list(range(n))  # union-find over the accelerations joined by a taken row

    def root(k: int) -> int:
        while component[k] != k:
            k = component[k]
        return k

    for row in taken.values():
        held = [j for j in range(n) if M[row, j] != 0]
        for j in held[1:]:
            component[root(j)] = root(held[0])
    size = {r: sum(1 for k in range(n) if root(k) == r) for r in range(n)}
    rest = [r for r in range(M.shape[0]) if r not in taken.values()]
    hit = {k for r in rest for k in range(n) if M[r, k] != 0 and size[root(k)] > 1}
    names = [c.name for c in eom.system.coordinates]
    return [names[k] for k in sorted(hit)]


def normal_dynamics(eom: EquationsOfMotion) -> EquationsOfMotion:
    """Return the equations with the block ``K x = F`` of accelerations and multipliers as ``(K^T K) x = K^T F``."""
    K, F = eom.mass_matrix, eom.forcing
    return replace(eom, mass_matrix=sp.ImmutableMatrix(K.T * K), forcing=sp.ImmutableMatrix(K.T * F))


def in_form(eom: EquationsOfMotion, form: str) -> EquationsOfMotion:
    """Return the equations as the form writes them (normal equations where it says so; else ``eom`` itself).

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    form : str
        A name of :data:`FORMS`.

    Returns
    -------
    EquationsOfMotion
        The equations to print.
    """
    spec = FORMS[form]
    if spec.normal:
        eom = normal_split(eom)
    if spec.normal_dynamics:
        eom = normal_dynamics(eom)
    return eom


def split_singular_time(eom: EquationsOfMotion, time: np.ndarray, q: np.ndarray) -> float | None:
    """Return the first sample time at which the split matrix ``A_dep(q, t)`` of a reduced method is singular.

    The samples are ``time`` and the coordinates ``q`` (one row per sample); singular means the determinant vanishes or
    changes sign. There the reduced ODE does not exist (the dependent velocities are not functions of the independent
    ones), and a tool that solves the split (IDAS) stops; ``None`` when it stays regular or there is no split.
    """
    if not eom.auxiliary:
        return None
    from ..model import symbols as S

    system = eom.system
    symbols = [S.t, *system.q, *(p.symbol for p in system.parameters), *(u.symbol for u in system.inputs)]
    fixed = [p.value for p in system.parameters] + [u.start for u in system.inputs]
    matrix = sp.lambdify(symbols, eom.auxiliary[0].matrix, modules="numpy")
    first = None
    for tk, qk in zip(time, q):
        det = float(np.linalg.det(np.asarray(matrix(tk, *qk, *fixed), dtype=float)))
        first = det if first is None else first
        if det == 0.0 or det * first < 0:
            return float(tk)
    return None


def regular_horizon(eom: EquationsOfMotion, stop: float, tool: str | None = None) -> float:
    """Return the horizon over which a compiler can be held to the reference.

    ``stop``, or 0.9 of the time at which the split becomes singular along the native run (the reduced ODE does not
    exist beyond it, whatever the text). ``stop`` for a ``tool`` whose text re-partitions (:func:`target_form`).
    """
    if tool is not None and target_form(eom, tool) == "repartition":
        return stop
    if not eom.auxiliary:
        return stop
    # one native run per equations object and stop (the equations are immutable)
    return kept(eom, ("regular_horizon", float(stop)), lambda: _regular_horizon(eom, stop))


def _regular_horizon(eom: EquationsOfMotion, stop: float) -> float:
    from ..errors import SplitLimitError
    from ..simulation.simulate import simulate

    try:
        native = simulate(eom, stop, interval=stop / 500)
    except SplitLimitError as exc:  # the native run stops where the split gives out: "at t = <time> the split"
        match = re.search(r"at t = ([0-9.eE+-]+)", str(exc))
        if match is None:
            raise
        horizon = 0.9 * float(match.group(1))
    else:
        singular = split_singular_time(eom, native.time, native.q)
        horizon = stop if singular is None else 0.9 * singular
    return horizon


#: the largest growth factor :func:`normal_growth` for which the split is exported as normal equations: the
#: factor of a dense 2 x 2 block (and of any union of such blocks, e.g. one per axle or wheel pair)
NORMAL_GROWTH_LIMIT = 2.0


def choose_form(eom: EquationsOfMotion) -> Choice:
    """Return the default export form of these equations, and why.

    The rule is structural, from Rumoca 0.9 defects reproduced minimally in ``docs/compiler-defects/``, and a
    cost bound:

    * **variables** for a multiplier DAE whose accelerations Rumoca 0.9 would take from a coupled block of
      derivative rows while a row it leaves to its algebraic part (a constraint row) holds one of them
      (:func:`coupled_derivative_block`; its choice of rows is :func:`derivative_rows`): Rumoca factorises that
      implicit DAE as "SymbolicSingular" (``RumocaImplicitCoupledRow.mo``, ``RumocaImplicitCoupledBlock.mo``;
      ``RumocaImplicitCoupledBlockUncoupledLeft.mo``, whose algebraic row holds a derivative outside the block,
      simulates). It covers the rows without multiplier that couple accelerations (rolling disk and sphere,
      contact sleigh) and the rolling wheel, whose coupled rows all hold multipliers; in ``variables`` no row but
      ``der(der_q) = der_der_q`` holds a derivative.
    * **normal** for a reduced method whose split has a coupled block (:func:`coupled_blocks`): Rumoca solves a
      coupled linear block row by row and fails where a matched coefficient vanishes
      (``RumocaCoupledLinearBlock.mo``); the normal equations ``(L^T L) Z = L^T R`` have a diagonal that never
      vanishes where ``L`` is regular. Only where they are cheap: they write every entry of the block
      :func:`normal_growth` ``= g`` times (``g = r`` for a dense ``r x r`` block), and the split is printed out
      in full, so the text and the compilers' times grow with ``g`` and with the split's share of the model
      (measured in ``docs/compilers.md``; see *Export forms* in the user guide). So ``normal`` is chosen up to
      :data:`NORMAL_GROWTH_LIMIT` (the dense 2 x 2 block and unions of them), ``implicit`` beyond; there Rumoca
      may meet the row-by-row defect, and ``--check rumoca`` (:func:`bridge.backends.rumoca.simulate_rumoca`) falls
      back to ``normal``.

    ``variables-normal`` (the block of accelerations and multipliers as normal equations too) is not chosen: on
    the rolling disk Rumoca matches its dense rows off the diagonal and fails where plain ``variables``
    simulates. Everything else keeps the implicit text (``M der(v) = F``, index 1), which both compilers
    simulate.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations to export.

    Returns
    -------
    Choice
        The form's name and the reason, which goes into the model's Documentation.

    Examples
    --------
    >>> import bridge
    >>> from bridge.modelica.forms import choose_form
    >>> system = bridge.parse_system('''
    ... name = "Oscillator"
    ... [coordinates]
    ... x = { start = 0.1 }
    ... [parameters]
    ... m = { value = 2.0 }
    ... k = { value = 8.0 }
    ... [energy]
    ... kinetic = "1/2*m*der(x)^2"
    ... potential = "1/2*k*x^2"
    ... ''')
    >>> choice = choose_form(bridge.derive(system))
    >>> choice.form, choice.level, choice.accelerations
    ('implicit', 'index1', 'implicit')
    """
    coupled = coupled_derivative_block(eom)
    if coupled:
        return Choice("variables", f"the accelerations of {', '.join(coupled)} are coupled in the rows Rumoca 0.9 "
                      "takes as their derivative rows and held by the constraint rows it leaves to its algebraic "
                      "part; Rumoca 0.9 factorises such an implicit DAE as structurally singular "
                      "(docs/compiler-defects), so the accelerations are algebraic variables der_der_q with "
                      "der(der_q) = der_der_q and no other row holds a derivative")
    blocks = coupled_blocks(eom)
    growth = normal_growth(eom)
    if blocks and growth <= NORMAL_GROWTH_LIMIT:
        return Choice("normal", f"the split A_dep(q, t) [B, beta] = -[A_ind, a0] couples its unknowns (split "
                      f"{', '.join(blocks)}); its coupled blocks are written as normal equations "
                      "(A_dep^T A_dep) Z = A_dep^T R, whose diagonal (squared column norms) never vanishes where "
                      "A_dep is regular, because Rumoca 0.9 solves a coupled linear block row by row and fails "
                      f"where a matched coefficient vanishes (docs/compiler-defects); they write each entry of "
                      f"the blocks {growth:.2g} times (at most {NORMAL_GROWTH_LIMIT:g}: cheap); accelerations "
                      "implicit in M der(v) = F")
    if blocks:
        return Choice("implicit", f"reduced ODE with the accelerations implicit in M der(v) = F; the split "
                      f"couples its unknowns (split {', '.join(blocks)}) but its normal equations would write each "
                      f"entry of the blocks {growth:.2g} times (more than {NORMAL_GROWTH_LIMIT:g}: the text and "
                      "the compilers' time would grow several-fold), so the split stays A_dep [B, beta] = "
                      "-[A_ind, a0]; Rumoca 0.9 may fail on it where a matched coefficient vanishes "
                      "(docs/compiler-defects; --check rumoca then falls back to the normal equations)")
    if eom.multipliers:
        return Choice("implicit", "multiplier DAE with the constraints at acceleration level (index 1"
                      + (", Baumgarte-stabilised" if eom.baumgarte else "") + "), accelerations implicit in "
                      "M [der(v), lambda] = F: Rumoca 0.9 takes single-acceleration rows as derivative rows, so "
                      "no structure of docs/compiler-defects is present; no index reduction needed")
    kind = "reduced ODE" if eom.is_reduced else "ODE"
    return Choice("implicit", f"{kind} with the accelerations implicit in M der(v) = F: no multiplier and no "
                  "coupled split block, so no structure of docs/compiler-defects is present")


def resolve(eom: EquationsOfMotion, level: str, accelerations: str
            ) -> tuple[EquationsOfMotion, str, str, str]:
    """Return ``(equations, level, accelerations, reason)`` with ``"auto"`` replaced by the chosen form.

    The choice is :func:`choose_form`'s (the equations in normal form where it chose ``normal``); the reason is empty
    when nothing was automatic.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    level : str
        The constraint level: ``auto``, ``index1`` or ``given``.
    accelerations : str
        How accelerations are written: ``auto``, ``implicit`` or ``variables``.

    Returns
    -------
    tuple of (EquationsOfMotion, str, str, str)
        The equations as the form writes them, the level, the accelerations and the reason.
    """
    if level != "auto" and accelerations != "auto":
        return eom, level, accelerations, ""
    choice = choose_form(eom)
    form = FORMS[choice.form]
    eom = in_form(eom, choice.form)
    return (eom, form.level if level == "auto" else level,
            form.accelerations if accelerations == "auto" else accelerations,
            f"{form.name}: {choice.reason}")


#: the most candidate splits the unrolled choice enumerates
MAX_CANDIDATES = 40


@dataclass(frozen=True)
class Candidate:
    """One split of the velocities: its dependent coordinates (indices) and how many of them are cyclic."""

    dependent: tuple[int, ...]
    cyclic: int


def candidates(eom: EquationsOfMotion) -> list[Candidate]:
    """Return the splits the method accepts (chaplygin: cyclic dependent coordinates only), the build-time one first.

    Raises
    ------
    ExportError
        When there are more than :data:`MAX_CANDIDATES` (the choice is unrolled in the text).
    """
    form = split_free_form(eom)
    n, m = eom.system.n, len(eom.dependent)
    names = [c.name for c in eom.system.coordinates]
    build = tuple(sorted(names.index(d) for d in eom.dependent))
    A = sp.Matrix(m, n, form.A)
    out = [Candidate(build, sum(form.cyclic[i] for i in build))]
    for dep in itertools.combinations(range(n), m):
        if (dep != build and all(form.may_be_dependent[i] for i in dep)
                and sp.expand(A[:, list(dep)].det()) != 0):  # never regular: not a candidate
            out.append(Candidate(dep, sum(form.cyclic[i] for i in dep)))
    if len(out) > MAX_CANDIDATES:
        raise ExportError(f"{eom.system.name}: {len(out)} splits of the velocities, more than the {MAX_CANDIDATES} "
                          "the re-partitioning Modelica text enumerates; export with the build-time split "
                          "(form implicit)")
    return out


def exportable(eom: EquationsOfMotion) -> bool:
    """Return whether ``eom`` has a ``repartition`` text.

    A reduced method that re-partitions, without ports or switched elements, with at most :data:`MAX_CANDIDATES`
    splits.
    """
    return repartitions(eom) and repartition_obstacle(eom) is None


def repartition_obstacle(eom: EquationsOfMotion) -> str | None:
    """Return why the ``repartition`` text of a reduced method that re-partitions cannot be written, else None.

    The text has no connectors (``[ports]``), no effort unknowns and no switched elements, and enumerates at
    most :data:`MAX_CANDIDATES` splits.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.

    Returns
    -------
    str or None
        The reason, a phrase naming the system's feature; None where the text can be written (or the method has
        no split to re-partition: :func:`bridge.derivation.split_free.repartitions`).
    """
    system = eom.system
    reasons = []
    if system.ports:
        reasons.append("[ports] (the text has no connectors)")
    if system.efforts:
        reasons.append("effort unknowns (their rows would join the projected system)")
    switched = _switched_elements(system)
    if switched:
        reasons.append(f"switched elements ({', '.join(el.name for el in switched)}; the text has no modes)")
    if not reasons and repartitions(eom):
        try:
            candidates(eom)
        except ExportError:
            reasons.append(f"more than {MAX_CANDIDATES} splits of the velocities")
    return "; ".join(reasons) or None


#: the compilers that simulate the ``repartition`` text (``when`` on the health, discrete split); pymoca 0.12 has no
#: ``when`` (``docs/compiler-defects/SwitchedPymocaWhen.mo``) and keeps the build-time split
REPARTITION_TOOLS = ("rumoca",)


def target_form(eom: EquationsOfMotion, tool: str) -> str:
    """Return the export form for ``tool``.

    ``repartition`` for a reduced method whose split may change where the tool has when-clauses
    (:data:`REPARTITION_TOOLS`), else :func:`choose_form`'s.

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.
    tool : str
        ``rumoca`` or ``pymoca``.

    Returns
    -------
    str
        ``repartition`` or a name of :data:`FORMS`.
    """
    if tool in REPARTITION_TOOLS and exportable(eom):
        return "repartition"
    return choose_form(eom).form


#: why a tool cannot simulate the constraints as given (a DAE of index 2 or 3)
NO_INDEX_REDUCTION = {
    "rumoca": "Rumoca 0.9 does no index reduction (it reports a 'structurally singular system')",
    "pymoca": "pymoca 0.12 translates the model to CasADi as written and IDAS integrates index-1 DAEs only",
}


def require_expressible(eom: EquationsOfMotion, level: str, tool: str) -> None:
    """Raise an :class:`ExportError` when ``tool`` cannot simulate the equations at the constraint ``level`` asked for.

    The error names the constraint entries and the form to use (the constraints as given need index reduction).
    """
    system = eom.system
    if level != "given" or not eom.multipliers or tool not in NO_INDEX_REDUCTION:
        return
    index = 3 if system.holonomic else 2
    entries = ", ".join(entry for entry, _ in system.constraints)
    raise ExportError(f"{system.source}: the constraints {entries} exported as given (--constraint-level given) "
                      f"make a DAE of index {index}, which needs index reduction: {NO_INDEX_REDUCTION[tool]}; "
                      "export them at acceleration level for this tool: --constraint-level index1 (or auto)")
