"""Find the trajectory files the user named: files as given, folders searched recursively.

A path the user names is followed wherever it leads (naming it is the user's choice); what
a named folder holds is confined to that folder (`agentjudge.confine`). A link inside it
that leads outside, loops or points at nothing, and a `*.json` that is not a regular file,
become an `InputFile` carrying its problem, so the rest of the collection is still checked.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjudge.confine import OUTSIDE, not_regular_problem, resolve_inside, shown_path
from agentjudge.errors import InputError, Problem, UsageError


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file to load: its real path, the folder refs may not escape, and its display name.

    With `problem` set the file is never opened: `path` is then the entry itself (a link).
    """

    path: Path
    root: Path
    display: str
    problem: Problem | None = None


def discover(
    paths: Sequence[str | Path], max_files: int, suffixes: tuple[str, ...] = (".json",)
) -> list[InputFile]:
    """Every file named `*.json` (or another of `suffixes`) under `paths`, each folder in
    sorted path order, without duplicates.

    A named file's input root is the folder it really lies in; a named folder (after its
    links are resolved) is its own root. Raises `UsageError` for a path that does not exist
    or a folder with no JSON file, and `InputError` when there are more than `max_files`.
    """
    if not paths:
        raise UsageError("no input: name at least one trajectory file or folder")
    found: list[InputFile] = []
    seen: set[Path] = set()
    for given in paths:
        real = _named(given)
        if real.is_dir():
            candidates = [
                InputFile(real / rel, real, shown_path(Path(given) / rel), item)
                if isinstance(item, Problem)
                else InputFile(item, real, shown_path(Path(given) / rel))
                for rel, item in _walk_json(real, Path(given), suffixes)
            ]
            if not candidates:
                names = " or ".join(f"*{suffix}" for suffix in suffixes)
                raise UsageError(f"{given}: no {names} files in this folder")
        elif real.is_file():
            candidates = [InputFile(real, real.parent, shown_path(given))]
        else:
            raise UsageError(f"{given}: not a regular file or folder; name a JSON file")
        for item in candidates:
            if item.path in seen:
                continue
            seen.add(item.path)
            found.append(item)
            if len(found) > max_files:
                raise InputError(
                    [
                        Problem(
                            str(given),
                            "$",
                            "limit.max_trajectory_files",
                            f"more than max_trajectory_files={max_files} trajectory files; "
                            "raise the limit (--max-trajectory-files) or name fewer paths",
                        )
                    ]
                )
    return found


def _named(given: str | Path) -> Path:
    """Where a path the user named really is; a `UsageError` when it leads nowhere."""
    try:
        return Path(os.path.realpath(given, strict=True))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(
                f"{given}: symbolic link loop; fix the link or name another path"
            ) from None
        if os.path.islink(given):
            raise UsageError(
                f"{given}: symbolic link to {os.path.realpath(given)}, which does not exist; "
                "fix the link or name another path"
            ) from None
        if exc.errno == errno.ENOENT:
            raise UsageError(f"{given}: no such file or folder") from None
        raise UsageError(f"{given}: cannot be read: {exc.strerror}") from None


def _walk_json(
    root: Path, named: Path, suffixes: tuple[str, ...]
) -> list[tuple[str, Path | Problem]]:
    """The JSON files below `root` (a real folder) by relative path, sorted component-wise.

    Only real folders are descended: a link to a folder inside the root adds nothing (that
    folder is walked by its own path), a link to a folder outside is a problem. A `*.json`
    link is followed to its real path when that is inside the root; a file both linked and
    found directly is kept once, by its own path. Other names are not inputs and are skipped.
    """
    files: list[tuple[tuple[str, ...], Path | Problem]] = []
    links: list[tuple[tuple[str, ...], Path]] = []
    folders: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while folders:
        folder, rel = folders.pop()
        try:
            with os.scandir(folder) as scan:
                entries = list(scan)
        except OSError as exc:
            display = shown_path(named.joinpath(*rel))
            message = f"cannot read this folder: {exc.strerror}"
            files.append((rel, Problem(display, "$", "file.unreadable", message)))
            continue
        for entry in entries:
            parts = (*rel, entry.name)
            if entry.is_symlink():
                links.append((parts, Path(entry.path)))
            elif entry.is_dir(follow_symlinks=False):
                folders.append((Path(entry.path), parts))
            elif entry.name.endswith(suffixes):
                regular = entry.is_file(follow_symlinks=False)
                display = shown_path(named.joinpath(*parts))
                files.append((parts, Path(entry.path) if regular else not_regular_problem(display)))
    direct = {item for _, item in files if isinstance(item, Path)}
    for parts, link in links:
        followed = _follow(link, root, shown_path(named.joinpath(*parts)), suffixes)
        if followed is not None and followed not in direct:
            files.append((parts, followed))
    files.sort(key=lambda pair: pair[0])
    return [(os.path.join("", *parts), item) for parts, item in files]


def _follow(
    link: Path, root: Path, display: str, suffixes: tuple[str, ...]
) -> Path | Problem | None:
    """What a link found in the walk adds: a file inside, a problem, or None (nothing)."""
    is_json = link.name.endswith(suffixes)
    target = resolve_inside(link, root, display)
    if isinstance(target, Problem):
        # a link to a folder outside is refused whatever its name; the check reads the
        # target's metadata only
        if is_json or (target.rule == OUTSIDE and os.path.isdir(link)):
            return target
        return None
    mode = os.lstat(target).st_mode  # `target` is real: no link left to follow
    if stat.S_ISDIR(mode) or not is_json:
        return None
    return target if stat.S_ISREG(mode) else not_regular_problem(display)
