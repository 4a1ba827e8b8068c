"""Any server that speaks OpenAI's `/v1/chat/completions`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import httpx
import orjson

from agentjudge.errors import ProtocolError
from agentjudge.judge.providers.base import Answer, RetryDecision
from agentjudge.judge.request import JudgeRequest


class OpenAICompatible:
    """Builds chat-completion requests and reads their answers.

    `json_mode` asks for JSON through `response_format`: `json_object` with the schema
    attached (the form llama.cpp's server and many others accept).
    """

    quality_signal = True
    notice: str | None = None  # said on the console and in every result of this judge
    max_concurrency: int | None = None  # calls the server can usefully take at once
    min_timeout: float | None = None  # seconds a call may need, whatever the job's timeout

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        json_mode: bool = True,
        name: str = "openai-compatible",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._url = httpx.URL(f"{self.base_url}/chat/completions")  # parsed once, not per call
        self.model = model
        self.name = name
        headers = {"content-type": "application/json"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._headers = httpx.Headers(headers)  # the same for every request
        self.json_mode = json_mode

    def __repr__(self) -> str:  # never show the key
        return f"OpenAICompatible(base_url={self.base_url!r}, model={self.model!r})"

    def build(self, request: JudgeRequest) -> httpx.Request:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
        }
        if self.json_mode:
            body["response_format"] = {"type": "json_object"}
            if request.response_schema is not None:
                body["response_format"]["schema"] = request.response_schema
        # orjson: ~40x faster than json on these prompts. The body goes in as a read
        # stream, not `content=`, which re-encodes it and rebuilds the headers (13 us against
        # 5 us alone, ~40 us a call in a busy job); the transport sets Content-Length.
        built = httpx.Request(
            "POST", self._url, headers=self._headers, stream=httpx.ByteStream(orjson.dumps(body))
        )
        built.read()  # `.content` is there for whoever inspects the request
        return built

    def parse(self, status: int, body: bytes) -> Answer:
        if not body:
            raise ProtocolError("empty_body")
        try:
            data = orjson.loads(body)
            content = data["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ProtocolError("malformed_completion") from None
        if not isinstance(content, str):
            raise ProtocolError("malformed_completion")
        usage = data.get("usage") if isinstance(data, dict) else None
        usage = usage if isinstance(usage, dict) else {}
        return Answer(
            content, _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens"))
        )

    def should_retry(self, status: int) -> RetryDecision:
        if status == 429:
            return "rate_limit"
        if status in (408, 409) or status >= 500:
            return "transient"
        return "no"

    def fallback(self, status: int) -> bool:
        # Servers without JSON mode answer 400 to `response_format`: ask again without it
        # (verdicts are still parsed strictly).
        if status == 400 and self.json_mode:
            self.json_mode = False
            return True
        return False

    def transport(self) -> httpx.AsyncBaseTransport | None:
        return None

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """Held open for a job's judge calls: a judge that runs its own server (`local`)
        starts it here and stops it on the way out; a remote server needs nothing."""
        yield


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
