"""The C99 printer for generated FMU code and its joint CSE blocks (PyDy-style codegen)."""

from __future__ import annotations

import sympy as sp
from sympy.printing.c import C99CodePrinter

from ..derivation.eom import EquationsOfMotion
from ..model import symbols as S


# -- C ---------------------------------------------------------------------------------------------
class NhbCPrinter(C99CodePrinter):
    """C99 printer mapping the bridge's symbols to the runtime's arrays."""

    def __init__(self, names: dict[sp.Symbol, str]):
        super().__init__({"math_macros": {}})
        self.names = names

    def _print_Symbol(self, expr):
        if expr in self.names:
            return self.names[expr]
        return super()._print_Symbol(expr)


def _c_names(eom: EquationsOfMotion) -> dict[sp.Symbol, str]:
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


def _cse_block(printer: NhbCPrinter, exprs: list[sp.Expr], prefix: str) -> tuple[list[str], list[str]]:
    temps = sp.numbered_symbols(f"{prefix}_")
    repl, reduced = sp.cse(exprs, symbols=temps, order="canonical")
    lines = []
    for sym, e in repl:
        printer.names[sym] = str(sym)
        lines.append(f"    const double {sym} = {printer.doprint(e)};")
    return lines, [printer.doprint(e) for e in reduced]


def _c_array(values) -> str:
    """A C initializer ``{v0, v1, ...}`` of doubles (``{0.0}`` for none: C has no empty arrays)."""
    return "{" + ", ".join(repr(float(v)) for v in values) + "}" if values else "{0.0}"


def _c_assignments(target: str, values: list[str]) -> list[str]:
    """One statement ``target[k] = values[k];`` per value."""
    return [f"    {target}[{k}] = {value};" for k, value in enumerate(values)]


