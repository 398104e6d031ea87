"""The printer base every generated language shares.

What the target language cannot mean the same way is an :class:`~bridge.errors.ExportError` naming the
expression.
"""

from __future__ import annotations

import re

from sympy.printing.codeprinter import PrintMethodNotImplementedError

from ..errors import ExportError
from .numbers import short

#: an identifier every generated language writes without quoting (letters, digits, underscores)
PLAIN_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class CheckedPrinter:
    """Printer mixin (shared with the C printer) that refuses what the target language cannot mean.

    What the target language cannot mean the same way is an :class:`ExportError` naming the expression, and
    ``self._context`` holds the expression being printed.
    """

    language = "Modelica"

    def doprint(self, expr, assign_to=None):
        """Return the text of ``expr`` in :attr:`language`."""
        self._context = expr
        try:
            return super().doprint(expr, assign_to)
        except PrintMethodNotImplementedError as exc:
            what = str(exc).splitlines()[0].rsplit(": ", 1)[-1]
            raise ExportError(f"{short(expr)} cannot be written in {self.language}: it contains {what}, which has "
                              f"no {self.language} equivalent; use the functions of the system-file language only"
                              ) from exc
