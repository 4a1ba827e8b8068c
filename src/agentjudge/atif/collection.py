"""The collection: every input file indexed once, found by path or by session id, and which
file each ref names, confined to its input root.

Nothing is built here: `atif/tree.py` links the files into trees, asking the collection
where each ref leads.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agentjudge.atif.discover import InputFile
from agentjudge.atif.index import FileInfo, RefInfo, TrajInfo, index_file, index_files
from agentjudge.confine import OUTSIDE, resolve_inside
from agentjudge.errors import Problem, clip


@dataclass
class Collection:
    """The files of one job by real path (`atif/index.py`'s summaries) and by session id,
    with the problems only the whole collection shows (a trajectory id used twice)."""

    inputs: list[InputFile]
    max_file_bytes: int
    files: dict[Path, FileInfo] = field(default_factory=dict)
    sessions: dict[str, list[Path]] = field(default_factory=dict)
    problems: dict[Path, list[Problem]] = field(default_factory=dict)

    def index(self) -> set[Path]:
        """Read every input once; the files a ref or a continuation names (no tree starts
        at one of those)."""
        for info in index_files(self.inputs, self.max_file_bytes):
            self.files[info.path] = info
        for info in self.files.values():
            if info.traj is not None and info.traj.session_id is not None:
                self.sessions.setdefault(info.traj.session_id, []).append(info.path)
        referenced, continuations = self._referenced()
        self._check_duplicate_ids(continuations)
        return referenced

    def load(self, path: Path, root: Path, display: str) -> FileInfo:
        """The summary of `path`, indexed the first time a ref reaches it if no input named
        it (a file not called `*.json`)."""
        info = self.files.get(path)
        if info is None:
            info = index_file(path, root, display, self.max_file_bytes)
            self.files[path] = info
        return info

    def session_files(self, session_id: str, besides: Path) -> list[Path]:
        """The files whose trajectory has `session_id`, other than `besides` (the file whose
        ref asks: a trajectory is not its own subagent)."""
        return [p for p in self.sessions.get(session_id, ()) if p != besides]

    def _referenced(self) -> tuple[set[Path], set[Path]]:
        referenced: set[Path] = set()
        continuations: set[Path] = set()
        for info in list(self.files.values()):
            if info.traj is None:
                continue
            for traj in _all_trajs(info.traj):
                if traj.continuation:
                    target = ref_target(traj.continuation, info.path.parent, info.root)
                    if target is not None:
                        continuations.add(target)
                        referenced.add(target)
                for ref in traj.refs:
                    target = self._ref_file(info, ref)
                    if target is not None:
                        referenced.add(target)
        return referenced, continuations

    def _ref_file(self, info: FileInfo, ref: RefInfo) -> Path | None:
        """The file a ref points to, if it names one that exists (no problems reported here)."""
        if ref.trajectory_path:
            target = ref_target(ref.trajectory_path, info.path.parent, info.root)
            return target if target is not None and target.is_file() else None
        if ref.trajectory_id is None and ref.session_id is not None:
            matches = self.session_files(ref.session_id, info.path)
            return matches[0] if len(matches) == 1 else None
        return None

    def _check_duplicate_ids(self, continuations: set[Path]) -> None:
        first: dict[str, FileInfo] = {}
        for item in self.inputs:
            info = self.files[item.path]
            if info.traj is None or info.traj.trajectory_id is None or info.path in continuations:
                continue
            tid = info.traj.trajectory_id
            if tid in first:
                self.problems.setdefault(info.path, []).append(
                    Problem(
                        info.display,
                        "$.trajectory_id",
                        "collection.duplicate_trajectory_id",
                        f"trajectory_id {clip(repr(tid))} is also used by {first[tid].display}; "
                        "trajectory ids must be unique across the collection",
                    )
                )
            else:
                first[tid] = info


def ref_target(ref: str, base: Path, root: Path) -> Path | None:
    """`ref` resolved against `base`, or None when it leaves `root` (by `..`, absolute or link)
    or holds a NUL byte (no file is called that; the system refuses to look it up).

    `..` and absolute paths are refused by path arithmetic, before any link is read; links
    are resolved as every input's are (`agentjudge.confine`), so nothing outside the root is
    ever opened. A link that leads nowhere inside the root (dangling, a loop) is a file not
    found, not a problem of the ref.
    """
    if "\x00" in ref:
        return None
    candidate = Path(os.path.normpath(base / ref))
    if not candidate.is_relative_to(root):
        return None
    target = resolve_inside(candidate, root, ref)
    if not isinstance(target, Problem):
        return target
    if target.rule == OUTSIDE:
        return None
    # where it leads, not the link: discovery may hold the link itself as an input with a
    # problem of its own, which keeps its place among the roots
    return Path(os.path.realpath(candidate))


def _all_trajs(traj: TrajInfo) -> Iterator[TrajInfo]:
    yield traj
    for child in traj.embedded:
        yield from _all_trajs(child)
