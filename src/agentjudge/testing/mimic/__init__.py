"""The APIs the test judge server can mimic, each as its provider documents it.

A dialect says where the API listens, which requests it refuses and with what error, how a
request reads into the scripted judge's `Prompt`, and how its replies look, so a judge
client tested against the server is tested against the API it is written for.
"""

from __future__ import annotations

from collections.abc import Iterable

from agentjudge.testing.mimic.anthropic import Anthropic
from agentjudge.testing.mimic.azure import Azure
from agentjudge.testing.mimic.base import Dialect, Refusal, Route
from agentjudge.testing.mimic.gemini import Gemini
from agentjudge.testing.mimic.ollama import Ollama
from agentjudge.testing.mimic.openai import OpenAI
from agentjudge.testing.mimic.permissive import Permissive
from agentjudge.testing.mimic.vllm import VLLM

DIALECTS: dict[str, type[Dialect]] = {
    "openai": OpenAI,
    "azure": Azure,
    "anthropic": Anthropic,
    "gemini": Gemini,
    "vllm": VLLM,
    "ollama": Ollama,
}


def dialect_for(
    mimic: str | None,
    api_key: str | None = None,
    reasoning_models: Iterable[str] = (),
    models: Iterable[str] | None = None,
) -> Dialect:
    """The dialect named `mimic` (a key of `DIALECTS`), or the permissive one for None."""
    if mimic is None:
        return Permissive(api_key, reasoning_models, models)
    if mimic not in DIALECTS:
        raise ValueError(f"mimic must be one of {', '.join(DIALECTS)} (or None), not {mimic!r}")
    return DIALECTS[mimic](api_key, reasoning_models, models)


__all__ = ["DIALECTS", "Dialect", "Refusal", "Route", "dialect_for"]
