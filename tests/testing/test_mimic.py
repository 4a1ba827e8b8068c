"""The test judge server mimicking each API: raw HTTP in, the API's own replies and refusals out."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest

from agentjudge.cli import main
from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.mimic import DIALECTS
from agentjudge.testing.scripted import expected_score

pytestmark = pytest.mark.timeout(30)

KEY = "sk-test-0123456789abcdef"
SYSTEM = "You are a judge. Answer in JSON."
STEP = "the step [[score=0.7]]"
CHAT = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": STEP}]
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "number"}},
    "required": ["reasoning", "score"],
    "additionalProperties": False,
}
SCORE_ONLY: dict[str, Any] = {
    "type": "object",
    "properties": {"score": {"type": "number"}},
    "required": ["score"],
    "additionalProperties": False,
}
# a schema bounding a string's length: OpenAI's strict mode takes it, Azure's does not
BOUNDED = SCHEMA | {
    "properties": {"reasoning": {"type": "string", "maxLength": 400}, "score": {"type": "number"}}
}
VERDICT = {"reasoning": "scripted verdict", "score": 0.7}
BEARER = {"authorization": f"Bearer {KEY}"}
ANTHROPIC = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
AZURE = {"api-key": KEY}
DEPLOYMENT = "/openai/deployments/judge-4o/chat/completions?api-version=2024-10-21"


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, JudgeServer]]:
    """One server per API, all requiring KEY (Ollama checks none)."""
    with ExitStack() as stack:
        yield {name: stack.enter_context(JudgeServer(mimic=name, api_key=KEY)) for name in DIALECTS}


def post(
    server: JudgeServer, path: str, body: Any, headers: dict[str, str] | None = None
) -> httpx.Response:
    """POST `body` (JSON, or bytes as they are) to `path` on the server's host."""
    url = f"http://127.0.0.1:{server.port}{path}"
    if isinstance(body, bytes):
        return httpx.post(url, content=body, headers=headers)
    return httpx.post(url, json=body, headers=headers)


def openai_body(**fields: Any) -> dict[str, Any]:
    return {"model": "gpt-4o-mini", "messages": CHAT, **fields}


def json_schema(schema: dict[str, Any], name: str = "verdict", strict: bool = True) -> Any:
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "strict": strict, "schema": schema},
    }


def openai_error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


def content_of(reply: httpx.Response) -> Any:
    return json.loads(reply.json()["choices"][0]["message"]["content"])


# --- OpenAI ---------------------------------------------------------------------------


def test_openai_answers_in_its_shape_and_logs_the_request(servers: dict[str, JudgeServer]) -> None:
    server = servers["openai"]
    body = openai_body(temperature=0, max_tokens=200, response_format=json_schema(SCHEMA))
    reply = post(server, "/v1/chat/completions", body, BEARER)
    assert reply.status_code == 200
    data = reply.json()
    assert set(data) == {
        "id", "object", "created", "model", "choices", "usage", "service_tier", "system_fingerprint"
    }  # fmt: skip
    assert data["id"].startswith("chatcmpl-")
    assert data["object"] == "chat.completion"
    assert data["model"] == "gpt-4o-mini"
    assert data["system_fingerprint"].startswith("fp_")
    (choice,) = data["choices"]
    assert choice["message"]["role"] == "assistant"
    assert choice["message"]["refusal"] is None
    assert choice["message"]["annotations"] == []
    assert choice["logprobs"] is None
    assert choice["finish_reason"] == "stop"
    assert json.loads(choice["message"]["content"]) == VERDICT
    usage = data["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert usage["prompt_tokens_details"] == {"cached_tokens": 0, "audio_tokens": 0}
    assert usage["completion_tokens_details"]["reasoning_tokens"] == 0
    entry = server.log[-1]
    assert (entry.path, entry.status, entry.outcome) == ("/v1/chat/completions", 200, "ok")
    assert entry.headers["authorization"] == f"Bearer {KEY}"
    assert entry.body == body


def test_openai_reasoning_models_count_their_reasoning(servers: dict[str, JudgeServer]) -> None:
    body = {
        "model": "o3-mini",
        "messages": [{"role": "developer", "content": SYSTEM}, CHAT[1]],
        "max_completion_tokens": 500,
        "reasoning_effort": "low",
        "temperature": 1,
    }
    reply = post(servers["openai"], "/v1/chat/completions", body, BEARER)
    assert reply.status_code == 200
    usage = reply.json()["usage"]
    reasoning = usage["completion_tokens_details"]["reasoning_tokens"]
    assert reasoning > 0
    assert usage["completion_tokens"] > reasoning
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]
    assert content_of(reply)["score"] == 0.7


def test_a_schema_keeps_only_its_properties(servers: dict[str, JudgeServer]) -> None:
    body = openai_body(response_format=json_schema(SCORE_ONLY))
    reply = post(servers["openai"], "/v1/chat/completions", body, BEARER)
    assert content_of(reply) == {"score": 0.7}


def test_openai_takes_json_object_when_a_message_says_json(servers: dict[str, JudgeServer]) -> None:
    body = openai_body(response_format={"type": "json_object"})
    reply = post(servers["openai"], "/v1/chat/completions", body, BEARER)
    assert content_of(reply) == VERDICT


STRICT = "Invalid schema for response_format 'verdict': "
OPENAI_REFUSALS: list[tuple[dict[str, str], dict[str, Any], int, dict[str, Any]]] = [
    (
        {},
        openai_body(),
        401,
        openai_error(
            "You didn't provide an API key. You need to provide your API key in an "
            "Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
        ),
    ),
    (
        {"authorization": "Bearer sk-wrong-key-000000wxyz"},
        openai_body(),
        401,
        openai_error(
            f"Incorrect API key provided: sk-{'*' * 16}wxyz. You can find your API key "
            "at https://platform.openai.com/account/api-keys.",
            code="invalid_api_key",
        ),
    ),
    (BEARER, {"messages": CHAT}, 400, openai_error("you must provide a model parameter")),
    (
        BEARER,
        {"model": "gpt-4o"},
        400,
        openai_error(
            "Missing required parameter: 'messages'.", "messages", "missing_required_parameter"
        ),
    ),
    (
        BEARER,
        openai_body(top_k=5),
        400,
        openai_error("Unrecognized request argument supplied: top_k"),
    ),
    (
        BEARER,
        openai_body(messages=[{"role": "judge", "content": "x"}]),
        400,
        openai_error(
            "Invalid value: 'judge'. Supported values are: 'system', 'developer', 'user', "
            "'assistant', and 'tool'.",
            "messages[0].role",
            "invalid_value",
        ),
    ),
    (
        BEARER,
        openai_body(model="gpt-5-mini", max_tokens=100),
        400,
        openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        ),
    ),
    (
        BEARER,
        openai_body(model="o1", temperature=0),
        400,
        openai_error(
            "Unsupported value: 'temperature' does not support 0 with this model. Only the "
            "default (1) value is supported.",
            "temperature",
            "unsupported_value",
        ),
    ),
    (
        BEARER,
        openai_body(model="o4-mini", temperature=0.0),
        400,
        openai_error(
            "Unsupported value: 'temperature' does not support 0.0 with this model. Only the "
            "default (1) value is supported.",
            "temperature",
            "unsupported_value",
        ),
    ),
    (
        BEARER,
        openai_body(model="gpt-5", reasoning_effort="max"),
        400,
        openai_error(
            "Invalid value: 'max'. Supported values are: 'none', 'minimal', 'low', 'medium', "
            "'high', and 'xhigh'.",
            "reasoning_effort",
            "invalid_value",
        ),
    ),
    (
        BEARER,
        openai_body(model="gpt-5-chat-latest", reasoning_effort="low"),
        400,
        openai_error(
            "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
            "reasoning_effort",
            "unsupported_parameter",
        ),
    ),
    (
        BEARER,
        openai_body(response_format={"type": "json_object", "schema": SCHEMA}),
        400,
        openai_error(
            "Additional properties are not allowed ('schema' was unexpected) - 'response_format'",
            "response_format",
        ),
    ),
    (
        BEARER,
        openai_body(response_format={"type": "xml"}),
        400,
        openai_error(
            "Invalid value: 'xml'. Supported values are: 'json_object', 'json_schema', and 'text'.",
            "response_format.type",
            "invalid_value",
        ),
    ),
    (
        BEARER,
        openai_body(
            messages=[{"role": "user", "content": "score it"}],
            response_format={"type": "json_object"},
        ),
        400,
        openai_error(
            "'messages' must contain the word 'json' in some form, to use 'response_format' of "
            "type 'json_object'.",
            "messages",
        ),
    ),
    (
        BEARER,
        openai_body(response_format={"type": "json_schema", "json_schema": {"schema": SCHEMA}}),
        400,
        openai_error(
            "Missing required parameter: 'response_format.json_schema.name'.",
            "response_format.json_schema.name",
            "missing_required_parameter",
        ),
    ),
    (
        BEARER,
        openai_body(response_format=json_schema(SCHEMA, name="my verdict")),
        400,
        openai_error(
            "Invalid 'response_format.json_schema.name': string does not match pattern. "
            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
            "response_format.json_schema.name",
            "invalid_value",
        ),
    ),
    (
        BEARER,
        openai_body(response_format=json_schema({**SCHEMA, "additionalProperties": True})),
        400,
        openai_error(
            f"{STRICT}In context=(), 'additionalProperties' is required to be supplied and to "
            "be false.",
            "response_format",
        ),
    ),
    (
        BEARER,
        openai_body(response_format=json_schema({**SCHEMA, "required": ["reasoning"]})),
        400,
        openai_error(
            f"{STRICT}In context=(), 'required' is required to be supplied and to be an array "
            "including every key in properties. Missing 'score'.",
            "response_format",
        ),
    ),
    (
        BEARER,
        openai_body(
            response_format=json_schema(
                {
                    **SCHEMA,
                    "properties": {
                        "scores": {"type": "object", "properties": {"a": {"type": "number"}}}
                    },
                    "required": ["scores"],
                }
            )
        ),
        400,
        openai_error(
            f"{STRICT}In context=('properties', 'scores'), 'additionalProperties' is required "
            "to be supplied and to be false.",
            "response_format",
        ),
    ),
    (
        BEARER,
        openai_body(
            response_format=json_schema(
                {
                    **SCHEMA,
                    "properties": {"score": {"oneOf": [{"type": "number"}, {"type": "null"}]}},
                    "required": ["score"],
                }
            )
        ),
        400,
        openai_error(
            f"{STRICT}In context=('properties', 'score'), 'oneOf' is not permitted.",
            "response_format",
        ),
    ),
    (
        BEARER,
        openai_body(response_format=json_schema({"anyOf": [SCHEMA, SCORE_ONLY]})),
        400,
        openai_error(
            f"{STRICT}schema must be a JSON Schema of 'type: \"object\"', got 'type: \"None\"'.",
            "response_format",
        ),
    ),
]


@pytest.mark.parametrize(("headers", "body", "status", "error"), OPENAI_REFUSALS)
def test_openai_refuses_as_documented(
    servers: dict[str, JudgeServer],
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: dict[str, Any],
) -> None:
    server = servers["openai"]
    reply = post(server, "/v1/chat/completions", body, headers)
    assert (reply.status_code, reply.json()) == (status, error)
    assert KEY not in reply.text
    entry = server.log[-1]
    assert (entry.outcome, entry.status, entry.path) == ("refused", status, "/v1/chat/completions")


def test_openai_accepts_a_non_strict_schema_and_any_key_when_none_is_set() -> None:
    with JudgeServer(mimic="openai") as server:
        loose = json_schema({"type": "object", "properties": {"score": {}}}, strict=False)
        reply = post(server, "/v1/chat/completions", openai_body(response_format=loose), BEARER)
        assert content_of(reply) == {"score": 0.7}
        models = httpx.get(f"{server.base_url}/models", headers={"authorization": "Bearer any"})
        assert models.json()["data"][0]["owned_by"] == "openai"
        assert httpx.get(f"{server.base_url}/models").status_code == 401


def test_openai_unknown_paths_and_faults_come_in_its_error_shape() -> None:
    script = Script(fail_first=1, fail_first_fault="429", retry_after=0.25)
    with JudgeServer(script, mimic="openai") as server:
        lost = post(server, "/v1/chat/completion", openai_body(), BEARER)
        assert lost.status_code == 404
        assert lost.json() == openai_error("Invalid URL (POST /v1/chat/completion)")
        limited = post(server, "/v1/chat/completions", openai_body(), BEARER)
        assert limited.status_code == 429
        assert limited.headers["retry-after"] == "0.25"
        assert limited.json()["error"]["type"] == "requests"
        assert limited.json()["error"]["code"] == "rate_limit_exceeded"
        assert post(server, "/v1/chat/completions", openai_body(), BEARER).status_code == 200
        server.script = Script(capacity=0)
        full = post(server, "/v1/chat/completions", openai_body(), BEARER)
        assert full.status_code == 429
        assert set(full.json()["error"]) == {"message", "type", "param", "code"}
        server.script = Script(max_context_tokens=3)
        long = post(server, "/v1/chat/completions", openai_body(), BEARER)
        assert long.status_code == 400
        assert long.json()["error"]["code"] == "context_length_exceeded"
        outcomes = [e.outcome for e in server.log]
        assert outcomes == ["refused", "429", "ok", "429_capacity", "refused"]


# --- Azure OpenAI ------------------------------------------------------------------------


def test_azure_answers_for_the_deployment(servers: dict[str, JudgeServer]) -> None:
    server = servers["azure"]
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    body = {"messages": CHAT, "response_format": json_schema(SCHEMA)}
    reply = post(server, DEPLOYMENT, body, AZURE)
    assert reply.status_code == 200
    data = reply.json()
    assert data["model"] == "judge-4o"
    assert data["object"] == "chat.completion"
    assert data["prompt_filter_results"][0]["prompt_index"] == 0
    assert "content_filter_results" in data["choices"][0]
    assert "completion_tokens_details" in data["usage"]
    assert content_of(reply) == VERDICT
    entry = server.log[-1]
    assert entry.query == {"api-version": "2024-10-21"}
    assert entry.headers["api-key"] == KEY


def test_azure_v1_path_takes_the_deployment_as_model(servers: dict[str, JudgeServer]) -> None:
    server = servers["azure"]
    body = {"model": "judge-4o", "messages": CHAT}
    bearer = post(server, "/openai/v1/chat/completions", body, BEARER)
    assert bearer.status_code == 200
    assert bearer.json()["model"] == "judge-4o"
    nameless = post(server, "/openai/v1/chat/completions", {"messages": CHAT}, AZURE)
    assert nameless.status_code == 400
    assert nameless.json() == openai_error("you must provide a model parameter")


DENIED = {
    "error": {
        "code": "401",
        "message": "Access denied due to invalid subscription key or wrong API endpoint. Make "
        "sure to provide a valid key for an active subscription and use a correct regional API "
        "endpoint for your resource.",
    }
}
AZURE_REFUSALS: list[tuple[str, dict[str, str], dict[str, Any], int, dict[str, Any]]] = [
    (
        "/openai/deployments/judge-4o/chat/completions",
        AZURE,
        {"messages": CHAT},
        404,
        {"error": {"code": "404", "message": "Resource not found"}},
    ),
    (DEPLOYMENT, {}, {"messages": CHAT}, 401, DENIED),
    (DEPLOYMENT, {"api-key": "wrong"}, {"messages": CHAT}, 401, DENIED),
    (DEPLOYMENT, {"x-api-key": KEY}, {"messages": CHAT}, 401, DENIED),
    (
        DEPLOYMENT,
        AZURE,
        {"messages": CHAT, "response_format": json_schema(BOUNDED)},
        400,
        openai_error(
            f"{STRICT}In context=('properties', 'reasoning'), 'maxLength' is not permitted.",
            "response_format",
        ),
    ),
    (
        "/openai/deployments/o4-mini/chat/completions?api-version=2024-10-21",
        AZURE,
        {"messages": CHAT, "max_tokens": 100},
        400,
        openai_error(
            "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
            "'max_completion_tokens' instead.",
            "max_tokens",
            "unsupported_parameter",
        ),
    ),
]


@pytest.mark.parametrize(("path", "headers", "body", "status", "error"), AZURE_REFUSALS)
def test_azure_refuses_as_documented(
    servers: dict[str, JudgeServer],
    path: str,
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: dict[str, Any],
) -> None:
    server = servers["azure"]
    reply = post(server, path, body, headers)
    assert (reply.status_code, reply.json()) == (status, error)
    assert (server.log[-1].outcome, server.log[-1].status) == ("refused", status)


def test_openai_takes_the_length_bounds_azure_refuses(servers: dict[str, JudgeServer]) -> None:
    body = openai_body(response_format=json_schema(BOUNDED))
    reply = post(servers["openai"], "/v1/chat/completions", body, BEARER)
    assert content_of(reply) == VERDICT


def test_a_deployment_named_anything_may_be_a_reasoning_model() -> None:
    with JudgeServer(mimic="azure", reasoning_models=("judge",)) as server:
        path = "/openai/deployments/judge/chat/completions?api-version=2024-10-21"
        refused = post(server, path, {"messages": CHAT, "max_tokens": 100}, AZURE)
        assert refused.json()["error"]["code"] == "unsupported_parameter"
        reply = post(server, path, {"messages": CHAT, "max_completion_tokens": 100}, AZURE)
        assert reply.json()["usage"]["completion_tokens_details"]["reasoning_tokens"] > 0


def test_azure_faults_come_in_its_gateway_shape() -> None:
    with JudgeServer(Script(fail_first=1, fail_first_fault="503"), mimic="azure") as server:
        reply = post(server, DEPLOYMENT, {"messages": CHAT}, AZURE)
        assert reply.status_code == 503
        assert reply.json() == {"error": {"code": "503", "message": "scripted 503"}}


# --- Anthropic ---------------------------------------------------------------------------


def anthropic_body(**fields: Any) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 512,
        "system": SYSTEM,
        "messages": [{"role": "user", "content": STEP}],
        **fields,
    }


TOOL = {"name": "record_verdict", "description": "Record it.", "input_schema": SCORE_ONLY}
FORCED = {"tools": [TOOL], "tool_choice": {"type": "tool", "name": "record_verdict"}}


def test_anthropic_answers_a_forced_tool_with_its_input(servers: dict[str, JudgeServer]) -> None:
    server = servers["anthropic"]
    assert server.base_url == f"http://127.0.0.1:{server.port}"
    reply = post(server, "/v1/messages", anthropic_body(temperature=0, **FORCED), ANTHROPIC)
    assert reply.status_code == 200
    data = reply.json()
    assert set(data) == {
        "id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"
    }  # fmt: skip
    assert data["id"].startswith("msg_")
    assert (data["type"], data["role"], data["model"]) == (
        "message",
        "assistant",
        "claude-sonnet-4-5",
    )
    (use,) = data["content"]
    assert use["type"] == "tool_use"
    assert use["id"].startswith("toolu_")
    assert use["name"] == "record_verdict"
    assert use["input"] == {"score": 0.7}
    assert (data["stop_reason"], data["stop_sequence"]) == ("tool_use", None)
    assert set(data["usage"]) == {
        "input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"
    }  # fmt: skip
    assert data["usage"]["input_tokens"] > 0
    entry = server.log[-1]
    assert (entry.path, entry.status, entry.outcome) == ("/v1/messages", 200, "ok")
    assert entry.headers["anthropic-version"] == "2023-06-01"


def test_anthropic_answers_text_without_a_forced_tool(servers: dict[str, JudgeServer]) -> None:
    blocks = [{"type": "text", "text": STEP}]
    body = anthropic_body(
        system=[{"type": "text", "text": SYSTEM}],
        messages=[{"role": "user", "content": blocks}],
        tools=[TOOL],
        tool_choice={"type": "auto"},
    )
    reply = post(servers["anthropic"], "/v1/messages", body, ANTHROPIC)
    data = reply.json()
    assert data["content"] == [{"type": "text", "text": json.dumps(VERDICT)}]
    assert data["stop_reason"] == "end_turn"


def test_anthropic_any_tool_and_thinking(servers: dict[str, JudgeServer]) -> None:
    server = servers["anthropic"]
    forced = post(
        server, "/v1/messages", anthropic_body(tools=[TOOL], tool_choice={"type": "any"}), ANTHROPIC
    )
    assert forced.json()["content"][0]["input"] == {"score": 0.7}
    thinking = {"type": "enabled", "budget_tokens": 1024}
    reply = post(
        server, "/v1/messages", anthropic_body(max_tokens=2048, thinking=thinking), ANTHROPIC
    )
    thought, text = reply.json()["content"]
    assert thought["type"] == "thinking"
    assert thought["signature"]
    assert json.loads(text["text"]) == VERDICT


def anthropic_error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


ANTHROPIC_REFUSALS: list[tuple[dict[str, str], dict[str, Any], int, dict[str, Any]]] = [
    (
        {"authorization": f"Bearer {KEY}", "anthropic-version": "2023-06-01"},
        anthropic_body(),
        401,
        anthropic_error("authentication_error", "x-api-key header is required"),
    ),
    (
        {"x-api-key": "wrong", "anthropic-version": "2023-06-01"},
        anthropic_body(),
        401,
        anthropic_error("authentication_error", "invalid x-api-key"),
    ),
    (
        {"x-api-key": KEY},
        anthropic_body(),
        400,
        anthropic_error("invalid_request_error", "anthropic-version: header is required"),
    ),
    (
        ANTHROPIC,
        {"model": "claude-sonnet-4-5", "messages": [{"role": "user", "content": STEP}]},
        400,
        anthropic_error("invalid_request_error", "max_tokens: Field required"),
    ),
    (
        ANTHROPIC,
        {"model": "claude-sonnet-4-5", "max_tokens": 10},
        400,
        anthropic_error("invalid_request_error", "messages: Field required"),
    ),
    (
        ANTHROPIC,
        anthropic_body(response_format={"type": "json_object"}),
        400,
        anthropic_error("invalid_request_error", "response_format: Extra inputs are not permitted"),
    ),
    (
        ANTHROPIC,
        anthropic_body(messages=CHAT),
        400,
        anthropic_error(
            "invalid_request_error",
            'messages: Unexpected role "system". The Messages API accepts a top-level system '
            'parameter, not "system" as an input message role.',
        ),
    ),
    (
        ANTHROPIC,
        anthropic_body(messages=[{"role": "assistant", "content": "Sure."}]),
        400,
        anthropic_error(
            "invalid_request_error", 'messages: first message must use the "user" role'
        ),
    ),
    (
        ANTHROPIC,
        anthropic_body(temperature=1.5),
        400,
        anthropic_error(
            "invalid_request_error", "temperature: Input should be less than or equal to 1"
        ),
    ),
    (
        ANTHROPIC,
        anthropic_body(tools=[TOOL], tool_choice={"type": "tool", "name": "other"}),
        400,
        anthropic_error(
            "invalid_request_error", "tool_choice.name: tool 'other' was not found in tools"
        ),
    ),
    (
        ANTHROPIC,
        anthropic_body(
            max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 2048}, **FORCED
        ),
        400,
        anthropic_error(
            "invalid_request_error", "Thinking may not be enabled when tool_choice forces tool use."
        ),
    ),
]


@pytest.mark.parametrize(("headers", "body", "status", "error"), ANTHROPIC_REFUSALS)
def test_anthropic_refuses_as_documented(
    servers: dict[str, JudgeServer],
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: dict[str, Any],
) -> None:
    server = servers["anthropic"]
    reply = post(server, "/v1/messages", body, headers)
    data = reply.json()
    assert data.pop("request_id").startswith("req_")
    assert (reply.status_code, data) == (status, error)
    assert (server.log[-1].outcome, server.log[-1].status) == ("refused", status)


@pytest.mark.parametrize(
    ("marker", "status", "kind"),
    [("429", 429, "rate_limit_error"), ("500", 500, "api_error"), ("529", 529, "overloaded_error")],
)
def test_anthropic_faults_come_in_its_error_shape(
    servers: dict[str, JudgeServer], marker: str, status: int, kind: str
) -> None:
    body = anthropic_body(messages=[{"role": "user", "content": f"x [[fault={marker}]]"}])
    reply = post(servers["anthropic"], "/v1/messages", body, ANTHROPIC)
    assert reply.status_code == status
    # a 429 says when to come back; a scripted 5xx only when Script.retry_after_5xx is set
    assert ("retry-after" in reply.headers) == (status == 429)
    assert reply.json()["error"] == {"type": kind, "message": f"scripted {marker}"}
    assert servers["anthropic"].log[-1].outcome == marker


# --- Gemini ------------------------------------------------------------------------------


def gemini_error(status: int, code: str, message: str) -> list[dict[str, Any]]:
    return [{"error": {"code": status, "message": message, "status": code}}]


def test_gemini_answers_and_its_thinking_models_count_thoughts(
    servers: dict[str, JudgeServer],
) -> None:
    server = servers["gemini"]
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1beta/openai"
    unnamed = {"type": "json_schema", "json_schema": {"schema": SCORE_ONLY}}
    body = {"model": "gemini-2.5-flash", "messages": CHAT, "response_format": unnamed}
    reply = post(server, "/v1beta/openai/chat/completions", body, BEARER)
    assert reply.status_code == 200
    data = reply.json()
    assert data["object"] == "chat.completion"
    assert data["model"] == "gemini-2.5-flash"
    assert data["choices"][0]["finish_reason"] == "stop"
    assert content_of(reply) == {"score": 0.7}
    usage = data["usage"]
    assert set(usage) == {"prompt_tokens", "completion_tokens", "total_tokens"}
    assert usage["total_tokens"] > usage["prompt_tokens"] + usage["completion_tokens"]
    plain = post(
        server, "/v1beta/openai/chat/completions", {**body, "model": "gemini-2.0-flash"}, BEARER
    )
    usage = plain.json()["usage"]
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"]


GEMINI_REFUSALS: list[tuple[dict[str, str], dict[str, Any], int, list[dict[str, Any]]]] = [
    (
        {},
        {"model": "gemini-2.5-flash", "messages": CHAT},
        401,
        gemini_error(
            401,
            "UNAUTHENTICATED",
            "Request is missing required authentication credential. Expected OAuth 2 access "
            "token, login cookie or other valid authentication credential. See "
            "https://developers.google.com/identity/sign-in/web/devconsole-project.",
        ),
    ),
    (
        {"authorization": "Bearer wrong"},
        {"model": "gemini-2.5-flash", "messages": CHAT},
        400,
        gemini_error(400, "INVALID_ARGUMENT", "API key not valid. Please pass a valid API key."),
    ),
    (
        BEARER,
        {"model": "gemini-2.5-flash", "messages": CHAT, "logit_bias": {}},
        400,
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            'Invalid JSON payload received. Unknown name "logit_bias": Cannot find field.',
        ),
    ),
    (
        BEARER,
        {
            "model": "gemini-2.5-flash",
            "messages": CHAT,
            "response_format": {"type": "json_object", "schema": SCHEMA},
        },
        400,
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            "Invalid JSON payload received. Unknown name \"schema\" at 'response_format': "
            "Cannot find field.",
        ),
    ),
    (
        BEARER,
        {"model": "gemini-2.5-flash", "messages": CHAT, "reasoning_effort": "minimal"},
        400,
        gemini_error(
            400,
            "INVALID_ARGUMENT",
            "Invalid reasoning_effort: minimal. Valid values are: high, low, medium, none",
        ),
    ),
]


@pytest.mark.parametrize(("headers", "body", "status", "error"), GEMINI_REFUSALS)
def test_gemini_refuses_as_documented(
    servers: dict[str, JudgeServer],
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: list[dict[str, Any]],
) -> None:
    server = servers["gemini"]
    reply = post(server, "/v1beta/openai/chat/completions", body, headers)
    assert (reply.status_code, reply.json()) == (status, error)
    assert (server.log[-1].outcome, server.log[-1].status) == ("refused", status)


def test_gemini_faults_come_as_a_list() -> None:
    with JudgeServer(Script(fail_first=1, fail_first_fault="503"), mimic="gemini") as server:
        body = {"model": "gemini-2.5-flash", "messages": CHAT}
        reply = post(server, "/v1beta/openai/chat/completions", body, BEARER)
        assert reply.status_code == 503
        assert reply.json() == gemini_error(503, "UNAVAILABLE", "scripted 503")


# --- vLLM --------------------------------------------------------------------------------


def vllm_error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}


def test_vllm_ignores_what_it_does_not_know_and_a_schema_next_to_json_object() -> None:
    with JudgeServer(mimic="vllm") as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        llama = {"type": "json_object", "schema": SCORE_ONLY}
        body = {"model": "qwen", "messages": CHAT, "top_k": 20, "response_format": llama}
        reply = post(server, "/v1/chat/completions", body)
        assert reply.status_code == 200
        data = reply.json()
        assert content_of(reply) == VERDICT  # not held to the schema
        assert data["usage"]["prompt_tokens_details"] is None
        assert set(data["usage"]) == {
            "prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details"
        }  # fmt: skip
        held = post(
            server, "/v1/chat/completions", {**body, "response_format": json_schema(SCORE_ONLY)}
        )
        assert content_of(held) == {"score": 0.7}


VLLM_REFUSALS: list[tuple[dict[str, str], dict[str, Any], int, Any]] = [
    ({}, {"model": "qwen", "messages": CHAT}, 401, {"error": "Unauthorized"}),
    (
        {"authorization": "Bearer wrong"},
        {"model": "qwen", "messages": CHAT},
        401,
        {"error": "Unauthorized"},
    ),
    (
        BEARER,
        {"model": "qwen", "messages": CHAT, "response_format": {"type": "xml"}},
        400,
        vllm_error(
            "response_format.type: Input should be 'text', 'json_object', 'json_schema' or "
            "'structural_tag'"
        ),
    ),
    (
        BEARER,
        {
            "model": "qwen",
            "messages": CHAT,
            "response_format": {"type": "json_schema", "json_schema": {"schema": SCHEMA}},
        },
        400,
        vllm_error("response_format.json_schema.name: Field required"),
    ),
    (
        BEARER,
        {
            "model": "qwen",
            "messages": CHAT,
            "response_format": {"type": "json_schema", "json_schema": {"name": "v"}},
        },
        400,
        vllm_error("response_format.json_schema.schema: Field required"),
    ),
]


@pytest.mark.parametrize(("headers", "body", "status", "error"), VLLM_REFUSALS)
def test_vllm_refuses_as_documented(
    servers: dict[str, JudgeServer],
    headers: dict[str, str],
    body: dict[str, Any],
    status: int,
    error: Any,
) -> None:
    server = servers["vllm"]
    reply = post(server, "/v1/chat/completions", body, headers)
    assert (reply.status_code, reply.json()) == (status, error)
    assert (server.log[-1].outcome, server.log[-1].status) == ("refused", status)


def test_vllm_refuses_a_prompt_over_its_context() -> None:
    with JudgeServer(Script(max_context_tokens=5), mimic="vllm") as server:
        body = {"model": "qwen", "messages": CHAT}
        reply = post(server, "/v1/chat/completions", body)
        tokens = (len(SYSTEM) + len(STEP)) // 4
        assert reply.status_code == 400
        assert reply.json() == vllm_error(
            f"This model's maximum context length is 5 tokens. However, you requested {tokens} "
            "tokens in the messages, Please reduce the length of the messages."
        )


# --- Ollama ------------------------------------------------------------------------------


def ollama_error(message: str) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": None, "code": None}
    }


def test_ollama_answers_and_cuts_long_prompts_down() -> None:
    with JudgeServer(Script(max_context_tokens=2), mimic="ollama", api_key=KEY) as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        body = {
            "model": "qwen3:4b",
            "messages": CHAT,
            "max_completion_tokens": 10,
            "response_format": json_schema(SCORE_ONLY),
        }
        reply = post(server, "/v1/chat/completions", body, {"authorization": "Bearer whatever"})
        assert reply.status_code == 200
        data = reply.json()
        assert data["system_fingerprint"] == "fp_ollama"
        assert data["id"].startswith("chatcmpl-")
        assert set(data["usage"]) == {"prompt_tokens", "completion_tokens", "total_tokens"}
        assert content_of(reply) == {"score": 0.7}
        loose = post(
            server, "/v1/chat/completions", {**body, "response_format": {"type": "json_object"}}
        )
        assert content_of(loose) == VERDICT


OLLAMA_REFUSALS: list[tuple[dict[str, Any], dict[str, Any]]] = [
    (
        {"model": "qwen3:4b", "messages": CHAT, "response_format": {"type": "xml"}},
        ollama_error("invalid response format type"),
    ),
    (
        {"model": "qwen3:4b", "messages": CHAT, "reasoning_effort": "max"},
        ollama_error(
            'invalid reasoning value: \'max\' (must be "high", "medium", "low", or "none")'
        ),
    ),
    ({"model": "qwen3:4b", "messages": []}, ollama_error("[] is too short - 'messages'")),
]


@pytest.mark.parametrize(("body", "error"), OLLAMA_REFUSALS)
def test_ollama_refuses_as_documented(
    servers: dict[str, JudgeServer], body: dict[str, Any], error: dict[str, Any]
) -> None:
    server = servers["ollama"]
    reply = post(server, "/v1/chat/completions", body)
    assert (reply.status_code, reply.json()) == (400, error)
    assert (server.log[-1].outcome, server.log[-1].status) == ("refused", 400)


# --- the permissive default and the command ---------------------------------------------


def test_the_default_server_holds_a_llama_cpp_schema_and_takes_anything_else() -> None:
    with JudgeServer() as server:
        assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
        llama = {"type": "json_object", "schema": SCORE_ONLY}
        body = {"model": "m", "messages": CHAT, "response_format": llama, "anything": 1}
        reply = post(server, "/v1/chat/completions", body)
        assert content_of(reply) == {"score": 0.7}
        assert reply.json()["id"] == "chatcmpl-test"
        plain = post(
            server, "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]}
        )
        assert content_of(plain)["score"] == expected_score("x")
        bad = post(server, "/v1/chat/completions", b"not json")
        assert (bad.status_code, bad.json()) == (400, {"error": {"message": "body is not JSON"}})
        assert [(e.outcome, e.status) for e in server.log] == [
            ("ok", 200),
            ("ok", 200),
            ("refused", 400),
        ]


def test_an_unknown_api_is_refused() -> None:
    with pytest.raises(ValueError, match="mimic must be one of"):
        JudgeServer(mimic="cohere")
    assert main(["judge-server", "--mimic", "cohere"]) == 3


@pytest.mark.e2e  # runs the real CLI in a subprocess, serving
def test_the_command_says_what_it_mimics() -> None:
    command = [
        sys.executable, "-m", "agentjudge", "judge-server", "--port", "0",
        "--mimic", "anthropic", "--api-key", KEY,
    ]  # fmt: skip
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True) as process:
        try:
            assert process.stdout is not None
            line = process.stdout.readline()
            assert "Anthropic" in line
            url = line.split(" on ", 1)[1].split()[0]
            reply = httpx.post(f"{url}/v1/messages", json=anthropic_body(), headers=ANTHROPIC)
            assert reply.json()["content"][0]["text"] == json.dumps(VERDICT)
            assert httpx.post(f"{url}/v1/messages", json=anthropic_body()).status_code == 401
        finally:
            process.terminate()
