"""Result files: read with one-line errors; written safely (a temporary file beside the
target, then a rename)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import orjson

from agentjudge.errors import UsageError


def write_atomic(path: Path, document: dict[str, Any], indent: int | None = None) -> None:
    """Write to a temporary file beside `path`, then rename: never a half-written file.

    One line by default (`jq .` pretty-prints it); `indent=2` for formats that fix it. Both
    are orjson's (byte-identical to `json.dumps(..., ensure_ascii=False)`, and tens of times
    faster than json's indenting encoder); json serves what orjson refuses (huge integers).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        if indent not in (None, 2):
            raise TypeError("orjson indents by 2 only")
        data = orjson.dumps(document, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:
        data = json.dumps(document, ensure_ascii=False, indent=indent).encode()
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            out.write(b"\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: Path, text: str) -> None:
    """Write UTF-8 text the same safe way as `write_atomic`: a temporary file, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def check_writable(path: Path, flag: str = "--output", what: str = "the results") -> None:
    """Fail now, with the fix, if the results file (or `what`, chosen with `flag`) could not
    be written later."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot write {what} here ({exc.strerror}); choose another {flag}"
        ) from None


def read_json(path: Path, what: str) -> Any:
    """The parsed JSON of `path`; a missing or invalid file is a usage error naming it."""
    try:
        with open(path, "rb") as handle:
            return orjson.loads(handle.read())
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a folder; name a JSON file") from None
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read: {exc.strerror}") from None
    except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path} is not valid JSON: {exc}; fix the file") from None
