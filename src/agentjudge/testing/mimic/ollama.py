"""Ollama's OpenAI compatibility (`POST /v1/chat/completions` on port 11434), as Ollama
documents it: no auth, unknown parameters ignored, a prompt over the context cut down."""

from __future__ import annotations

from typing import Any

from agentjudge.testing.mimic.base import (
    Dialect,
    Refusal,
    Route,
    chat_completion,
    chat_messages,
    completion_tokens,
)
from agentjudge.testing.scripted import Answer, Prompt

FORMAT_TYPES = ("text", "json_object", "json_schema")
EFFORTS = ("high", "medium", "low", "none")
GO_TYPES = {str: "string", int: "number", float: "number", bool: "bool", dict: "object"}


class Ollama(Dialect):
    """Ollama: errors are `{"error": {"message", "type", "param": null, "code": null}}`."""

    title = "Ollama"
    routes = (
        Route("POST", "/v1/chat/completions", "chat"),
        Route("GET", "/v1/models", "models"),
    )
    owner = "library"

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        messages = body.get("messages")
        if messages is not None and not isinstance(messages, list):
            return self.error(
                400,
                f"json: cannot unmarshal {GO_TYPES.get(type(messages), 'value')} into Go struct "
                "field ChatCompletionRequest.messages of type []openai.Message",
            )
        if not messages:
            return self.error(400, "[] is too short - 'messages'")
        if not all(isinstance(m, dict) for m in messages):
            return self.error(400, "invalid message format")
        response_format = body.get("response_format")
        if response_format is not None and _format_type(response_format) not in FORMAT_TYPES:
            return self.error(400, "invalid response format type")
        effort = _effort(body)
        if effort and effort not in EFFORTS:
            return self.error(
                400,
                f'invalid reasoning value: \'{effort}\' (must be "high", "medium", "low", '
                'or "none")',
            )
        if not body.get("model"):
            return self.error(400, "model is required")
        return None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        return Prompt(chat_messages(body["messages"]), str(body["model"]), _schema(body))

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt_tokens, answer_tokens = prompt.tokens(), completion_tokens(answer)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": answer_tokens,
            "total_tokens": prompt_tokens + answer_tokens,
        }
        message = {"role": "assistant", "content": answer.text}
        # Ollama numbers its completions below 999
        number = int(self.next_id(8), 16) % 999
        return chat_completion(
            f"chatcmpl-{number}", prompt.model, message, usage, system_fingerprint="fp_ollama"
        )

    def no_such_model(self, model: str) -> Refusal:
        return self.error(404, f'model "{model}" not found, try pulling it first')

    def error(self, status: int, message: str) -> Refusal:
        kind = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
        return Refusal(
            status, {"error": {"message": message, "type": kind, "param": None, "code": None}}
        )

    def too_long(self, tokens: int, limit: int) -> Refusal | None:
        return None  # Ollama cuts a prompt down to its context window and answers

    def not_found(self, method: str, path: str) -> Refusal | None:
        return Refusal(404, "404 page not found")  # gin's own plain-text answer


def _format_type(response_format: Any) -> str | None:
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    return kind.strip().lower() if isinstance(kind, str) else None


def _effort(body: dict[str, Any]) -> Any:
    # `reasoning: {"effort": ...}` wins over `reasoning_effort`, as in Ollama
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict):
        return reasoning.get("effort")
    return body.get("reasoning_effort")


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    response_format = body.get("response_format")
    if not isinstance(response_format, dict) or _format_type(response_format) != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else None
