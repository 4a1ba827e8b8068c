"""Strict parsing of a judge's answer: a JSON object with a finite score in [0, 1]."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from agentjudge.errors import ProtocolError

MAX_RATIONALE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Verdict:
    """A usable answer: the score, the judge's reasoning (cut), and the other fields it gave."""

    score: float
    reasoning: str = ""
    fields: dict[str, Any] = field(default_factory=dict)


def parse_verdict(content: str) -> Verdict:
    """Parse `content`; raise `ProtocolError` (a fixed kind, no raw text) if it is unusable.

    A bool is not a number, NaN and infinities are not scores, and a score outside [0, 1]
    is an error, never clamped: a protocol failure must not become a score.
    """
    text = _strip_fence(content.strip())
    if not text:
        raise ProtocolError("empty_answer")
    try:
        data = json.loads(text)
    except ValueError:
        raise ProtocolError("answer_not_json") from None
    if not isinstance(data, dict):
        raise ProtocolError("answer_not_object")
    score = data.get("score")
    if score is None:
        raise ProtocolError("score_missing")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ProtocolError("score_not_number")
    if not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ProtocolError("score_out_of_range")
    reasoning = data.get("reasoning", "")
    reasoning = reasoning if isinstance(reasoning, str) else ""
    rest = {k: v for k, v in data.items() if k not in ("score", "reasoning")}
    return Verdict(float(score), reasoning[:MAX_RATIONALE_CHARS], rest)


def _strip_fence(text: str) -> str:
    """Small models wrap JSON in a ```json fence; the content inside is still judged strictly."""
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.removeprefix("json").strip()
    return text
