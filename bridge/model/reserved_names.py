"""The names a system file may not use, and the form of a name.

Reserved are the keywords and built-ins of Modelica and C, the expression language's own names and the
prefixes of generated code; a name is an identifier of at most 64 characters.
"""

from __future__ import annotations

import re

from .expressions import FUNCTIONS, SPECIAL_NAMES

__all__ = [
    "C_KEYWORDS",
    "GENERATED_NAMES",
    "IDENTIFIER",
    "MAX_NAME_LENGTH",
    "MODELICA_BUILTINS",
    "MODELICA_KEYWORDS",
    "RESERVED",
    "RESERVED_PREFIXES",
    "reserved_problem",
]

MODELICA_KEYWORDS = frozenset("""
algorithm and annotation assert block break class connect connector constant constrainedby der
discrete each else elseif elsewhen encapsulated end enumeration equation expandable extends external
false final flow for function if import impure in initial inner input loop model not operator or outer
output package parameter partial protected public pure record redeclare replaceable return stream then
true type when while within time
""".split())
C_KEYWORDS = frozenset("""
auto break case char const continue default do double else enum extern float for goto if inline int long
register restrict return short signed sizeof static struct switch typedef union unsigned void volatile
while _Bool _Complex _Imaginary bool true false NULL main
""".split())
#: Modelica's predefined types, built-in operators and functions, and the standard library's top-level names
MODELICA_BUILTINS = frozenset("""
Real Integer Boolean String StateSelect ExternalObject AssertionLevel Connections Clock Subtask Modelica
ModelicaServices Complex abs sign sqrt div mod rem ceil floor integer log10 initial terminal noEvent smooth
sample pre edge change reinit delay cardinality homotopy semiLinear inStream actualStream getInstanceName
spatialDistribution ndims size scalar vector matrix identity diagonal zeros ones fill linspace transpose
outerProduct symmetric cross skew product sum cat array assert terminate previous hold subSample superSample
shiftSample backSample noClock interval firstTick
""".split())
MAX_NAME_LENGTH = 64
#: names the exporters generate (velocity variables der_<q>, multipliers, residuals, temporaries)
GENERATED_NAMES = frozenset({"lambda", "residual"})
RESERVED_PREFIXES = ("der_", "nhb_", "fmi")
RESERVED = (MODELICA_KEYWORDS | MODELICA_BUILTINS | C_KEYWORDS | frozenset(FUNCTIONS) | frozenset(SPECIAL_NAMES)
            | GENERATED_NAMES)
IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


def reserved_problem(name: str) -> tuple[str, str] | None:
    """(message, hint) when ``name`` is reserved (:data:`RESERVED`, :data:`RESERVED_PREFIXES`), else None."""
    if name not in RESERVED and not name.startswith(RESERVED_PREFIXES):
        return None
    what = ("a Modelica keyword" if name in MODELICA_KEYWORDS else "a C keyword" if name in C_KEYWORDS
            else "a predefined Modelica type, operator or library name" if name in MODELICA_BUILTINS
            else "a reserved name of the expression language" if name in FUNCTIONS or name in SPECIAL_NAMES
            else "reserved for generated code")
    return f"{name!r} is {what} and cannot be used as a name", f"rename it, e.g. {name}_"
