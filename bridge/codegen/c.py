"""C for generated FMU code (PyDy-style codegen).

The C99 printer, joint CSE blocks, arrays, strings and the symbol names of the runtime's arrays.

Numbers mean exactly what the sympy numbers mean (:mod:`bridge.codegen.numbers`): the nearest double,
printed with ``repr``; integer literals only below 2^31 (C's ``int``), larger integers and rationals as
doubles (``1e+20``, ``p.0/q.0`` where both operands are exact doubles); named constants (pi, E, ...) as
literals; a number without a double is an :class:`ExportError`. Kinks and branches are branch-free
expressions of doubles: ``sign`` and ``Heaviside`` as ternaries, ``Min``/``Max`` as ``fmin``/``fmax``,
``Piecewise`` as nested ``?:`` (``NAN`` where a Piecewise without an otherwise branch is undefined).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy as sp
from sympy.printing.c import C99CodePrinter

from ..derivation.eom import EquationsOfMotion
from ..errors import ExportError
from ..model import symbols as S
from .numbers import double_literal, exact_division, nearest_double, short
from .printer import CheckedPrinter
from .symengine_c import SymengineCPrinter


# -- C ---------------------------------------------------------------------------------------------
class NhbCPrinter(CheckedPrinter, C99CodePrinter):
    """C99 printer mapping the bridge's symbols to the runtime's arrays."""

    language = "C"

    def __init__(self, names: dict[sp.Symbol, str]):
        super().__init__({"math_macros": {}})
        self.names = names
        self._context = None

    def _print_Symbol(self, expr):
        if expr in self.names:
            return self.names[expr]
        return super()._print_Symbol(expr)

    # -- numbers: the nearest double, never an integer literal that C could overflow ------------------------
    def _print_Integer(self, expr):
        return str(int(expr)) if abs(int(expr)) < 2**31 else double_literal(expr, self._context)

    def _print_Rational(self, expr):
        p, q = int(expr.p), int(expr.q)
        if q == 1:
            return self._print_Integer(expr)
        nearest_double(expr, self._context)  # raises where the value has no double
        return f"{p}.0/{q}.0" if exact_division(p, q) else double_literal(expr, self._context)

    def _print_Float(self, expr):
        return double_literal(expr, self._context)

    def _print_NumberSymbol(self, expr):
        return double_literal(expr, self._context)

    _print_Pi = _print_Exp1 = _print_EulerGamma = _print_Catalan = _print_GoldenRatio = _print_NumberSymbol
    _print_TribonacciConstant = _print_NumberSymbol

    def _not_a_real(self, expr):
        return double_literal(expr, self._context)  # raises: no finite real

    _print_Infinity = _print_NegativeInfinity = _print_ComplexInfinity = _print_NaN = _not_a_real
    _print_ImaginaryUnit = _not_a_real

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"

    # -- functions whose C spelling differs from their sympy meaning ---------------------------------------
    def _print_Pow(self, expr):
        if expr.exp == sp.Rational(1, 3):  # x^(1/3) is not cbrt(x) for x < 0 (sympy: principal root)
            return f"pow({self._print(expr.base)}, 1.0/3.0)"
        return super()._print_Pow(expr)

    def _print_sign(self, expr):
        x = self._print(expr.args[0])
        return f"(({x}) > 0 ? 1.0 : (({x}) < 0 ? -1.0 : 0.0))"

    def _print_Heaviside(self, expr):
        """H(x) = 1 for x > 0, 0 for x < 0 and H0 (sympy's second argument, 1/2 by default) at 0."""
        x = self._print(expr.args[0])
        h0 = self._print(expr.args[1] if len(expr.args) > 1 else sp.S.Half)
        return f"(({x}) > 0 ? 1.0 : (({x}) < 0 ? 0.0 : {h0}))"

    def _print_Piecewise(self, expr):
        """Nested ``(c) ? (e) : ...`` on one line; ``NAN`` where no condition holds (sympy: undefined)."""
        out = "NAN"
        for e, c in reversed(expr.args):
            out = self._print(e) if c == sp.true else f"(({self._print(c)}) ? ({self._print(e)}) : {out})"
        return f"({out})" if not out.startswith("((") else out

    def _print_Mod(self, expr):
        """Sympy's Mod(a, b) takes the sign of b (a - b*floor(a/b)); C's fmod takes the sign of a."""
        a, b = (self._print(arg) for arg in expr.args)
        return f"(({a}) - ({b})*floor(({a})/({b})))"

    def _print_Derivative(self, expr):
        raise ExportError(f"the derivative {short(expr)} cannot be evaluated in C; the equations must not contain "
                          "unevaluated derivatives")


def c_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
    """Return the C name of every symbol of ``eom``: its place in the runtime's arrays.

    ``t`` is ``t``; the coordinates are ``x[0..n-1]``, then the dynamic variables ``x[n + k]``; the
    parameters are ``p[k]`` and the inputs ``in[k]``.
    """
    system = eom.system
    names: dict[sp.Symbol, str] = {S.t: "t"}
    nq = system.n
    for i, c in enumerate(system.coordinates):
        names[c.symbol] = f"x[{i}]"
    for k, s in enumerate(eom.u):
        names[s] = f"x[{nq + k}]"
    for k, p in enumerate(system.parameters):
        names[p.symbol] = f"p[{k}]"
    for k, u in enumerate(system.inputs):
        names[u.symbol] = f"in[{k}]"
    return names


#: a CSE pass with more temporaries than this (:func:`cse_parts`) keeps them in an array and computes them in
#: functions of at most this many statements each: gcc's register allocation grows faster than linearly with
#: the length of one function (benchmarks/fmu_scaling.py)
PART_STATEMENTS = 400


@dataclass(frozen=True)
class CseParts:
    """One CSE pass as C: the part functions and their prototypes, the caller's statements, the reduced expressions."""

    parts: list[list[str]]
    """Lines of each function that computes a part of the temporaries (none for a small pass)."""
    prototypes: list[str]
    """The parts' prototypes."""
    body: list[str]
    """The caller's statements: the temporaries themselves, or the array of them and the calls of the parts."""
    values: list[str]
    """The reduced expressions as C text."""


class _SympyC:
    """The sympy printer behind the interface of :class:`~.symengine_c.SymengineCPrinter` (``doprint``, ``name``)."""

    def __init__(self, printer: NhbCPrinter):
        self.printer = printer

    def doprint(self, expr) -> str:
        return self.printer.doprint(expr)

    def name(self, sym, name: str) -> None:
        self.printer.names[sym] = name


def _cse_pairs(printer: NhbCPrinter, exprs: list[sp.Expr], prefix: str
               ) -> tuple[list, list, SymengineCPrinter | _SympyC]:
    """Return the temporaries ``[(symbol, expression)]`` and reduced expressions of one CSE pass, and their printer.

    The sums' common factors are pulled out first (:mod:`bridge.derivation.factors`); the pass runs in
    symengine (its C++ ``cse``, printed straight from symengine: :mod:`.symengine_c`), or in sympy
    (``order="canonical"``) where an expression has no symengine form or a temporary would share a name with a
    symbol of ``printer``.
    """
    from ..derivation.factors import pull_common_factors

    done = _symengine_cse(exprs)
    if done is not None:
        direct = SymengineCPrinter(printer)
        if not any(sym in direct.names for sym, _ in done[0]):
            return done[0], done[1], direct
    repl, reduced = sp.cse(pull_common_factors(exprs), symbols=sp.numbered_symbols(f"{prefix}_"), order="canonical")
    return repl, reduced, _SympyC(printer)


def cse_block(printer: NhbCPrinter, exprs: list[sp.Expr], prefix: str) -> tuple[list[str], list[str]]:
    """Return the C statements of one joint CSE pass over ``exprs``, and the reduced expressions as C text.

    The temporaries are ``const double <prefix>_<k>`` in the order of the pass; the same expressions give the
    same text.
    """
    return _const_lines(*_cse_pairs(printer, exprs, prefix), prefix)


def _const_lines(repl: list, reduced: list, out: SymengineCPrinter | _SympyC, prefix: str
                 ) -> tuple[list[str], list[str]]:
    """Print the temporaries as ``const double <prefix>_<k> = ...;`` and the reduced expressions."""
    lines = []
    for k, (sym, e) in enumerate(repl):
        out.name(sym, name := f"{prefix}_{k}")
        lines.append(f"    const double {name} = {out.doprint(e)};")
    return lines, [out.doprint(e) for e in reduced]


def cse_parts(printer: NhbCPrinter, exprs: list[sp.Expr], prefix: str, function: str, params: list[str],
              args: list[str]) -> CseParts:
    """Return one joint CSE pass over ``exprs`` inside ``function``, long passes split into part functions.

    Up to :data:`PART_STATEMENTS` temporaries the pass is :func:`cse_block`'s. Beyond, ``void
    <function>_part<j>(params, double *<prefix>)`` computes :data:`PART_STATEMENTS` of them at a time, called in
    order with ``args``: a temporary read only inside its own part is a local ``const double <prefix>_<k>``, one
    read by a later part or by the reduced expressions is an entry of the caller's array ``double <prefix>[n]``.

    Parameters
    ----------
    printer : NhbCPrinter
        The printer (the temporaries' names are added to it).
    exprs : list of sympy.Expr
        The expressions.
    prefix : str
        Name of the temporaries (and of their array).
    function : str
        The calling function's name, prefix of the parts' names.
    params : list of str
        The parts' parameter declarations (what the expressions read), e.g. ``"const double *x"``.
    args : list of str
        The caller's arguments for ``params``.

    Returns
    -------
    CseParts
    """
    repl, reduced, out = _cse_pairs(printer, exprs, prefix)
    if len(repl) <= PART_STATEMENTS:
        return CseParts([], [], *_const_lines(repl, reduced, out, prefix))
    part_of = {sym: k // PART_STATEMENTS for k, (sym, _) in enumerate(repl)}
    shared: dict = {}  # temporaries read outside their part (by a later part or the caller)
    for k, (_, e) in enumerate(repl):
        for s in e.free_symbols:
            if part_of.get(s, k // PART_STATEMENTS) != k // PART_STATEMENTS:
                shared.setdefault(s, 0)
    for e in reduced:
        for s in e.free_symbols:
            if s in part_of:
                shared.setdefault(s, 0)
    for j, sym in enumerate([sym for sym, _ in repl if sym in shared]):
        shared[sym] = j
    statements = []
    for k, (sym, e) in enumerate(repl):
        if sym in shared:
            out.name(sym, name := f"{prefix}[{shared[sym]}]")
            statements.append(f"    {name} = {out.doprint(e)};")
        else:
            out.name(sym, name := f"{prefix}_{k}")
            statements.append(f"    const double {name} = {out.doprint(e)};")
    unused = " ".join(f"(void){decl.rsplit('*', 1)[-1].split()[-1]};" for decl in params)
    parts, prototypes, body = [], [], [f"    double {prefix}[{max(1, len(shared))}];"]
    for j, first in enumerate(range(0, len(statements), PART_STATEMENTS)):
        head = f"void {function}_part{j}({', '.join(params)}, double *{prefix})"
        parts.append([head, "{", f"    {unused}", *statements[first:first + PART_STATEMENTS], "}", ""])
        prototypes.append(f"{head};")
        body.append(f"    {function}_part{j}({', '.join(args)}, {prefix});")
    return CseParts(parts, prototypes, body, [out.doprint(e) for e in reduced])


def _symengine_cse(exprs: list[sp.Expr]) -> tuple[list, list] | None:
    """Return symengine's CSE of ``exprs`` (common factors pulled first), or None without a symengine form.

    symengine names its temporaries apart from the expressions' symbols.
    """
    import symengine as se

    from ..derivation.factors import pull_common_factors_symengine
    from ..derivation.symengine_forms import convert_graph

    try:  # each shared subexpression converted once
        converted = [convert_graph(e) for e in exprs]
    except (TypeError, ValueError, NotImplementedError, RuntimeError, AttributeError, se.SympifyError):
        return None
    repl, reduced = se.cse(pull_common_factors_symengine(converted))
    return list(repl), list(reduced)


def c_array(values) -> str:
    """Return a C initializer ``{v0, v1, ...}`` of doubles (``{0.0}`` for none: C has no empty arrays)."""
    values = [float(v) for v in values]
    bad = [v for v in values if not math.isfinite(v)]
    if bad:
        raise ExportError(f"the value {bad[0]} (a start value, nominal value or parameter) is not a finite number; "
                          "give every value as a finite number")
    return "{" + ", ".join(map(repr, values)) + "}" if values else "{0.0}"


def c_assignments(target: str, values: list[str]) -> list[str]:
    """One statement ``target[k] = values[k];`` per value."""
    return [f"    {target}[{k}] = {value};" for k, value in enumerate(values)]


def c_string(text: str) -> str:
    """Return a C string literal of ``text`` (UTF-8; quotes, backslashes, ``?`` (trigraphs), non-ASCII escaped)."""
    out = [("\\" + chr(b)) if chr(b) in '"\\?' else chr(b) if 32 <= b < 127 else f"\\{b:03o}"
           for b in text.encode("utf-8")]
    return '"' + "".join(out) + '"'


def assignment_parts(block: CseParts, function: str, params: list[str], args: list[str], prefix: str,
                     targets: list[tuple[str, list[str]]]) -> tuple[list[list[str]], list[str], list[str]]:
    """Return the statements ``target[k] = value;`` of a pass's reduced values, in part functions when it has parts.

    A pass of :func:`cse_parts` with part functions reads its reduced values from the array ``prefix``; then
    ``void <function>_fill<j>(params, const double *<prefix>, double *<target>...)`` make at most
    :data:`PART_STATEMENTS` assignments each (a long straight-line function costs the compiler more than
    linearly, and the parts go to files that compile concurrently). A pass without parts keeps the assignments
    inline.

    Parameters
    ----------
    block : CseParts
        The pass.
    function : str
        The calling function's name, prefix of the parts' names.
    params, args : list of str
        The parts' parameter declarations and the caller's arguments for them (as for :func:`cse_parts`).
    prefix : str
        The pass's temporaries' array.
    targets : list of (str, list of str)
        The output arrays (pointers in the caller) and their values.

    Returns
    -------
    tuple
        The part functions' lines, their prototypes, and the caller's statements (the calls, or the assignments).
    """
    lines = [line for target, values in targets for line in c_assignments(target, values)]
    if not block.parts:
        return [], [], lines
    out = [f"double *{target}" for target, _ in targets]
    unused = " ".join(f"(void){decl.rsplit('*', 1)[-1].split()[-1]};" for decl in [*params, f"const double *{prefix}"])
    parts, prototypes, calls = [], [], []
    for j, first in enumerate(range(0, len(lines), PART_STATEMENTS)):
        head = f"void {function}_fill{j}({', '.join([*params, f'const double *{prefix}', *out])})"
        parts.append([head, "{", f"    {unused}", *lines[first:first + PART_STATEMENTS], "}", ""])
        prototypes.append(f"{head};")
        calls.append(f"    {function}_fill{j}({', '.join([*args, prefix, *(t for t, _ in targets)])});")
    return parts, prototypes, calls
