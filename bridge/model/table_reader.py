"""The reader every table of a system file is read with.

It holds the tables of the mapping, their keys, the names declared across all tables, and the plain values
of entries (numbers, texts, units), each problem recorded in one :class:`~bridge.errors.ProblemCollector`
for the whole file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import ProblemCollector
from .reserved_names import IDENTIFIER, MAX_NAME_LENGTH, reserved_problem
from .system import finite
from .units import si_problem, unit_problem

__all__ = ["TableReader", "close_match"]


def close_match(word: str, choices: Iterable[str]) -> str:
    """``"did you mean 'x'?"`` for the closest of ``choices`` (:func:`difflib.get_close_matches`), or ""."""
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"did you mean {close[0]!r}?" if close else ""


class TableReader:
    """The tables of one system file (a mapping in the file format) with their problems and declared names.

    Parameters
    ----------
    data : Mapping
        The file's top-level mapping.
    source : str
        The file name reported with every problem.
    """

    def __init__(self, data: Mapping[str, Any], source: str):
        self.data = data
        self.source = source
        self.problems = ProblemCollector(source)
        self.names: dict[str, str] = {}  # declared name -> kind

    def add(self, entry: str, message: str, hint: str = "") -> None:
        """Record a problem at ``entry``."""
        self.problems.add(entry, message, hint)

    def count(self) -> int:
        """Return the number of problems recorded so far (compare before and after reading an entry)."""
        return len(self.problems.problems)

    def table(self, key: str, required: bool = False) -> dict:
        """Return the table ``[key]`` ({} when missing, or not a table: a problem)."""
        value = self.data.get(key, {})
        if key not in self.data and required:
            self.add(key, f"the [{key}] table is missing", f"add a [{key}] table")
            return {}
        if not isinstance(value, dict):
            self.add(key, f"{key} must be a table, not {type(value).__name__}", f"write it as [{key}]")
            return {}
        return value

    def check_keys(self, entry: str, value: dict, allowed: set[str]) -> None:
        """Report every key of ``value`` that is not ``allowed``, with the closest allowed one."""
        for key in value:
            if key not in allowed:
                hint = close_match(key, allowed) or "allowed keys: " + ", ".join(sorted(allowed))
                self.add(f"{entry}.{key}" if entry else key, f"unknown key {key!r}", hint)

    def declare(self, entry: str, name: Any, kind: str) -> bool:
        """Declare ``name`` (a ``kind``: coordinate, parameter, ...): a valid, unreserved, unique identifier."""
        if not isinstance(name, str) or not name.isascii():
            self.add(entry, f"name {name!r} contains non-ASCII characters",
                     "use ASCII letters, digits and underscores, e.g. theta instead of \u03b8")
            return False
        if not IDENTIFIER.match(name):
            self.add(entry, f"{name!r} is not a valid identifier",
                     "names start with a letter and contain only letters, digits and underscores")
            return False
        if len(name) > MAX_NAME_LENGTH:
            self.add(entry, f"the name {name[:20]}... is {len(name)} characters long (at most {MAX_NAME_LENGTH})",
                     "use a shorter name; it becomes a Modelica, C and file name")
            return False
        reserved = reserved_problem(name)
        if reserved:
            self.add(entry, *reserved)
            return False
        if name in self.names:
            self.add(entry, f"{name!r} is already declared as a {self.names[name]}",
                     "every name must be unique across coordinates, parameters, inputs, definitions and outputs")
            return False
        self.names[name] = kind
        return True

    def number(self, entry: str, value: Any, required: bool = True, default: float = 0.0) -> float:
        """Read a finite number (``default`` and a problem when it is not; when missing, a problem if ``required``)."""
        if value is None:
            if required:
                self.add(entry, "value is missing", "give a number")
            return default
        if not finite(value):
            self.add(entry, f"expected a finite number, got {value!r}", "write a number like 1.5 (no quotes)")
            return default
        return float(value)

    def text(self, entry: str, value: Any, lines: bool = True) -> str:
        """Read a description: printable text, with line breaks and tabs when ``lines``.

        A multi-line text is a TOML ``\"\"\"...\"\"\"`` string; CR LF becomes LF. No other control characters
        are allowed, which XML and C cannot carry.
        """
        if value is None:
            return ""
        if not isinstance(value, str):
            self.add(entry, f"expected a string, got {type(value).__name__}", 'write it in quotes, e.g. "m"')
            return ""
        if lines:
            value = value.replace("\r\n", "\n")
        allowed = "\n\t" if lines else ""
        bad = next((ch for ch in value if not ch.isprintable() and ch not in allowed), None)
        if bad is not None:
            self.add(entry, f"the text contains the control or non-character U+{ord(bad):04X}",
                     "remove it; descriptions are printable text (line breaks and tabs allowed), names and "
                     "units printable text on one line")
            return ""
        return value

    def unit(self, entry: str, value: Any) -> str:
        """Read a unit string in the Modelica/FMI unit syntax (e.g. "N.m", "rad/s", "kg.m2"), or ""."""
        text = self.text(entry, value, lines=False)
        problem = unit_problem(text)
        if problem:
            self.add(entry, problem, 'write units like "m", "rad/s", "N.m.s/rad", "kg.m2" or "m/s2" '
                     "(factors joined by '.', one '/', integer exponents, SI symbols and prefixes)")
            return ""
        not_si = si_problem(text)
        if not_si:
            self.add(entry, *not_si)
            return ""
        return text

    def coordinate_unit(self, entry: str, value: Any) -> str:
        """Read a coordinate's unit: a product of factors (``m``, ``rad``, ``m.rad-1``), without ``/``.

        Its velocity and acceleration get ``<unit>/s`` and ``<unit>/s2`` (as the MSL's ``m/s``, ``rad/s2``).
        """
        unit = self.unit(entry, value)
        if unit and unit_problem(f"{unit}/s2"):
            self.add(entry, f"the coordinate unit {unit!r} cannot be extended to the velocity's unit "
                     f"({unit}/s)", "write it as a product with negative exponents, e.g. m.rad-1 for m/rad")
            return ""
        return unit
