"""Result files: read with one-line errors; written safely (a temporary file beside the
target, then a rename)."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from agentjudge.errors import UsageError

# The most a file read whole may hold: results and labels files (JSON), and the small text
# files (configs, rubrics, key files). Read to at most one byte more, never to the end.
MAX_JSON_BYTES = 512 * 1024 * 1024
MAX_TEXT_BYTES = 1024 * 1024


def write_atomic(
    path: Path,
    document: Mapping[str, object],
    indent: int | None = None,
    flag: str = "--output",
    what: str = "the results",
) -> None:
    """Write to a temporary file beside `path`, then rename: never a half-written file.

    One line by default (`jq .` pretty-prints it); `indent=2` for formats that fix it. Both
    are orjson's (byte-identical to `json.dumps(..., ensure_ascii=False)`, and tens of times
    faster than json's indenting encoder); json serves what orjson refuses (huge integers).
    A file that cannot be written is a `UsageError` (see `write_file_atomic`).
    """
    try:
        if indent not in (None, 2):
            raise TypeError("orjson indents by 2 only")
        data = orjson.dumps(document, option=orjson.OPT_INDENT_2 if indent else 0)
    except TypeError:
        data = json.dumps(document, ensure_ascii=False, indent=indent).encode()
    write_file_atomic(path, lambda out: out.writelines((data, b"\n")), flag, what)


def write_text_atomic(
    path: Path, text: str, flag: str = "--output", what: str = "the report"
) -> None:
    """Write UTF-8 text the same safe way as `write_atomic`: a temporary file, then a rename."""
    write_file_atomic(path, lambda out: out.write(text.encode()), flag, what)


def write_file_atomic(
    path: Path, write: Callable[[BinaryIO], object], flag: str, what: str
) -> None:
    """Call `write` on a temporary file beside `path`, flush it to disk, then rename it over
    `path`. Only a regular file (or nothing) is ever replaced: a folder, a device or a
    symbolic link at `path` is refused. When anything fails (a full disk, say) the temporary
    file goes, `path` is as it was, and the error is one `UsageError` line."""
    refuse_non_file(path, flag, what)
    tmp: str | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())  # a full disk must fail here, before the old file goes
        refuse_non_file(path, flag, what)  # it may have become something else meanwhile
        os.replace(tmp, path)
        tmp = None
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot write {what} ({exc.strerror or exc}); the file there, if any, is "
            f"unchanged: free space or fix the permissions, or choose another {flag}, then run "
            "the same command again"
        ) from None
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)


def refuse_non_file(path: Path, flag: str = "--output", what: str = "the results") -> None:
    """Raise `UsageError` unless `path` is a regular file or does not exist yet.

    Writing renames a new file over `path`: over a device node that would replace the device
    with a file, over a symbolic link it would replace the link, not write where it points.
    """
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:  # e.g. a parent that is a file: ENOTDIR
        raise UsageError(
            f"{path}: cannot write {what} here ({exc.strerror}); choose another {flag}"
        ) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISLNK(mode):
        kind = "a symbolic link (writing would replace the link, not its target)"
    elif stat.S_ISDIR(mode):
        kind = "a folder"
    else:
        kind = "a device or special file, not a regular file"
    raise UsageError(f"{path}: is {kind}; {flag} must name a regular file or a new one")


def check_writable(path: Path, flag: str = "--output", what: str = "the results") -> None:
    """Fail now, with the fix, if the results file (or `what`, chosen with `flag`) could not
    be written later: before any judge call, never judge work that cannot be saved."""
    refuse_non_file(path, flag, what)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", suffix=".probe"):
            pass
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot write {what} here ({exc.strerror}); choose another {flag}"
        ) from None


def read_json(path: Path, what: str, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The parsed JSON of `path`; a missing, invalid or too large file (more than
    `max_bytes`) is a usage error naming it."""
    try:
        return orjson.loads(read_capped(path, what, max_bytes))
    except (orjson.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{what} {path} is not valid JSON: {exc}; fix the file") from None


def read_capped(path: Path, what: str, max_bytes: int) -> bytes:
    """The bytes of `path`, read no further than `max_bytes` (a pipe may never end); more,
    missing, unreadable or a device (/dev/zero) is a usage error naming it as `what`."""
    try:
        with open_input(path, what) as handle:
            if stat.S_ISCHR(mode := os.fstat(handle.fileno()).st_mode) or stat.S_ISBLK(mode):
                raise UsageError(f"{what} {path} is a device, not a file; name a file")
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read: {exc.strerror}") from None
    if len(data) > max_bytes:
        raise UsageError(
            f"{what} {path} is larger than {max_bytes:,} bytes, the most it may be; "
            "name the right file"
        )
    return data


def read_text_capped(path: Path, what: str, max_bytes: int = MAX_TEXT_BYTES) -> str:
    """`read_capped`, decoded as UTF-8; bytes that are not UTF-8 are a usage error naming
    where the first is (not what it is: the file may hold a secret)."""
    data = read_capped(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{what} {path} is not UTF-8 text (at byte {exc.start}); save it as UTF-8"
        ) from None


def open_input(path: Path, what: str) -> BinaryIO:
    """`path` opened to read bytes; missing, a folder or unreadable is a usage error naming
    it as `what` (e.g. "dataset")."""
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} {path} is a folder; name a file") from None
    except OSError as exc:
        raise UsageError(f"{what} {path} cannot be read: {exc.strerror}") from None
