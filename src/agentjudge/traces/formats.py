"""The trace formats agentjudge reads, in the order content detection tries them."""

from __future__ import annotations

from pathlib import Path

from agentjudge.errors import UsageError
from agentjudge.traces import claude_code, codex, inspect_log, openinference, otlp_genai
from agentjudge.traces.read import Format

# OpenInference first: its spans may carry GenAI attributes as well, never the reverse.
FORMATS: tuple[Format, ...] = (
    openinference.FORMAT,
    otlp_genai.FORMAT,
    claude_code.FORMAT,
    codex.FORMAT,
    inspect_log.FORMAT,
)

# ATIF is no trace format: files in it go to the ATIF loader as they are.
ATIF = "atif"
# How much of a file detection reads.
HEAD_BYTES = 64 * 1024


def format_names() -> tuple[str, ...]:
    """The names `--format` takes."""
    return (ATIF, *(f.name for f in FORMATS))


def named(name: str) -> Format | None:
    """The format called `name` (None: ATIF); a `UsageError` listing the names otherwise."""
    if name == ATIF:
        return None
    for candidate in FORMATS:
        if candidate.name == name:
            return candidate
    raise UsageError(f"--format {name}: unknown format; use one of {', '.join(format_names())}")


def detect(path: Path, head: bytes) -> Format | None:
    """The first format whose sniff recognises `head` (None: read it as ATIF)."""
    return next((f for f in FORMATS if f.sniff(path, head)), None)
