"""Which paths the code under test opens or lists, seen by Python's audit hook.

The hook sees every `open` (built-in, `io`, `os.open`) and every folder listing
(`os.scandir`, `os.listdir`) in this process, so a test that calls the code in-process
can prove a path was never read. An audit hook cannot be removed: it is added once, here,
and records only inside `recording_opens()`.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_EVENTS = frozenset({"open", "os.scandir", "os.listdir"})
_opened: list[str] = []
_recording = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _recording and event in _EVENTS and args and isinstance(args[0], str | bytes | Path):
        _opened.append(os.fsdecode(args[0]))


sys.addaudithook(_audit)


@contextmanager
def recording_opens() -> Iterator[list[str]]:
    """Every path opened or listed inside the block, as given to `open`/`scandir`."""
    global _recording
    _opened.clear()
    _recording = True
    try:
        yield _opened
    finally:
        _recording = False


def reaching(opened: list[str], folder: Path) -> list[str]:
    """The recorded paths that are, or lead through links into, `folder` or below it."""
    return [
        path
        for path in opened
        if Path(os.path.realpath(path)).is_relative_to(folder)
        or Path(os.path.abspath(path)).is_relative_to(folder)
    ]
