"""Spans of one trace into one ATIF document: the tree walk both span readers share.

A reader says what each span is (`Role`): an agent, a model turn, a tool result, or
something else (counted, and walked through: its children belong to the nearest agent).
Here the trace becomes a run:

- agents at the top of the trace (not inside another agent or a tool) are the root node,
  one after the other (a handoff stays one conversation; each step names its agent when
  more than one spoke);
- an agent inside a tool, or inside another agent, is a subagent, embedded in
  `subagent_trajectories` and referenced from the tool result (or the last model turn)
  that started it; further agents in the same tool call continue that subagent;
- a node's steps are its user input, then each model turn with the tool results that
  answer its calls (by call id, else by tool name, else the turn before the tool ran),
  and a user step before a turn whose conversation starts from another user message than
  its node's previous turn's (a compaction handed over).

Tokens are taken from model turns only (an agent span's totals would count them twice).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from agentjudge.errors import InputError, Problem, clip
from agentjudge.traces.otlp_spans import Placed, Span, loads_bounded
from agentjudge.traces.read import Run, TraceFile

SCHEMA_VERSION = "ATIF-v1.7"
# Subagents inside subagents: each level nests the ATIF document deeper, and the JSON
# writers stop near 254 levels (see agentjudge.nesting).
MAX_AGENT_DEPTH = 50


@dataclass(frozen=True, slots=True)
class Agent:
    """An agent's run; `user_input` is what it was asked, when the span records it.

    `graph_node`: the span is a graph's node run, named after the node (LangGraph's
    `agent`), so the agent is named after the graph that ran it: its parent, when that
    parent names one (`Other.graph`).
    """

    name: str
    user_input: str | None = None
    graph_node: bool = False


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call a model turn made."""

    call_id: str | None
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Turn:
    """A model turn: what the model said and called, and what it cost."""

    text: str
    calls: tuple[Call, ...] = ()
    user_input: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cached_tokens: int | None = None


@dataclass(frozen=True, slots=True)
class ToolRun:
    """A tool's execution and its result (`error` set when the span says it failed)."""

    name: str
    call_id: str | None
    arguments: dict[str, Any]
    content: str
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Other:
    """A span that is neither agent, model turn nor tool: counted by `kind`, walked through.
    `graph`: the graph's name, when the span is a graph's run (see `Agent.graph_node`)."""

    kind: str
    graph: str | None = None


Role = Agent | Turn | ToolRun | Other
Spot = Placed[Role]


def read_runs(traces: Iterable[tuple[str, list[Spot]]], display: str, producer: str) -> TraceFile:
    """One `Run` per trace that holds an agent or a model turn; the rest is counted.

    The runs are built as they are taken, one trace at a time (`TraceFile.runs`), so only
    one trace's spans and document are in memory at once.
    """
    ignored: Counter[str] = Counter()
    return TraceFile(_runs(traces, display, producer, ignored), ignored)


def _runs(
    traces: Iterable[tuple[str, list[Spot]]], display: str, producer: str, ignored: Counter[str]
) -> Iterator[Run]:
    found = False
    for trace_id, spans in traces:
        builder = _TraceBuilder(trace_id, spans, display, ignored)
        document = builder.document(producer)
        if document is not None:
            found = True
            yield Run(trace_id, document)
    if not found:
        raise InputError(
            [
                Problem(
                    display,
                    "$",
                    "traces.no_agent",
                    "no agent, model turn or tool span in any trace "
                    f"({_counts(ignored)}); is this the right --format?",
                )
            ]
        )


def _counts(ignored: Counter[str]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in ignored.most_common()) or "no spans"


@dataclass
class _Node:
    trace_id: str
    span_id: str | None
    names: list[str] = field(default_factory=list)
    depth: int = 0
    steps: list[dict[str, Any]] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    # The first user message of the node's last model turn: a later turn that starts from
    # another one was sent a new conversation (the context compacted and handed over, as
    # Terminus-2 does), so that message is a new user step, as in the ATIF it came from.
    prompt: str | None = None

    def last_turn(self) -> dict[str, Any] | None:
        return next((s for s in reversed(self.steps) if s["source"] == "agent"), None)


@dataclass
class _Context:
    """Where a span's content goes: its node, the tool call it runs inside (if any), and the
    node a sibling agent continues (the root at the top; a tool call's first subagent)."""

    node: _Node
    tool: dict[str, Any] | None = None
    merge: _Node | None = None

    def owner(self) -> _Node:
        """The node a model turn or tool result here belongs to: once a tool call started a
        subagent, what else runs inside that call is the subagent's (langgraph puts the
        subagent's tools beside its agent spans, not inside them)."""
        return self.merge if self.tool is not None and self.merge is not None else self.node


class _TraceBuilder:
    def __init__(
        self,
        trace_id: str,
        spans: Sequence[Spot],
        display: str,
        ignored: Counter[str],
    ) -> None:
        self.trace_id, self.display, self.ignored = trace_id, display, ignored
        self.children = _linked(spans, display)
        self.root = _Node(trace_id, None)
        self.speakers: set[str] = set()

    def document(self, producer: str) -> dict[str, Any] | None:
        top = _Context(self.root, merge=self.root)
        for span in self.children.get(None, ()):
            self._walk(span, top)
        if not self.root.steps and not self.root.children:
            return None
        return _trajectory(self.root, self.trace_id, producer, len(self.speakers) > 1)

    def _walk(self, top: Spot, ctx: _Context) -> None:
        """`top` and its descendants, depth first in start order (a loop, not recursion:
        a trace may nest deeper than Python's stack)."""
        pending: list[tuple[Spot, _Context, Role | None]] = [(top, ctx, None)]
        while pending:
            span, ctx, parent = pending.pop()
            role = span.role
            inner = ctx
            if isinstance(role, Agent):
                inner = self._agent(span, _named(role, parent), ctx)
            elif isinstance(role, Turn):
                self._turn(span, role, ctx.owner())
            elif isinstance(role, ToolRun):
                owner = ctx.owner()
                result = self._tool(span, role, owner)
                inner = _Context(owner, result) if result is not None else ctx
            else:
                self.ignored[role.kind] += 1
            children = self.children.get(span.span_id, ())
            pending.extend((child, inner, role) for child in reversed(children))

    def _agent(self, span: Spot, agent: Agent, ctx: _Context) -> _Context:
        node = ctx.merge
        if node is None:
            node = _Node(self.trace_id, span.span_id, depth=ctx.node.depth + 1)
            if node.depth > MAX_AGENT_DEPTH:
                raise _problem(
                    self.display,
                    span,
                    "traces.agent_depth",
                    f"agents nested more than {MAX_AGENT_DEPTH} deep; agentjudge reads "
                    "subagents that deep at most",
                )
            ctx.node.children.append(node)
            self._refer(ctx, node, agent.name)
            if ctx.tool is not None:
                ctx.merge = node
        if node is self.root:
            self.speakers.add(agent.name)
        node.names.append(agent.name)
        if agent.user_input and not node.steps:
            node.steps.append(_user_step(agent.user_input, span))
        return _Context(node)

    def _refer(self, ctx: _Context, child: _Node, name: str) -> None:
        ref = {"trajectory_id": child.span_id}
        if ctx.tool is not None:
            ctx.tool.setdefault("subagent_trajectory_ref", []).append(ref)
            return
        turn = ctx.node.last_turn()
        if turn is None:  # an agent started before its parent's first model turn
            return
        call = next((c for c in turn.get("tool_calls", ()) if c["function_name"] == name), None)
        result: dict[str, Any] = {"subagent_trajectory_ref": [ref]}
        if call is not None:
            result["source_call_id"] = call["tool_call_id"]
        turn.setdefault("observation", {"results": []})["results"].append(result)

    def _turn(self, span: Spot, turn: Turn, node: _Node) -> None:
        if turn.user_input and (
            not node.steps or (node.prompt is not None and turn.user_input != node.prompt)
        ):
            node.steps.append(_user_step(turn.user_input, span))
        if turn.user_input:
            node.prompt = turn.user_input
        step: dict[str, Any] = {
            "source": "agent",
            "message": turn.text,
            "timestamp": _iso(span.start),
            "extra": {"source": _origin(span)},
        }
        if node is self.root and node.names:  # kept when more than one agent spoke
            step["extra"]["agent_name"] = node.names[-1]
        if turn.model:
            step["model_name"] = turn.model
            node.models.append(turn.model)
        if turn.calls:
            step["tool_calls"] = [
                {
                    "tool_call_id": call.call_id or f"{span.span_id}-{index}",
                    "function_name": call.name,
                    "arguments": call.arguments,
                }
                for index, call in enumerate(turn.calls)
            ]
        metrics = {
            key: value
            for key, value in (
                ("prompt_tokens", turn.prompt_tokens),
                ("completion_tokens", turn.completion_tokens),
                ("cached_tokens", turn.cached_tokens),
            )
            if value is not None
        }
        if metrics:
            step["metrics"] = metrics
        node.steps.append(step)

    def _tool(self, span: Spot, tool: ToolRun, node: _Node) -> dict[str, Any] | None:
        """The observation result for `tool`, on the model turn that called it."""
        step, call = _answered(node, tool)
        if step is None:
            self.ignored["tool result before any model turn"] += 1
            return None
        if call is None:  # the turn's calls do not name it: the tool span says what ran
            call = {
                "tool_call_id": tool.call_id or span.span_id,
                "function_name": tool.name,
                "arguments": tool.arguments,
            }
            step.setdefault("tool_calls", []).append(call)
        content = tool.content
        if tool.error is not None:
            content = f"[tool error: {tool.error}]\n{content}" if content else tool.error
        extra: dict[str, Any] = {"source": _origin(span)}
        if tool.error is not None:
            extra["error"] = True
        result = {"source_call_id": call["tool_call_id"], "content": content, "extra": extra}
        step.setdefault("observation", {"results": []})["results"].append(result)
        return result


def _answered(node: _Node, tool: ToolRun) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """The turn step whose call `tool` answers, and that call (None: not found by id/name)."""
    turns = [s for s in reversed(node.steps) if s["source"] == "agent"]
    if not turns:
        return None, None
    if tool.call_id:
        for step in turns:
            for call in step.get("tool_calls", ()):
                if call["tool_call_id"] == tool.call_id:
                    return step, call
    last = turns[0]
    answered = {r.get("source_call_id") for r in last.get("observation", {}).get("results", ())}
    for call in last.get("tool_calls", ()):
        if call["function_name"] == tool.name and call["tool_call_id"] not in answered:
            return last, call
    return last, None


def _named(agent: Agent, parent: Role | None) -> Agent:
    """A graph node's agent named after the graph run it is a step of (its parent span)."""
    if agent.graph_node and isinstance(parent, Other) and parent.graph:
        return Agent(parent.graph, agent.user_input)
    return agent


def _linked(spans: Sequence[Spot], display: str) -> dict[str | None, list[Spot]]:
    """Children by parent span id (None: the trace's top spans), in start order; one clear
    problem for a duplicated span id, a parent that is not in the file, or a cycle."""
    by_id: dict[str, Spot] = {}
    for span in spans:
        if span.span_id in by_id:
            raise _problem(display, span, "otlp.duplicate_span", "this span id is used twice")
        by_id[span.span_id] = span
    children: dict[str | None, list[Spot]] = {}
    for span in spans:
        if span.parent_id is not None and span.parent_id not in by_id:
            raise _problem(
                display,
                span,
                "otlp.broken_parent",
                f"its parent span {clip(span.parent_id)} is not in the file; export the "
                "whole trace (or the parent was dropped by sampling)",
            )
        children.setdefault(span.parent_id, []).append(span)
    _check_acyclic(by_id, display)
    for group in children.values():
        group.sort(key=lambda s: (s.start, s.line))
    return children


def _check_acyclic(by_id: dict[str, Spot], display: str) -> None:
    settled: set[str] = set()
    for span in by_id.values():
        path: list[str] = []
        seen: set[str] = set()
        current: Spot | None = span
        while current is not None and current.span_id not in settled:
            if current.span_id in seen:
                raise _problem(
                    display,
                    current,
                    "otlp.parent_cycle",
                    "its parent links form a cycle: " + " -> ".join(path[-5:]),
                )
            seen.add(current.span_id)
            path.append(current.span_id)
            current = by_id.get(current.parent_id) if current.parent_id else None
        settled.update(seen)


def _problem(display: str, span: Spot, rule: str, message: str) -> InputError:
    where = f"line {span.line}: trace {clip(span.trace_id)} span {clip(span.span_id)}"
    return InputError([Problem(display, where, rule, message)])


def _user_step(text: str, span: Spot) -> dict[str, Any]:
    return {
        "source": "user",
        "message": text,
        "timestamp": _iso(span.start),
        "extra": {"source": _origin(span)},
    }


def _origin(span: Spot) -> dict[str, Any]:
    return {"trace_id": span.trace_id, "span_id": span.span_id, "line": span.line}


def _iso(nanos: int) -> str:
    return datetime.fromtimestamp(nanos / 1e9, UTC).isoformat()


def _trajectory(node: _Node, trace_id: str, producer: str, speakers: bool) -> dict[str, Any]:
    steps = node.steps or [
        {"source": "system", "message": "(this agent recorded no user input and no model turn)"}
    ]
    for index, step in enumerate(steps, start=1):
        step["step_id"] = index
        if not speakers:
            step.get("extra", {}).pop("agent_name", None)
    name = node.names[0] if node.names else "agent"
    agent: dict[str, Any] = {"name": name, "version": "unknown"}
    if node.models:
        agent["model_name"] = node.models[0]
    document: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "session_id": trace_id,
        "trajectory_id": node.span_id or trace_id,
        "agent": agent,
        "steps": steps,
        "extra": {"source": {"format": producer, "trace_id": trace_id, "span_id": node.span_id}},
    }
    children = [_trajectory(child, trace_id, producer, False) for child in node.children]
    if children:
        document["subagent_trajectories"] = children
    totals = _totals(steps, children)
    if totals:
        document["final_metrics"] = totals
    return document


def _totals(steps: Iterable[dict[str, Any]], children: Iterable[dict[str, Any]]) -> dict[str, int]:
    """Token totals of a node and its subagents (each turn's tokens counted once)."""
    totals: Counter[str] = Counter()
    for step in steps:
        for key, value in step.get("metrics", {}).items():
            totals[f"total_{key}"] += value
    for child in children:
        totals.update(child.get("final_metrics", {}))
    return dict(totals)


def json_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as ATIF wants them, an object: a JSON string is decoded, and
    anything that is not an object is kept under `input`."""
    if isinstance(value, str):
        try:
            value = loads_bounded(value)
        except ValueError:
            return {"input": value}
    if isinstance(value, dict):
        return value
    return {} if value is None else {"input": value}


def text_of(value: Any) -> str:
    """A message body, result or content-part list as plain text."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        texts = [text_of(item) for item in value]
        return "\n".join(t for t in texts if t)
    if isinstance(value, dict):
        for key in ("content", "text", "response", "result"):
            if key in value:
                return text_of(value[key])
    return json.dumps(value, ensure_ascii=False)


def exception_message(span: Span) -> str:
    """Why an ERROR span failed when its status gives no message: its `exception` event."""
    for event in span.events:
        if event.name == "exception" and event.attributes.get("exception.message"):
            return str(event.attributes["exception.message"])
    return "the tool span ended in error"
