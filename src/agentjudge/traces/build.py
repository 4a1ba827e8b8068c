"""Building one ATIF trajectory step by step, as the session-log readers map their lines.

Steps are numbered in order; a tool result is attached to the step that made the call (ATIF
wants a result's `source_call_id` in the same step); what a reader does not map is counted
by kind in `Ignored`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

# Subagents are embedded in `subagent_trajectories`, which ATIF has since v1.7.
SCHEMA_VERSION = "ATIF-v1.7"


class Ignored(Counter[str]):
    """What a reader left out, counted by kind ("attachment:date", "event_msg:task_started")."""


@dataclass
class StepList:
    """The steps of one trajectory so far, and where each tool call was made."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)

    def add(
        self, source: str, message: Any, origin: dict[str, Any], **fields: Any
    ) -> dict[str, Any]:
        """A new step (its id the next number), `origin` kept as `extra.source`; fields
        that are None are left out."""
        step: dict[str, Any] = {"step_id": len(self.steps) + 1, "source": source}
        step["message"] = message
        step.update({k: v for k, v in fields.items() if v is not None})
        step.setdefault("extra", {})["source"] = origin
        self.steps.append(step)
        return step

    def call(self, step: dict[str, Any], call_id: str, name: str, arguments: Any) -> None:
        """A tool call on `step` (an agent step); arguments that are not an object are kept
        under "input", since ATIF wants an object."""
        args = arguments if isinstance(arguments, dict) else {"input": arguments}
        step.setdefault("tool_calls", []).append(
            {"tool_call_id": call_id, "function_name": name, "arguments": args}
        )
        self.calls[call_id] = step

    def answer(self, call_id: str, content: Any, extra: dict[str, Any] | None = None) -> bool:
        """The result of call `call_id` on the step that made it; False when no step did."""
        step = self.calls.get(call_id)
        if step is None:
            return False
        result: dict[str, Any] = {"source_call_id": call_id, "content": content}
        if extra:
            result["extra"] = extra
        step.setdefault("observation", {"results": []})["results"].append(result)
        return True

    def link(self, call_id: str, trajectory_id: str, session_id: str | None) -> bool:
        """Point call `call_id`'s result at the embedded subagent `trajectory_id` (a result
        with no content is added when the call has none); False when no step made it."""
        step = self.calls.get(call_id)
        if step is None:
            return False
        results = step.setdefault("observation", {"results": []})["results"]
        result = next((r for r in results if r.get("source_call_id") == call_id), None)
        if result is None:
            result = {"source_call_id": call_id}
            results.append(result)
        ref: dict[str, Any] = {"trajectory_id": trajectory_id}
        if session_id:
            ref["session_id"] = session_id
        result.setdefault("subagent_trajectory_ref", []).append(ref)
        return True


def document(
    steps: StepList,
    agent: dict[str, Any],
    *,
    session_id: str | None,
    trajectory_id: str | None = None,
    subagents: list[dict[str, Any]] | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An ATIF trajectory of `steps`, with its subagents embedded (ATIF v1.7)."""
    doc: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    if session_id:
        doc["session_id"] = session_id
    if trajectory_id:
        doc["trajectory_id"] = trajectory_id
    doc["agent"] = {k: v for k, v in agent.items() if v is not None}
    doc["steps"] = steps.steps
    if extra:
        doc["extra"] = extra
    if subagents:
        doc["subagent_trajectories"] = subagents
    return doc


def timestamp(value: Any) -> str | None:
    """`value` when it is an ISO 8601 time (as ATIF requires of a step's), else None."""
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def as_str(value: Any) -> str | None:
    """`value` when the log holds a non-empty string there, else None."""
    return value if isinstance(value, str) and value else None


def as_int(value: Any) -> int:
    """`value` when the log holds an integer there (a token count), else 0."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def as_list(value: Any) -> list[Any]:
    """`value` when the log holds a list there, else an empty one (logs of other versions
    may hold anything anywhere)."""
    return value if isinstance(value, list) else []


def as_dict(value: Any) -> dict[str, Any]:
    """`value` when the log holds an object there, else an empty one."""
    return value if isinstance(value, dict) else {}


def text_of(parts: list[str]) -> str:
    """Texts of one message joined as the judge reads them."""
    return "\n".join(p for p in parts if p)
