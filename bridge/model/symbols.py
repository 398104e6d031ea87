"""Naming of the symbols shared by every module.

A coordinate ``x`` is ``Symbol("x")``, its velocity ``Symbol("der(x)")`` and its
acceleration ``Symbol("der(der(x))")``; multiplier k is ``Symbol("lambda[k]")``.
The parenthesised names cannot clash with user names, which must be identifiers.
"""

from __future__ import annotations

import sympy as sp

t = sp.Symbol("t")


def q(name: str) -> sp.Symbol:
    return sp.Symbol(name)


def qd(name: str) -> sp.Symbol:
    return sp.Symbol(f"der({name})")


def qdd(name: str) -> sp.Symbol:
    return sp.Symbol(f"der(der({name}))")


def multiplier(k: int) -> sp.Symbol:
    return sp.Symbol(f"lambda[{k}]")


def base_name(symbol: sp.Symbol) -> str:
    """``der(der(x))`` -> ``x``."""
    name = symbol.name
    while name.startswith("der(") and name.endswith(")"):
        name = name[4:-1]
    return name
