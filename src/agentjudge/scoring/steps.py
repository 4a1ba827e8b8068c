"""Read a node's steps back from its files (the tree keeps only where they are)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjudge.atif import Node, parse_trajectory
from agentjudge.atif.models import ContentPart, Step, Trajectory

MAX_FIELD_CHARS = 1500
_EMBEDDED = re.compile(r"\.subagent_trajectories\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class StepView:
    """One step as the judge sees it, and the identity results report it under."""

    segment: int
    step_id: int
    source: str
    is_context: bool
    data: dict[str, Any]
    tool_names: tuple[str, ...]
    # the speaker a flattened multi-agent transcript names in `extra.agent_name`
    agent_name: str | None = None


@dataclass(frozen=True, slots=True)
class NodeSteps:
    """A node's steps (context and scored, in order), its task, and its reference id."""

    steps: tuple[StepView, ...]
    task: str
    reference_id: str | None


class FileCache:
    """Validated documents of one tree, each file read once."""

    def __init__(self) -> None:
        self._docs: dict[Path, Trajectory] = {}

    def get(self, path: Path) -> Trajectory:
        doc = self._docs.get(path)
        if doc is None:
            doc = self._docs[path] = parse_trajectory(path.read_bytes(), str(path))
        return doc


def node_steps(node: Node, files: FileCache) -> NodeSteps:
    """The steps of `node`'s segments; copied-context steps are marked as context."""
    views: list[StepView] = []
    task = ""
    reference_id = None
    for index, segment in enumerate(node.segments):
        traj = _at(files.get(segment.file), segment.pointer)
        if index == 0:
            task = _task(traj)
            ref = (traj.extra or {}).get("reference_id")
            reference_id = ref if isinstance(ref, str) else None
        for step in traj.steps:
            if _sidechain(step) != segment.agent_id:
                continue
            views.append(
                StepView(
                    segment=index,
                    step_id=step.step_id,
                    source=step.source,
                    is_context=bool(step.is_copied_context),
                    data=render(step),
                    tool_names=tuple(c.function_name for c in step.tool_calls or ()),
                    agent_name=_agent_name(step),
                )
            )
    return NodeSteps(tuple(views), task, reference_id)


def render(step: Step) -> dict[str, Any]:
    """The parts of a step a judge needs, each text cut to a bounded length."""
    out: dict[str, Any] = {"step_id": step.step_id, "source": step.source}
    speaker = _agent_name(step)
    if speaker is not None:  # in a multi-agent transcript, who spoke is part of the step
        out["agent"] = _clip(speaker, 200)
    out["message"] = _clip(_content_text(step.message))
    if step.reasoning_content:
        out["reasoning"] = _clip(step.reasoning_content)
    if step.tool_calls:
        out["tool_calls"] = [
            {"name": c.function_name, "arguments": _clip_json(c.arguments)} for c in step.tool_calls
        ]
    if step.observation is not None:
        results = [_clip(_content_text(r.content)) for r in step.observation.results]
        out["observation"] = [r for r in results if r]
    return out


def _task(traj: Trajectory) -> str:
    instruction = (traj.extra or {}).get("task_instruction")
    if isinstance(instruction, str) and instruction.strip():
        return _clip(instruction, 4000)
    for step in traj.steps:
        if step.source == "user":
            return _clip(_content_text(step.message), 4000)
    return ""


def _at(doc: Trajectory, pointer: str) -> Trajectory:
    traj = doc
    for index in _EMBEDDED.findall(pointer):
        assert traj.subagent_trajectories is not None
        traj = traj.subagent_trajectories[int(index)]
    return traj


def _agent_name(step: Step) -> str | None:
    name = (step.extra or {}).get("agent_name")
    return name if isinstance(name, str) and name else None


def _sidechain(step: Step) -> str | None:
    extra = step.extra or {}
    agent_id = extra.get("agent_id")
    if extra.get("is_sidechain") is True and isinstance(agent_id, str) and agent_id:
        return agent_id
    return None


def _content_text(content: str | list[ContentPart] | None) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.text is not None:
            parts.append(part.text)
        elif part.source is not None:
            parts.append(f"[{part.type}: {part.source.path}]")
    return "\n".join(parts)


def _clip(text: str, limit: int = MAX_FIELD_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def _clip_json(value: dict[str, Any]) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= MAX_FIELD_CHARS else _clip(text)
