"""What each provider asks of its API's prompt cache (issue 37, item 1), and the API
mimics counting cache use as each API documents it (docs/judge.md, "Prompt caching")."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAI, OpenAICompatible
from agentjudge.judge.providers.anthropic import MAX_BREAKPOINTS, Anthropic, min_cacheable_tokens
from agentjudge.judge.providers.openai import AzureOpenAI
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.scoring.prompts import user_prompt
from agentjudge.testing import JudgeServer

KEY = "sk-test-0123456789abcdef"
SYSTEM = "You judge one step. " * 20  # about 100 tokens
ANTHROPIC = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}


def step_request(task_chars: int, steps: int, group: str = "g") -> JudgeRequest:
    """A step request whose opening holds a task of `task_chars` and whose context holds
    `steps` earlier steps of about 2,000 characters each."""
    context = [json.dumps({"step_id": i, "message": "x" * 2000}) for i in range(steps)]
    user = user_prompt(json.dumps("t" * task_chars), None, context, '{"step_id": 99}')
    return JudgeRequest((Message("system", SYSTEM), user), "v", cache_group=group)


def body(request: JudgeRequest, provider: Any) -> dict[str, Any]:
    built: httpx.Request = provider.build(request)
    data: dict[str, Any] = json.loads(built.content)
    return data


def breakpoints(data: dict[str, Any]) -> list[str]:
    """Where the request's `cache_control` marks are: `system`, or `message:<block index>`."""
    marks = []
    if isinstance(data.get("system"), list):
        marks += ["system" for b in data["system"] if "cache_control" in b]
    for message in data["messages"]:
        if isinstance(message["content"], list):
            marks += [
                f"message:{i}" for i, b in enumerate(message["content"]) if "cache_control" in b
            ]
    return marks


def test_anthropic_marks_the_shared_opening_and_the_growing_prefix() -> None:
    request = step_request(task_chars=5000, steps=6)
    data = body(request, Anthropic("http://a", "claude-sonnet-4-5"))
    (user,) = data["messages"]
    blocks = user["content"]
    # cut at every mark, so the API finds the step before's entry one block back
    assert "".join(b["text"] for b in blocks) == request.messages[1].content
    assert len(blocks) == 1 + 6 + 1  # the opening, six context steps, the step
    assert breakpoints(data) == ["message:0", "message:6"]
    assert all(b["cache_control"] == {"type": "ephemeral"} for b in blocks if "cache_control" in b)
    assert "cache_control" not in blocks[-1]  # the step itself changes every request


def test_anthropic_marks_nothing_under_the_models_minimum() -> None:
    # the opening (~1,300 tokens with the tool) passes Sonnet's 1,024, not Haiku 4.5's 4,096
    request = step_request(task_chars=4200, steps=0)
    assert breakpoints(body(request, Anthropic("http://a", "claude-sonnet-4-5"))) == ["message:0"]
    haiku = body(request, Anthropic("http://a", "claude-haiku-4-5"))
    assert breakpoints(haiku) == []
    assert isinstance(haiku["messages"][0]["content"], str)  # sent as before: nothing to cache
    assert isinstance(haiku["system"], str)
    # a longer prefix passes it: only the prefix, the opening is still too short
    longer = step_request(task_chars=4200, steps=8)
    assert breakpoints(body(longer, Anthropic("http://a", "claude-haiku-4-5"))) == ["message:8"]
    assert min_cacheable_tokens("claude-opus-4-5-20251101") == 4096
    assert min_cacheable_tokens("claude-sonnet-4-5-20250929") == 1024


def test_anthropic_never_sends_more_than_four_breakpoints() -> None:
    system = "s" * 20_000  # a rubric long enough to cache on its own
    context = [json.dumps({"step_id": i, "message": "x" * 3000}) for i in range(40)]
    user = user_prompt(json.dumps("t" * 9000), None, context, "{}")
    request = JudgeRequest((Message("system", system), user), "v")
    data = body(request, Anthropic("http://a", "claude-sonnet-4-5"))
    assert breakpoints(data) == ["system", "message:0", "message:40"]
    assert len(breakpoints(data)) <= MAX_BREAKPOINTS
    # a request that marks no prefix (a categorization, a rubric) is sent as ever
    plain = JudgeRequest((Message("system", system), Message("user", "x" * 9000)), "v")
    assert breakpoints(body(plain, Anthropic("http://a", "claude-sonnet-4-5"))) == []


def test_openai_and_azure_name_the_trajectory_and_other_servers_are_not_told() -> None:
    a, b = (
        step_request(100, 2, group="agentjudge-aaa"),
        step_request(100, 3, group="agentjudge-bbb"),
    )
    for provider in (OpenAI("http://o/v1", "gpt-5-mini"), AzureOpenAI("http://z", "deploy")):
        assert body(a, provider)["prompt_cache_key"] == "agentjudge-aaa"
        assert body(b, provider)["prompt_cache_key"] == "agentjudge-bbb"
        # a request of no trajectory (a rubric for a task) names none
        plain = JudgeRequest((Message("user", "x"),), "v")
        assert "prompt_cache_key" not in body(plain, provider)
    # vLLM, Ollama...: a strict server refuses a field it does not know
    assert "prompt_cache_key" not in body(a, OpenAICompatible("http://v/v1", "m"))


# --- the Anthropic mimic: caches only what `cache_control` asks, as documented -----------


def messages_body(blocks: list[dict[str, Any]], model: str = "claude-sonnet-4-5") -> dict[str, Any]:
    return {
        "model": model,
        "max_tokens": 64,
        "system": "judge",
        "messages": [{"role": "user", "content": blocks}],
    }


def text(chars: int, mark: bool = False, fill: str = "a") -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": fill * chars}
    if mark:
        block["cache_control"] = {"type": "ephemeral"}
    return block


def usage(server: JudgeServer, data: dict[str, Any]) -> dict[str, int]:
    url = f"http://127.0.0.1:{server.port}/v1/messages"
    response = httpx.post(url, json=data, headers=ANTHROPIC, timeout=10)
    assert response.status_code == 200, response.text
    counted: dict[str, int] = response.json()["usage"]
    return counted


@pytest.fixture
def anthropic() -> Any:
    with JudgeServer(mimic="anthropic", api_key=KEY) as server:
        yield server


def test_the_anthropic_mimic_writes_and_reads_at_breakpoints(anthropic: JudgeServer) -> None:
    opening = text(8000, mark=True)  # 2,000 tokens: over Sonnet's minimum
    first = usage(anthropic, messages_body([opening, text(400, fill="b")]))
    assert first["cache_creation_input_tokens"] == 2001  # "judge" + the opening
    assert first["cache_read_input_tokens"] == 0
    assert first["input_tokens"] > 0
    # the next step: the opening, the step before (now context), a new step
    grown = [text(8000), text(4000, fill="c", mark=True), text(400, fill="d")]
    second = usage(anthropic, messages_body(grown))
    assert second["cache_read_input_tokens"] == 2001  # found one block back
    assert second["cache_creation_input_tokens"] == 1000
    third = usage(anthropic, messages_body([text(8000), text(4000, fill="c"), text(40, mark=True)]))
    assert third["cache_read_input_tokens"] == 3001
    # no cache_control: nothing read, nothing written, whatever was cached
    plain = usage(anthropic, messages_body([text(8000), text(4000, fill="c")]))
    assert plain["cache_read_input_tokens"] == plain["cache_creation_input_tokens"] == 0
    # under the model's minimum: marked, yet not cached
    short = usage(anthropic, messages_body([text(8000, mark=True, fill="e")], "claude-haiku-4-5"))
    assert short["cache_creation_input_tokens"] == 0


def test_the_anthropic_mimic_refuses_a_fifth_breakpoint(anthropic: JudgeServer) -> None:
    url = f"http://127.0.0.1:{anthropic.port}/v1/messages"
    data = messages_body([text(10, mark=True) for _ in range(5)])
    response = httpx.post(url, json=data, headers=ANTHROPIC, timeout=10)
    assert response.status_code == 400
    assert "A maximum of 4 blocks with cache_control" in response.json()["error"]["message"]


def test_a_server_that_refuses_the_cache_key_is_sent_none_after() -> None:
    """An Azure API version that does not know `prompt_cache_key` refuses it: the client
    says so once and judges on without it."""
    sent: list[dict[str, Any]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        data = json.loads(request.content)
        sent.append(data)
        if "prompt_cache_key" in data:
            error = {"message": "Unrecognized request argument supplied: prompt_cache_key"}
            return httpx.Response(400, json={"error": error | {"type": "invalid_request_error"}})
        content = json.dumps({"reasoning": "ok", "score": 0.7})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    notes: list[str] = []
    provider = AzureOpenAI("http://z", "deploy")
    client = JudgeClient(provider, transport=httpx.MockTransport(answer), on_note=notes.append)

    async def judge_two() -> list[float | None]:
        async with client:
            outcomes = [await client.judge(step_request(100, n)) for n in (1, 2)]
        return [o.verdict.score if o.verdict else None for o in outcomes]

    assert asyncio.run(judge_two()) == [0.7, 0.7]
    assert ["prompt_cache_key" in data for data in sent] == [True, False, False]
    assert len(notes) == 1
    assert "takes no prompt_cache_key" in notes[0]


def test_the_openai_mimic_shares_no_start_between_answer_schemas() -> None:
    """OpenAI's structured-output schema is a prefix of the system message: a category
    request repeating a step request's messages word for word, held to another schema,
    reads nothing from the cache; the same messages under the same schema do."""
    messages = (Message("system", SYSTEM), Message("user", "the step " * 1000))
    provider = OpenAI("http://o/v1", "gpt-5-mini", KEY)
    step = JudgeRequest(messages, "v")
    category = JudgeRequest(messages, "v", answer="category")
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        url = f"http://127.0.0.1:{server.port}/v1/chat/completions"

        def cached(request: JudgeRequest) -> int:
            response = httpx.post(
                url, json=body(request, provider), headers={"authorization": f"Bearer {KEY}"}
            )
            assert response.status_code == 200, response.text
            tokens: int = response.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
            return tokens

        assert cached(step) == 0
        assert cached(category) == 0  # the same 2,350 tokens of messages: another schema
        assert cached(step) == 2304  # the same schema: its start, in 128-token steps
        assert cached(category) == 2304


def test_the_anthropic_mimic_keeps_the_system_entry_not_the_messages_for_another_tool_choice(
    anthropic: JudgeServer,
) -> None:
    """Anthropic: "Changes to `tool_choice` parameter only affect message blocks"; other
    tools invalidate every entry."""
    tool = {"input_schema": {"type": "object", "properties": {}}}
    tools = [{"name": "score", **tool}, {"name": "category", **tool}]
    system = [{"type": "text", "text": "s" * 8000, "cache_control": {"type": "ephemeral"}}]

    def sent(choice: str, listed: list[dict[str, Any]] = tools) -> dict[str, Any]:
        data = messages_body([text(8000, mark=True, fill="m"), text(40, fill="q")])
        data.update(system=system, tools=listed, tool_choice={"type": "tool", "name": choice})
        return data

    first = usage(anthropic, sent("score"))
    assert (first["cache_read_input_tokens"], first["cache_creation_input_tokens"]) == (0, 4000)
    other_choice = usage(anthropic, sent("category"))
    # the system prompt's 2,000 tokens are read, the messages' 2,000 written again
    assert other_choice["cache_read_input_tokens"] == 2000
    assert other_choice["cache_creation_input_tokens"] == 2000
    assert usage(anthropic, sent("score"))["cache_read_input_tokens"] == 4000
    other_tools = usage(anthropic, sent("score", tools[:1]))
    assert other_tools["cache_read_input_tokens"] == 0
