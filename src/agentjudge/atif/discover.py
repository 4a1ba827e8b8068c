"""Find the trajectory files the user named: files as given, folders searched recursively."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjudge.errors import InputError, Problem, UsageError


@dataclass(frozen=True, slots=True)
class InputFile:
    """A file to load: its real path, the folder refs may not escape, and its display name."""

    path: Path
    root: Path
    display: str


def discover(paths: Sequence[str | Path], max_files: int) -> list[InputFile]:
    """Every `*.json` under `paths`, each folder in sorted path order, without duplicates.

    A named file's input root is its folder; a named folder is its own root. Raises
    `UsageError` for a path that does not exist or a folder with no JSON file, and
    `InputError` when there are more than `max_files` files.
    """
    if not paths:
        raise UsageError("no input: name at least one trajectory file or folder")
    found: list[InputFile] = []
    seen: set[Path] = set()
    for given in paths:
        named = Path(given)
        if named.is_file():
            candidates = [(named.resolve(), named.resolve().parent, str(given))]
        elif named.is_dir():
            root = named.resolve()
            candidates = [(root / rel, root, str(named / rel)) for rel in _walk_json(root)]
            if not candidates:
                raise UsageError(f"{given}: no *.json files in this folder")
        else:
            raise UsageError(f"{given}: no such file or folder")
        for path, root, display in candidates:
            real = path.resolve()
            if real in seen:
                continue
            seen.add(real)
            found.append(InputFile(real, root, display))
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


def _walk_json(root: Path) -> list[str]:
    """Relative paths of the JSON files below `root`, sorted as paths (component-wise)."""
    out: list[tuple[str, ...]] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        rel_folder = Path(folder).relative_to(root).parts
        out.extend((*rel_folder, name) for name in files if name.endswith(".json"))
    out.sort()
    return [os.path.join(*parts) for parts in out]
