"""What is sent to a judge, built apart from sending it (so it can be keyed, stored, printed)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentjudge.errors import ProtocolError
from agentjudge.judge.binary_verdict import TokenChoice, parse_binary_answer
from agentjudge.judge.category_pick import parse_category_pick
from agentjudge.judge.scaled import parse_scaled_verdict
from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.judge.verdict import (
    MAX_RATIONALE_CHARS,
    Verdict,
    number_in,
    parse_category,
    parse_criteria_verdict,
    parse_decisive,
    parse_rubric,
    parse_verdict,
)

Role = Literal["system", "user", "assistant"]
ANSWER_TOKENS = 512  # what a judge's answer may take, unless a request says otherwise
AnswerKind = Literal["score", "category", "rubric", "scaled", "decisive", "binary", "category_pick"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str
    # Offsets into `content`, ascending, where the text before is a prefix that later
    # requests of the same trajectory repeat (its task, then each step of its context): a
    # provider with explicit prompt-cache breakpoints (Anthropic's `cache_control`) cuts the
    # content into blocks there. Never part of the key: the text is the same.
    cache_points: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One judge call: messages, the prompt version that made them, and the answer's schema."""

    messages: tuple[Message, ...]
    prompt_version: str
    response_schema: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int = ANSWER_TOKENS
    answer: AnswerKind = "score"
    criteria: tuple[str, ...] = ()
    scale: float | None = None  # for `scaled` answers: scores run from 1 to `scale`
    # which of a step's (or case metric's) repeated samples this is (see judge/samples.py):
    # keyed when > 0, so each sample has its own verdict, and never sent to the judge
    sample: int = 0
    # for `decisive` answers: the order numbers of the steps listed (the answer names one)
    choices: tuple[int, ...] = ()
    # the trajectory whose steps share this request's prefix, for a provider that routes by
    # it (OpenAI's `prompt_cache_key`); never keyed: it changes no answer
    cache_group: str = ""

    def parse(self, content: str, tokens: Sequence[TokenChoice] = ()) -> Verdict:
        """The judge's answer to this request, parsed strictly (`ProtocolError` if unusable);
        `tokens`, the answer's tokens with their alternatives, weigh a `binary` answer."""
        if self.answer == "binary":
            return parse_binary_answer(content, tokens, self.criteria)
        if self.answer == "category_pick":
            return parse_category_pick(content, tokens)
        if self.answer == "category":
            return parse_category(content)
        if self.answer == "rubric":
            return parse_rubric(content)
        if self.answer == "decisive":
            return parse_decisive(content, self.choices)
        if self.answer == "scaled":
            return parse_scaled_verdict(content, self.scale or 0.0)
        if self.criteria:
            return parse_criteria_verdict(content, self.criteria)
        return parse_verdict(content)

    def accepts(self, verdict: Verdict) -> bool:
        """Whether `verdict`, read back from the verdict store, is one a fresh answer to this
        request could have given: scores in range (a NaN is in none), the criteria asked
        for, a category of the taxonomy, reasoning within MAX_RATIONALE_CHARS."""
        if len(verdict.reasoning) > MAX_RATIONALE_CHARS:
            return False
        if self.answer == "scaled":
            return _within(verdict.score, 1.0, self.scale or 0.0)
        if self.answer == "rubric":
            criteria = verdict.fields.get("criteria")
            return isinstance(criteria, list) and bool(criteria)
        if self.answer == "decisive":
            return _chosen(verdict.fields.get("order"), self.choices)
        if not _within(verdict.score, 0.0, 1.0):
            return False
        if self.answer in ("category", "category_pick"):
            return verdict.fields.get("category") in CATEGORIES
        if self.criteria:
            scores = verdict.scores
            return set(scores) == set(self.criteria) and all(
                _within(value, 0.0, 1.0) for value in scores.values()
            )
        return True

    def key(self, judge: str) -> str:
        """sha256 of everything that decides the answer: the judge's identity (provider,
        model, server; see `Provider.identity`) and the request. Same key, same verdict.

        Each part is length-prefixed, so no two different requests hash the same bytes
        (and no JSON encoding of the large prompts is needed on this per-call path).
        """
        digest = hashlib.sha256()
        schema = _schema_text(self.response_schema)
        parts = [judge, self.prompt_version, self.answer, schema]
        parts += [repr(self.temperature), repr(self.max_tokens), repr(self.scale)]
        parts += [*self.criteria, "|"]
        if self.sample:  # absent for the first sample: its key is the one stores hold
            parts += ["sample", repr(self.sample)]
        for message in self.messages:
            parts += [message.role, message.content]
        for part in parts:
            data = part.encode()
            digest.update(b"%d:" % len(data))
            digest.update(data)
        return digest.hexdigest()


def _chosen(value: object, choices: tuple[int, ...]) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value in choices


def _within(value: object, low: float, high: float) -> bool:
    try:
        number_in(value, "score", low, high)
    except ProtocolError:
        return False
    return True


_SCHEMA_TEXT: dict[int, tuple[dict[str, Any] | None, str]] = {}


def _schema_text(schema: dict[str, Any] | None) -> str:
    """The canonical JSON of a response schema. Requests share a few schema objects, so it
    is computed once per object (held here, so its id cannot be reused by another)."""
    cached = _SCHEMA_TEXT.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    text = json.dumps(schema, sort_keys=True)
    if len(_SCHEMA_TEXT) < 1024:
        _SCHEMA_TEXT[id(schema)] = (schema, text)
    return text
