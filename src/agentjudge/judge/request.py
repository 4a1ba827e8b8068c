"""What is sent to a judge, built apart from sending it (so it can be keyed, cached, printed)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from agentjudge.judge.verdict import (
    Verdict,
    parse_category,
    parse_criteria_verdict,
    parse_verdict,
)

Role = Literal["system", "user", "assistant"]
AnswerKind = Literal["score", "category"]


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One judge call: messages, the prompt version that made them, and the answer's schema."""

    messages: tuple[Message, ...]
    prompt_version: str
    response_schema: dict[str, Any] | None = None
    temperature: float = 0.0
    max_tokens: int = 512
    answer: AnswerKind = "score"
    criteria: tuple[str, ...] = ()
    tag: str = field(default="", compare=False)

    def parse(self, content: str) -> Verdict:
        """The judge's answer to this request, parsed strictly (`ProtocolError` if unusable)."""
        if self.answer == "category":
            return parse_category(content)
        if self.criteria:
            return parse_criteria_verdict(content, self.criteria)
        return parse_verdict(content)

    def key(self, provider: str, model: str) -> str:
        """sha256 of everything that decides the answer: same key, same verdict."""
        canonical = json.dumps(
            {
                "provider": provider,
                "model": model,
                "prompt_version": self.prompt_version,
                "messages": [[m.role, m.content] for m in self.messages],
                "schema": self.response_schema,
                "temperature": self.temperature,
                "max_tokens": self.max_tokens,
                "answer": self.answer,
                "criteria": self.criteria,
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()
