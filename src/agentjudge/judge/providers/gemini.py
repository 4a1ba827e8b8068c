"""Google Gemini through its OpenAI-compatible endpoint (`gemini`).

`https://generativelanguage.googleapis.com/v1beta/openai/chat/completions` with the key as
a bearer token. It takes `response_format` `json_schema` (and `json_object`), refuses any
field it does not know, and answers an error as a JSON *list* of `{"error": {code,
message, status}}`. Gemini 2.5 and 3 models think before answering, and their thinking
counts against `max_tokens`: they get room for it. Their thinking is left out of
`completion_tokens` but not out of `total_tokens`, which is what output tokens are taken
from (`OpenAICompatible.parse`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentjudge.judge.providers.base import Provider
from agentjudge.judge.providers.openai_compatible import OpenAICompatible, ResponseMode

GEMINI_URL = "https://generativelanguage.googleapis.com/v1beta/openai"
_THINKING_PREFIXES = ("gemini-2.5", "gemini-3")


class Gemini(OpenAICompatible):
    """Gemini's OpenAI-compatible chat completions."""

    name: str = "gemini"
    prompt_cache = True  # implicit caching of repeated prefixes (usage's cached tokens)
    modes: ClassVar[tuple[ResponseMode, ...]] = ("json_schema", "json_object", "prompt")

    def known_model(self) -> None:
        # `max_tokens` stays: the endpoint documents it; only the budget grows
        name = self.model.lower().removeprefix("models/")
        self.reasoning = name.startswith(_THINKING_PREFIXES)

    def read_error(self, data: Any) -> str | None:
        if isinstance(data, list) and data:
            data = data[0]
        return Provider.read_error(self, data)
