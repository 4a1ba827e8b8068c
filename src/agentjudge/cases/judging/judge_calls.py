"""Which judge grades the cases, and the judge calls themselves.

The judge is chosen as graph-agents-cli chooses it: `--judge-provider/--judge-model`, then
`eval_config.yaml` `judge:`, then `JUDGE_MODEL_PROVIDER`/`JUDGE_MODEL_NAME` (environment
or the project's `.env`), then the agent's `MODEL_*`. Calls go through agentjudge's judge
client (retries, deadlines, concurrency, verdict store, token accounting).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agentjudge.cases.judging.identity import JudgeIdentity
from agentjudge.cases.judging.metric_result import MetricResult
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
    from agentjudge.judge.client import JudgeClient, JudgeOutcome

PROMPT_VERSION = "agentjudge-cases-v2"  # v2: task_success judges against the reference
HINTS = Hints(
    url="JUDGE_BASE_URL or OPENAI_BASE_URL (environment or the project's .env)",
    model="--judge-model, judge.model in eval_config.yaml, or JUDGE_MODEL_NAME",
    key="JUDGE_API_KEY",
)


def speaks(provider: str | None) -> bool:
    """Whether agentjudge calls `provider`'s judges itself (else the project's own
    `get_judge_model()` does); no provider at all is a usage error later, not the project's."""
    name = (provider or "").strip().lower()
    return not name or name in PROVIDERS


def is_fake(provider: str | None) -> bool:
    """Whether `provider` names the deterministic fake judge (any case)."""
    return (provider or "").strip().lower() == "fake"


# graph-agents-cli's scaffold (app/app_utils/model.py): each provider's key variable, and
# the providers that speak the OpenAI API (the only ones reasoning settings apply to)
SCAFFOLD_KEYS = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GOOGLE_API_KEY",
    "openai-compatible": "MODEL_API_KEY",
}
OPENAI_API_PROVIDERS = frozenset({"openai", "openai-compatible"})


def judge_spec(identity: JudgeIdentity, env: Mapping[str, str]) -> JudgeSpec:
    """The judge `identity` names, resolved from `env` (the process environment over the
    project's `.env`) as the scaffold's `get_judge_model()` resolves it:
    - key: `JUDGE_API_KEY`, else the provider's variable (`OPENAI_API_KEY`,
      `ANTHROPIC_API_KEY`, `GOOGLE_API_KEY`; `MODEL_API_KEY` for `openai-compatible`);
    - URL: `JUDGE_BASE_URL`, else `OPENAI_BASE_URL` for the OpenAI-API providers (the
      OpenAI SDK's variable), else `MODEL_BASE_URL` for `openai-compatible`, else the
      provider's default;
    - reasoning effort: `JUDGE_REASONING_EFFORT`, else the agent's `MODEL_REASONING_EFFORT`
      when both speak the OpenAI API.
    Unlike the scaffold, `JUDGE_BASE_URL` is honoured for every provider (the scaffold reads
    it for `openai-compatible` only), and the agent's key is never sent to another
    provider's judge."""
    name = (identity.provider or "").strip().lower()
    agent = (env.get("MODEL_PROVIDER") or "openai").strip().lower()
    # the scaffold's variable for its providers; ours (azure) find their own in build_provider
    own = SCAFFOLD_KEYS.get(name)
    key = env.get("JUDGE_API_KEY") or (env.get(own) if own else None) or None
    url = env.get("JUDGE_BASE_URL") or None
    if url is None and name in OPENAI_API_PROVIDERS:
        url = env.get("OPENAI_BASE_URL") or None
    if url is None and name == "openai-compatible":
        url = env.get("MODEL_BASE_URL") or None
    effort = env.get("JUDGE_REASONING_EFFORT") or None
    if effort is None and name in OPENAI_API_PROVIDERS and agent in OPENAI_API_PROVIDERS:
        effort = env.get("MODEL_REASONING_EFFORT") or None
    return JudgeSpec(name, identity.model, url, key, reasoning_effort=effort)


def build_judge(identity: JudgeIdentity, env: Mapping[str, str]) -> Provider:
    """The provider for `identity` (see `judge_spec`); the key is never written anywhere;
    an unusable choice is a usage error saying the fix."""
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
    return build_provider(judge_spec(identity, env), env, HINTS)


def judge_request(prompt: str, scale: float, temperature: float = 0.0) -> JudgeRequest:
    """One judge call: the rendered prompt, answered as `{reasoning, score}` on 1..scale."""
    return JudgeRequest(
        messages=(Message("user", prompt),),
        prompt_version=PROMPT_VERSION,
        response_schema=case_score_schema(scale),
        temperature=temperature,
        answer="scaled",
        scale=scale,
    )


# The failures of a project model's call whose message is the model's own exception, as the
# worker caught it: an HTTP status it carried (or none, taken as a 502), or a lost connection.
_WORKER_FAILURES = ("http_", "transport_error")


def failure_reason(outcome: JudgeOutcome, own_model: bool) -> str:
    """A judge item's error when `outcome` has no verdict: worded as graph-agents-cli words
    it where it words it, then ours in parentheses, else ours alone.

    graph-agents-cli records a failed item as `Type: message`: the exception the project's
    model raised (`own_model`: the project's `get_judge_model()` answered), or the error its
    runner raises on a reply with no score. Ours says what kind of failure it was
    (`judge call failed: http_502`, `unusable judge answer: score_missing`): `RuntimeError:
    rate limited (judge call failed: http_502)`. Failures graph-agents-cli has no words for
    (a timeout, a score out of the scale, a judge it does not call) keep ours alone.
    """
    what = "unusable judge answer" if outcome.protocol else "judge call failed"
    worker_failure = str(outcome.error).startswith(_WORKER_FAILURES)
    if own_model and not outcome.protocol and worker_failure and outcome.message:
        # the message is the model's exception: said once, as theirs
        return f"{outcome.message} ({what}: {outcome.error})"
    ours = f"{what}: {outcome.explained}"
    return f"{outcome.reply_error} ({ours})" if outcome.reply_error else ours


async def run_judges(
    client: JudgeClient,
    items: list[tuple[str, JudgeRequest]],
    on_done: Callable[[], None] | None = None,
    own_model: bool = False,
) -> dict[str, MetricResult]:
    """Send every `(item id, request)` concurrently (the client bounds concurrency);
    `own_model`: the client's provider is the project's own judge model."""

    async def one(item_id: str, request: JudgeRequest) -> tuple[str, MetricResult]:
        outcome = await client.judge(request)
        if on_done is not None:
            on_done()
        if outcome.verdict is None:
            return item_id, MetricResult(None, error=failure_reason(outcome, own_model))
        verdict = outcome.verdict
        return item_id, MetricResult(verdict.score, verdict.reasoning)

    pairs = await asyncio.gather(*(one(item_id, request) for item_id, request in items))
    return dict(pairs)
