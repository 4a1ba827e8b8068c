"""Each provider builds its API's documented request and reads its documented answer; the
client adapts once to what a server refuses; a server's explanation is kept, redacted.

The same APIs are exercised over real HTTP against `judge-server --mimic` in
tests/e2e/test_judge_providers.py.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest

from agentjudge.errors import UsageError
from agentjudge.judge import JudgeClient, JudgeOutcome
from agentjudge.judge.providers import (
    AzureOpenAI,
    JudgeSpec,
    OpenAI,
    OpenAICompatible,
    Provider,
    build_provider,
)
from agentjudge.judge.providers.anthropic import TOOL, Anthropic
from agentjudge.judge.providers.gemini import Gemini
from agentjudge.judge.providers.openai_compatible import REASONING_TOKENS
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.secrets import redact, redact_endpoint

pytestmark = pytest.mark.timeout(30)


def request(text: str = "the step", **fields: Any) -> JudgeRequest:
    return JudgeRequest(
        (Message("system", "You are a judge. Answer in JSON."), Message("user", text)),
        "test-v1",
        **fields,
    )


def sent(provider: Provider, req: JudgeRequest | None = None) -> tuple[httpx.Request, Any]:
    built = provider.build(req or request())
    return built, json.loads(built.content)


STEP_SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "number"}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}


def test_openai_structured_outputs_with_a_portable_strict_schema() -> None:
    built, body = sent(OpenAI("https://api.openai.com/v1", "gpt-4o-mini", "sk-test-key-123"))
    assert str(built.url) == "https://api.openai.com/v1/chat/completions"
    assert built.headers["authorization"] == "Bearer sk-test-key-123"
    assert body == {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a judge. Answer in JSON."},
            {"role": "user", "content": "the step"},
        ],
        "max_tokens": 512,
        "temperature": 0.0,
        # no minimum/maximum: Azure's strict mode refuses them (the parser checks the range)
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "step_verdict", "schema": STEP_SCHEMA, "strict": True},
        },
    }


@pytest.mark.parametrize("model", ["gpt-5-mini", "o3", "o4-mini", "gpt-5.1"])
def test_openai_reasoning_models(model: str) -> None:
    _, body = sent(OpenAI("https://api.openai.com/v1", model, "k", reasoning_effort="low"))
    assert body["messages"][0]["role"] == "developer"
    assert "max_tokens" not in body
    assert body["max_completion_tokens"] == 512 + REASONING_TOKENS
    assert "temperature" not in body
    assert body["reasoning_effort"] == "low"


def test_gpt5_chat_is_not_a_reasoning_model() -> None:
    _, body = sent(OpenAI("https://api.openai.com/v1", "gpt-5-chat-latest", "k"))
    assert body["max_tokens"] == 512
    assert body["temperature"] == 0.0
    assert "reasoning_effort" not in body


@pytest.mark.parametrize(
    ("base", "url"),
    [
        (
            "https://res.openai.azure.com",
            "https://res.openai.azure.com/openai/deployments/judge-dep/chat/completions"
            "?api-version=2024-10-21",
        ),
        (
            "https://res.openai.azure.com/openai/deployments/other",
            "https://res.openai.azure.com/openai/deployments/other/chat/completions"
            "?api-version=2024-10-21",
        ),
        (
            "https://res.openai.azure.com/openai/v1/",
            "https://res.openai.azure.com/openai/v1/chat/completions",
        ),
    ],
)
def test_azure_urls_and_api_key_header(base: str, url: str) -> None:
    built, body = sent(AzureOpenAI(base, "judge-dep", "azure-key-1234"))
    assert str(built.url) == url
    assert built.headers["api-key"] == "azure-key-1234"
    assert "authorization" not in built.headers
    assert body["model"] == "judge-dep"
    assert body["response_format"]["type"] == "json_schema"


def test_azure_api_version_is_settable() -> None:
    built, _ = sent(AzureOpenAI("https://r.openai.azure.com", "d", "k", api_version="2025-01-01"))
    assert built.url.params["api-version"] == "2025-01-01"


def test_anthropic_messages_with_a_forced_tool() -> None:
    built, body = sent(Anthropic("https://api.anthropic.com", "claude-sonnet-4-5", "sk-ant-k"))
    assert str(built.url) == "https://api.anthropic.com/v1/messages"
    assert built.headers["x-api-key"] == "sk-ant-k"
    assert built.headers["anthropic-version"] == "2023-06-01"
    assert "authorization" not in built.headers
    tool = body.pop("tools")
    assert body == {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "messages": [{"role": "user", "content": "the step"}],
        "system": "You are a judge. Answer in JSON.",
        "temperature": 0.0,
        "tool_choice": {"type": "tool", "name": TOOL},
    }
    assert [t["name"] for t in tool] == [TOOL]
    assert list(tool[0]["input_schema"]["properties"]) == ["reasoning", "score"]
    # a base URL that already ends in /v1 is not doubled
    built, _ = sent(Anthropic("http://127.0.0.1:9/v1", "m", "k"))
    assert built.url.path == "/v1/messages"


def test_anthropic_answers_are_read_from_the_tool_call_or_text() -> None:
    judge = Anthropic("https://api.anthropic.com", "m", "k")
    tool_answer = {
        "type": "message",
        "content": [
            {"type": "text", "text": "Let me record it."},
            {"type": "tool_use", "id": "toolu_1", "name": TOOL, "input": {"score": 0.25}},
        ],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 7, "cache_read_input_tokens": 90},
    }
    answer = judge.parse(200, json.dumps(tool_answer).encode())
    assert json.loads(answer.content) == {"score": 0.25}
    assert (answer.input_tokens, answer.output_tokens) == (100, 7)
    text_answer = {"content": [{"type": "text", "text": '{"score": 1}'}], "usage": {}}
    assert judge.parse(200, json.dumps(text_answer).encode()).content == '{"score": 1}'


def test_gemini_thinking_models_get_room_and_their_thinking_is_counted() -> None:
    built, body = sent(Gemini("https://g.example/v1beta/openai", "gemini-2.5-flash", "AIzaK"))
    assert str(built.url) == "https://g.example/v1beta/openai/chat/completions"
    assert built.headers["authorization"] == "Bearer AIzaK"
    assert body["max_tokens"] == 512 + REASONING_TOKENS
    assert body["temperature"] == 0.0
    assert body["response_format"]["type"] == "json_schema"
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "{}"}}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 400},
    }
    answer = Gemini("u", "gemini-2.5-flash").parse(200, json.dumps(reply).encode())
    assert (answer.input_tokens, answer.output_tokens) == (100, 300)
    _, body = sent(Gemini("u", "gemini-2.0-flash"))
    assert body["max_tokens"] == 512


def test_gemini_errors_come_as_a_list() -> None:
    body = [{"error": {"code": 400, "message": "Invalid value", "status": "INVALID_ARGUMENT"}}]
    assert Gemini("u", "m").error_message(json.dumps(body).encode()) == "Invalid value"


def test_a_servers_error_message_is_redacted_and_cut() -> None:
    judge = OpenAI("https://user:pw@api.example/v1", "m", "sk-secret-value-1234")
    body = {
        "error": {
            "message": "Incorrect API key provided: sk-secret-value-1234 for "
            "https://user:pw@api.example/v1 (Bearer abcdefghijkl)\n" + "x" * 1000
        }
    }
    message = judge.error_message(json.dumps(body).encode())
    assert "sk-secret" not in message
    assert "user:pw" not in message
    assert "abcdefghijkl" not in message
    assert "\n" not in message
    assert len(message) == 500
    assert message.startswith("Incorrect API key provided: *** for https://***@api.example/v1")
    assert judge.error_message(b"<html>Bad Gateway</html>") == "<html>Bad Gateway</html>"
    assert judge.error_message(b"") == ""
    assert "pw" not in repr(judge)


def test_a_servers_traceback_is_left_out_of_its_error_message() -> None:
    # llama-cpp-python 0.3's server answers a request it cannot validate with HTTP 500 and
    # a frame of its own source: the path inside its install is nobody's business here
    said = (
        "1 validation error:\n  {'type': 'literal_error', 'input': 'json_schema'}\n\n"
        '  File "/home/u/.venv/lib/python3.11/site-packages/llama_cpp/server/app.py", '
        "line 376, in create_chat_completion\n    POST /v1/chat/completions"
    )
    judge = OpenAICompatible("http://127.0.0.1:8000/v1", "m")
    message = judge.error_message(json.dumps({"error": {"message": said}}).encode())
    assert message == "1 validation error: {'type': 'literal_error', 'input': 'json_schema'}"
    traceback = (
        "Internal error\nTraceback (most recent call last):\n"
        '  File "/srv/app.py", line 3, in <module>\n    main()\n'
        '  File "/srv/app.py", line 9, in main\n    raise ValueError("boom")\n'
        "ValueError: boom"
    )
    assert judge.error_message(traceback.encode()) == "Internal error ValueError: boom"
    # a frame run into one line with other words
    one_line = 'failed File "/srv/app.py", line 3, in f; try again'
    assert judge.error_message(one_line.encode()) == "failed ; try again"


def test_redaction_of_known_key_shapes() -> None:
    text = "keys sk-proj-abcdefgh123 and AIzaSyA1234567890abcdefghijk and sk-ant-api03-xyzxyzxyz"
    assert redact(text) == "keys *** and *** and ***"
    assert redact_endpoint("https://u:p@h.example/v1?key=AIza123&api-version=1") == (
        "https://h.example/v1?api-version=1"
    )


def test_the_judge_identity_names_provider_model_and_server() -> None:
    a = OpenAICompatible("http://127.0.0.1:8000/v1", "judge")
    b = OpenAICompatible("http://127.0.0.1:8001/v1", "judge")
    assert a.identity == "openai-compatible|judge|http://127.0.0.1:8000/v1/chat/completions"
    assert a.identity != b.identity
    assert request().key(a.identity) != request().key(b.identity)
    secret = OpenAICompatible("https://me:pw@judge.example/v1", "judge")
    assert "pw" not in secret.identity
    assert secret.identity == OpenAICompatible("https://judge.example/v1", "judge").identity


# -- building a judge from what the user gave -----------------------------------------------


def test_hosted_providers_need_a_key_and_say_where_to_put_it() -> None:
    with pytest.raises(UsageError, match="OPENAI_API_KEY") as caught:
        build_provider(JudgeSpec("openai", "gpt-4o-mini"), {})
    assert caught.value.exit_code == 3
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        build_provider(JudgeSpec("anthropic", "claude"), {})
    with pytest.raises(UsageError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        build_provider(JudgeSpec("gemini", "gemini-2.0-flash"), {})
    with pytest.raises(UsageError, match="needs a model"):
        build_provider(JudgeSpec("openai"), {"OPENAI_API_KEY": "k"})
    with pytest.raises(UsageError, match="--judge-url or AZURE_OPENAI_ENDPOINT"):
        build_provider(JudgeSpec("azure", "dep"), {"AZURE_OPENAI_API_KEY": "k"})
    with pytest.raises(UsageError, match="unknown judge 'bedrock'"):
        build_provider(JudgeSpec("bedrock", "m"), {})


def test_keys_and_urls_come_from_the_providers_own_variables() -> None:
    judge = build_provider(
        JudgeSpec("openai", "gpt-4o"),
        {"OPENAI_API_KEY": "sk-from-env-1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    )
    built = judge.build(request())
    assert built.headers["authorization"] == "Bearer sk-from-env-1"
    assert str(built.url) == "http://127.0.0.1:9/v1/chat/completions"
    # agentjudge's own variable wins over the provider's; a key given wins over both
    env = {"OPENAI_API_KEY": "sk-provider", "AGENTJUDGE_JUDGE_API_KEY": "sk-ours"}
    judge = build_provider(JudgeSpec("openai", "gpt-4o"), env)
    assert judge.build(request()).headers["authorization"] == "Bearer sk-ours"
    judge = build_provider(JudgeSpec("openai", "gpt-4o", api_key="sk-given"), env)
    assert judge.build(request()).headers["authorization"] == "Bearer sk-given"
    azure = build_provider(
        JudgeSpec("azure", "dep"),
        {
            "AZURE_OPENAI_ENDPOINT": "https://r.openai.azure.com",
            "AZURE_OPENAI_API_KEY": "k",
            "OPENAI_API_VERSION": "2025-04-01-preview",
        },
    )
    assert azure.build(request()).url.params["api-version"] == "2025-04-01-preview"
    # an openai-compatible server never gets a provider's key it was not given
    local = build_provider(
        JudgeSpec("openai-compatible", "m", "http://127.0.0.1:9/v1"), {"OPENAI_API_KEY": "sk-x"}
    )
    assert "authorization" not in local.build(request()).headers


# -- adapting to refusals, through the client ------------------------------------------------


def openai_like(refuse: dict[str, str]) -> tuple[httpx.MockTransport, list[dict[str, Any]]]:
    """A server that refuses, as OpenAI words it, the parameters named in `refuse`."""
    seen: list[dict[str, Any]] = []

    def handle(req: httpx.Request) -> httpx.Response:
        body = json.loads(req.content)
        seen.append(body)
        for field, message in refuse.items():
            kind, _, value = field.partition("=")
            present = body.get(kind) if not value else body.get(kind, {}).get("type") == value
            if present is not None and present is not False:
                error = {"message": message, "type": "invalid_request_error", "param": kind}
                return httpx.Response(400, json={"error": error})
        content = json.dumps({"reasoning": "ok", "score": 0.75})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    return httpx.MockTransport(handle), seen


def judge_many(
    provider: Provider, transport: httpx.MockTransport, count: int
) -> tuple[list[JudgeOutcome], JudgeClient]:
    async def go() -> tuple[list[JudgeOutcome], JudgeClient]:
        client = JudgeClient(provider, transport=transport, concurrency=8, max_attempts=2)
        async with client:
            outcomes = await asyncio.gather(*(client.judge(request(f"s{i}")) for i in range(count)))
        return list(outcomes), client

    return asyncio.run(go())


def test_a_reasoning_model_unknown_by_name_is_adapted_to_once() -> None:
    transport, seen = openai_like(
        {
            "max_tokens": "Unsupported parameter: 'max_tokens' is not supported with this "
            "model. Use 'max_completion_tokens' instead.",
            "temperature": "Unsupported value: 'temperature' does not support 0 with this "
            "model. Only the default (1) value is supported.",
        }
    )
    # an Azure deployment's name says nothing about its model
    provider = AzureOpenAI("https://r.openai.azure.com", "my-judge", "k")
    outcomes, client = judge_many(provider, transport, 12)
    assert [o.verdict.score if o.verdict else o.error for o in outcomes] == [0.75] * 12
    assert len(client.notes) == 2  # each adaptation said once, however many calls met it
    assert "max_completion_tokens" in client.notes[0]
    assert "Unsupported parameter: 'max_tokens'" in client.notes[0]
    assert "temperature" in client.notes[1]
    last = seen[-1]
    assert "max_tokens" not in last
    assert "temperature" not in last
    assert last["max_completion_tokens"] == 512 + REASONING_TOKENS
    assert client.stats.retries == 0  # adapting spends no retry attempt
    assert provider.settled() == {
        "response_format": "json_schema",
        "token_field": "max_completion_tokens",
        "temperature": False,
        "system_role": "system",
    }


def test_an_openai_compatible_server_settles_on_the_format_it_takes() -> None:
    transport, seen = openai_like(
        {
            "response_format=json_schema": "response_format type must be one of "
            '"text" or "json_object", but got: json_schema',
        }
    )
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    outcomes, client = judge_many(provider, transport, 10)
    assert all(o.verdict is not None for o in outcomes)
    assert client.notes == [
        "judge openai-compatible/m: response_format json_schema refused: using response_format "
        'json_object with a schema (http_400: response_format type must be one of "text" or '
        '"json_object", but got: json_schema)'
    ]
    assert seen[-1]["response_format"]["type"] == "json_object"
    assert "schema" in seen[-1]["response_format"]


def test_a_refusal_that_is_not_about_the_format_changes_nothing() -> None:
    message = "This model's maximum context length is 4096 tokens. However, you requested 9000"
    transport, _ = openai_like({"messages": message})
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    (outcome,), client = judge_many(provider, transport, 1)
    assert outcome.error == "http_400"
    assert outcome.message == message
    assert outcome.explained == f"http_400: {message}"
    assert provider.mode == "json_schema"
    assert client.notes == []
    assert client.stats.calls == 1


def test_retry_after_ms_is_honoured() -> None:
    calls: list[float] = []

    def handle(req: httpx.Request) -> httpx.Response:
        calls.append(asyncio.get_event_loop().time())
        if len(calls) == 1:
            return httpx.Response(429, headers={"retry-after-ms": "300"}, json={})
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"score": 1}'}}]})

    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    (outcome,), _ = judge_many(provider, httpx.MockTransport(handle), 1)
    assert outcome.verdict is not None
    assert calls[1] - calls[0] >= 0.3


# -- what one bad request must not do to the run ----------------------------------------------


def refusing(bad: str, status: int = 400, message: str = "") -> httpx.MockTransport:
    """A server that answers every request but those mentioning `bad`, which it refuses
    with `message` whatever their format (say, a prompt too long for it)."""

    def handle(req: httpx.Request) -> httpx.Response:
        if bad in req.content.decode():
            if not message:
                return httpx.Response(status)  # no body at all
            return httpx.Response(status, json={"error": {"message": message}})
        content = json.dumps({"reasoning": "ok", "score": 0.5})
        return httpx.Response(200, json={"choices": [{"message": {"content": content}}]})

    return httpx.MockTransport(handle)


def judge_in_order(
    provider: Provider, transport: httpx.MockTransport, texts: list[str]
) -> tuple[list[JudgeOutcome], JudgeClient]:
    async def go() -> tuple[list[JudgeOutcome], JudgeClient]:
        async with JudgeClient(provider, transport=transport, max_attempts=1) as client:
            return [await client.judge(request(t)) for t in texts], client

    return asyncio.run(go())


def test_one_request_refused_in_every_format_changes_nothing_for_the_rest() -> None:
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    outcomes, client = judge_in_order(provider, refusing("oversized"), ["oversized", "fine"])
    assert outcomes[0].error == "http_400"
    assert outcomes[1].verdict is not None
    # one tentative step, undone when the same refusal came back in the next format
    assert provider.mode == "json_schema"
    assert len(client.notes) == 1
    assert client.stats.calls == 3


def test_once_a_format_is_answered_a_refusal_never_steps_it_down() -> None:
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    transport = refusing("strange", message="invalid json in request")
    outcomes, client = judge_in_order(provider, transport, ["fine", "strange", "fine again"])
    assert [o.error for o in outcomes] == [None, "http_400", None]
    assert provider.mode == "json_schema"
    assert client.notes == []


def test_an_answer_to_an_earlier_format_undoes_a_step() -> None:
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "m")
    before = provider.build(request())
    assert provider.adapt(400, "", provider.build(request())) is not None
    assert provider.settled()["response_format"] == "json_object_schema"
    # a call sent before the step was answered: json_schema works after all
    assert provider.accepted(before) == (
        "back to response_format json_schema: the refusal was about one request"
    )
    assert provider.settled()["response_format"] == "json_schema"
    assert provider.adapt(400, "", provider.build(request())) is None


def test_a_truncated_answer_counts_its_tokens_and_is_not_sent_again() -> None:
    sent_count = 0

    def cut_off(req: httpx.Request) -> httpx.Response:
        nonlocal sent_count
        sent_count += 1
        choice = {"message": {"content": '{"reasoning": "long'}, "finish_reason": "length"}
        usage = {"prompt_tokens": 100, "completion_tokens": 8704}
        return httpx.Response(200, json={"choices": [choice], "usage": usage})

    (outcome,), client = judge_in_order(
        OpenAI("https://api.openai.com/v1", "o3", "k"), httpx.MockTransport(cut_off), ["x"]
    )
    assert (outcome.error, outcome.protocol) == ("answer_truncated", True)
    assert sent_count == 1
    assert (client.stats.input_tokens, client.stats.output_tokens) == (100, 8704)


def test_anthropic_cut_off_and_refused_answers() -> None:
    judge = Anthropic("https://api.anthropic.com", "m", "k")
    cut = {
        "content": [{"type": "tool_use", "name": TOOL, "input": {}}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 5, "output_tokens": 512},
    }
    answer = judge.parse(200, json.dumps(cut).encode())
    assert (answer.stop, answer.output_tokens) == ("truncated", 512)
    refused = {"content": [], "stop_reason": "refusal", "usage": {}}
    assert judge.parse(200, json.dumps(refused).encode()).stop == "refused"
    # a forced tool that was answered once is never dropped for one request's refusal
    judge.accepted(judge.build(request()))
    assert judge.adapt(400, "tool input too large", judge.build(request())) is None


def test_the_reasoning_effort_is_part_of_the_judges_identity() -> None:
    low = OpenAI("https://api.openai.com/v1", "o3", "k", reasoning_effort="low")
    high = OpenAI("https://api.openai.com/v1", "o3", "k", reasoning_effort="high")
    assert low.identity != high.identity


def test_azure_reasoning_deployments_get_a_version_that_serves_them() -> None:
    assert AzureOpenAI("https://r.openai.azure.com", "o4-mini", "k").api_version == (
        "2025-04-01-preview"
    )
    hidden = AzureOpenAI("https://r.openai.azure.com", "judge", "k")
    assert hidden.api_version == "2024-10-21"
    message = "Model o3 is enabled only for api versions 2024-12-01-preview and later"
    note = hidden.adapt(400, message, hidden.build(request()))
    assert note == "the deployment needs a newer api-version: using 2025-04-01-preview"
    assert hidden.build(request()).url.params["api-version"] == "2025-04-01-preview"
    pinned = AzureOpenAI("https://r.openai.azure.com", "judge", "k", api_version="2024-10-21")
    assert pinned.adapt(400, message, pinned.build(request())) is None


def test_endpoints_shown_keep_only_the_api_version() -> None:
    shown = redact_endpoint(
        "https://u:p@ss@gw.example/v1?subscription-key=s3cret&api-version=1&code=c0de"
    )
    assert shown == "https://gw.example/v1?api-version=1"
    assert redact("at https://user:p@ss@host/v1") == "at https://***@host/v1"


def usage_of(answer: Any) -> tuple[int, int, int, int, int]:
    """input, cached read, cache write, output, reasoning."""
    return (
        answer.input_tokens,
        answer.cache_read_tokens,
        answer.cache_write_tokens,
        answer.output_tokens,
        answer.reasoning_tokens,
    )


def test_openai_usage_by_kind_from_its_token_details() -> None:
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "{}"}}],
        "usage": {
            "prompt_tokens": 1500,
            "completion_tokens": 600,
            "total_tokens": 2100,
            "prompt_tokens_details": {"cached_tokens": 1280, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 512, "audio_tokens": 0},
        },
    }
    answer = OpenAI("u", "gpt-5-mini").parse(200, json.dumps(reply).encode())
    # cached tokens are part of prompt_tokens, reasoning part of completion_tokens
    assert usage_of(answer) == (1500, 1280, 0, 600, 512)
    # a server that leaves the details out (or sends null) counts none
    reply["usage"] = {"prompt_tokens": 9, "completion_tokens": 2, "prompt_tokens_details": None}
    answer = OpenAICompatible("u", "m").parse(200, json.dumps(reply).encode())
    assert usage_of(answer) == (9, 0, 0, 2, 0)
    # a cached count over the prompt's is capped at the prompt's: it is a part of it
    reply["usage"] = {"prompt_tokens": 9, "completion_tokens": 2,
                      "prompt_tokens_details": {"cached_tokens": 4096}}  # fmt: skip
    answer = OpenAICompatible("u", "m").parse(200, json.dumps(reply).encode())
    assert usage_of(answer) == (9, 9, 0, 2, 0)


def test_anthropic_usage_by_kind_adds_the_cache_to_input() -> None:
    reply = {
        "content": [{"type": "text", "text": '{"score": 1}'}],
        "stop_reason": "end_turn",
        "usage": {
            "input_tokens": 50,
            "cache_creation_input_tokens": 2048,
            "cache_read_input_tokens": 4096,
            "output_tokens": 30,
        },
    }
    answer = Anthropic("u", "m").parse(200, json.dumps(reply).encode())
    assert usage_of(answer) == (50 + 2048 + 4096, 4096, 2048, 30, 0)


def test_gemini_usage_by_kind_takes_thinking_from_the_total() -> None:
    reply = {
        "choices": [{"message": {"role": "assistant", "content": "{}"}}],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 20,
            "total_tokens": 1300,
            "prompt_tokens_details": {"cached_tokens": 768},
        },
    }
    answer = Gemini("u", "gemini-2.5-flash").parse(200, json.dumps(reply).encode())
    assert usage_of(answer) == (1000, 768, 0, 300, 280)
