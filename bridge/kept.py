"""Values computed once per immutable object (equations, a system) and kept on the object itself.

A value kept on the object lives exactly as long as the object, even where it refers back to it (a native run
refers to its equations: a table outside them, keyed by the object, would keep both alive). The objects that
keep values leave them out of their pickles (``__getstate__``): what is sent to a Dask worker is the object's
fields, and the worker computes again what it needs.

Examples
--------
>>> class Frozen:
...     pass
>>> obj, calls = Frozen(), []
>>> kept(obj, "answer", lambda: calls.append(1) or 42), kept(obj, "answer", lambda: calls.append(1) or 42)
(42, 42)
>>> len(calls)
1
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, TypeVar

T = TypeVar("T")
#: the attribute of the object's ``__dict__`` that holds its kept values
KEPT = "_kept"


def kept(obj: Any, key: Hashable, make: Callable[[], T]) -> T:
    """Return ``make()`` for ``(obj, key)``, computed at the first call and kept on ``obj`` for the later ones.

    Parameters
    ----------
    obj : object
        An immutable object with a ``__dict__`` (frozen dataclasses included: the value is written past their
        ``__setattr__``).
    key : hashable
        What is kept (and its arguments).
    make : callable
        Computes the value.

    Returns
    -------
    object
        The kept value.
    """
    store = obj.__dict__.get(KEPT)
    if store is None:
        store = obj.__dict__.setdefault(KEPT, {})
    if key not in store:
        store[key] = make()
    return store[key]


def without_kept(obj: Any) -> dict:
    """Return ``obj.__dict__`` without its kept values: the state an object that keeps values pickles."""
    return {name: value for name, value in obj.__dict__.items() if name != KEPT}


__all__ = ["KEPT", "kept", "without_kept"]
