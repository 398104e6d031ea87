"""Naming of the symbols shared by every module.

A coordinate ``x`` is ``Symbol("x")``, its velocity ``Symbol("der(x)")`` and its
acceleration ``Symbol("der(der(x))")``; multiplier k is ``Symbol("lambda[k]")``.
The parenthesised names cannot clash with user names, which must be identifiers.

Examples
--------
>>> import bridge
>>> bridge.symbols.q("x"), bridge.symbols.qd("x"), bridge.symbols.qdd("x"), bridge.symbols.multiplier(1)
(x, der(x), der(der(x)), lambda[1])
>>> bridge.symbols.base_name(bridge.symbols.qd("theta"))
'theta'
"""

from __future__ import annotations

import sympy as sp

t = sp.Symbol("t")


def q(name: str) -> sp.Symbol:
    """Return the symbol of the coordinate ``name``.

    Parameters
    ----------
    name : str
        The coordinate's name.

    Returns
    -------
    sympy.Symbol
        ``Symbol(name)``.

    Examples
    --------
    >>> from bridge.model import symbols
    >>> symbols.q("x")
    x
    """
    return sp.Symbol(name)


def qd(name: str) -> sp.Symbol:
    """Return the symbol of the velocity of the coordinate ``name``.

    Parameters
    ----------
    name : str
        The coordinate's name.

    Returns
    -------
    sympy.Symbol
        ``Symbol("der(name)")``.

    Examples
    --------
    >>> from bridge.model import symbols
    >>> symbols.qd("x")
    der(x)
    """
    return sp.Symbol(f"der({name})")


def qdd(name: str) -> sp.Symbol:
    """Return the symbol of the acceleration of the coordinate ``name``.

    Parameters
    ----------
    name : str
        The coordinate's name.

    Returns
    -------
    sympy.Symbol
        ``Symbol("der(der(name))")``.

    Examples
    --------
    >>> from bridge.model import symbols
    >>> symbols.qdd("x")
    der(der(x))
    """
    return sp.Symbol(f"der(der({name}))")


def multiplier(k: int) -> sp.Symbol:
    """Return the symbol of the ``k``-th Lagrange multiplier.

    Parameters
    ----------
    k : int
        The multiplier's number, from 1.

    Returns
    -------
    sympy.Symbol
        ``Symbol("lambda[k]")``.

    Examples
    --------
    >>> from bridge.model import symbols
    >>> symbols.multiplier(2)
    lambda[2]
    """
    return sp.Symbol(f"lambda[{k}]")


def base_name(symbol: sp.Symbol) -> str:
    """Return the coordinate name of a symbol: ``der(der(x))`` -> ``x``."""
    name = symbol.name
    while name.startswith("der(") and name.endswith(")"):
        name = name[4:-1]
    return name
