"""What every table reader of a system file is given.

The :class:`~bridge.model.table_reader.TableReader` (tables, keys, names, plain values, problems) and the
:class:`~bridge.model.symbol_table.SymbolTable` (declared symbols, expression entries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import ProblemCollector
from .symbol_table import SymbolTable
from .table_reader import TableReader

__all__ = ["ReadContext"]


@dataclass(frozen=True)
class ReadContext:
    """The shared state of one reading of a system file."""

    tables: TableReader
    symbols: SymbolTable

    @classmethod
    def of(cls, data: Mapping[str, Any], source: str) -> ReadContext:
        """Return a fresh context for the mapping ``data`` read from ``source``."""
        tables = TableReader(data, source)
        return cls(tables, SymbolTable(tables.problems))

    @property
    def problems(self) -> ProblemCollector:
        """The problems recorded so far (those of the table reader)."""
        return self.tables.problems
