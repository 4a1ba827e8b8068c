"""What a provider is: it builds HTTP requests and reads responses; nothing else.

Retries, backoff, concurrency, caps and accounting live once, in `JudgeClient`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

import httpx

from agentjudge.judge.request import JudgeRequest

RetryDecision = Literal["rate_limit", "transient", "no"]


@dataclass(frozen=True, slots=True)
class Answer:
    """The text a provider extracted from a response, and the tokens it reports."""

    content: str
    input_tokens: int = 0
    output_tokens: int = 0


class Provider(Protocol):
    name: str
    model: str
    quality_signal: bool

    @property
    def notice(self) -> str | None:
        """What the console and every result must say about this judge, if anything."""
        ...

    def build(self, request: JudgeRequest) -> httpx.Request: ...

    def parse(self, status: int, body: bytes) -> Answer: ...

    def should_retry(self, status: int) -> RetryDecision: ...

    def fallback(self, status: int) -> bool:
        """Adapt to a server that refused a request (e.g. without JSON mode); True when the
        same call may now succeed."""
        ...

    def transport(self) -> httpx.AsyncBaseTransport | None: ...
