"""No file a run writes may be a file it reads, or another file it writes.

Checked before anything is judged or written: `score in/ -o in/t.json` would replace a
trajectory with the results, `--cache r.json -o r.json` the verdict store with them. Two
paths are the same file when they resolve to the same place (symbolic links followed) or,
both existing, share an inode (hard links). A file written inside a folder the run reads as
inputs collides when the folder's search would pick it up (a `*.json` for trajectories and
traces): it would clobber an input today or become one on the next run. Other names there
(an HTML report, say) are fine.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjudge.errors import UsageError


@dataclass(frozen=True, slots=True)
class Named:
    """A path a run reads or writes, and what names it: a flag (`--html`) or a role
    (`the trajectory file`), as the error line says it."""

    what: str
    path: Path | str
    flag: str | None = None  # the flag that chooses an output, when `what` is not one

    @property
    def fix(self) -> str:
        """What to change: the flag that chose the path."""
        return self.flag or self.what


@dataclass(frozen=True, slots=True)
class InputFolder:
    """A folder whose files a run reads: those ending in `suffix`, at any depth."""

    what: str
    path: Path | str
    suffix: str = ".json"


def check_no_collision(
    outputs: Sequence[Named],
    inputs: Iterable[Named] = (),
    folders: Iterable[InputFolder] = (),
) -> None:
    """Raise `UsageError` (exit 3) naming both paths when an output is an input, lies in
    an input folder where it would be read as one, or is another output."""
    written: dict[str | tuple[int, int], Named] = {}
    places: list[tuple[Named, str]] = []
    for out in outputs:
        place = _where(out.path)
        for key in _keys(out.path, place):
            other = written.get(key)
            if other is not None and other is not out:
                raise UsageError(
                    f"{out.path}: {out.what} is the same file as {other.what} {other.path}; "
                    f"choose another {out.fix}"
                )
            written[key] = out
        places.append((out, place))
    for source in inputs:
        for key in _keys(source.path, _where(source.path)):
            out_ = written.get(key)
            if out_ is not None:
                raise UsageError(
                    f"{out_.path}: {out_.what} would overwrite {source.what} {source.path}, "
                    f"which this run reads; choose another {out_.fix}"
                )
    for folder in folders:
        root = _where(folder.path)
        for out, place in places:
            if inside(place, root) and place.endswith(folder.suffix):
                raise UsageError(
                    f"{out.path}: {out.what} is inside {folder.what} {folder.path}, whose "
                    f"*{folder.suffix} files this run reads (it would be read as one); "
                    f"choose another {out.fix} outside that folder"
                )
            linked = _linked_into(out.path, root, folder.suffix)
            if linked is not None:
                raise UsageError(
                    f"{out.path}: {out.what} is a hard link to {linked}, which this run reads "
                    f"from {folder.what} {folder.path}; choose another {out.fix}"
                )


def _where(path: Path | str) -> str:
    """Where `path` really is (links followed as far as they exist), as a string."""
    return os.path.realpath(path)


def _keys(path: Path | str, place: str) -> list[str | tuple[int, int]]:
    """What makes two paths one file: the place they resolve to and, for a file that
    exists, its device and inode (hard links: one inode, two names)."""
    try:
        info = os.stat(path)
    except OSError:  # not there (yet): only its place can match
        return [place]
    return [place, (info.st_dev, info.st_ino)]


def inside(place: str, root: str) -> bool:
    """Whether the resolved path `place` lies under the folder `root` (itself excluded)."""
    return place != root and place.startswith(root.rstrip(os.sep) + os.sep)


def _linked_into(path: Path | str, root: str, suffix: str) -> str | None:
    """The file under `root` that the existing file `path` is a hard link of, if any.

    Only a file with more than one name can be one, so the walk is skipped for the rest."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    if info.st_nlink < 2 or not os.path.isdir(root):
        return None
    for folder, _, names in os.walk(root):
        for name in names:
            if not name.endswith(suffix):
                continue
            candidate = os.path.join(folder, name)
            try:
                found = os.lstat(candidate)
            except OSError:
                continue
            if (found.st_dev, found.st_ino) == (info.st_dev, info.st_ino):
                return candidate
    return None
