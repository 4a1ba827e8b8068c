"""Codex CLI rollouts (`rollout-<time>-<thread-id>.jsonl`) read into ATIF, subagents embedded.

`response_item` lines are the conversation: user and developer messages become user and
system steps; the model's output items between two inputs (reasoning, assistant message,
function, custom and web-search calls) become one agent step; a call's output is attached
to the step that made the call. `turn_context` gives the model, `token_usage_record` (or
the older `event_msg` `token_count`) a step's tokens. A subagent is a rollout of its own,
found beside its parent's by the thread id the parent's `SubAgentActivity` names, and
embedded under the `spawn_agent` call that started it; the parent history it inherits is
marked as copied context. Every other line is counted as ignored (docs/formats.md).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from agentjudge.atif.limits import Limits
from agentjudge.confine import resolve_inside
from agentjudge.errors import InputError, Problem
from agentjudge.traces.build import (
    Ignored,
    StepList,
    as_dict,
    as_int,
    as_list,
    as_str,
    document,
    text_of,
    timestamp,
)
from agentjudge.traces.jsonl import records
from agentjudge.traces.read import Format, Run, TraceFile

_SNIFF = re.compile(
    rb'^\s*\{"timestamp"\s*:\s*"[^"]*"\s*,\s*("ordinal"\s*:\s*\d+\s*,\s*)?"type"\s*:\s*"session_meta"'
)
# A user message the harness writes, not the user (context, instructions, permissions).
_HARNESS_PREFIXES = (
    "<environment_context>",
    "# AGENTS.md instructions",
    "<user_instructions>",
    "<permissions instructions>",
    "<turn_aborted>",
)
_OUTPUTS = frozenset(
    {"reasoning", "function_call", "custom_tool_call", "web_search_call", "local_shell_call"}
)
_RESULTS = frozenset({"function_call_output", "custom_tool_call_output"})
_TURN_ENDS = frozenset({"task_started", "task_complete", "turn_aborted"})


def sniff(path: Path, head: bytes) -> bool:
    """A `.jsonl` file whose first line is a Codex `session_meta` record."""
    return path.suffix == ".jsonl" and bool(_SNIFF.match(head))


@dataclass
class _Thread:
    """One rollout as it is read: its steps and the subagent threads it started."""

    file: str | None  # the display name of a subagent's rollout; None for the one named
    thread_id: str = ""
    session_id: str | None = None  # a subagent's is its root thread's
    parent_id: str | None = None
    version: str | None = None
    agent_path: str | None = None
    model: str | None = None
    first_model: str | None = None
    inherited_until: int = -1  # records with a smaller ordinal are the parent's history
    steps: StepList = field(default_factory=StepList)
    open: dict[str, Any] | None = None  # the agent step gathering the model's output
    spawned: dict[str, str] = field(default_factory=dict)  # call id -> child thread id
    tasks: dict[str, str] = field(default_factory=dict)  # spawn call id -> its message


def read(path: Path, display: str, limits: Limits) -> TraceFile:
    """The rollout in `path` (with its subagents' rollouts beside it) as one ATIF run; no
    line of them longer than `max_file_bytes`."""
    max_file_bytes = limits.max_file_bytes
    ignored = Ignored()
    thread = _read_thread(path, display, None, ignored, max_file_bytes)
    if thread.parent_id is not None and _rollout_of(path.parent, thread.parent_id):
        return TraceFile((), {"subagent rollouts (read with their parent's)": 1}, "files")
    if not thread.steps.steps:
        raise InputError(
            [
                Problem(
                    display,
                    "$",
                    "codex.no_messages",
                    "no message or tool call: this is not a Codex rollout with a "
                    "conversation; name a rollout-*.jsonl of a session that ran",
                )
            ]
        )
    doc = _document(path.parent, thread, ignored, {thread.thread_id}, None, max_file_bytes)
    return TraceFile((Run(thread.thread_id, doc),), dict(ignored), "lines")


def _read_thread(
    path: Path, display: str, file: str | None, ignored: Ignored, max_line: int
) -> _Thread:
    thread = _Thread(file)
    for number, record in records(path, display, max_line):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            ignored[str(record.get("type") or "lines without a type")] += 1
            continue
        origin: dict[str, Any] = {"session": thread.thread_id, "line": number}
        if file is not None:
            origin["file"] = file
        _take(thread, record, payload, origin, ignored)
    return thread


def _take(
    thread: _Thread,
    record: dict[str, Any],
    payload: dict[str, Any],
    origin: dict[str, Any],
    ignored: Ignored,
) -> None:
    kind = record.get("type")
    if kind == "session_meta":
        if thread.thread_id:
            ignored["session_meta (inherited from the parent)"] += 1
            return
        _meta(thread, payload)
        origin["session"] = thread.thread_id
        return
    if kind == "turn_context":
        thread.model = as_str(payload.get("model")) or thread.model
        thread.first_model = thread.first_model or thread.model
        return
    copied = isinstance(record.get("ordinal"), int) and record["ordinal"] < thread.inherited_until
    fields = {"timestamp": timestamp(record.get("timestamp")), "is_copied_context": copied or None}
    item = payload.get("type")
    if kind == "response_item":
        _response_item(thread, payload, str(item), origin, fields, ignored)
    elif kind == "token_usage_record":
        _usage(thread, payload.get("usage"))
    elif kind == "compacted":
        thread.open = None
        extra = {"context_management": {"type": "compaction", "boundary": "replace"}}
        step = thread.steps.add("system", str(payload.get("message") or ""), origin, **fields)
        step["extra"].update(extra)
    elif kind == "event_msg":
        _event(thread, payload, str(item), ignored)
    else:
        ignored[str(kind or "lines without a type")] += 1


def _meta(thread: _Thread, payload: dict[str, Any]) -> None:
    thread.thread_id = str(payload.get("id") or "")
    thread.session_id = as_str(payload.get("session_id")) or thread.thread_id
    thread.version = as_str(payload.get("cli_version"))
    thread.agent_path = as_str(payload.get("agent_path"))
    source = payload.get("source")
    spawn = as_dict(as_dict(as_dict(source).get("subagent")).get("thread_spawn"))
    parent = spawn.get("parent_thread_id")
    thread.parent_id = as_str(parent) or as_str(payload.get("parent_thread_id"))
    start = payload.get("subagent_history_start_ordinal")
    if isinstance(start, int):
        thread.inherited_until = start


def _response_item(
    thread: _Thread,
    payload: dict[str, Any],
    item: str,
    origin: dict[str, Any],
    fields: dict[str, Any],
    ignored: Ignored,
) -> None:
    steps = thread.steps
    if item == "message" and payload.get("role") != "assistant":
        thread.open = None
        text = _content_text(payload.get("content"), ignored)
        harness = payload.get("role") != "user" or text.startswith(_HARNESS_PREFIXES)
        steps.add("system" if harness else "user", text, origin, **fields)
    elif item == "agent_message":
        # a message between agents: a new task for this one is its user input; anything
        # else (a child's final answer, a status) is the harness speaking
        thread.open = None
        text = _content_text(payload.get("content"), ignored)
        source = "user" if "Message Type: NEW_TASK" in text else "system"
        step = steps.add(source, text, origin, **fields)
        step["extra"]["author"] = payload.get("author")
    elif item in _RESULTS:
        thread.open = None
        call_id = str(payload.get("call_id"))
        if not steps.answer(call_id, _output_text(payload.get("output"))):
            ignored["tool outputs without their call"] += 1
    elif item == "message" or item in _OUTPUTS:
        if thread.open is None:
            step = thread.open = steps.add("agent", "", origin, model_name=thread.model, **fields)
        else:
            step = thread.open
            step["extra"]["source"].setdefault("lines", [step["extra"]["source"]["line"]])
            step["extra"]["source"]["lines"].append(origin["line"])
        _output(thread, step, payload, item, origin, ignored)
    else:
        ignored[f"response_item:{item}"] += 1


def _output(
    thread: _Thread,
    step: dict[str, Any],
    payload: dict[str, Any],
    item: str,
    origin: dict[str, Any],
    ignored: Ignored,
) -> None:
    steps = thread.steps
    if item == "message":
        step["message"] = text_of([step["message"], _content_text(payload.get("content"), ignored)])
    elif item == "reasoning":
        parts = [p.get("text", "") for p in as_list(payload.get("summary")) if isinstance(p, dict)]
        parts += [p.get("text", "") for p in as_list(payload.get("content")) if isinstance(p, dict)]
        if text := text_of(parts):
            step["reasoning_content"] = text_of([step.get("reasoning_content", ""), text])
        else:
            ignored["reasoning (encrypted, not readable)"] += 1
    elif item == "function_call":
        call_id, name = str(payload.get("call_id")), str(payload.get("name"))
        raw = payload.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except json.JSONDecodeError:
            arguments = raw
        steps.call(step, call_id, name, arguments)
        if name == "spawn_agent" and isinstance(arguments, dict):
            thread.tasks[call_id] = str(arguments.get("message") or "")
    elif item == "custom_tool_call":
        steps.call(
            step, str(payload.get("call_id")), str(payload.get("name")), payload.get("input")
        )
    else:  # web_search_call, local_shell_call: no call id of their own before some versions
        call_id = str(payload.get("call_id") or payload.get("id") or f"line-{origin['line']}")
        steps.call(step, call_id, item.removesuffix("_call"), payload.get("action"))


def _event(thread: _Thread, payload: dict[str, Any], item: str, ignored: Ignored) -> None:
    if item == "token_count" and isinstance(payload.get("info"), dict):
        _usage(thread, payload["info"].get("last_token_usage"))
        return
    done = payload.get("item")
    if (
        item == "item_completed"
        and isinstance(done, dict)
        and done.get("type") == "SubAgentActivity"
    ):
        child = as_str(done.get("agent_thread_id"))
        if done.get("kind") == "started" and child:
            thread.spawned[str(done.get("id"))] = child
            return
    if item in _TURN_ENDS:
        thread.open = None
    ignored[f"event_msg:{item}"] += 1


def _usage(thread: _Thread, usage: Any) -> None:
    """A model response's tokens, on the step it produced (the response is over)."""
    step, thread.open = thread.open, None
    if step is None or not isinstance(usage, dict) or "metrics" in step:
        return
    metrics: dict[str, Any] = {
        "prompt_tokens": as_int(usage.get("input_tokens")),
        "completion_tokens": as_int(usage.get("output_tokens")),
        "cached_tokens": as_int(usage.get("cached_input_tokens")),
    }
    if reasoning := as_int(usage.get("reasoning_output_tokens")):
        metrics["extra"] = {"reasoning_tokens": reasoning}
    step["metrics"] = metrics


def _document(
    folder: Path,
    thread: _Thread,
    ignored: Ignored,
    seen: set[str],
    task: str | None,
    max_line: int,
) -> dict[str, Any]:
    """The thread's ATIF trajectory with each subagent rollout found beside it embedded."""
    children = []
    for call_id, child_id in thread.spawned.items():
        child_path = _rollout_of(folder, child_id)
        if child_path is None or child_id in seen:
            ignored["subagent rollouts not found beside their parent's"] += 1
            continue
        seen.add(child_id)
        shown = (
            child_path.name
            if thread.file is None
            else os.path.join(os.path.dirname(thread.file), child_path.name)
        )
        child = _read_thread(child_path, shown, shown, ignored, max_line)
        if not child.steps.steps:
            ignored["subagent rollouts with no messages"] += 1
            continue
        thread.steps.link(call_id, child_id, child.session_id)
        children.append(
            _document(folder, child, ignored, seen, thread.tasks.get(call_id), max_line)
        )
    name = "codex" if thread.parent_id is None else f"codex:{thread.agent_path or 'subagent'}"
    agent = {"name": name, "version": thread.version or "unknown", "model_name": thread.first_model}
    extra = {"task_instruction": task} if task else None
    return document(
        thread.steps,
        agent,
        session_id=thread.session_id,
        trajectory_id=thread.thread_id,
        subagents=children,
        extra=extra,
    )


def _rollout_of(folder: Path, thread_id: str) -> Path | None:
    """The rollout of thread `thread_id` in `folder` (links leading out of it refused)."""
    root = Path(os.path.realpath(folder))
    for candidate in sorted(folder.glob(f"rollout-*-{thread_id}.jsonl")):
        inside = resolve_inside(candidate, root, candidate.name)
        if isinstance(inside, Path):
            return inside
    return None


def _content_text(content: Any, ignored: Ignored) -> str:
    parts = []
    for part in content if isinstance(content, list) else []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("input_text", "output_text", "text"):
            parts.append(str(part.get("text") or ""))
        elif kind == "encrypted_content":
            parts.append("[encrypted content]")
            ignored["encrypted message parts"] += 1
        else:
            parts.append(f"[{kind}]")
    return text_of(parts)


def _output_text(output: Any) -> str:
    """A tool's output: a string, an object with `content` (or `output`), or content parts."""
    if isinstance(output, str):
        try:
            decoded = orjson.loads(output)
        except orjson.JSONDecodeError:
            return output
        inner = decoded.get("output") if isinstance(decoded, dict) else None
        return inner if isinstance(inner, str) else output
    if isinstance(output, dict):
        return _output_text(output.get("content") or output.get("output") or "")
    if isinstance(output, list):
        return text_of([str(p.get("text") or "") for p in output if isinstance(p, dict)])
    return ""


FORMAT = Format("codex", sniff, read)
