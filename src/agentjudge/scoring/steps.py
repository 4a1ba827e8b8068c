"""Read a node's steps back from its files (the tree keeps only where they are)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.atif import Node, parse_trajectory
from agentjudge.atif.models import ContentPart, Step, Trajectory
from agentjudge.judge.secrets import redact
from agentjudge.printable import printable

# What of a step's texts (message, reasoning, tool arguments, tool results) a judge is shown,
# in characters: an API judge's prompt budget for the step (about 6-8k tokens); the
# embedded judge's smaller one is `SMALL_STEP_CHARS` (small_prompt.py).
STEP_CHARS = 8_000
# of a step's own text, on one line, in the results' decisive failure (a person checks the
# step at a glance; the judge's reason says why it failed)
EXCERPT_CHARS = 160
_EMBEDDED = re.compile(r"\.subagent_trajectories\[(\d+)\]")


@dataclass(frozen=True, slots=True)
class StepCut:
    """A step whose texts were longer than the judge's budget: of their characters, the
    judge is shown `shown` (the start and end of each cut text) and not `hidden`."""

    shown: int
    hidden: int


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
    cut: StepCut | None = None  # set when `data` holds only part of the step's texts
    # where a step read from a trace file was recorded (`extra.source`: trace and span ids)
    origin: dict[str, Any] | None = None
    excerpt: str = ""  # the step's own text, short and on one line (`excerpt`)
    # the step as read, for a prompt that must show less of it (plan.py, `PromptBudget`)
    step: Step | None = field(default=None, compare=False, repr=False)


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


def node_steps(node: Node, files: FileCache, budget: int = STEP_CHARS) -> NodeSteps:
    """The steps of `node`'s segments, each fitted to `budget` characters (see `render`);
    copied-context steps are marked as context."""
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
            data, cut = render(step, budget)
            views.append(
                StepView(
                    segment=index,
                    step_id=step.step_id,
                    source=step.source,
                    is_context=bool(step.is_copied_context),
                    data=data,
                    tool_names=tuple(c.function_name for c in step.tool_calls or ()),
                    agent_name=_agent_name(step),
                    cut=cut,
                    origin=_origin(step),
                    excerpt=excerpt(step),
                    step=step,
                )
            )
    return NodeSteps(tuple(views), task, reference_id)


def render(step: Step, budget: int = STEP_CHARS) -> tuple[dict[str, Any], StepCut | None]:
    """The parts of a step a judge needs, and what of them was cut. The step is shown whole
    when its texts fit in `budget` characters; past it, the longest texts are cut to an
    equal share of the budget, each keeping its start and its end (a step's last action,
    after pages of output, is what matters most) around a marker that says how much is not
    shown."""
    message, reasoning, arguments, results = _texts(step)
    observation = step.observation
    lengths = [len(t) for t in (message, reasoning, *arguments, *results)]
    share = fair_share(lengths, budget)
    out: dict[str, Any] = {"step_id": step.step_id, "source": step.source}
    speaker = _agent_name(step)
    if speaker is not None:  # in a multi-agent transcript, who spoke is part of the step
        out["agent"] = cut_text(speaker, 200)
    out["message"] = cut_text(message, share)
    if reasoning:
        out["reasoning"] = cut_text(reasoning, share)
    if step.tool_calls:
        out["tool_calls"] = [
            {
                "name": c.function_name,
                "arguments": c.arguments if len(text) <= share else cut_text(text, share),
            }
            for c, text in zip(step.tool_calls, arguments, strict=True)
        ]
    if observation is not None:
        out["observation"] = [cut_text(r, share) for r in results if r]
    shown = sum(min(length, share) for length in lengths)
    hidden = sum(lengths) - shown
    return out, StepCut(shown, hidden) if hidden else None


def text_chars(step: Step) -> int:
    """How many characters of texts `step` holds, as `render` weighs them against its
    budget (a budget this large shows them whole)."""
    message, reasoning, arguments, results = _texts(step)
    return len(message) + len(reasoning) + sum(map(len, arguments)) + sum(map(len, results))


def _texts(step: Step) -> tuple[str, str, list[str], list[str]]:
    """A step's texts a judge is shown: message, reasoning, tool arguments, tool results."""
    arguments = [
        json.dumps(c.arguments, ensure_ascii=False, default=str) for c in step.tool_calls or ()
    ]
    observation = step.observation
    results = [_content_text(r.content) for r in observation.results] if observation else []
    return _content_text(step.message), step.reasoning_content or "", arguments, results


def fair_share(lengths: list[int], budget: int) -> int:
    """The most characters each text may keep so that together they fit in `budget`: texts
    shorter than it keep all of theirs, and the longer ones share what is left equally."""
    left = max(budget, 0)
    ordered = sorted(lengths)
    for index, length in enumerate(ordered):
        share = left // (len(ordered) - index)
        if length > share:
            return share
        left -= length
    return max(ordered, default=0)


def cut_text(text: str, limit: int) -> str:
    """`text`, or when it is longer than `limit` its start and end, `limit` characters in
    all, around a marker that says what the judge sees of it."""
    if len(text) <= limit:
        return text
    tail = limit // 2
    head = limit - tail
    return (
        f"{text[:head]}\n[… cut for length: {len(text) - limit:,} of {len(text):,} characters "
        f"not shown here; shown are the first {head:,} and the last {tail:,} …]\n"
        f"{text[len(text) - tail :]}"
    )


def excerpt(step: Step, limit: int = EXCERPT_CHARS) -> str:
    """The start of `step`'s message on one printable line, at most `limit` characters
    (cut with `…`), with anything shaped like a credential masked: the step's own words,
    for a person to recognise it. A step with no message text names its tool calls."""
    # a message may be megabytes: only its start can be shown
    text = " ".join(_content_text(step.message)[: limit * 4].split())
    if not text and step.tool_calls:
        text = "(calls " + ", ".join(c.function_name for c in step.tool_calls) + ")"
    text = printable(redact(text))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _task(traj: Trajectory) -> str:
    instruction = (traj.extra or {}).get("task_instruction")
    if isinstance(instruction, str) and instruction.strip():
        return cut_text(instruction, 4000)
    for step in traj.steps:
        if step.source == "user":
            return cut_text(_content_text(step.message), 4000)
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


def _origin(step: Step) -> dict[str, Any] | None:
    origin = (step.extra or {}).get("source")
    return origin if isinstance(origin, dict) else None


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
        elif part.type == "audio" and part.source is not None:
            parts.append(_audio(part.source.duration_sec))
        elif part.source is not None:
            parts.append(f"[{part.type}: {part.source.path}]")
    return "\n".join(parts)


def _audio(seconds: float | None) -> str:
    """An audio part as a text judge reads it: no judge here takes audio, so it is named
    with its length, not its path (a file name says nothing of what was heard)."""
    return "[audio]" if seconds is None else f"[audio, {seconds:g} s]"
