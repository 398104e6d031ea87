"""The C printer of generated FMU code lives in :mod:`bridge.codegen.c`; these names stay importable from here
while code written against the former layout is merged (the underscored ones are the former spellings)."""

from ..codegen.c import NhbCPrinter, c_array, c_assignments, c_names, c_string, cse_block

_c_array, _c_assignments, _c_names, _cse_block = c_array, c_assignments, c_names, cse_block

__all__ = ["NhbCPrinter", "c_array", "c_assignments", "c_names", "c_string", "cse_block"]
