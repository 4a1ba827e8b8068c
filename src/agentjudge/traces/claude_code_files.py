"""Where a Claude Code session's subagent files are, confined to the session's folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from agentjudge.confine import resolve_inside
from agentjudge.errors import InputError, Problem
from agentjudge.traces.build import Ignored, as_str


def agent_files(
    path: Path, display: str, session_id: str, ignored: Ignored
) -> list[tuple[str, Path, str, dict[str, Any]]]:
    """The session's agent files, confined to its folder: (agent id, path, display, meta)."""
    folder = path.parent
    root = Path(os.path.realpath(folder))
    nested = folder / session_id / "subagents"
    candidates = [(p, False) for p in sorted(folder.glob("agent-*.jsonl"))]
    candidates += [(p, True) for p in sorted(nested.glob("agent-*.jsonl"))]
    found = []
    for candidate, is_nested in candidates:
        shown = os.path.join(os.path.dirname(display), str(candidate.relative_to(folder)))
        inside = resolve_inside(candidate, root, shown)
        if isinstance(inside, Problem):
            ignored["agent files outside the session's folder (not opened)"] += 1
            continue
        if not is_nested and _first_session_id(candidate) != session_id:
            continue  # another session's subagent, in the same project folder
        meta: dict[str, Any] = {}
        meta_path = candidate.with_suffix(".meta.json")
        if (
            is_nested
            and meta_path.is_file()
            and isinstance(inside_meta := resolve_inside(meta_path, root, shown), Path)
        ):
            try:
                loaded = orjson.loads(inside_meta.read_bytes())
            except orjson.JSONDecodeError:
                raise InputError(
                    [
                        Problem(
                            shown.removesuffix(".jsonl") + ".meta.json",
                            "$",
                            "claude_code.bad_meta",
                            "is not valid JSON; repair or remove the file",
                        )
                    ]
                ) from None
            meta = loaded if isinstance(loaded, dict) else {}
        agent_id = candidate.stem.removeprefix("agent-")
        found.append((agent_id, inside, shown, meta))
    return found


def _first_session_id(path: Path) -> str | None:
    with path.open("rb") as handle:
        try:
            first = orjson.loads(handle.readline())
        except orjson.JSONDecodeError:
            return None
    return as_str(first.get("sessionId")) if isinstance(first, dict) else None


def parent_session(path: Path) -> str | None:
    """For an agent file whose session file is where Claude Code puts it, that file's name
    (its lines are read with the session); None otherwise."""
    if not path.name.startswith("agent-"):
        return None
    session_id = _first_session_id(path)
    if not session_id:
        return None
    beside = path.parent / f"{session_id}.jsonl"  # Claude Code 2.0
    if beside.is_file():
        return beside.name
    folder = path.parent.parent  # 2.1: <session-id>/subagents/agent-<id>.jsonl
    above = folder.parent / f"{session_id}.jsonl"
    if path.parent.name == "subagents" and folder.name == session_id and above.is_file():
        return above.name
    return None
