"""What is sent to a judge, built apart from sending it (so it can be keyed, cached, printed)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["system", "user", "assistant"]


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
    tag: str = field(default="", compare=False)

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
            },
            sort_keys=True,
            separators=(",", ":"),
        )
        return hashlib.sha256(canonical.encode()).hexdigest()
