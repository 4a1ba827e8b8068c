"""Judge providers, registered in one table; an unknown name lists the valid ones."""

from __future__ import annotations

from agentjudge.judge.providers.base import Answer, Provider, RetryDecision
from agentjudge.judge.providers.fake import FAKE_NOTICE, FakeJudge
from agentjudge.judge.providers.openai_compatible import OpenAICompatible

PROVIDERS: dict[str, type[OpenAICompatible]] = {
    "openai-compatible": OpenAICompatible,
    "fake": FakeJudge,
}

__all__ = [
    "FAKE_NOTICE",
    "PROVIDERS",
    "Answer",
    "FakeJudge",
    "OpenAICompatible",
    "Provider",
    "RetryDecision",
]
