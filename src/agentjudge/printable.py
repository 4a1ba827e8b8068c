"""Untrusted names made safe to print: one line, no terminal control.

A file name, case id or trajectory id comes from input. Printed raw, a newline in it starts
a line of its own (`valid ... INJECTED.json`), a carriage return overwrites the line, an
escape sequence or a bidi control restyles or reorders it. Such characters are shown as
Python writes them in a string (`\\n`, `\\r`, `\\x1b`, `\\u202e`), so the line is still one
line and still says what the name holds.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """`text` with every character that is not printable (`str.isprintable`: controls,
    line and paragraph separators, format characters such as bidi overrides) escaped."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
