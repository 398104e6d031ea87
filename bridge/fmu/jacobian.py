"""Jacobian code of the native FMUs: directional derivatives from the symbolic equations.

With states ``x = (q, u)``, inputs ``w`` and the unknowns ``z = [u'; lambda]`` of ``M z = F``:

* ``d q'/d(x, w)    = dK/d(x, w)``                                  (symbolic)
* ``d z /d(x, w)    = M^-1 (dF/d(x, w) - (dM/d(x, w)) z)``          (symbolic right-hand sides, numeric solve)
* ``d y /d(x, w)``  of the outputs ``y(q, q', w, t)`` with ``q' = K(q, u, t)`` substituted (the dependent
  velocities of the reduced methods are functions of the states).

The right-hand sides are the partial derivatives of ``G = F - M z_hat`` with the symbols ``z_hat`` standing
for the current ``z`` (an argument of the generated function, taken from the runtime's cached ``nhb_rhs``
result). The partial derivatives are taken by symengine and printed, together with ``M``, by the FMU's C
printer (sympy's C99 printer) after one joint CSE pass (symengine's, which scales to the larger systems).
The generated ``nhb_jacobian`` factors ``M`` once and solves all
``nx + nin`` right-hand sides with the same factors (``nhb_lu_solve_many`` in ``fmu/nhb_linalg.c``).
The factors of ``nhb_rhs`` are not reused: ``M`` is local to ``nhb_rhs`` by the contract in ``nhb_model.h``.

Matrix ``J`` (row-major) has rows ``[q' (nq); u' (p); lambda (m); y (ny)]`` and columns ``[x (nx); w (nin)]``.

Equations with an auxiliary block (the reduced methods: placeholders ``Z`` from ``L_k Z_k = R_k(x, w, Z_<k)``,
solved numerically) are differentiated implicitly: ``dZ_k/d(x, w) = L_k^-1 (dG_k/d(x, w) + sum_j<k dG_k/dZ_j
dZ_j/d(x, w))`` with ``G_k = R_k - L_k Z_k_hat``, stage by stage with the same LU routine, and every row above
gets ``+ sum_j d(row)/dZ_j dZ_j/d(x, w)`` (the partial derivatives by Z are symbolic, the products numeric).
"""

from __future__ import annotations

import symengine as se
import sympy as sp
from symengine.lib.symengine_wrapper import Boolean

from ..codegen.c import NhbCPrinter
from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError
from .features import JACOBIAN_MAX_STATES, jacobian_enabled
from .plan import CModelPlan


def _resolve(expr: sp.Expr, derivative) -> sp.Expr:
    """Replace what symengine leaves unevaluated (derivatives of abs, sign, min, max) by their values."""

    def rule(e):
        if isinstance(e, sp.Subs):  # Subs(f'(xi), xi, g) from the chain rule
            return e.expr.xreplace(dict(zip(e.variables, e.point, strict=True)))
        f, (var, count) = e.expr, e.variable_count[0]
        if len(e.variable_count) != 1 or count != 1:
            raise ExportError(f"cannot differentiate {e}")
        if isinstance(f, sp.Abs):
            return sp.sign(f.args[0]) * derivative(f.args[0], var)
        if isinstance(f, sp.sign):
            return sp.S.Zero  # almost everywhere
        if isinstance(f, (sp.Max, sp.Min)):
            ge = (lambda a, b: a >= b) if isinstance(f, sp.Max) else (lambda a, b: a <= b)
            args = list(f.args)
            pieces = [(derivative(a, var), sp.And(*[ge(a, b) for b in args if b is not a])) for a in args[:-1]]
            return sp.Piecewise(*pieces, (derivative(args[-1], var), True))
        raise ExportError(f"cannot differentiate {f} for the Jacobian; export without it (--no-jacobian)")

    return expr.replace(lambda e: isinstance(e, (sp.Derivative, sp.Subs)), rule)


def _derivative(expr, var) -> sp.Expr:
    """Differentiate ``expr`` by ``var`` with symengine, returned as sympy (for the arguments of abs, min, max)."""
    out = sp.sympify(se.sympify(expr).diff(se.sympify(var)))
    if out.has(sp.Derivative, sp.Subs):
        out = _resolve(out, _derivative)
    return out


def jacobian_rows(eom: EquationsOfMotion) -> list[sp.Expr]:
    """Return the rows ``[K; G; Y]`` whose partial derivatives make up the Jacobian.

    ``G = F - M z_hat`` with the symbols ``z[k]`` standing for ``z_hat``, and Y are the outputs in terms of
    the states (``q' = K`` substituted).

    Parameters
    ----------
    eom : EquationsOfMotion
        The equations.

    Returns
    -------
    list of sympy.Expr
        ``nq + size(M) + ny`` expressions.
    """
    system = eom.system
    M, F, K = eom.mass_matrix, eom.forcing, eom.kinematics
    size = M.shape[0]
    z = [sp.Symbol(f"z[{k}]") for k in range(size)]
    G = [F[i] - sp.Add(*[M[i, j] * z[j] for j in range(size) if M[i, j] != 0]) for i in range(size)]
    velocity = {c.velocity_symbol: K[i] for i, c in enumerate(system.coordinates) if c.velocity_symbol != K[i]}
    return [*K, *G, *[y.xreplace(velocity) for y in system.outputs.values()]]


def jacobian_entries(eom: EquationsOfMotion) -> tuple[list[sp.Symbol], list[sp.Symbol],
                                                      list[tuple[int, int, se.Basic]]]:
    """Return the knowns (column order), the symbols ``z_hat`` and the nonzero entries ``(row, column, expr)``.

    Rows ``0..nq``: ``dK/d(x, w)``; rows ``nq..nq+p+m``: ``dG/d(x, w)`` with ``G = F - M z_hat`` (still to be
    multiplied by ``M^-1``); then ``dy/d(x, w)``. The entries are symengine expressions.
    """
    system = eom.system
    knowns = [*system.q, *eom.u, *(u.symbol for u in system.inputs)]
    z = [sp.Symbol(f"z[{k}]") for k in range(eom.mass_matrix.shape[0])]  # brackets: no clash with user names
    entries = _partials(jacobian_rows(eom), knowns)
    return knowns, z, entries


def _partials(exprs, variables) -> list[tuple[int, int, se.Basic]]:
    """Return the nonzero partial derivatives ``(row, column, d exprs[row] / d variables[column])`` (symengine)."""
    se_vars = [se.sympify(w) for w in variables]
    entries = []
    for r, f in enumerate(exprs):
        fs = se.sympify(f)
        free = fs.free_symbols
        for c, w in enumerate(se_vars):
            if w not in free:
                continue
            out = fs.diff(w)
            if out.atoms(se.Derivative, se.Subs):  # abs, sign, min, max: symengine leaves them unevaluated
                out = se.sympify(_resolve(sp.sympify(out), _derivative))
            if out != 0:
                entries.append((r, c, out))
    return entries


def _chain(target: str, zentries, nc: int, prefix: str) -> tuple[list[tuple[str, se.Basic]], list[str]]:
    """Emit the chain rule ``target[row] += P[e] * DZ[j]`` (rows of nc columns) for the entries ``(row, j, P[e])``.

    Returns the assignments of ``P`` (for the CSE pass) and the C loop that follows it.
    """
    if not zentries:
        return [], []
    rows = ", ".join(str(r) for r, _, _ in zentries)
    cols = ", ".join(str(j) for _, j, _ in zentries)
    loop = [f"    static const int {prefix}_row[] = {{{rows}}}, {prefix}_z[] = {{{cols}}};",
            f"    for (int e = 0; e < {len(zentries)}; ++e)",
            f"        for (int c = 0; c < {nc}; ++c) {target}[{prefix}_row[e] * {nc} + c] += "
            f"{prefix}_p[e] * DZ[{prefix}_z[e] * {nc} + c];"]
    return [(f"{prefix}_p[{e}]", x) for e, (_, _, x) in enumerate(zentries)], loop


def _auxiliary_derivatives(plan: CModelPlan, knowns, nc: int) -> list[str]:
    """Emit C computing ``Z`` and ``DZ`` (placeholders x (x, w), row-major) stage by stage.

    Stage k solves ``L_k DZ_k = dG_k/d(x, w) + sum_j<k dG_k/dZ_j DZ_j`` with ``G_k = R_k - L_k Z_k_hat``.
    """
    eom = plan.eom
    zsyms = list(eom.auxiliary_symbols)
    lines = [*plan.auxiliary_c("s"), f"    double DZ[{len(zsyms) * nc}];"]
    offset = 0
    for k, stage in enumerate(eom.auxiliary):
        r, c = stage.unknowns.shape
        Zk = list(stage.symbols)
        G = [stage.rhs[i, j] - sp.Add(*[stage.matrix[i, l_] * stage.unknowns[l_, j] for l_ in range(r)
                                        if stage.matrix[i, l_] != 0]) for i in range(r) for j in range(c)]
        targets = [(f"L[{i}]", se.sympify(e)) for i, e in enumerate(stage.matrix)]
        targets += [(f"D[{row * nc + col}]", e) for row, col, e in _partials(G, knowns)]
        zentries = [(row, j, e) for row, j, e in _partials(G, zsyms[:offset])]
        ptargets, loop = _chain("D", zentries, nc, f"d{k}")
        lines += ["    {", f"    double L[{r * r}], D[{r * c * nc}];",
                  *([f"    double d{k}_p[{len(zentries)}];"] if zentries else []),
                  f"    for (int i = 0; i < {r * c * nc}; ++i) D[i] = 0.0;",
                  *_scheduled_cse(NhbCPrinter(plan.names()), targets + ptargets, f"d{k}"), *loop,
                  f"    int bad = nhb_lu_solve_many({r}, L, {c * nc}, D);",
                  "    if (bad) {",
                  '        snprintf(msg, msg_len, "the constraints cannot be solved for the dependent velocities at '
                  't = %.17g (pivot %d)", t, bad);',
                  "        return 1;",
                  "    }",
                  f"    for (int i = 0; i < {r * c * nc}; ++i) DZ[{offset * nc} + i] = D[i];", "    }"]
        offset += len(Zk)
    return lines


def _to_sympy(e: se.Basic) -> sp.Basic:
    """Convert a symengine expression to sympy, dropping the ``Eq(condition, True)`` of CSE'd Piecewise conditions.

    A CSE'd Piecewise condition comes back as ``Eq(condition, True)``; sympy's C printer would print a
    ``true`` that C99 has only in stdbool.h.
    """
    out = sp.sympify(e)
    if out.has(sp.Piecewise):
        out = out.replace(lambda a: isinstance(a, sp.Eq) and sp.true in a.args,
                          lambda a: a.args[1] if a.args[0] is sp.true else a.args[0])
    return out


def _scheduled_cse(printer, targets: list[tuple[str, se.Basic]], prefix: str) -> list[str]:
    """Run one CSE pass (symengine) over the targets' expressions, printed by ``printer`` (sympy's C99 printer).

    Each ``target = expr;`` follows its last temporary: assigned as soon as its temporaries exist, so few
    values are alive at a time, which keeps the C compiler's register allocation on the long generated
    function cheap.
    The free symbols are renamed to private ones first: symengine names its temporaries x0, x1, ...,
    which could otherwise capture a user's symbol of the same name.
    """
    exprs = [se.sympify(e) for _, e in targets]
    free = sorted(set().union(*(e.free_symbols for e in exprs)), key=str)
    private = {s: se.Symbol(f"_nhb_arg{i}") for i, s in enumerate(free)}
    for s, a in private.items():
        original = sp.sympify(s)
        printer.names[sp.Symbol(a.name)] = printer.names.get(original) or printer.doprint(original)
    repl, reduced = se.cse([e.xreplace(private) for e in exprs])
    # conditions (of min/max derivatives) stay inside their Piecewise: a C double cannot hold them
    inline: dict = {}
    temps = []
    for sym, e in repl:
        e = e.xreplace(inline) if inline else e
        if isinstance(e, Boolean):
            inline[sym] = e
        else:
            temps.append((sym, e))
    repl = temps
    reduced = [e.xreplace(inline) for e in reduced] if inline else reduced
    position = {}
    for k, (sym, _) in enumerate(repl):
        position[sym] = k
        printer.names[sp.Symbol(sym.name)] = f"{prefix}_{k}"
    after: list[list[str]] = [[] for _ in range(len(repl) + 1)]
    for (lhs, _), e in zip(targets, reduced, strict=True):
        last = max((position[s] + 1 for s in e.free_symbols if s in position), default=0)
        after[last].append(f"    {lhs} = {printer.doprint(_to_sympy(e))};")
    lines = list(after[0])
    for k, (_, e) in enumerate(repl):
        lines.append(f"    const double {prefix}_{k} = {printer.doprint(_to_sympy(e))};")
        lines += after[k + 1]
    return lines


def jacobian_c(plan: CModelPlan) -> list[str]:
    """Emit ``NHB_HAS_JACOBIAN`` and ``nhb_jacobian``.

    ``nhb_jacobian`` fills the row-major ``J`` of ``(q', u', lambda, y)`` by ``(x, w)``: it factors ``M`` once
    and solves the rows of ``dG/d(x, w)`` for ``dz/d(x, w) = M^-1 (dF/d(x, w) - (dM/d(x, w)) z)``. Without a
    Jacobian in the plan's layout it is a stub returning 1.

    Parameters
    ----------
    plan : CModelPlan
        The equations, layout and names of the model.

    Returns
    -------
    list of str
        The C lines.
    """
    eom, enabled = plan.eom, plan.layout.jacobian
    head = [
        "",
        "/* Jacobian of (dx, lambda, y) with respect to (x, in), row-major, at (t, x) and z = [der(u); lambda] of",
        " * nhb_rhs at the same point (see nhb_model.h). */",
        f"const int NHB_HAS_JACOBIAN = {int(enabled)};",
        "",
        "int nhb_jacobian(double t, const double *x, const double *p, const double *in, const double *z, double *J,",
        "                 char *msg, size_t msg_len)",
        "{",
    ]
    if not enabled:
        return head + [
            "    (void)t; (void)x; (void)p; (void)in; (void)z; (void)J;",
            '    snprintf(msg, msg_len, "this FMU was exported without the Jacobian code");',
            "    return 1;",
            "}",
            "",
        ]
    system = eom.system
    nq = system.n
    size = eom.mass_matrix.shape[0]
    knowns, z, entries = jacobian_entries(eom)
    nc = len(knowns)
    nrows = nq + size + len(system.outputs)
    printer = NhbCPrinter(plan.names())
    printer.names.update({s: s.name for s in z})
    targets = [(f"M[{k}]", e) for k, e in enumerate(eom.mass_matrix)]
    targets += [(f"J[{r * nc + c}]", e) for r, c, e in entries]
    loop: list[str] = []
    aux: list[str] = []
    if eom.auxiliary:
        aux = _auxiliary_derivatives(plan, knowns, nc)
        rows = jacobian_rows(eom)
        zentries = _partials(rows, list(eom.auxiliary_symbols))
        ptargets, loop = _chain("J", zentries, nc, "jz")
        targets += ptargets
        aux.append(f"    double jz_p[{len(zentries)}];" if zentries else "")
    body = [
        "    (void)t; (void)x; (void)p; (void)in; (void)z;",
        f"    double M[{max(1, size * size)}];",
        *[line for line in aux if line],
        f"    for (int k = 0; k < {nrows * nc}; ++k) J[k] = 0.0;",
        *_scheduled_cse(printer, targets, "j"),
        *loop,
    ]
    if size:
        body += [
            f"    int bad = nhb_lu_solve_many({size}, M, {nc}, J + {nq * nc});",
            "    if (bad) {",
            '        snprintf(msg, msg_len, "the mass matrix is singular at t = %.17g (pivot %d)", t, bad);',
            "        return 1;",
            "    }",
        ]
    else:
        body.append("    (void)msg; (void)msg_len;")
    return head + body + ["    return 0;", "}", ""]


__all__ = ["JACOBIAN_MAX_STATES", "jacobian_c", "jacobian_enabled", "jacobian_entries", "jacobian_rows"]
