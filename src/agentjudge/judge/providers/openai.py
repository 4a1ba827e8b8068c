"""OpenAI's Chat Completions API (`openai`), and Azure OpenAI's (`azure`), as documented.

- Structured outputs: `response_format: {"type": "json_schema", "json_schema": {name,
  schema, strict: true}}`, with only the schema keywords both OpenAI and Azure accept in
  strict mode (Azure refuses minimum/maximum and lengths); OpenAI refuses the llama.cpp
  form (`json_object` with a `schema` key), so it is never tried.
- Reasoning models (o1, o3, o4-mini, gpt-5...) take `max_completion_tokens` (which also
  bounds their hidden reasoning), only the default temperature, and `developer` messages
  in place of `system`; `reasoning_effort` is sent when the user sets it. A model not
  recognised by its name adapts when the server refuses (see `OpenAICompatible.adapt`).
- Azure: a deployment URL (`{resource}/openai/deployments/{deployment}/chat/completions?
  api-version=...`) or the v1 API (`{resource}/openai/v1/chat/completions`), the key in an
  `api-key` header.
"""

from __future__ import annotations

from typing import Any, ClassVar

import httpx

from agentjudge.judge.providers.base import FORM
from agentjudge.judge.providers.openai_compatible import OpenAICompatible, ResponseMode
from agentjudge.judge.request import JudgeRequest

OPENAI_URL = "https://api.openai.com/v1"
AZURE_API_VERSION = "2024-10-21"  # the latest GA version, with structured outputs
# Reasoning models are served only from preview versions this recent or later
AZURE_REASONING_API_VERSION = "2025-04-01-preview"
_REASONING_PREFIXES = ("o1", "o3", "o4", "gpt-5")


def is_reasoning_model(model: str) -> bool:
    """OpenAI's reasoning models by name: the o-series and gpt-5 (not gpt-5's chat model)."""
    name = model.lower().rsplit("/", 1)[-1]
    return name.startswith(_REASONING_PREFIXES) and "chat" not in name


class OpenAI(OpenAICompatible):
    """api.openai.com (or a server that checks requests as strictly)."""

    name: str = "openai"
    modes: ClassVar[tuple[ResponseMode, ...]] = ("json_schema", "json_object", "prompt")
    prompt_cache = True
    send_cache_key = True  # until a server refuses the field (an older Azure API version)

    def known_model(self) -> None:
        if is_reasoning_model(self.model):
            self.reasoning_model()

    def _form(self) -> tuple[object, ...]:
        return (*super()._form(), self.send_cache_key)

    def extend(self, body: dict[str, Any], request: JudgeRequest) -> None:
        # the steps of one trajectory share a prefix: the same `prompt_cache_key` routes
        # them to the machines that hold it (docs/judge.md, "Prompt caching")
        if request.cache_group and self.send_cache_key:
            body["prompt_cache_key"] = request.cache_group

    def adapt(self, status: int, message: str, refused: httpx.Request) -> str | None:
        if status == 400 and self.send_cache_key and "prompt_cache_key" in message:
            if refused.extensions.get(FORM) != self._form():
                return ""
            self.send_cache_key = False
            return "the server takes no prompt_cache_key: the steps are sent without one"
        return super().adapt(status, message, refused)


class AzureOpenAI(OpenAI):
    """Azure OpenAI: `base_url` is the resource (`https://NAME.openai.azure.com`), a
    deployment URL, or the v1 API's base (`.../openai/v1`); `model` is the deployment."""

    name: str = "azure"

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        *,
        api_version: str | None = None,
        reasoning_effort: str | None = None,
    ) -> None:
        self._pinned = api_version is not None  # a version the user chose is kept
        if api_version is None:
            reasoning = is_reasoning_model(model)
            api_version = AZURE_REASONING_API_VERSION if reasoning else AZURE_API_VERSION
        super().__init__(
            base_url,
            model,
            api_key,
            reasoning_effort=reasoning_effort,
            endpoint=azure_endpoint(base_url, model, api_version),
        )
        self.api_version = api_version

    def auth_headers(self, api_key: str | None) -> dict[str, str]:
        return {"api-key": api_key} if api_key else {}

    def adapt(self, status: int, message: str, refused: httpx.Request) -> str | None:
        # "Model o3 is enabled only for api versions 2024-12-01-preview and later": a
        # reasoning model behind a deployment name that does not say so
        text = message.lower()
        newer = not self._pinned and self.api_version != AZURE_REASONING_API_VERSION
        newer = newer and "api-version" in self._url.params
        if status == 400 and newer and ("api version" in text or "api-version" in text):
            if refused.url.params.get("api-version") != self.api_version:
                return ""
            self.api_version = AZURE_REASONING_API_VERSION
            self.endpoint = str(self._url.copy_set_param("api-version", self.api_version))
            self._url = httpx.URL(self.endpoint)
            return f"the deployment needs a newer api-version: using {self.api_version}"
        return super().adapt(status, message, refused)


def azure_endpoint(base_url: str, deployment: str, api_version: str) -> str:
    """The chat-completions URL of a deployment, from any of the URLs Azure documents."""
    base = base_url.rstrip("/")
    if base.endswith("/openai/v1"):  # the v1 API: the deployment goes in the body
        return f"{base}/chat/completions"
    if "?" in base:  # a full URL, query and all: taken as given
        return base
    if "/openai/deployments/" not in base:
        base = f"{base}/openai/deployments/{deployment}"
    if not base.endswith("/chat/completions"):
        base = f"{base}/chat/completions"
    return f"{base}?api-version={api_version}"
