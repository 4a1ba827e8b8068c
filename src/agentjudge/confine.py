"""Input confinement: a file found under a named folder is opened only if it really lies inside.

So is a file a trajectory's ref names (`atif/collection.py`), and a traces file in a folder.
A symbolic link is followed only when its target, with every link along the way resolved,
is inside the input root. A link that leads outside, loops or points at nothing becomes a
`Problem` on the link itself. Resolving a link reads link texts and file metadata (`lstat`),
never a file's contents, so nothing outside the root is opened or listed.

This module imports only `agentjudge.errors`, so the traces loader can use it without
loading the ATIF models.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from agentjudge.errors import Problem, clip

OUTSIDE = "input.symlink_outside"
LOOP = "input.symlink_loop"
DANGLING = "input.symlink_dangling"
NOT_REGULAR = "file.not_regular"


def shown_path(path: Path | str) -> str:
    """`path` as text that any output can hold: a byte of a file name that is not UTF-8
    (Python keeps it as a lone surrogate, which no UTF-8 output may carry) as `\\xff`."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def resolve_inside(path: Path, root: Path, display: str) -> Path | Problem:
    """`path` with every symbolic link resolved, when that lies inside `root` (a real path).

    Otherwise a `Problem` naming `display`: a link whose target is outside the root, a link
    loop, or a link to nothing. Nothing is opened.
    """
    try:
        real = Path(os.path.realpath(path, strict=True))
    except OSError as exc:
        # Resolved as far as it goes: a link leading out of the root is refused as that,
        # whatever lies beyond (a loop, nothing), which is not described.
        loose = Path(os.path.realpath(path))
        if not loose.is_relative_to(root):
            return outside_problem(display, loose, root)
        if exc.errno == errno.ELOOP:
            return Problem(display, "$", LOOP, "symbolic link loop; fix or remove the link")
        if exc.errno == errno.ENOENT:
            return Problem(
                display,
                "$",
                DANGLING,
                f"symbolic link to {clip(str(loose))}, which does not exist; fix or remove "
                "the link",
            )
        return Problem(display, "$", "file.unreadable", f"cannot resolve: {exc.strerror}")
    return real if real.is_relative_to(root) else outside_problem(display, real, root)


def outside_problem(display: str, target: Path, root: Path) -> Problem:
    """The problem of a link that leads out of the input root (its target was not opened)."""
    return Problem(
        display,
        "$",
        OUTSIDE,
        f"symbolic link to {clip(str(target))}, outside the input folder {clip(str(root))}; "
        "it was not opened: copy the file into the folder, or name it (or a folder holding "
        "both) instead",
    )


def not_regular_problem(display: str) -> Problem:
    """The problem of a `*.json` entry that is a pipe, socket or device (reading could hang)."""
    return Problem(
        display,
        "$",
        NOT_REGULAR,
        "not a regular file (a pipe, socket or device); remove it or move it out of the folder",
    )
