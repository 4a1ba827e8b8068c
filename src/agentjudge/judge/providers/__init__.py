"""Judge providers, registered in one table: what each needs, where its defaults come from.

`build_provider` turns a `JudgeSpec` (from flags, a config file or a project's settings)
into a provider, filling the URL and the key from the provider's own conventional
environment variables, and says in one line what is missing and how to give it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from urllib.parse import unquote, urlsplit, urlunsplit

from agentjudge.errors import UsageError, clip
from agentjudge.judge.model_cache import ensure_model
from agentjudge.judge.providers.anthropic import ANTHROPIC_URL, Anthropic
from agentjudge.judge.providers.base import Answer, Provider, RetryDecision
from agentjudge.judge.providers.fake import FAKE_NOTE, FakeJudge
from agentjudge.judge.providers.gemini import GEMINI_URL, Gemini
from agentjudge.judge.providers.local import LOCAL_NOTE, LocalJudge, require_extra
from agentjudge.judge.providers.openai import OPENAI_URL, AzureOpenAI, OpenAI
from agentjudge.judge.providers.openai_compatible import OpenAICompatible
from agentjudge.judge.secrets import API_KEY_ENV, redact, redact_url


@dataclass(frozen=True)
class JudgeSpec:
    """Which judge to use, as the user gave it (unset fields come from the environment)."""

    kind: str
    model: str | None = None
    url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    api_version: str | None = None
    reasoning_effort: str | None = None


@dataclass(frozen=True)
class Hints:
    """How the user gives a judge's URL, model and key, for the messages that ask for one."""

    url: str = "--judge-url"
    model: str = "--judge-model"
    key: str = f"judge_api_key_file (--set judge_api_key_file=FILE) or {API_KEY_ENV}"


@dataclass(frozen=True)
class ProviderInfo:
    """What a provider needs and where its defaults come from."""

    make: Callable[[JudgeSpec, str, str | None], Provider]  # (spec, url, key)
    summary: str
    default_url: str | None = None
    url_env: tuple[str, ...] = ()
    key_env: tuple[str, ...] = ()
    needs_key: bool = False


AZURE_VERSION_ENV = ("OPENAI_API_VERSION", "AZURE_OPENAI_API_VERSION")


def _azure(spec: JudgeSpec, url: str, key: str | None) -> Provider:
    return AzureOpenAI(
        url,
        spec.model or "",
        key,
        api_version=spec.api_version,
        reasoning_effort=spec.reasoning_effort,
    )


PROVIDERS: dict[str, ProviderInfo] = {
    "openai-compatible": ProviderInfo(
        lambda spec, url, key: OpenAICompatible(
            url, spec.model or "", key, reasoning_effort=spec.reasoning_effort
        ),
        "any server of /v1/chat/completions: vLLM, Ollama, a LiteLLM proxy, llama.cpp...",
    ),
    "openai": ProviderInfo(
        lambda spec, url, key: OpenAI(
            url, spec.model or "", key, reasoning_effort=spec.reasoning_effort
        ),
        "OpenAI's Chat Completions (reasoning models included)",
        OPENAI_URL,
        ("OPENAI_BASE_URL",),
        ("OPENAI_API_KEY",),
        needs_key=True,
    ),
    "azure": ProviderInfo(
        _azure,
        "Azure OpenAI: --judge-url is the resource, --judge-model the deployment",
        None,
        ("AZURE_OPENAI_ENDPOINT",),
        ("AZURE_OPENAI_API_KEY",),
        needs_key=True,
    ),
    "anthropic": ProviderInfo(
        lambda spec, url, key: Anthropic(url, spec.model or "", key),
        "Anthropic's Messages API",
        ANTHROPIC_URL,
        ("ANTHROPIC_BASE_URL",),
        ("ANTHROPIC_API_KEY",),
        needs_key=True,
    ),
    "gemini": ProviderInfo(
        lambda spec, url, key: Gemini(
            url, spec.model or "", key, reasoning_effort=spec.reasoning_effort
        ),
        "Google Gemini through its OpenAI-compatible endpoint",
        GEMINI_URL,
        (),
        ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        needs_key=True,
    ),
    "fake": ProviderInfo(
        lambda spec, url, key: FakeJudge(spec.model or "fake-judge"),
        "deterministic answers in process, for plumbing: not a quality signal",
    ),
    "local": ProviderInfo(
        lambda spec, url, key: LocalJudge(ensure_model()),
        "the embedded judge: a small model on this CPU (agentjudge[local])",
    ),
}


def build_provider(
    spec: JudgeSpec, environ: Mapping[str, str] | None = None, hints: Hints = Hints()
) -> Provider:
    """The provider `spec` names, its URL and key completed from `environ`; a judge that
    cannot work is a `UsageError` saying what to give."""
    environ = os.environ if environ is None else environ
    info = PROVIDERS.get(spec.kind)
    if info is None:
        raise UsageError(
            f"unknown judge {clip(repr(spec.kind))}: use one of {', '.join(PROVIDERS)}"
        )
    if spec.kind == "fake":
        return info.make(spec, "", None)
    if spec.kind == "local":
        # `model` is not checked: the embedded judge has one model, and callers that
        # resolve a model name from the environment pass whatever they found
        if spec.url:
            raise UsageError(
                f"{hints.url} does not apply to the local judge (the embedded judge runs its "
                "own server): drop it, or use openai-compatible"
            )
        require_extra()
        return info.make(spec, "", None)
    url = spec.url or _first(environ, info.url_env) or info.default_url
    if not url:
        where = " or ".join((hints.url, *info.url_env))
        example = (
            "https://NAME.openai.azure.com" if spec.kind == "azure" else "http://127.0.0.1:8000/v1"
        )
        raise UsageError(
            f"the {spec.kind} judge needs its server's URL: give {where} (e.g. {example})"
        )
    if not spec.model:
        raise UsageError(f"the {spec.kind} judge needs a model: give {hints.model}")
    key = spec.api_key or _first(environ, (API_KEY_ENV, *info.key_env))
    url, url_key = checked_url(url, hints.url)
    if url_key is not None:
        if key is not None:
            raise UsageError(
                f"{hints.url}: the judge URL carries credentials (user:password@) and an API "
                "key is given too; keep one: drop the credentials from the URL, or the key"
            )
        key = url_key
    if key is None and info.needs_key:
        where = " or ".join((hints.key, *info.key_env))
        raise UsageError(f"the {spec.kind} judge needs an API key: set {where}")
    if spec.kind == "azure" and not spec.api_version:
        spec = replace(spec, api_version=_first(environ, AZURE_VERSION_ENV))
    return info.make(spec, url, key)


def checked_url(url: str, flag: str = "--judge-url") -> tuple[str, str | None]:
    """`url` checked (http or https, a host, a port in range) and without its user info,
    plus the credential that user info carried (the password, else the user name): it is
    the API key, sent the provider's way, so it never travels in the URL itself."""
    try:
        parts = urlsplit(url)  # raises for an IPv6 host without its closing bracket
        port = parts.port  # raises for a port out of range or not a number
    except ValueError:
        # `redact` masks user info without parsing the URL, which just failed
        raise UsageError(
            f"{flag}: {clip(redact(url), 100)} is not a valid URL (the port must be a number "
            "from 1 to 65535; an IPv6 host is written in brackets, http://[::1]:8000/v1)"
        ) from None
    shown = clip(redact_url(url), 100)
    if parts.scheme.lower() not in ("http", "https"):
        raise UsageError(
            f"{flag}: {shown} must start with http:// or https:// (e.g. http://127.0.0.1:8000/v1)"
        )
    if not parts.hostname:
        raise UsageError(f"{flag}: {shown} has no host (e.g. http://127.0.0.1:8000/v1)")
    if port == 0:
        raise UsageError(f"{flag}: {shown}: the port must be a number from 1 to 65535")
    if "@" not in parts.netloc:
        return url, None
    credential = unquote(parts.password or parts.username or "") or None
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment)), credential


def _first(environ: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    return next((environ[name] for name in names if environ.get(name)), None)


__all__ = [
    "FAKE_NOTE",
    "LOCAL_NOTE",
    "PROVIDERS",
    "Answer",
    "AzureOpenAI",
    "FakeJudge",
    "Hints",
    "JudgeSpec",
    "LocalJudge",
    "OpenAI",
    "OpenAICompatible",
    "Provider",
    "ProviderInfo",
    "RetryDecision",
    "build_provider",
    "checked_url",
]
