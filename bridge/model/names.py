"""Did-you-mean suggestions for the names of a system file (frames, bodies, points, keys)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def closest_name(word: str, choices: Iterable[str]) -> str | None:
    """Return the declared name ``word`` most likely stands for.

    One differing only in letter case first (``wl`` for ``wL``), else the closest by :func:`difflib.get_close_matches`
    (compared without case); None if none is close.
    """
    names = [c for c in choices if isinstance(c, str)]
    if not isinstance(word, str) or not names:
        return None
    folded = [c for c in names if c.lower() == word.lower() and c != word]
    if folded:
        return folded[0]
    lower = {c.lower(): c for c in reversed(names)}
    close = difflib.get_close_matches(word.lower(), list(lower), n=1)
    return lower[close[0]] if close else None


def suggest(word: str, choices: Iterable[str]) -> str:
    """Return ``"did you mean 'x'?"`` for :func:`closest_name`, or "" when no name is close."""
    close = closest_name(word, choices)
    return f"did you mean {close!r}?" if close else ""
