"""vLLM's OpenAI-compatible server (`vllm serve`), as vLLM documents it: no auth unless
started with an API key, unknown parameters ignored, its own context-length refusal."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from agentjudge.testing.mimic.base import (
    MODEL,
    Dialect,
    Refusal,
    Route,
    chat_completion,
    chat_messages,
    completion_tokens,
    format_schema,
)
from agentjudge.testing.scripted import Answer, Prompt

FORMAT_TYPES = ("text", "json_object", "json_schema", "structural_tag")


class VLLM(Dialect):
    """vLLM: errors are `{"error": {"message", "type", "param", "code"}}`, the type named
    after the HTTP status ("BadRequestError") and the code the status itself."""

    title = "vLLM"
    routes = (
        Route("POST", "/v1/chat/completions", "chat"),
        Route("GET", "/v1/models", "models"),
    )
    owner = "vllm"

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        if self.api_key is not None and headers.get("authorization") != f"Bearer {self.api_key}":
            return Refusal(401, {"error": "Unauthorized"})
        return None

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        messages = body.get("messages")
        if messages is None:
            return self.error(400, "messages: Field required")
        if not isinstance(messages, list):
            return self.error(400, "messages: Input should be a valid list")
        for i, message in enumerate(messages):
            if not isinstance(message, dict):
                return self.error(400, f"messages.{i}: Input should be a valid dictionary")
        # a `schema` next to `json_object` (llama.cpp's form) is let through and ignored
        response_format = body.get("response_format")
        if response_format is None:
            return None
        if not isinstance(response_format, dict):
            return self.error(400, "response_format: Input should be a valid dictionary")
        if response_format.get("type") not in FORMAT_TYPES:
            return self.error(
                400,
                "response_format.type: Input should be 'text', 'json_object', 'json_schema' "
                "or 'structural_tag'",
            )
        if response_format["type"] != "json_schema":
            return None
        spec = response_format.get("json_schema")
        if not isinstance(spec, dict):
            return self.error(400, "response_format.json_schema: Field required")
        for field in ("name", "schema"):
            if spec.get(field) is None:
                return self.error(400, f"response_format.json_schema.{field}: Field required")
        return None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        model = body.get("model") or MODEL  # vLLM answers with its one model when none is named
        return Prompt(chat_messages(body["messages"]), str(model), format_schema(body))

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt_tokens, answer_tokens = prompt.tokens(), completion_tokens(answer)
        usage = {
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + answer_tokens,
            "completion_tokens": answer_tokens,
            "prompt_tokens_details": None,
        }
        message: dict[str, Any] = {
            "role": "assistant",
            "content": answer.text,
            "refusal": None,
            "annotations": None,
            "audio": None,
            "function_call": None,
            "tool_calls": [],
            "reasoning_content": None,
        }
        return chat_completion(
            f"chatcmpl-{self.next_id(32)}",
            prompt.model,
            message,
            usage,
            choice={"logprobs": None, "stop_reason": None},
            service_tier=None,
            system_fingerprint=None,
            prompt_logprobs=None,
            kv_transfer_params=None,
        )

    def error(self, status: int, message: str) -> Refusal:
        try:
            kind = HTTPStatus(status).phrase.replace(" ", "").replace("-", "") + "Error"
        except ValueError:  # a status HTTP does not name, such as 529
            kind = "InternalServerError"
        body = {"error": {"message": message, "type": kind, "param": None, "code": status}}
        return Refusal(status, body)

    def not_found(self, method: str, path: str) -> Refusal | None:
        return Refusal(404, {"detail": "Not Found"})  # FastAPI's own answer
