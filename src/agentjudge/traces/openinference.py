"""OTLP traces of OpenInference spans (Phoenix's instrumentations; docs/formats.md).

`openinference.span.kind` says what a span is: AGENT an agent (one that names itself by
`agent.name` or records an `input.value`; a bare AGENT span, such as a turn or workflow
wrapper, only groups), LLM a model turn (`llm.output_messages.N.message.*`), TOOL a tool
result (`tool.name`, `input.value`, `output.value`); CHAIN and every other kind (EMBEDDING,
RETRIEVER, RERANKER, GUARDRAIL, EVALUATOR) are counted and walked through.

LangGraph (through the LangChain instrumentation) records each graph run as a CHAIN span
named after the graph, and each run of a node named `agent` as an AGENT span named `agent`,
a child of its graph's span: such an agent takes the graph's name (`coordinator`).
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

NAME = "openinference"
KIND = "openinference.span.kind"
# What LangGraph calls a graph given no name: no agent's name.
UNNAMED_GRAPH = "LangGraph"


def sniff(path: Path, head: bytes) -> bool:
    """An OTLP export (JSON or protobuf) carrying OpenInference span kinds."""
    return carries(path, head, "openinference.span.kind")


def read(path: Path, display: str, limits: Limits) -> TraceFile:
    """Every trace of the file as one run (see `traces/span_runs.py`)."""
    spans = read_spans(path, display, limits.max_file_bytes, classify)
    return read_runs(grouped(spans, display, limits), display, NAME)


def classify(span: Span) -> Role:
    """What an OpenInference span is, by its `openinference.span.kind`."""
    attrs = span.attributes
    kind = str(attrs.get(KIND) or "").upper()
    if kind == "AGENT":
        name = attrs.get("agent.name")
        task = attrs.get("input.value")
        if not name and not task:
            return Other("agent (grouping: no agent.name, no input)")
        node = not name and _langgraph(span).get("langgraph_node") == span.name
        return Agent(str(name or span.name or "agent"), _task(task), graph_node=node)
    if kind == "LLM":
        return _turn(span)
    if kind == "TOOL":
        return _tool(span)
    if kind == "CHAIN":
        return Other("chain", _graph(span))
    return Other(kind.lower() if kind else "not OpenInference")


def _graph(span: Span) -> str | None:
    """A LangGraph graph's name, when the span may be its run: a LangGraph span named
    otherwise than the node it runs in (a node's own run is named after the node)."""
    metadata = _langgraph(span)
    if not metadata or span.name in (metadata.get("langgraph_node"), UNNAMED_GRAPH, ""):
        return None
    return span.name


def _langgraph(span: Span) -> dict[str, Any]:
    """The LangChain `metadata` attribute of a span LangGraph ran (empty for others)."""
    raw = span.attributes.get("metadata")
    if not isinstance(raw, str) or "langgraph" not in raw:
        return {}
    try:
        metadata = loads_bounded(raw)
    except ValueError:
        return {}
    if not isinstance(metadata, dict) or metadata.get("ls_integration") != "langgraph":
        return {}
    return metadata


def _turn(span: Span) -> Turn:
    attrs = span.attributes
    outputs = _indexed(attrs, "llm.output_messages.")
    texts: list[str] = []
    calls: list[Call] = []
    for message in outputs:
        content = _content(message)
        if content:
            texts.append(content)
        for call in _indexed(message, "message.tool_calls."):
            calls.append(
                Call(
                    _str(call.get("tool_call.id")),
                    str(call.get("tool_call.function.name") or "tool"),
                    json_arguments(call.get("tool_call.function.arguments")),
                )
            )
    if not outputs and attrs.get("output.value") is not None:
        texts.append(text_of(attrs.get("output.value")))
    return Turn(
        text="\n".join(texts),
        calls=tuple(calls),
        user_input=_first_user(attrs),
        model=_str(attrs.get("llm.model_name")),
        prompt_tokens=_int(attrs.get("llm.token_count.prompt")),
        completion_tokens=_int(attrs.get("llm.token_count.completion")),
        cached_tokens=_int(attrs.get("llm.token_count.prompt_details.cache_read")),
    )


def _first_user(attrs: Any) -> str | None:
    """The first user message a model turn was sent: from `llm.input_messages`, else from
    `input.value` when it is a message list (the spec's input of any span kind; harbor's
    atif2otel records a turn's messages only there)."""
    flattened = _indexed(attrs, "llm.input_messages.")
    if flattened:
        users = (_content(m) for m in flattened if m.get("message.role") == "user")
        return next((text for text in users if text), None)
    raw = attrs.get("input.value")
    if not isinstance(raw, str) or not raw.startswith("["):
        return None
    try:
        messages = loads_bounded(raw)
    except ValueError:
        return None
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, dict) and message.get("role") == "user":
            text = text_of(message.get("content"))
            if text:
                return text
    return None


def _tool(span: Span) -> ToolRun:
    attrs = span.attributes
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
    return ToolRun(
        name=str(attrs.get("tool.name") or span.name or "tool"),
        call_id=_str(attrs.get("tool_call.id") or attrs.get("tool.id")),
        arguments=json_arguments(attrs.get("input.value")),
        content=text_of(attrs.get("output.value")),
        error=error,
    )


def _content(message: dict[str, Any]) -> str:
    """A flattened message's text: `message.content`, else its text `message.contents`."""
    content = message.get("message.content")
    if content:
        return str(content)
    parts = _indexed(message, "message.contents.")
    return "\n".join(str(p["message_content.text"]) for p in parts if p.get("message_content.text"))


def _indexed(attrs: Any, prefix: str) -> list[dict[str, Any]]:
    """Flattened lists (`prefix.0.rest`, `prefix.1.rest`) as a list of dicts of `rest`."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if index.isdigit() and rest:
            items.setdefault(int(index), {})[rest] = value
    return [items[i] for i in sorted(items)]


def _task(value: Any) -> str | None:
    """An agent's `input.value`: the text of the last user message when it is a message
    list or a `{"messages": ...}` state, else the value itself."""
    if not isinstance(value, str) or not value:
        return None
    try:
        decoded = loads_bounded(value)
    except ValueError:
        return value
    if isinstance(decoded, dict):
        decoded = decoded.get("messages", decoded.get("task", decoded.get("input", decoded)))
    if isinstance(decoded, list):
        for item in decoded:
            if isinstance(item, dict) and item.get("role") in ("user", "human"):
                return text_of(item.get("content"))
            if isinstance(item, list) and len(item) == 2 and item[0] in ("user", "human"):
                return text_of(item[1])
    return text_of(decoded)


def _str(value: Any) -> str | None:
    return str(value) if value else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


FORMAT = Format(NAME, sniff, read)
