"""The test server as an agent's model: scripted tool calls, then an answer.

Real agent frameworks (pydantic-ai, LangGraph, ...) run against the server as they would
against OpenAI's chat completions, so the spans they record are the ones their users get,
while what the "model" says is known in advance. A conversation is matched to its script by
a phrase in its first user message (a subagent's conversation starts with the question its
caller delegated, so it has a script of its own); the turn answered is the number of
assistant messages the request already holds. Each turn is some text and tool calls with
ids derived from the script's phrase and the turn, so repeated runs record the same calls.
Every turn reports the same usage (`TURN_USAGE`), so a run's token totals are known too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjudge.testing.mimic.base import chat_completion

# the usage every scripted turn reports: prompt, completion
TURN_USAGE = (100, 10)


@dataclass(frozen=True)
class ToolCall:
    """A call the scripted model makes: a tool offered by the agent, with its arguments."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Turn:
    """One reply of the model: text (may be empty) and the tool calls it makes (none: the
    turn is the agent's answer)."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True)
class AgentScript:
    """The replies to a conversation whose first user message holds `phrase` (any case)."""

    phrase: str
    turns: tuple[Turn, ...]

    def matches(self, first_user_message: str) -> bool:
        """Whether this script answers a conversation that starts with this message."""
        return self.phrase.lower() in first_user_message.lower()


class ScriptError(ValueError):
    """A request the agent scripts cannot answer (no script, or past its last turn)."""


def agent_reply(scripts: Iterable[AgentScript], body: Mapping[str, Any]) -> dict[str, Any] | None:
    """The chat completion a scripted agent model returns for this request body, or None
    when no script's phrase is in its first user message (the request is not an agent's).

    Raises ScriptError for a conversation past its script's last turn or a streamed one.
    """
    messages = [m for m in body.get("messages") or [] if isinstance(m, Mapping)]
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    if not users:
        return None
    script = next((s for s in scripts if s.matches(users[0])), None)
    if script is None:
        return None
    if body.get("stream"):
        raise ScriptError("the agent scripts answer without streaming (stream: false)")
    index = sum(1 for m in messages if m.get("role") == "assistant")
    if index >= len(script.turns):
        raise ScriptError(
            f"the script for {script.phrase!r} has {len(script.turns)} turns; "
            f"the request asks for turn {index + 1}"
        )
    turn = script.turns[index]
    message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
    if turn.calls:
        message["tool_calls"] = [
            {
                "id": _call_id(script.phrase, index, position),
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(dict(call.arguments))},
            }
            for position, call in enumerate(turn.calls)
        ]
    prompt, completion = TURN_USAGE
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }
    reply = chat_completion(
        f"chatcmpl-agent-{index}", str(body.get("model") or "agent"), message, usage
    )
    reply["choices"][0]["finish_reason"] = "tool_calls" if turn.calls else "stop"
    return reply


def _call_id(phrase: str, turn: int, position: int) -> str:
    # the same in every run, distinct across scripts (a subagent's calls beside its caller's)
    digest = hashlib.sha256(phrase.lower().encode()).hexdigest()[:8]
    return f"call_{digest}_{turn}_{position}"


def _text(content: object) -> str:
    # a string, or a list of parts of which the text ones count
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""
