"""JSON Lines read one line at a time, each record with its line number (session logs)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from agentjudge.errors import InputError, Problem
from agentjudge.files import open_input


def records(path: Path, display: str, max_line: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line of `path` as a JSON object with its 1-based line number.

    A line that is not a JSON object stops the read with one `InputError` naming the file
    and the line: a session log with a broken line is a damaged file, and what follows it
    may not belong to the run. Lines are read one at a time, never the whole file, and
    none is held longer than `max_line` bytes (`--max-file-bytes`).
    """
    with open_input(path, "trace file") as handle:
        for number, raw in enumerate(iter(lambda: handle.readline(max_line + 1), b""), start=1):
            if len(raw) > max_line:
                what = f"longer than max_file_bytes={max_line:,}"
                problem = _bad_line(display, number, what, "raise --max-file-bytes, or ")
                raise InputError([problem])
            if not raw.strip():
                continue
            try:
                value = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                problem = _bad_line(display, number, f"not valid JSON ({exc.msg})", "")
                raise InputError([problem]) from None
            if not isinstance(value, dict):
                problem = _bad_line(display, number, "not a JSON object", "")
                raise InputError([problem]) from None
            yield number, value


def _bad_line(display: str, number: int, what: str, other_fix: str) -> Problem:
    return Problem(
        display,
        f"line {number}",
        "jsonl.bad_line",
        f"{what}; a session log holds one JSON object a line: {other_fix}repair or remove "
        f"line {number}",
    )
