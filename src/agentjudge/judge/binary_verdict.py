"""Reading a binary answer: `true` (the step is right) or `false`, one per criterion, weighed
by the judge's own probabilities (the embedded judge's answer; see scoring/small_prompt.py).

A small model's single most likely answer ties good and bad steps often (both `true`); how
sure it is does not. Where the answer carries the log-probabilities of its tokens'
alternatives (`top_logprobs`), a criterion's score is the probability of `true` against
`false` (their spellings in any case, renormalized over the two); without them, 1.0 for
`true` and 0.0 for `false`, as written. No answer where one is due is an error
(`ProtocolError`), never a score: the step stays unscored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjudge.errors import ProtocolError
from agentjudge.judge.verdict import Verdict, answer_json

_WORDS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class TokenChoice:
    """One generated token and the log-probabilities of the alternatives the judge
    reported for its place (token text -> log-probability; the chosen one included)."""

    token: str
    top: Mapping[str, float]


def binary_schema(criteria: int) -> dict[str, Any]:
    """The answer's JSON schema: a bare boolean for one criterion (one token to generate),
    an array of one boolean per criterion, in order, for several."""
    answer: dict[str, Any] = {"type": "boolean"}
    if criteria <= 1:
        return answer
    return {"type": "array", "items": answer, "minItems": criteria, "maxItems": criteria}


def probability_true(top: Mapping[str, float]) -> float | None:
    """The probability of `true` against `false` among the alternatives in `top` (any case,
    surrounding spaces ignored); None when neither has a usable probability."""
    mass = {True: 0.0, False: 0.0}
    for text, logprob in top.items():
        word = _WORDS.get(text.strip().lower())
        if word is None or not isinstance(logprob, int | float) or math.isnan(logprob):
            continue
        mass[word] += math.exp(min(float(logprob), 0.0))
    total = mass[True] + mass[False]
    if total <= 0.0 or not math.isfinite(total):
        return None
    return mass[True] / total


def written_answers(content: str, count: int) -> list[bool]:
    """The booleans the answer wrote: one bare boolean, or a JSON array of `count`.
    Raises `ProtocolError` (a fixed kind) when there are not exactly `count` booleans."""
    data = answer_json(content)
    values = data if isinstance(data, list) else [data]
    if len(values) != count:
        raise ProtocolError("answers_mismatch")
    if not all(isinstance(value, bool) for value in values):
        raise ProtocolError("answer_not_boolean")
    return [bool(value) for value in values]


def parse_binary_answer(
    content: str, tokens: Sequence[TokenChoice], criteria: tuple[str, ...] = ()
) -> Verdict:
    """The verdict of a binary answer: `score` (for several `criteria`, their plain mean, as
    `parse_criteria_verdict` gives) and per-criterion `scores`, each the probability of
    `true` where each written answer's token carries its alternatives."""
    count = max(1, len(criteria))
    written = written_answers(content, count)
    places = [t for t in tokens if t.token.strip().lower() in _WORDS]
    scores = [1.0 if value else 0.0 for value in written]
    weighed = False
    if len(places) == count and all(
        _WORDS[t.token.strip().lower()] == value for t, value in zip(places, written, strict=True)
    ):
        read = [probability_true(t.top) for t in places]
        if all(p is not None for p in read):
            scores = [p for p in read if p is not None]
            weighed = True
    said = [_said(value, score, weighed) for value, score in zip(written, scores, strict=True)]
    fields: dict[str, Any] = {"answers": written}
    if not criteria:
        return Verdict(scores[0], said[0], fields)
    named = dict(zip(criteria, scores, strict=True))
    reasoning = "; ".join(f"{n}: {s}" for n, s in zip(criteria, said, strict=True))
    return Verdict(sum(scores) / len(scores), reasoning, fields, named)


def _said(value: bool, score: float, weighed: bool) -> str:
    """`answered true (p(true) 0.87)`: what the judge wrote, and how sure it was."""
    word = "true" if value else "false"
    return f"answered {word} (p(true) {score:.2f})" if weighed else f"answered {word}"
