"""OpenAI's Chat Completions API (`POST /v1/chat/completions`), as OpenAI documents it:
Bearer auth, strict parameters, reasoning models' own rules, Structured Outputs."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any, ClassVar

from agentjudge.testing.mimic.base import (
    Dialect,
    Refusal,
    Route,
    a_json_type,
    chat_completion,
    chat_messages,
    completion_tokens,
    format_schema,
    text_of,
    unexpected,
)
from agentjudge.testing.mimic.prompt_cache import PromptCache
from agentjudge.testing.mimic.strict_schema import NOT_PERMITTED, strict_schema_problem
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
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "user",
        "seed",
        "tools",
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "reasoning_effort",
        "service_tier",
        "store",
        "metadata",
        "modalities",
        "audio",
        "prediction",
        "web_search_options",
        "verbosity",
        "prompt_cache_key",
        "safety_identifier",
    ]
)
ROLES = ("system", "developer", "user", "assistant", "tool")
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
# tokens a reasoning model spends thinking, by effort (counted in its completion tokens)
REASONING_TOKENS = {"none": 0, "minimal": 8, "low": 32, "medium": 64, "high": 128, "xhigh": 256}
FORMAT_TYPES = ("json_object", "json_schema", "text")
SCHEMA_NAME = re.compile(r"^[a-zA-Z0-9_-]+$")
NO_KEY = (
    "You didn't provide an API key. You need to provide your API key in an Authorization "
    "header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."
)
BAD_JSON = (
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't "
    "using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was "
    "sent was not valid JSON. If you have trouble figuring out how to fix this, please "
    "contact us through our help center at help.openai.com.)"
)


def is_reasoning(model: str) -> bool:
    """Whether `model` names one of OpenAI's reasoning models (o1, o3, o4, gpt-5 but not
    the gpt-5 chat models)."""
    return model.startswith(("o1", "o3", "o4")) or (
        model.startswith("gpt-5") and "-chat" not in model
    )


def mask(key: str) -> str:
    """`key` as OpenAI's errors show it: its first 3 and last 4 characters (a key too short
    to hide anything that way is all stars)."""
    if len(key) <= 8:
        return "*" * len(key)
    return key[:3] + "*" * (len(key) - 7) + key[-4:]


class OpenAI(Dialect):
    """OpenAI: errors are `{"error": {"message", "type", "param", "code"}}`."""

    title = "OpenAI"
    routes = (
        Route("POST", "/v1/chat/completions", "chat"),
        Route("GET", "/v1/models", "models"),
    )
    owner = "openai"
    bad_body = BAD_JSON
    not_permitted: ClassVar[tuple[str, ...]] = NOT_PERMITTED

    def __init__(
        self,
        api_key: str | None = None,
        reasoning_models: Iterable[str] = (),
        models: Iterable[str] | None = None,
    ) -> None:
        super().__init__(api_key, reasoning_models, models)
        self.cache = PromptCache()  # caches prompts' starts on its own, as OpenAI does

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        scheme, _, token = headers.get("authorization", "").partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            return self.invalid(NO_KEY, status=401)
        if self.api_key is not None and token != self.api_key:
            return self.invalid(
                f"Incorrect API key provided: {mask(token)}. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                code="invalid_api_key",
                status=401,
            )
        return None

    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        unknown = next((name for name in body if name not in KNOWN), None)
        if unknown is not None:
            return self.invalid(f"Unrecognized request argument supplied: {unknown}")
        return (
            self.check_model(path, body)
            or self.check_messages(body.get("messages"))
            or self.check_reasoning(self.model_of(path, body), body)
            or self.check_format(body)
        )

    def check_messages(self, messages: Any) -> Refusal | None:
        """The refusal of messages that are missing, empty, or not objects with a known role."""
        if messages is None:
            return self.missing("messages")
        if not isinstance(messages, list):
            return self.invalid_type("messages", "an array of objects", messages)
        if not messages:
            return self.invalid("[] is too short - 'messages'", "messages")
        for i, message in enumerate(messages):
            where = f"messages[{i}]"
            if not isinstance(message, dict):
                return self.invalid_type(where, "an object", message)
            role = message.get("role")
            if role is None:
                return self.missing(f"{where}.role")
            if role not in ROLES:
                return self.invalid(
                    f"Invalid value: '{role}'. Supported values are: 'system', 'developer', "
                    "'user', 'assistant', and 'tool'.",
                    f"{where}.role",
                    "invalid_value",
                )
        return None

    def check_model(self, path: str, body: dict[str, Any]) -> Refusal | None:
        """The refusal of a request without a model."""
        model = body.get("model")
        if model is None:
            return self.invalid("you must provide a model parameter")
        if not isinstance(model, str):
            return self.invalid_type("model", "a string", model)
        return None

    def reasons(self, model: str) -> bool:
        """Whether `model` is a reasoning model: by its name, or as the server was told."""
        return model in self.reasoning_models or is_reasoning(model)

    def check_reasoning(self, model: str, body: dict[str, Any]) -> Refusal | None:
        """The refusal of parameters the model does not take: reasoning models take no
        `max_tokens` and only the default temperature; others take no `reasoning_effort`."""
        effort = body.get("reasoning_effort")
        if not self.reasons(model):
            if effort is not None:
                return self.invalid(
                    "Unsupported parameter: 'reasoning_effort' is not supported with this model.",
                    "reasoning_effort",
                    "unsupported_parameter",
                )
            return None
        if body.get("max_tokens") is not None:
            return self.invalid(
                "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                "max_tokens",
                "unsupported_parameter",
            )
        temperature = body.get("temperature")
        if temperature is not None and temperature != 1:
            return self.invalid(
                f"Unsupported value: 'temperature' does not support {json.dumps(temperature)} "
                "with this model. Only the default (1) value is supported.",
                "temperature",
                "unsupported_value",
            )
        if effort is not None and effort not in EFFORTS:
            return self.invalid(
                f"Invalid value: '{effort}'. Supported values are: 'none', 'minimal', 'low', "
                "'medium', 'high', and 'xhigh'.",
                "reasoning_effort",
                "invalid_value",
            )
        return None

    def check_format(self, body: dict[str, Any]) -> Refusal | None:
        """The refusal of a `response_format` OpenAI does not accept."""
        response_format = body.get("response_format")
        if response_format is None:
            return None
        if not isinstance(response_format, dict):
            return self.invalid_type("response_format", "an object", response_format)
        kind = response_format.get("type")
        if kind is None:
            return self.missing("response_format.type")
        if kind not in FORMAT_TYPES:
            return self.invalid(
                f"Invalid value: '{kind}'. Supported values are: 'json_object', 'json_schema', "
                "and 'text'.",
                "response_format.type",
                "invalid_value",
            )
        allowed = ("type", "json_schema") if kind == "json_schema" else ("type",)
        extra = [key for key in response_format if key not in allowed]
        if extra:
            return self.invalid(f"{unexpected(extra)} - 'response_format'", "response_format")
        if kind == "json_object" and not any(
            "json" in text_of(m.get("content")).lower() for m in body["messages"]
        ):
            return self.invalid(
                "'messages' must contain the word 'json' in some form, to use "
                "'response_format' of type 'json_object'.",
                "messages",
            )
        if kind == "json_schema":
            return self._check_json_schema(response_format.get("json_schema"))
        return None

    def _check_json_schema(self, spec: Any) -> Refusal | None:
        where = "response_format.json_schema"
        if spec is None:
            return self.missing(where)
        if not isinstance(spec, dict):
            return self.invalid_type(where, "an object", spec)
        extra = [key for key in spec if key not in ("name", "schema", "strict", "description")]
        if extra:
            return self.invalid(f"{unexpected(extra)} - '{where}'", where)
        name = spec.get("name")
        if name is None:
            return self.missing(f"{where}.name")
        if not isinstance(name, str):
            return self.invalid_type(f"{where}.name", "a string", name)
        if len(name) > 64:
            return self.invalid(
                f"Invalid '{where}.name': string too long. Expected a string with maximum "
                f"length 64, but got a string with length {len(name)} instead.",
                f"{where}.name",
                "string_above_max_length",
            )
        if not SCHEMA_NAME.match(name):
            return self.invalid(
                f"Invalid '{where}.name': string does not match pattern. Expected a string "
                f"that matches the pattern '{SCHEMA_NAME.pattern}'.",
                f"{where}.name",
                "invalid_value",
            )
        schema = spec.get("schema")
        if schema is None:
            return self.missing(f"{where}.schema")
        if not isinstance(schema, dict):
            return self.invalid_type(f"{where}.schema", "an object", schema)
        if spec.get("strict") is True:
            problem = strict_schema_problem(schema, self.not_permitted)
            if problem is not None:
                return self.invalid(
                    f"Invalid schema for response_format '{name}': {problem}", "response_format"
                )
        return None

    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        return Prompt(
            chat_messages(body["messages"]), self.model_of(path, body), format_schema(body)
        )

    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        prompt_tokens = prompt.tokens()
        effort = body.get("reasoning_effort") or "medium"
        reasoning = REASONING_TOKENS[effort] if self.reasons(prompt.model) else 0
        answer_tokens = completion_tokens(answer) + reasoning
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": answer_tokens,
            "total_tokens": prompt_tokens + answer_tokens,
            "prompt_tokens_details": {"cached_tokens": self.cache.read(prompt), "audio_tokens": 0},
            "completion_tokens_details": {
                "reasoning_tokens": reasoning,
                "audio_tokens": 0,
                "accepted_prediction_tokens": 0,
                "rejected_prediction_tokens": 0,
            },
        }
        message: dict[str, Any] = {"role": "assistant", "content": answer.text}
        message.update(refusal=None, annotations=[])
        fingerprint = hashlib.sha256(prompt.model.encode()).hexdigest()[:10]
        return chat_completion(
            f"chatcmpl-{self.next_id(29)}",
            prompt.model,
            message,
            usage,
            choice={"logprobs": None},
            service_tier="default",
            system_fingerprint=f"fp_{fingerprint}",
        )

    def error(self, status: int, message: str) -> Refusal:
        kind, code = "invalid_request_error", None
        if status == 429:
            kind, code = "requests", "rate_limit_exceeded"
        elif status >= 500:
            kind = "server_error"
        return Refusal(
            status, {"error": {"message": message, "type": kind, "param": None, "code": code}}
        )

    def no_such_model(self, model: str) -> Refusal:
        message = f"The model `{model}` does not exist or you do not have access to it."
        body = {"message": message, "type": "invalid_request_error", "param": None}
        return Refusal(404, {"error": {**body, "code": "model_not_found"}})

    def too_long(self, tokens: int, limit: int) -> Refusal | None:
        return self.invalid(
            f"This model's maximum context length is {limit} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.",
            "messages",
            "context_length_exceeded",
        )

    def not_found(self, method: str, path: str) -> Refusal | None:
        return self.invalid(f"Invalid URL ({method} {path})", status=404)

    def invalid(
        self, message: str, param: str | None = None, code: str | None = None, status: int = 400
    ) -> Refusal:
        """An `invalid_request_error`."""
        error = {"message": message, "type": "invalid_request_error", "param": param, "code": code}
        return Refusal(status, {"error": error})

    def missing(self, param: str) -> Refusal:
        """The refusal of a request without a required parameter."""
        return self.invalid(
            f"Missing required parameter: '{param}'.", param, "missing_required_parameter"
        )

    def invalid_type(self, param: str, expected: str, value: Any) -> Refusal:
        """The refusal of a parameter of the wrong JSON type."""
        return self.invalid(
            f"Invalid type for '{param}': expected {expected}, but got {a_json_type(value)} "
            "instead.",
            param,
            "invalid_type",
        )
