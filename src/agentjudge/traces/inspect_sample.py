"""One Inspect sample read into an ATIF run: its events walked in order (docs/formats.md).

A sample's `model` events are its agent steps, its `tool` events the results of their
calls, and its `span_begin` events say which agent each event belongs to: an `agent` span
inside another agent's tool or handoff span is a subagent, embedded under the call that
started it. The sample's input is the first step; its scores and error are kept in the
root's `extra`; other events are counted as ignored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

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
from agentjudge.traces.read import Run

_ATTACHMENT = "attachment://"
_ROOT = ""


@dataclass
class _Node:
    """One agent of a sample as its events are read."""

    name: str
    named: bool = False  # the root: named after its agent span yet (else the task's name)
    steps: StepList = field(default_factory=StepList)
    model: str | None = None
    parent: str | None = None  # the node whose call started this one
    call: str | None = None


@dataclass
class _Sample:
    """What reading one sample's events gathers."""

    sample: dict[str, Any]
    origin: dict[str, Any]
    ignored: Ignored
    spans: dict[str, dict[str, Any]] = field(default_factory=dict)
    nodes: dict[str, _Node] = field(default_factory=dict)
    tool_spans: dict[str, str] = field(default_factory=dict)  # tool span id -> call id
    open_tools: dict[str, str] = field(default_factory=dict)  # tool name -> its span id
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # call id -> tool event
    task: str = ""

    def text(self, value: Any) -> str:
        """A string the log may have moved into the sample's attachments, resolved."""
        if isinstance(value, str) and value.startswith(_ATTACHMENT):
            attached = as_dict(self.sample.get("attachments")).get(value[len(_ATTACHMENT) :])
            return attached if isinstance(attached, str) else value
        return value if isinstance(value, str) else ""

    def content(self, value: Any) -> tuple[str, str]:
        """A message's content as (text, reasoning): a string or a list of content parts."""
        if not isinstance(value, list):
            return self.text(value) if isinstance(value, str) else _plain(value), ""
        texts, reasoning = [], []
        for part in value:
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            if kind == "text":
                texts.append(self.text(part.get("text")))
            elif kind == "reasoning":
                reasoning.append(self.text(part.get("reasoning")) or "[reasoning redacted]")
            else:
                texts.append(f"[{kind}]")
        return text_of(texts), text_of(reasoning)


def sample_run(
    header: dict[str, Any], where: str, sample: dict[str, Any], ignored: Ignored
) -> Run | None:
    """The sample as one run (None when it has no input and no model event); `header` is
    the log's (its `eval`: task, model, package versions), `where` the sample's place in
    the file."""
    eval_info = as_dict(header.get("eval"))
    sample_id, epoch = sample.get("id"), sample.get("epoch", 1)
    origin = {"log_eval_id": eval_info.get("eval_id"), "sample_id": sample_id, "epoch": epoch}
    state = _Sample(sample, origin, ignored)
    root = state.nodes[_ROOT] = _Node(str(eval_info.get("task") or "inspect"))
    state.task = _input(state, root)
    events = as_list(sample.get("events"))
    if any(isinstance(e, dict) and e.get("event") == "model" for e in events):
        for index, event in enumerate(events):
            if isinstance(event, dict):
                _event(state, index, event)
    else:
        _messages(state, root)
    if not root.steps.steps:
        return None
    packages = as_dict(eval_info.get("packages"))
    version = str(packages.get("inspect_ai") or "unknown")
    extra: dict[str, Any] = {"inspect": {k: v for k, v in origin.items() if v is not None}}
    extra["inspect"]["task"] = eval_info.get("task")
    extra["inspect"]["where"] = where
    if scores := as_dict(sample.get("scores")):
        extra["scores"] = {k: v.get("value") for k, v in scores.items() if isinstance(v, dict)}
    if isinstance(sample.get("error"), dict):
        extra["error"] = sample["error"].get("message")
    if state.task:
        extra["task_instruction"] = state.task

    def build(key: str) -> dict[str, Any]:
        node = state.nodes[key]
        children = [k for k, n in state.nodes.items() if n.parent == key and n.steps.steps]
        for child in children:
            call = state.nodes[child].call
            if call is not None:
                node.steps.link(call, child, None)
        agent = {
            "name": node.name,
            "version": version,
            "model_name": node.model or as_str(eval_info.get("model")),
        }
        return document(
            node.steps,
            agent,
            session_id=str(sample.get("uuid") or f"{sample_id}#{epoch}"),
            trajectory_id=None if key == _ROOT else key,
            subagents=[build(child) for child in children],
            extra=extra if key == _ROOT else None,
        )

    return Run(f"{sample_id}_epoch_{epoch}", build(_ROOT))


def _input(state: _Sample, root: _Node) -> str:
    """The sample's input as the root's first steps; its text is the task."""
    value = state.sample.get("input")
    origin = {**state.origin, "field": "input"}
    if isinstance(value, str):
        text = state.text(value)
        root.steps.add("user", text, origin)
        return text
    texts = []
    for message in value if isinstance(value, list) else []:
        if isinstance(message, dict):
            text, _ = state.content(message.get("content"))
            source = "system" if message.get("role") == "system" else "user"
            root.steps.add(source, text, origin)
            texts.append(text)
    return text_of(texts)


def _event(state: _Sample, index: int, event: dict[str, Any]) -> None:
    kind = event.get("event")
    if kind == "span_begin":
        span_id = str(event.get("id"))
        state.spans[span_id] = event
        if event.get("type") == "tool":
            state.open_tools[str(event.get("name"))] = span_id
        return
    if kind == "span_end":
        return
    origin = {**state.origin, "event": index}
    if isinstance(event.get("uuid"), str):
        origin["uuid"] = event["uuid"]
    if kind == "model":
        _model(state, event, origin)
    elif kind == "tool":
        _tool(state, event)
    else:
        state.ignored[f"event:{kind}"] += 1


def _node_of(state: _Sample, span_id: Any) -> _Node:
    """The node an event of span `span_id` belongs to: its nearest agent span that runs
    inside another agent (a subagent), else the sample's root."""
    chain: list[dict[str, Any]] = []
    span = state.spans.get(str(span_id)) if span_id is not None else None
    while span is not None and len(chain) < 1000:
        chain.append(span)
        span = state.spans.get(str(span.get("parent_id")))
    agents = [s for s in chain if s.get("type") == "agent"]
    if len(agents) < 2:
        root = state.nodes[_ROOT]
        if agents and not root.named:  # the sample's own agent (a react() or handoff root)
            root.name, root.named = str(agents[0].get("name") or root.name), True
        return root
    own = agents[0]
    key = str(own.get("id"))
    if key not in state.nodes:
        node = state.nodes[key] = _Node(str(own.get("name") or "agent"))
        tool_span = next((s for s in chain[chain.index(own) :] if s.get("type") == "tool"), None)
        call = state.tool_spans.get(str(tool_span.get("id"))) if tool_span else None
        caller = state.calls.get(call) if call else None
        node.call = call
        parent = _key_of(state, _node_of(state, caller.get("span_id"))) if caller else _ROOT
        # a call recorded inside the agent it started (a damaged log) must not make a cycle
        node.parent = _ROOT if _within(state, parent, key) else parent
        _first_step(state, node, caller)
    return state.nodes[key]


def _within(state: _Sample, start: str, key: str) -> bool:
    """Whether `key` is `start` or one of its ancestors' keys."""
    seen: set[str] = set()
    current: str | None = start
    while current is not None and current != _ROOT and current not in seen:
        if current == key:
            return True
        seen.add(current)
        current = state.nodes[current].parent
    return False


def _key_of(state: _Sample, node: _Node) -> str:
    return next(k for k, n in state.nodes.items() if n is node)


def _first_step(state: _Sample, node: _Node, caller: dict[str, Any] | None) -> None:
    """A subagent's input: the `input` its caller gave it (an agent used as a tool), its
    other arguments, or, for a handoff (no arguments), the conversation's task."""
    arguments = caller.get("arguments") if caller else None
    origin = {**state.origin, "field": "arguments", "call": node.call}
    if isinstance(arguments, dict) and isinstance(arguments.get("input"), str):
        node.steps.add("user", state.text(arguments["input"]), origin)
    elif isinstance(arguments, dict) and arguments:
        node.steps.add("user", json.dumps(arguments, ensure_ascii=False), origin)
    else:
        function = caller.get("function") if caller else None
        node.steps.add(
            "user", f"(handed the conversation by {function or 'its caller'}) {state.task}", origin
        )


def _model(state: _Sample, event: dict[str, Any], origin: dict[str, Any]) -> None:
    node = _node_of(state, event.get("span_id"))
    output = as_dict(event.get("output"))
    choices = as_list(output.get("choices")) or [{}]
    message = as_dict(as_dict(choices[0]).get("message"))
    text, reasoning = state.content(message.get("content"))
    if event.get("error"):
        text = text_of([text, f"[model error] {_plain(event['error'])}"])
    model = str(output.get("model") or event.get("model") or "") or None
    node.model = node.model or model
    step = node.steps.add(
        "agent",
        text,
        origin,
        timestamp=timestamp(event.get("timestamp")),
        model_name=model,
        reasoning_content=reasoning or None,
        metrics=_metrics(output.get("usage")),
    )
    for call in as_list(message.get("tool_calls")):
        if isinstance(call, dict):
            node.steps.call(
                step, str(call.get("id")), str(call.get("function")), call.get("arguments")
            )


def _tool(state: _Sample, event: dict[str, Any]) -> None:
    call_id, function = str(event.get("id")), str(event.get("function"))
    state.calls[call_id] = event
    span = state.open_tools.pop(function, None)
    if span is not None:
        state.tool_spans[span] = call_id
    node = _node_of(state, event.get("span_id"))
    text, _ = state.content(event.get("result"))
    extra = None
    error = event.get("error")
    if isinstance(error, dict):
        extra = {"error": {"type": error.get("type"), "message": error.get("message")}}
        text = text_of([text, f"error ({error.get('type')}): {error.get('message')}"])
    if not node.steps.answer(call_id, text, extra):
        state.ignored["tool events without their model call"] += 1


def _messages(state: _Sample, root: _Node) -> None:
    """A sample logged without events: its messages after the input, mapped one to one."""
    origin = {**state.origin, "field": "messages"}
    for index, message in enumerate(as_list(state.sample.get("messages"))):
        if not isinstance(message, dict) or message.get("source") == "input":
            continue
        text, reasoning = state.content(message.get("content"))
        at = {**origin, "message": index}
        role = message.get("role")
        if role == "assistant":
            step = root.steps.add("agent", text, at, reasoning_content=reasoning or None)
            for call in as_list(message.get("tool_calls")):
                root.steps.call(
                    step, str(call.get("id")), str(call.get("function")), call.get("arguments")
                )
        elif role == "tool":
            if not root.steps.answer(str(message.get("tool_call_id")), text):
                state.ignored["tool messages without their call"] += 1
        elif index > 0 or role != "system":
            root.steps.add("system" if role == "system" else "user", text, at)


def _metrics(usage: Any) -> dict[str, Any] | None:
    """Inspect's usage as ATIF metrics; ATIF's prompt tokens include the cached ones."""
    if not isinstance(usage, dict):
        return None
    read, written = (
        as_int(usage.get("input_tokens_cache_read")),
        as_int(usage.get("input_tokens_cache_write")),
    )
    metrics: dict[str, Any] = {
        "prompt_tokens": as_int(usage.get("input_tokens")) + read + written,
        "completion_tokens": as_int(usage.get("output_tokens")),
        "cached_tokens": read,
    }
    if reasoning := as_int(usage.get("reasoning_tokens")):
        metrics["extra"] = {"reasoning_tokens": reasoning}
    return metrics


def _plain(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
