"""Strict parsing of a judge's answer. Nothing but a finite number in [0, 1] is a score.

Three answer shapes, chosen by the request (`JudgeRequest.answer` / `.criteria`):
- `score`: `{"reasoning": ..., "score": x}`;
- criteria: `{"reasoning": ..., "scores": {name: x, ...}}`, exactly the rubric's names;
- `category`: `{"category": c, "confidence": x, "rationale": ...}`, c in the taxonomy;
- `rubric`: `{"criteria": [...]}`, criteria derived from a task (auto scoring mode);
- `decisive`: `{"reason": ..., "order": n}`, the step that made a run fail, n one of the
  order numbers listed to the judge.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from agentjudge.errors import ProtocolError
from agentjudge.judge.secrets import redact_secrets
from agentjudge.judge.taxonomy import CATEGORIES

MAX_RATIONALE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class Verdict:
    """A usable answer: a score (for a category answer, the confidence), per-criterion
    scores when asked for, the judge's reasoning (cut), and the other fields it gave."""

    score: float
    reasoning: str = ""
    fields: dict[str, Any] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


def without_secrets(verdict: Verdict, secrets: tuple[str, ...]) -> Verdict:
    """`verdict` with each of `secrets` redacted from its reasoning and every text in its
    fields: a judge may echo the key it was sent, and a verdict is printed, stored and
    written. The same verdict when none is there (the usual case, kept cheap)."""
    texts = [verdict.reasoning, *_texts(verdict.fields)]
    if not any(text != redact_secrets(text, secrets) for text in texts):
        return verdict
    reasoning = redact_secrets(verdict.reasoning, secrets)
    return Verdict(verdict.score, reasoning, _redacted(verdict.fields, secrets), verdict.scores)


def _texts(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.items() for part in item for text in _texts(part)]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    return []


def _redacted(value: Any, secrets: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return redact_secrets(value, secrets)
    if isinstance(value, dict):
        return {_redacted(k, secrets): _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(item, secrets) for item in value]
    return value


def parse_verdict(content: str) -> Verdict:
    """A `{"score": x}` answer; raise `ProtocolError` (a fixed kind, no raw text) otherwise.

    A bool is not a number, NaN and infinities are not scores, and a score outside [0, 1]
    is an error, never clamped: a protocol failure must not become a score.
    """
    data = _object(content)
    score = _unit(data.get("score"), "score")
    return Verdict(score, _text(data.get("reasoning")), _rest(data, "score", "reasoning"))


def parse_criteria_verdict(content: str, criteria: tuple[str, ...]) -> Verdict:
    """A `{"scores": {...}}` answer with exactly `criteria`; `score` is their plain mean."""
    data = _object(content)
    scores = data.get("scores")
    if not isinstance(scores, dict):
        raise ProtocolError("scores_missing")
    if set(scores) != set(criteria):
        raise ProtocolError("scores_mismatch")
    parsed = {name: _unit(scores[name], "score") for name in criteria}
    mean = sum(parsed.values()) / len(parsed)
    return Verdict(mean, _text(data.get("reasoning")), _rest(data, "scores", "reasoning"), parsed)


def parse_category(content: str) -> Verdict:
    """A failure category from the fixed taxonomy with a confidence in [0, 1]."""
    data = _object(content)
    category = data.get("category")
    if category not in CATEGORIES:
        raise ProtocolError("category_invalid")
    confidence = _unit(data.get("confidence"), "confidence")
    rationale = data.get("rationale", data.get("reasoning"))
    return Verdict(confidence, _text(rationale), {"category": category})


def parse_rubric(content: str) -> Verdict:
    """A `{"criteria": [{"name", "description", "weight"}, ...]}` answer (auto scoring mode).

    Only the shape is checked here; the scoring layer validates it as a rubric. Such an
    answer has no score: `score` is 1.0 by convention and means nothing.
    """
    data = _object(content)
    criteria = data.get("criteria")
    if not isinstance(criteria, list) or not criteria:
        raise ProtocolError("criteria_missing")
    if not all(isinstance(c, dict) for c in criteria):
        raise ProtocolError("criteria_malformed")
    return Verdict(1.0, "", {"criteria": criteria})


def parse_decisive(content: str, choices: tuple[int, ...]) -> Verdict:
    """A `{"reason": ..., "order": n}` answer naming one of the steps listed (`choices`, their
    order numbers); `fields["order"]` holds n. Like a rubric answer, it has no score: 1.0
    by convention. An integer written as a float (`3.0`) is not an order number."""
    data = _object(content)
    order = data.get("order")
    if order is None:
        raise ProtocolError("order_missing")
    if isinstance(order, bool) or not isinstance(order, int):
        raise ProtocolError("order_not_integer")
    if order not in choices:
        raise ProtocolError("order_not_listed")
    reason = data.get("reason", data.get("reasoning"))
    return Verdict(1.0, _text(reason), {"order": order})


def answer_json(content: str) -> Any:
    """The JSON value a judge answered (inside a ```json fence, if a small model wrote one);
    an empty or unparseable answer is a `ProtocolError` of a fixed kind."""
    text = _strip_fence(content.strip())
    if not text:
        raise ProtocolError("empty_answer")
    try:
        return json.loads(text)
    except ValueError:
        raise ProtocolError("answer_not_json") from None


def _object(content: str) -> dict[str, Any]:
    data = answer_json(content)
    if not isinstance(data, dict):
        raise ProtocolError("answer_not_object")
    return data


def _unit(value: Any, name: str) -> float:
    return number_in(value, name, 0.0, 1.0)


def number_in(value: Any, name: str, low: float, high: float) -> float:
    """`value` as a float if it is a finite number (not a bool) in [low, high]; a
    `ProtocolError` (`{name}_missing`, `_not_number`, `_out_of_range`) otherwise. The one
    check of a number a judge gave, live or read back from the verdict store."""
    if value is None:
        raise ProtocolError(f"{name}_missing")
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ProtocolError(f"{name}_not_number")
    # Compared before converting: an integer too large for a float must not raise.
    if (isinstance(value, float) and not math.isfinite(value)) or not low <= value <= high:
        raise ProtocolError(f"{name}_out_of_range", out_of_range(value, low, high))
    return float(value)


def _text(value: Any) -> str:
    return value[:MAX_RATIONALE_CHARS] if isinstance(value, str) else ""


def _rest(data: dict[str, Any], *known: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in known}


def _strip_fence(text: str) -> str:
    """Small models wrap JSON in a ```json fence; the content inside is still judged strictly."""
    if text.startswith("```") and text.endswith("```"):
        inner = text[3:-3]
        return inner.removeprefix("json").strip()
    return text


def out_of_range(value: float, low: float, high: float) -> str:
    """`7 is outside 1..5`: the refused number, shown (never more than a few characters)."""
    if isinstance(value, int) and abs(value) < 10**15:
        shown = str(value)
    else:
        try:
            shown = f"{float(value):.6g}"
        except OverflowError:
            shown = "a number too large to show"
    return f"{shown} is outside {low:g}..{high:g}"
