"""OTLP traces under the OpenTelemetry GenAI semantic conventions (docs/formats.md).

`gen_ai.operation.name` says what a span is: `invoke_agent` an agent, `chat` /
`generate_content` / `text_completion` a model turn, `execute_tool` a tool result; any
other operation (`invoke_workflow`, `embeddings`, `retrieval`, strands'
`execute_event_loop_cycle`) and spans of no GenAI operation are counted and walked through.
Message content is read from the current attributes (`gen_ai.input.messages`,
`gen_ai.output.messages`: role + typed parts) or, when a span has none, from the older
events (`gen_ai.user.message`, `gen_ai.choice`, ...).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentjudge.atif.limits import Limits
from agentjudge.traces.otlp_spans import Span, carries, loads_bounded, read_spans
from agentjudge.traces.read import Format, TraceFile
from agentjudge.traces.span_groups import grouped
from agentjudge.traces.span_runs import (
    Agent,
    Call,
    Other,
    Role,
    ToolRun,
    Turn,
    json_arguments,
    read_runs,
    text_of,
)

NAME = "otlp-genai"
MODEL_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
OPERATION = "gen_ai.operation.name"


def sniff(path: Path, head: bytes) -> bool:
    """An OTLP export (JSON or protobuf) whose first spans carry a GenAI operation."""
    return carries(path, head, "gen_ai.operation.name")


def read(path: Path, display: str, limits: Limits) -> TraceFile:
    """Every trace of the file as one run (see `traces/span_runs.py`)."""
    spans = read_spans(path, display, limits.max_file_bytes, classify)
    return read_runs(grouped(spans, display, limits), display, NAME)


def classify(span: Span) -> Role:
    """What a GenAI span is, by its `gen_ai.operation.name`."""
    attrs = span.attributes
    operation = attrs.get(OPERATION)
    if not isinstance(operation, str) or not operation:
        return Other("not GenAI")
    if operation == "invoke_agent":
        name = attrs.get("gen_ai.agent.name") or span.name.removeprefix("invoke_agent ").strip()
        return Agent(str(name or "agent"), _user_text(_messages(span, "gen_ai.input.messages")))
    if operation in MODEL_OPERATIONS:
        return _turn(span)
    if operation == "execute_tool":
        return _tool(span)
    return Other(operation)


def _turn(span: Span) -> Turn:
    attrs = span.attributes
    output = _messages(span, "gen_ai.output.messages")
    texts: list[str] = []
    calls: list[Call] = []
    for message in output:
        for part in _parts(message):
            kind = part.get("type")
            if kind == "tool_call":
                calls.append(_call(part.get("id"), part.get("name"), part.get("arguments")))
            elif kind in ("text", None) and part.get("content") is not None:
                texts.append(text_of(part.get("content")))
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    return Turn(
        text="\n".join(t for t in texts if t),
        calls=tuple(calls),
        user_input=_user_text(_messages(span, "gen_ai.input.messages")),
        model=str(model) if model else None,
        prompt_tokens=_int(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"),
        completion_tokens=_int(
            attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens"
        ),
        cached_tokens=_int(attrs, "gen_ai.usage.cache_read.input_tokens"),
    )


def _tool(span: Span) -> ToolRun:
    attrs = span.attributes
    name = attrs.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool ").strip()
    if "gen_ai.tool.call.result" in attrs:
        content = text_of(_decoded(attrs["gen_ai.tool.call.result"]))
    else:
        responses = [
            part.get("response", part.get("result"))
            for message in _messages(span, "gen_ai.output.messages")
            for part in _parts(message)
            if part.get("type") == "tool_call_response"
        ]
        content = text_of(responses)
    error = span.error
    if error == "":
        error = next(
            (
                str(e.attributes.get("exception.message", ""))
                for e in span.events
                if e.name == "exception"
            ),
            "the tool span ended in error",
        )
    call_id = attrs.get("gen_ai.tool.call.id")
    return ToolRun(
        name=str(name or "tool"),
        call_id=str(call_id) if call_id else None,
        arguments=json_arguments(attrs.get("gen_ai.tool.call.arguments")),
        content=content,
        error=error,
    )


def _messages(span: Span, key: str) -> list[dict[str, Any]]:
    """Messages as role + parts: the attribute when set, else the older events."""
    value = _decoded(span.attributes.get(key))
    if isinstance(value, list):
        return [m for m in value if isinstance(m, dict)]
    if key == "gen_ai.input.messages":
        return [
            {"role": "user", "parts": [{"type": "text", "content": _decoded(body.get("content"))}]}
            for name, body in _events(span)
            if name == "gen_ai.user.message"
        ]
    return [_choice(body) for name, body in _events(span) if name == "gen_ai.choice"]


def _events(span: Span) -> list[tuple[str, dict[str, Any]]]:
    """The older message events, each as (name, body fields): span events carry the body in
    their attributes; pydantic-ai's first instrumentation puts them, as a JSON list of
    objects naming themselves in `event.name`, in the span's `events` attribute."""
    found = [(event.name, dict(event.attributes)) for event in span.events]
    listed = _decoded(span.attributes.get("events"))
    if isinstance(listed, list):
        found += [
            (str(item.get("event.name", "")), item) for item in listed if isinstance(item, dict)
        ]
    return found


def _choice(body: dict[str, Any]) -> dict[str, Any]:
    """A `gen_ai.choice` event as an output message: text and tool calls."""
    message = _decoded(body.get("message", body))
    parts: list[dict[str, Any]] = []
    if isinstance(message, dict):
        if message.get("content") is not None:
            parts.append({"type": "text", "content": message["content"]})
        for call in _decoded(message.get("tool_calls")) or ():
            if isinstance(call, dict):
                function = call.get("function") or {}
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("id"),
                        "name": function.get("name"),
                        "arguments": function.get("arguments"),
                    }
                )
    return {"role": "assistant", "parts": parts}


def _parts(message: dict[str, Any]) -> list[dict[str, Any]]:
    parts = message.get("parts")
    if isinstance(parts, list):
        return [p for p in parts if isinstance(p, dict)]
    return []


def _user_text(messages: list[dict[str, Any]]) -> str | None:
    """The first user message's text (a tool response sent back as `user` is not one)."""
    for message in messages:
        if message.get("role") != "user":
            continue
        texts = [text_of(p.get("content")) for p in _parts(message) if p.get("type") == "text"]
        if any(texts):
            return "\n".join(t for t in texts if t)
    return None


def _call(call_id: Any, name: Any, arguments: Any) -> Call:
    return Call(str(call_id) if call_id else None, str(name or "tool"), json_arguments(arguments))


def _decoded(value: Any) -> Any:
    """Structured attributes are JSON text in OTLP; anything that is not stays as it is."""
    if isinstance(value, str) and value[:1] in ("[", "{"):
        try:
            return loads_bounded(value)
        except ValueError:  # not JSON after all (or nested past the limit): kept as text
            return value
    return value


def _int(attrs: Any, *keys: str) -> int | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


FORMAT = Format(NAME, sniff, read)
