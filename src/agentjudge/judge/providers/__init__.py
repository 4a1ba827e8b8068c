"""Judge providers, registered in one table; an unknown name lists the valid ones."""

from __future__ import annotations

from agentjudge.errors import UsageError
from agentjudge.judge.providers.base import Answer, Provider, RetryDecision
from agentjudge.judge.providers.fake import FAKE_NOTICE, FakeJudge
from agentjudge.judge.providers.openai_compatible import OpenAICompatible

PROVIDERS: dict[str, type[OpenAICompatible]] = {
    "openai-compatible": OpenAICompatible,
    "fake": FakeJudge,
}


def build_provider(
    kind: str, url: str | None = None, model: str | None = None, api_key: str | None = None
) -> OpenAICompatible:
    """The provider named `kind`; an unknown name is a usage error listing the valid ones."""
    if kind == "fake":
        return FakeJudge()
    if kind == "openai-compatible":
        if not url or not model:
            raise UsageError("the openai-compatible judge needs --judge-url and --judge-model")
        return OpenAICompatible(url, model, api_key=api_key)
    if kind == "local":
        raise UsageError(
            "the embedded judge (--judge local) is not available yet; use --judge-url and "
            "--judge-model with an OpenAI-compatible server, or --judge fake"
        )
    valid = ", ".join(sorted([*PROVIDERS, "local"]))
    raise UsageError(f"unknown judge {kind!r}: use one of {valid}")


__all__ = [
    "FAKE_NOTICE",
    "PROVIDERS",
    "Answer",
    "FakeJudge",
    "OpenAICompatible",
    "Provider",
    "RetryDecision",
    "build_provider",
]
