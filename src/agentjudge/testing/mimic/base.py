"""What every mimicked API has in common, and helpers for the OpenAI-shaped ones."""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from agentjudge.testing.scripted import Answer, Prompt

MODEL = "agentjudge-test-judge"  # the model a server lists (it answers to any name)
SYSTEM_ROLES = ("system", "developer")


@dataclass(frozen=True)
class Refusal:
    """An answer other than a completion: an error in the API's own shape."""

    status: int
    body: Any  # JSON, or a str for servers that answer plain text


@dataclass(frozen=True)
class Route:
    """A path the API serves: `chat` answers completions, `models` lists the model."""

    method: str
    path: str  # in aiohttp's syntax: `{name}` matches one path segment
    kind: Literal["chat", "models"]


class Dialect(ABC):
    """One API as its provider documents it: where it listens, what it refuses and how,
    how a request reads into a `Prompt`, and the shape of its replies and errors."""

    title: ClassVar[str]  # as people name the API
    base_path: ClassVar[str] = "/v1"  # what follows host:port in the base URL a client is given
    routes: ClassVar[tuple[Route, ...]]
    owner: ClassVar[str] = "agentjudge"  # `owned_by` in a model list
    bad_body: ClassVar[str] = "the request body is not a JSON object"

    def __init__(
        self,
        api_key: str | None = None,
        reasoning_models: Iterable[str] = (),
        models: Iterable[str] | None = None,
    ) -> None:
        self.api_key = api_key
        # models (or Azure deployments) that reason whatever their names say
        self.reasoning_models = frozenset(reasoning_models)
        # the models it serves (None: any name is one)
        self.served = None if models is None else frozenset(models)
        # ids come from a count, not randomness: the same run gives the same ids
        self._serial = itertools.count(1)

    def check(
        self, path: str, query: dict[str, str], headers: dict[str, str], body: dict[str, Any] | None
    ) -> Refusal | None:
        """The API's refusal of this chat request, or None if it would answer it.
        `headers` have lower-case names; `body` is None when it is not a JSON object."""
        refusal = self.check_access(path, query, headers)
        if refusal is not None:
            return refusal
        if body is None:
            return self.error(400, self.bad_body)
        refusal = self.check_body(path, body)
        if refusal is None and self.served is not None:
            model = self.model_of(path, body)
            if model not in self.served:
                return self.no_such_model(model)
        return refusal

    def model_of(self, path: str, body: dict[str, Any]) -> str:
        """The model the request is for."""
        return str(body.get("model", ""))

    def no_such_model(self, model: str) -> Refusal:
        """The API's refusal of a model it does not serve."""
        return self.error(404, f"The model `{model}` does not exist.")

    def check_access(
        self, path: str, query: dict[str, str], headers: dict[str, str]
    ) -> Refusal | None:
        """The refusal of a request for its address or credentials (checked before its body)."""
        return None

    @abstractmethod
    def check_body(self, path: str, body: dict[str, Any]) -> Refusal | None:
        """The refusal of a request body the API does not accept."""

    @abstractmethod
    def read(self, path: str, body: dict[str, Any]) -> Prompt:
        """The accepted request as the scripted judge reads it."""

    @abstractmethod
    def reply(self, prompt: Prompt, body: dict[str, Any], answer: Answer) -> dict[str, Any]:
        """The API's completion carrying `answer`, with its usage."""

    @abstractmethod
    def error(self, status: int, message: str) -> Refusal:
        """An error with `status` in the API's shape (scripted faults use it too)."""

    def too_long(self, tokens: int, limit: int) -> Refusal | None:
        """The refusal of a prompt of `tokens` over a context of `limit` tokens (None: the
        server cuts the prompt down instead)."""
        return self.error(
            400,
            f"This model's maximum context length is {limit} tokens. However, you requested "
            f"{tokens} tokens in the messages, Please reduce the length of the messages.",
        )

    def not_found(self, method: str, path: str) -> Refusal | None:
        """The answer to a request for a path the API does not serve (None: the web
        server's plain 404)."""
        return self.error(404, "Not Found")

    def models(self) -> dict[str, Any]:
        """The API's model list."""
        model = {"id": MODEL, "object": "model", "created": 0, "owned_by": self.owner}
        return {"object": "list", "data": [model]}

    def next_id(self, length: int = 24) -> str:
        """A fresh id, deterministic: a hash of this dialect's request count."""
        serial = next(self._serial)
        return hashlib.sha256(f"{self.title}:{serial}".encode()).hexdigest()[:length]


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts."""
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if isinstance(content, list):
        texts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(texts)
    return json.dumps(content)


def chat_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """OpenAI-style messages with their system (and developer) messages joined into one,
    first, as the scripted judge reads them."""
    system = [text_of(m.get("content")) for m in messages if m.get("role") in SYSTEM_ROLES]
    rest = [
        {"role": str(m.get("role")), "content": text_of(m.get("content"))}
        for m in messages
        if m.get("role") not in SYSTEM_ROLES
    ]
    return [{"role": "system", "content": "\n\n".join(system)}, *rest] if system else rest


def format_schema(body: dict[str, Any]) -> dict[str, Any] | None:
    """The schema OpenAI's `response_format` of type `json_schema` holds the answer to."""
    response_format = body.get("response_format")
    if not isinstance(response_format, dict) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, dict) else None
    return schema if isinstance(schema, dict) else None


def completion_tokens(answer: Answer) -> int:
    """The answer's size in tokens, estimated as four characters a token."""
    return max(1, len(answer.text) // 4)


def chat_completion(
    completion_id: str,
    model: str,
    message: dict[str, Any],
    usage: dict[str, Any],
    choice: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    """An OpenAI-shaped `chat.completion` with one choice; `choice` and `extra` add the
    fields a server adds to the choice and to the whole."""
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, **(choice or {}), "finish_reason": "stop"}],
        "usage": usage,
        **extra,
    }


def a_json_type(value: Any) -> str:
    """`value`'s JSON type with its article, as API errors name it ("an array")."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def unexpected(keys: list[str]) -> str:
    """JSON Schema's words for properties an object does not allow."""
    names = ", ".join(f"'{k}'" for k in keys)
    verb = "was" if len(keys) == 1 else "were"
    return f"Additional properties are not allowed ({names} {verb} unexpected)"
