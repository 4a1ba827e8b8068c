"""The `fake` judge: deterministic answers, in process, for plumbing. Not a quality signal.

It speaks the openai-compatible protocol through an in-process transport, so the client's
one code path (retries, limits, accounting, verdict store) runs exactly as with a real server.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, ClassVar, Literal

import httpx

from agentjudge.judge.providers.openai_compatible import OpenAICompatible, ResponseMode
from agentjudge.judge.taxonomy import CATEGORIES

FAKE_NOTE = "the fake judge gives deterministic scores from a hash: not a quality signal"


FAKE_REASONING = "fake provider: deterministic score"


class FakeJudge(OpenAICompatible):
    """`answers="hash"` (trajectories): a score derived from the prompt's hash.
    `answers="scale_max"` (cases, like graph-agents-cli's fake): the scale's maximum."""

    name: str = "fake"
    quality_signal: ClassVar[bool] = False
    preflight: ClassVar[bool] = False
    note = FAKE_NOTE
    modes: ClassVar[tuple[ResponseMode, ...]] = ("json_object_schema",)

    def __init__(
        self, model: str = "fake-judge", answers: Literal["hash", "scale_max"] = "hash"
    ) -> None:
        super().__init__("http://fake-judge.invalid/v1", model)
        self.answers = answers

    def transport(self) -> httpx.AsyncBaseTransport | None:
        return httpx.MockTransport(_scale_max if self.answers == "scale_max" else _answer)


def _scale_max(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    schema = body.get("response_format", {}).get("schema", {})
    maximum = schema.get("properties", {}).get("score", {}).get("maximum", 1)
    return _completion(request, {"reasoning": FAKE_REASONING, "score": maximum})


def _answer(request: httpx.Request) -> httpx.Response:
    body = json.loads(request.content)
    text = body["messages"][-1]["content"]
    digest = hashlib.sha256(text.encode()).digest()
    verdict = {
        "reasoning": "fake judge: score derived from a hash of the request",
        "score": round(digest[0] / 255, 3),
        "category": CATEGORIES[digest[1] % len(CATEGORIES)],
        "confidence": round(digest[2] / 255, 3),
    }
    return _completion(request, verdict)


def _completion(request: httpx.Request, verdict: dict[str, Any]) -> httpx.Response:
    content = json.dumps(verdict)
    usage = {"prompt_tokens": len(request.content) // 4, "completion_tokens": len(content) // 4}
    return httpx.Response(
        200,
        json={
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        },
    )
