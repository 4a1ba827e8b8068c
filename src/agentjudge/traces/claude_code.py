"""Claude Code session logs (`<session-id>.jsonl`) read into ATIF, subagents embedded.

Each `user` and `assistant` line is a step (an assistant message split over several lines,
one content block each, is one step); a `tool_result` is attached to the step that made
the call. A subagent's lines are either in the session file (`isSidechain`, grouped by
`agentId`), in `agent-<id>.jsonl` beside it (Claude Code 2.0), or in
`<session-id>/subagents/agent-<id>.jsonl` with a `.meta.json` (2.1): each becomes an
embedded subagent linked to the Task/Agent call that started it. Every other line
(attachments, queue operations, API request records, snapshots...) is counted as ignored.
docs/formats.md has the whole mapping.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

from agentjudge.atif.limits import Limits
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
from agentjudge.traces.claude_code_files import agent_files, parent_session
from agentjudge.traces.jsonl import records
from agentjudge.traces.read import Format, Run, TraceFile

_SNIFF = re.compile(
    rb'"(parentUuid|leafUuid)"\s*:|"type"\s*:\s*"(queue-operation|file-history-snapshot)"'
)
# the tools that start a subagent: `Task` before Claude Code 2.1, `Agent` since
_SPAWN_TOOLS = frozenset({"Task", "Agent"})
_MAIN = ""  # the chain key of the session's own agent


def sniff(path: Path, head: bytes) -> bool:
    """A `.jsonl` file whose first lines carry Claude Code's session keys, or the
    `.meta.json` Claude Code 2.1 writes beside a subagent's file (read with its session)."""
    if _is_agent_meta(path):
        return b'"agentType"' in head
    return path.suffix == ".jsonl" and head.lstrip().startswith(b"{") and bool(_SNIFF.search(head))


def _is_agent_meta(path: Path) -> bool:
    return path.parent.name == "subagents" and fnmatch(path.name, "agent-*.meta.json")


@dataclass
class _Chain:
    """One agent's steps as they are read: the session's own, or one subagent's."""

    file: str | None  # the agent file's display name; None for the session file
    steps: StepList = field(default_factory=StepList)
    open_id: str | None = None  # the assistant message the last step is gathering
    model: str | None = None
    version: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Session:
    """What reading a session's files gathers: its chains and how subagents were started."""

    session_id: str
    chains: dict[str, _Chain] = field(default_factory=dict)
    prompts: dict[str, str] = field(default_factory=dict)  # spawn call id -> its prompt
    agent_calls: dict[str, str] = field(default_factory=dict)  # agent id -> spawn call id
    ignored: Ignored = field(default_factory=Ignored)

    def chain(self, key: str, file: str | None) -> _Chain:
        if key not in self.chains:
            self.chains[key] = _Chain(file)
        return self.chains[key]


def read(path: Path, display: str, limits: Limits) -> TraceFile:
    """The session in `path` (with its subagents' files) as one ATIF run; no line of them
    longer than `max_file_bytes`."""
    max_file_bytes = limits.max_file_bytes
    if _is_agent_meta(path):
        return TraceFile((), {"subagent meta files (read with their session)": 1}, "files")
    parent = parent_session(path)
    if parent is not None:
        return TraceFile((), {f"subagent files (read with their session {parent})": 1}, "files")
    session = _Session(path.stem)  # the file's name, until a line names the session
    named = False
    for number, record in records(path, display, max_file_bytes):
        if not named and isinstance(record.get("sessionId"), str) and record["sessionId"]:
            session.session_id, named = record["sessionId"], True
        sidechain = record.get("isSidechain") is True
        key = str(record.get("agentId") or "sidechain") if sidechain else _MAIN
        _take(session, session.chain(key, None), number, record)
    found = agent_files(path, display, session.session_id, session.ignored)
    for agent_id, agent_path, agent_display, meta in found:
        chain = session.chain(agent_id, agent_display)
        chain.meta = meta
        for number, record in records(agent_path, agent_display, max_file_bytes):
            _take(session, chain, number, record)
    main = session.chains.get(_MAIN)
    if main is None or not main.steps.steps:
        raise InputError(
            [
                Problem(
                    display,
                    "$",
                    "claude_code.no_messages",
                    "no user or assistant line: this is not a Claude Code session with a "
                    "conversation; name the session's <session-id>.jsonl",
                )
            ]
        )
    doc = _documents(session)
    return TraceFile((Run(session.session_id, doc),), dict(session.ignored), "lines")


def _take(session: _Session, chain: _Chain, number: int, record: dict[str, Any]) -> None:
    kind = record.get("type")
    origin: dict[str, Any] = {"session": session.session_id, "line": number}
    if chain.file is not None:
        origin["file"] = chain.file
    if isinstance(record.get("uuid"), str):
        origin["uuid"] = record["uuid"]
    message = record.get("message")
    if kind == "user" and isinstance(message, dict):
        chain.version = chain.version or as_str(record.get("version"))
        chain.open_id = None
        _user(session, chain, record, message, origin)
    elif kind == "assistant" and isinstance(message, dict):
        chain.version = chain.version or as_str(record.get("version"))
        _assistant(session, chain, message, origin, timestamp(record.get("timestamp")))
    elif kind == "attachment":
        attachment = record.get("attachment")
        sub = attachment.get("type") if isinstance(attachment, dict) else None
        session.ignored[f"attachment:{sub}" if sub else "attachment"] += 1
    elif kind == "system":
        sub = record.get("subtype")
        session.ignored[f"system:{sub}" if sub else "system"] += 1
    else:
        session.ignored[str(kind) if kind else "lines without a type"] += 1


def _user(
    session: _Session,
    chain: _Chain,
    record: dict[str, Any],
    message: dict[str, Any],
    origin: dict[str, Any],
) -> None:
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            call_id = str(block.get("tool_use_id"))
            extra = {"is_error": True} if block.get("is_error") is True else None
            if not chain.steps.answer(call_id, _block_text(block.get("content")), extra):
                session.ignored["tool results without their call"] += 1
            result = record.get("toolUseResult")
            if isinstance(result, dict) and isinstance(result.get("agentId"), str):
                session.agent_calls.setdefault(result["agentId"], call_id)
        else:
            texts.append(_block_text([block]))
    text = text_of(texts)
    if not text:
        return
    origin_kind = as_dict(record.get("origin")).get("kind")
    harness = (
        record.get("isMeta") is True
        or origin_kind is not None
        or text.startswith("<task-notification>")
    )
    chain.steps.add(
        "system" if harness else "user", text, origin, timestamp=timestamp(record.get("timestamp"))
    )


def _assistant(
    session: _Session,
    chain: _Chain,
    message: dict[str, Any],
    origin: dict[str, Any],
    time: str | None,
) -> None:
    message_id = as_str(message.get("id"))
    steps = chain.steps
    if message_id is not None and message_id == chain.open_id and steps.steps:
        step = steps.steps[-1]
        step["extra"]["source"].setdefault("lines", [step["extra"]["source"]["line"]])
        step["extra"]["source"]["lines"].append(origin["line"])
    else:
        step = steps.add("agent", "", origin, timestamp=time)
        chain.open_id = message_id
    model = as_str(message.get("model"))
    if model:
        step["model_name"] = chain.model = model
    content = message.get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else as_list(content)
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            step["message"] = text_of([step["message"], str(block.get("text") or "")])
        elif kind == "thinking":
            step["reasoning_content"] = text_of(
                [step.get("reasoning_content", ""), str(block.get("thinking") or "")]
            )
        elif kind in ("tool_use", "server_tool_use"):
            call_id, name = str(block.get("id")), str(block.get("name"))
            steps.call(step, call_id, name, block.get("input"))
            arguments = block.get("input")
            if name in _SPAWN_TOOLS and isinstance(arguments, dict):
                session.prompts[call_id] = str(arguments.get("prompt") or "")
        else:
            session.ignored[f"assistant content:{kind}"] += 1
    usage = message.get("usage")
    if isinstance(usage, dict):
        step["metrics"] = _metrics(usage)


def _metrics(usage: dict[str, Any]) -> dict[str, Any]:
    """Anthropic's usage as ATIF metrics: ATIF's prompt tokens include the cached ones."""
    fresh, output = as_int(usage.get("input_tokens")), as_int(usage.get("output_tokens"))
    read, written = (
        as_int(usage.get("cache_read_input_tokens")),
        as_int(usage.get("cache_creation_input_tokens")),
    )
    metrics: dict[str, Any] = {
        "prompt_tokens": fresh + read + written,
        "completion_tokens": output,
        "cached_tokens": read,
    }
    if written:
        metrics["extra"] = {"cache_creation_input_tokens": written}
    return metrics


def _documents(session: _Session) -> dict[str, Any]:
    """The session's ATIF document, each subagent embedded under the agent whose call
    started it (under the session's own agent when no call is found)."""
    holders = {key: chain for key, chain in session.chains.items() if chain.steps.steps}
    if empty := len(session.chains) - len(holders):
        session.ignored["subagents with no messages"] += empty
    parent_of: dict[str, tuple[str, str | None]] = {}
    unclaimed = dict(session.prompts)
    for key, chain in holders.items():
        if key == _MAIN:
            continue
        call = _spawn_call(key, chain, session, unclaimed)
        owner = next((k for k, c in holders.items() if call in c.steps.calls), None)
        if call is None or owner is None or _reaches(owner, key, parent_of):
            parent_of[key] = (_MAIN, None)
        else:
            unclaimed.pop(call, None)
            parent_of[key] = (owner, call)

    def build(key: str) -> dict[str, Any]:
        chain = holders[key]
        children = [child for child, (owner, _) in parent_of.items() if owner == key]
        for child in children:
            call = parent_of[child][1]
            if call is not None:
                chain.steps.link(call, f"agent-{child}", session.session_id)
        meta_type = chain.meta.get("agentType")
        name = "claude-code" if key == _MAIN else f"claude-code:{meta_type or 'subagent'}"
        agent = {"name": name, "version": chain.version or "unknown", "model_name": chain.model}
        extra: dict[str, Any] | None = None
        if key != _MAIN:
            extra = {"agent_id": key}
            if "description" in chain.meta:  # what the caller asked for, from the .meta.json
                extra["description"] = chain.meta["description"]
        return document(
            chain.steps,
            agent,
            session_id=session.session_id,
            trajectory_id=session.session_id if key == _MAIN else f"agent-{key}",
            subagents=[build(child) for child in children],
            extra=extra,
        )

    return build(_MAIN)


def _spawn_call(
    agent_id: str, chain: _Chain, session: _Session, unclaimed: dict[str, str]
) -> str | None:
    """The call that started subagent `agent_id`: named by its `.meta.json` (2.1), by the
    call's result (`toolUseResult.agentId`), or else the unclaimed call whose prompt is the
    subagent's first user message (older versions record no link)."""
    call = as_str(chain.meta.get("toolUseId")) or session.agent_calls.get(agent_id)
    if call is not None:
        return call
    first = next((s for s in chain.steps.steps if s["source"] == "user"), None)
    if first is None:
        return None
    return next(
        (c for c, prompt in unclaimed.items() if prompt and prompt == first["message"]), None
    )


def _reaches(start: str, target: str, parent_of: dict[str, tuple[str, str | None]]) -> bool:
    """Whether `target` is `start` or one of its ancestors (a link that would make a cycle)."""
    seen: set[str] = set()
    node: str | None = start
    while node is not None and node not in seen:
        if node == target:
            return True
        seen.add(node)
        node = parent_of.get(node, (None, None))[0] if node != _MAIN else None
    return False


def _block_text(content: Any) -> str:
    """The text of a message's content: a string, or blocks (text kept; an image or a
    document named, its bytes not)."""
    if isinstance(content, str):
        return content
    parts = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text":
            parts.append(str(block.get("text") or ""))
        elif block.get("type") == "tool_reference":
            parts.append(f"[tool: {block.get('tool_name')}]")
        else:
            parts.append(f"[{block.get('type')}]")
    return text_of(parts)


FORMAT = Format("claude-code", sniff, read)
