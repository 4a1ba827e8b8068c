"""Small ATIF documents for tests, built as plain dicts so tests can break them at will."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def step(step_id: int, source: str = "agent", message: str = "ok", **fields: Any) -> dict[str, Any]:
    return {"step_id": step_id, "source": source, "message": message, **fields}


def doc(
    n_steps: int = 2,
    version: str = "ATIF-v1.7",
    session_id: str | None = "s",
    **fields: Any,
) -> dict[str, Any]:
    """A valid document of `n_steps` steps: a user step, then agent steps."""
    steps = [step(1, "user", "do the task")] + [step(i) for i in range(2, n_steps + 1)]
    out: dict[str, Any] = {
        "schema_version": version,
        "agent": {"name": "agent", "version": "1"},
        "steps": steps,
    }
    if session_id is not None:
        out["session_id"] = session_id
    out.update(fields)
    return out


def with_refs(document: dict[str, Any], step_index: int, refs: Any) -> dict[str, Any]:
    """Attach `refs` (a list, or one object for old versions) to a step's observation."""
    document["steps"][step_index]["observation"] = {
        "results": [{"content": "delegated", "subagent_trajectory_ref": refs}]
    }
    return document


def write(path: Path, document: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path
