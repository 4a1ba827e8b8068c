"""What the console reporters of `compare` and `analyze` share: a line of text from the
files, and their tables."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentjudge.printable import printable


def say(console: Console, *parts: str | tuple[str, str]) -> None:
    """Print one line of `parts` (text, or text and its style), soft-wrapped. Text, not
    markup: ids, paths and values from the files may hold "[" or ":name:"; printable: a
    newline or escape in them would forge a line or restyle the console."""
    shown = [printable(p) if isinstance(p, str) else (printable(p[0]), p[1]) for p in parts]
    console.print(Text.assemble(*shown), soft_wrap=True)


def table(title: str, *columns: str) -> Table:
    """A table with bold headers: a name column, then `columns` right-justified (figures)."""
    made = Table(title=title, show_header=True, header_style="bold")
    made.add_column(columns[0])
    for header in columns[1:]:
        made.add_column(header, justify="right")
    return made
