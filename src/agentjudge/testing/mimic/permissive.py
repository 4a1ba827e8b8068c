"""No API in particular: any OpenAI-compatible chat request is answered, as a lenient
server (llama.cpp's, say) would. The test judge server's default."""

from __future__ import annotations

import json
from typing import Any

from agentjudge.testing.mimic.base import (
    MODEL,
    Dialect,
    Refusal,
    Route,
    chat_completion,
    completion_tokens,
    format_schema,
)
from agentjudge.testing.scripted import Answer, Prompt


class Permissive(Dialect):
    """Takes any chat request with a list of messages; errors are `{"error": {"message"}}`."""

    title = "OpenAI-compatible"
    routes = (
        Route("POST", "/v1/chat/completions", "chat"),
        Route("GET", "/v1/models", "models"),
    )
    bad_body = "body is not JSON"

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        messages = body.get("messages")
        if messages is not None and not (
            isinstance(messages, list) and all(isinstance(m, dict) for m in messages)
        ):
            return self.error(400, "messages must be a list of objects")
        return None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        # messages as they come, in their order: the first is the system message if any
        messages = body.get("messages") or [{}]
        read = [{"role": str(m.get("role", "")), "content": _text(m)} for m in messages]
        return Prompt(read, str(body.get("model", MODEL)), _schema(body))

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt_tokens, answer_tokens = prompt.tokens(), completion_tokens(answer)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": answer_tokens,
            "total_tokens": prompt_tokens + answer_tokens,
        }
        message = {"role": "assistant", "content": answer.text}
        return chat_completion("chatcmpl-test", prompt.model, message, usage)

    def error(self, status: int, message: str) -> Refusal:
        return Refusal(status, {"error": {"message": message}})

    def not_found(self, method: str, path: str) -> Refusal | None:
        return None

    def models(self) -> dict[str, Any]:
        return {"object": "list", "data": [{"id": MODEL, "object": "model"}]}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    return content if isinstance(content, str) else json.dumps(content)


def _schema(body: dict[str, Any]) -> dict[str, Any] | None:
    # llama.cpp's form, `{"type": "json_object", "schema": {...}}`, or OpenAI's
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_object":
        schema = response_format.get("schema")
        return schema if isinstance(schema, dict) else None
    return format_schema(body)
