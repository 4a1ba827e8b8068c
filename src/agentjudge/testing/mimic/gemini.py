"""Gemini's OpenAI-compatible endpoint (`POST /v1beta/openai/chat/completions`), as Google
documents it: Bearer auth, Google's errors (a JSON list), thinking models."""

from __future__ import annotations

from typing import Any

from agentjudge.testing.mimic.base import (
    Dialect,
    Refusal,
    Route,
    chat_completion,
    chat_messages,
    completion_tokens,
    format_schema,
)
from agentjudge.testing.scripted import Answer, Prompt

KNOWN = frozenset(
    [
        "model",
        "messages",
        "temperature",
        "top_p",
        "n",
        "stream",
        "stream_options",
        "stop",
        "max_tokens",
        "max_completion_tokens",
        "response_format",
        "reasoning_effort",
        "tools",
        "tool_choice",
        "seed",
        "presence_penalty",
        "frequency_penalty",
        "extra_body",
    ]
)
ROLES = ("system", "developer", "user", "assistant", "tool")
EFFORTS = ("none", "low", "medium", "high")
FORMAT_TYPES = ("text", "json_object", "json_schema")
STATUSES = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
}
# tokens a thinking model spends thinking, by effort (none turns thinking off); they count
# in the total but not in the completion tokens
THINKING_TOKENS = {"none": 0, "low": 32, "medium": 64, "high": 128}
THINKING_MODELS = ("gemini-2.5", "gemini-3")
INVALID = "Request contains an invalid argument."
NO_KEY = (
    "Request is missing required authentication credential. Expected OAuth 2 access token, "
    "login cookie or other valid authentication credential. See "
    "https://developers.google.com/identity/sign-in/web/devconsole-project."
)


class Gemini(Dialect):
    """Gemini: errors are `[{"error": {"code", "message", "status"}}]`."""

    title = "Gemini"
    base_path = "/v1beta/openai"
    routes = (
        Route("POST", "/v1beta/openai/chat/completions", "chat"),
        Route("GET", "/v1beta/openai/models", "models"),
    )
    owner = "google"
    bad_body = "Invalid JSON payload received. Unexpected token."

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return self.error(401, NO_KEY)
        if self.api_key is not None and token != self.api_key:
            return self.error(400, "API key not valid. Please pass a valid API key.")
        return None

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        unknown = next((name for name in body if name not in KNOWN), None)
        if unknown is not None:
            return self.error(400, _unknown_name(unknown))
        if not isinstance(body.get("model"), str):
            return self.error(400, INVALID)
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return self.error(400, INVALID)
        if not all(isinstance(m, dict) and m.get("role") in ROLES for m in messages):
            return self.error(400, INVALID)
        effort = body.get("reasoning_effort")
        if effort is not None and effort not in EFFORTS:
            return self.error(
                400,
                f"Invalid reasoning_effort: {effort}. Valid values are: high, low, medium, none",
            )
        return self._check_format(body.get("response_format"))

    def _check_format(self, response_format: Any) -> Refusal | None:
        if response_format is None:
            return None
        if not isinstance(response_format, dict):
            return self.error(400, INVALID)
        extra = next((key for key in response_format if key not in ("type", "json_schema")), None)
        if extra is not None:
            return self.error(400, _unknown_name(extra, "response_format"))
        kind = response_format.get("type")
        if kind not in FORMAT_TYPES:
            return self.error(
                400,
                "Invalid JSON payload received. Invalid value at 'response_format.type', "
                f'"{kind}"',
            )
        if kind != "json_schema":
            return None
        spec = response_format.get("json_schema")
        if not isinstance(spec, dict) or not isinstance(spec.get("schema"), dict):
            return self.error(400, INVALID)
        where = "response_format.json_schema"
        extra = next(
            (k for k in spec if k not in ("name", "schema", "strict", "description")), None
        )
        return self.error(400, _unknown_name(extra, where)) if extra is not None else None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        return Prompt(chat_messages(body["messages"]), body["model"], format_schema(body))

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt_tokens, answer_tokens = prompt.tokens(), completion_tokens(answer)
        thinks = prompt.model in self.reasoning_models or prompt.model.startswith(THINKING_MODELS)
        thoughts = THINKING_TOKENS[body.get("reasoning_effort") or "medium"] if thinks else 0
        usage = {
            "completion_tokens": answer_tokens,
            "prompt_tokens": prompt_tokens,
            "total_tokens": prompt_tokens + answer_tokens + thoughts,
        }
        message = {"role": "assistant", "content": answer.text}
        return chat_completion(self.next_id(22), prompt.model, message, usage)

    def error(self, status: int, message: str) -> Refusal:
        kind = STATUSES.get(status, "INTERNAL" if status >= 500 else "INVALID_ARGUMENT")
        return Refusal(status, [{"error": {"code": status, "message": message, "status": kind}}])

    def no_such_model(self, model: str) -> Refusal:
        return self.error(
            404,
            f"models/{model} is not found for API version v1beta, or is not supported for "
            "generateContent.",
        )

    def too_long(self, tokens: int, limit: int) -> Refusal | None:
        return self.error(
            400,
            f"The input token count ({tokens}) exceeds the maximum number of tokens allowed "
            f"({limit}).",
        )


def _unknown_name(name: str, within: str | None = None) -> str:
    at = f" at '{within}'" if within else ""
    return f'Invalid JSON payload received. Unknown name "{name}"{at}: Cannot find field.'
