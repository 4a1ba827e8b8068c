"""Judge providers, registered in one table; an unknown name lists the valid ones."""

from __future__ import annotations

from agentjudge.errors import UsageError
from agentjudge.judge.model_cache import ensure_model
from agentjudge.judge.providers.base import Answer, Provider, RetryDecision
from agentjudge.judge.providers.fake import FAKE_NOTICE, FakeJudge
from agentjudge.judge.providers.local import LOCAL_NOTICE, LocalJudge, require_extra
from agentjudge.judge.providers.openai_compatible import OpenAICompatible

PROVIDERS: dict[str, type[OpenAICompatible]] = {
    "openai-compatible": OpenAICompatible,
    "fake": FakeJudge,
    "local": LocalJudge,
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
        # `model` is not checked: the embedded judge has one model, and callers that
        # resolve a model name from the environment pass whatever they found
        if url:
            raise UsageError(
                "--judge-url does not apply to --judge local (the embedded judge runs its own "
                "server): drop it, or use --judge openai-compatible"
            )
        require_extra()
        return LocalJudge(ensure_model())
    valid = ", ".join(sorted(PROVIDERS))
    raise UsageError(f"unknown judge {kind!r}: use one of {valid}")


__all__ = [
    "FAKE_NOTICE",
    "LOCAL_NOTICE",
    "PROVIDERS",
    "Answer",
    "FakeJudge",
    "LocalJudge",
    "OpenAICompatible",
    "Provider",
    "RetryDecision",
    "build_provider",
]
