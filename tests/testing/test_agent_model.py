"""The test server playing an agent's model: scripted tool calls, then an answer."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.agent_model import TURN_USAGE, AgentScript, ToolCall, Turn

SCRIPTS = (
    AgentScript("quote notes.txt", (Turn("Done: it says hi."),)),
    AgentScript(
        "sum of numbers.txt",
        (
            Turn("Reading it.", (ToolCall("read_file", {"path": "numbers.txt"}),)),
            Turn("It is 42."),
        ),
    ),
)
TOOLS = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]


def chat(url: str, messages: Sequence[Mapping[str, Any]], **extra: object) -> httpx.Response:
    body = {"model": "gpt-4o-mini", "messages": messages, "tools": TOOLS, **extra}
    return httpx.post(f"{url}/chat/completions", json=body, timeout=10)


def test_a_conversation_gets_its_scripts_turn_by_its_assistant_messages() -> None:
    asked: list[dict[str, Any]] = [
        {"role": "system", "content": "You are the coordinator."},
        {"role": "user", "content": [{"type": "text", "text": "What is the SUM of numbers.txt?"}]},
    ]
    with JudgeServer(Script(agent=SCRIPTS)) as server:
        first = chat(server.base_url, asked).json()
        (choice,) = first["choices"]
        assert choice["finish_reason"] == "tool_calls"
        assert choice["message"]["content"] == "Reading it."
        (call,) = choice["message"]["tool_calls"]
        assert call["function"]["name"] == "read_file"
        assert json.loads(call["function"]["arguments"]) == {"path": "numbers.txt"}
        result = {"role": "tool", "tool_call_id": call["id"], "content": "17\n25\n"}
        second = chat(server.base_url, [*asked, choice["message"], result]).json()
        assert second["choices"][0]["message"] == {"role": "assistant", "content": "It is 42."}
        assert second["choices"][0]["finish_reason"] == "stop"
        prompt, completion = TURN_USAGE
        assert second["usage"]["prompt_tokens"] == prompt
        assert second["usage"]["completion_tokens"] == completion
        # the same call id when the conversation is run again
        again = chat(server.base_url, asked).json()["choices"][0]["message"]["tool_calls"]
        assert again[0]["id"] == call["id"]
        assert server.outcomes() == {"agent": 3}


def test_other_requests_are_judged_and_a_conversation_past_its_script_is_refused() -> None:
    with JudgeServer(Script(agent=SCRIPTS)) as server:
        judged = chat(server.base_url, [{"role": "user", "content": "a step [[score=0.25]]"}])
        assert json.loads(judged.json()["choices"][0]["message"]["content"])["score"] == 0.25
        user = {"role": "user", "content": "quote notes.txt"}
        past = [user, {"role": "assistant", "content": "Done: it says hi."}, user]
        refused = chat(server.base_url, past)
        assert refused.status_code == 400
        assert "has 1 turns; the request asks for turn 2" in refused.text
        streamed = chat(server.base_url, [user], stream=True)
        assert streamed.status_code == 400
        assert "without streaming" in streamed.text
        assert server.outcomes() == {"ok": 1, "refused": 2}
