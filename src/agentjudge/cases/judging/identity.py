"""The judge a grading run uses, as resolved, and what its judging phase takes and gives.

Kept apart from `judge_calls` and `runner`, which load the judge providers and their HTTP
client: a run whose cases have no judge or custom metric never imports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentjudge.cases.judging.metric_result import MetricResult

if TYPE_CHECKING:
    from agentjudge.judge.price import Rates
    from agentjudge.judge.stats import ClientStats
    from agentjudge.results.score import JudgeCost


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


@dataclass(frozen=True, slots=True)
class JudgingOptions:
    """How the phase runs: `agentjudge grade`'s judge flags."""

    timeout: float  # the whole phase (--judge-timeout)
    call_timeout: float  # one attempt of one call (--judge-call-timeout)
    ca_bundle: str | None  # CA certificates (PEM) of an HTTPS judge
    concurrency: int
    use_store: bool  # read and write the verdict store
    store_path: str | None
    quiet: bool = False  # --quiet: no line on calls waiting out rate limits
    batch: bool = False  # --batch: through the judge's batch API
    batch_poll_seconds: float = 30.0
    batch_fallback: str = "batch"  # what 3 batches did not answer becomes: an error, or online
    rates: Rates | None = None  # the user's prices (--price-*), over the price database's


@dataclass(frozen=True, slots=True)
class Judged:
    """What the phase returns: results by item id, and the judge as it named itself."""

    results: dict[str, MetricResult]
    judge: JudgeIdentity
    stats: ClientStats | None = None  # None when no judge was called
    judge_note: str | None = None  # what the judge says of its own verdicts
    cost: JudgeCost | None = None  # what the judge's calls cost; None when none was called
