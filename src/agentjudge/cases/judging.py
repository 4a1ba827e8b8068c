"""Which judge grades the cases, and the judge calls themselves.

The judge is chosen as graph-agents-cli chooses it: `--judge-provider/--judge-model`, then
`eval_config.yaml` `judge:`, then `JUDGE_MODEL_PROVIDER`/`JUDGE_MODEL_NAME` (environment
or the project's `.env`), then the agent's `MODEL_*`. Calls go through agentjudge's judge
client (retries, deadlines, concurrency, verdict store, token accounting).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentjudge.cases.gate import MetricResult
from agentjudge.errors import UsageError
from agentjudge.judge.providers import (
    PROVIDERS,
    FakeJudge,
    Hints,
    JudgeSpec,
    Provider,
    build_provider,
)
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.scaled import case_score_schema

if TYPE_CHECKING:
    from agentjudge.judge.client import JudgeClient

PROMPT_VERSION = "agentjudge-cases-v1"
HINTS = Hints(
    url="JUDGE_BASE_URL (environment or the project's .env)",
    model="--judge-model, judge.model in eval_config.yaml, or JUDGE_MODEL_NAME",
    key="JUDGE_API_KEY",
)


@dataclass(frozen=True, slots=True)
class JudgeIdentity:
    """The judge's provider and model as resolved (either may be unknown: None)."""

    provider: str | None
    model: str | None


def resolve_identity(
    flag_provider: str | None,
    flag_model: str | None,
    config_provider: str | None,
    config_model: str | None,
    env: dict[str, str],
) -> JudgeIdentity:
    """Flag, then config, then `JUDGE_MODEL_*`, then the agent's `MODEL_*`."""
    provider = (
        flag_provider
        or config_provider
        or env.get("JUDGE_MODEL_PROVIDER")
        or env.get("MODEL_PROVIDER")
        or None
    )
    model = flag_model or config_model or env.get("JUDGE_MODEL_NAME") or env.get("MODEL_NAME")
    return JudgeIdentity(provider, model or None)


def is_fake(provider: str | None) -> bool:
    """Whether `provider` names the deterministic fake judge (any case)."""
    return (provider or "").strip().lower() == "fake"


def build_judge(identity: JudgeIdentity, env: dict[str, str]) -> Provider:
    """The provider for `identity`: its URL from `JUDGE_BASE_URL` (else the provider's
    default; `openai-compatible`: `MODEL_BASE_URL`), its key from `JUDGE_API_KEY` (else the
    provider's own variable: `OPENAI_API_KEY`, ...; `openai-compatible`: `MODEL_API_KEY`),
    never written anywhere; an unusable choice is a usage error saying the fix."""
    name = (identity.provider or "").strip().lower()
    if not name:
        raise UsageError(
            "no judge chosen: pass --judge-provider, set judge.provider in eval_config.yaml, "
            f"or set JUDGE_MODEL_PROVIDER ({', '.join(PROVIDERS)})"
        )
    if name == "fake":
        return FakeJudge(identity.model or "fake-judge", answers="scale_max")
    if name not in PROVIDERS:
        raise UsageError(
            f"judge provider {identity.provider!r} is not supported: use one of "
            f"{', '.join(PROVIDERS)} (any OpenAI-compatible server works with "
            "openai-compatible and JUDGE_BASE_URL)"
        )
    url = env.get("JUDGE_BASE_URL") or None
    key = env.get("JUDGE_API_KEY") or None
    if name == "openai-compatible":
        # the agent's own server and key: a hosted provider's URL and key never pair with
        # another's (MODEL_BASE_URL is not where an OpenAI key should go)
        url = url or env.get("MODEL_BASE_URL") or None
        key = key or env.get("MODEL_API_KEY") or None
    spec = JudgeSpec(name, identity.model, url, key)
    return build_provider(spec, env, HINTS)


def judge_request(prompt: str, scale: float) -> JudgeRequest:
    """One judge call: the rendered prompt, answered as `{reasoning, score}` on 1..scale."""
    return JudgeRequest(
        messages=(Message("user", prompt),),
        prompt_version=PROMPT_VERSION,
        response_schema=case_score_schema(scale),
        answer="scaled",
        scale=scale,
    )


async def run_judges(
    client: JudgeClient,
    items: list[tuple[str, JudgeRequest]],
    on_done: Callable[[], None] | None = None,
) -> dict[str, MetricResult]:
    """Send every `(item id, request)` concurrently (the client bounds concurrency)."""

    async def one(item_id: str, request: JudgeRequest) -> tuple[str, MetricResult]:
        outcome = await client.judge(request)
        if on_done is not None:
            on_done()
        if outcome.verdict is None:
            what = "unusable judge answer" if outcome.protocol else "judge call failed"
            return item_id, MetricResult(None, error=f"{what}: {outcome.explained}")
        verdict = outcome.verdict
        return item_id, MetricResult(verdict.score, verdict.reasoning)

    pairs = await asyncio.gather(*(one(item_id, request) for item_id, request in items))
    return dict(pairs)
