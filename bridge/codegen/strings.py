"""Text inside generated string literals: Modelica's escapes (C's: :func:`bridge.codegen.c.c_string`)."""

from __future__ import annotations


def modelica_text(text: str) -> str:
    r"""Return the body of a Modelica string literal of ``text``.

    Backslashes and quotes are escaped, line breaks and tabs written as ``\n``, ``\t`` (the language's escapes),
    so that a multi-line description stays one line of the model.
    """
    return (text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n")
            .replace("\t", "\\t"))


def modelica_block_text(text: str) -> str:
    """Return the body of a multi-line Modelica string literal (a ``Documentation`` annotation's HTML).

    Backslashes, quotes, tabs and carriage returns are escaped, line breaks kept as they are (Modelica strings
    may span lines, as the MSL's do), so the annotation reads as the HTML it holds.
    """
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\t", "\\t")
