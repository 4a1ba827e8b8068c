"""The judge a scoring job's configuration names, and what it asks of its client: built by
the driver (api.py) and by each Ray worker (distributed/worker.py) from the same functions."""

from __future__ import annotations

from agentjudge.judge.batching import BatchSettings
from agentjudge.judge.price import given_rates
from agentjudge.judge.providers import JudgeSpec, Provider, build_provider
from agentjudge.judge.secrets import load_api_key
from agentjudge.judge.session import JudgeSettings
from agentjudge.scoring.config import ScoreConfig


def judge_provider(config: ScoreConfig, api_key: str | None = None) -> Provider:
    """The judge `config` names, its key from `api_key`, else the key file, else (in the
    provider) its environment variable on this machine."""
    if api_key is None and config.judge_api_key_file is not None:
        api_key = load_api_key(config.judge_api_key_file)
    spec = JudgeSpec(
        config.judge,
        config.judge_model,
        config.judge_url,
        api_key,
        config.judge_api_version,
        config.judge_reasoning_effort,
    )
    return build_provider(spec)


def judge_settings(
    config: ScoreConfig, concurrency: int, metric_labels: dict[str, str] | None = None
) -> JudgeSettings:
    """What a scoring job asks of its judge's client: `concurrency` calls at once (the
    job's `concurrency_limit`, or a Ray unit's share of it) and the call limits `config`
    sets."""
    return JudgeSettings(
        concurrency,
        config.call_limits(),
        ca_bundle=config.judge_ca_bundle,
        max_requests=config.max_judge_requests,
        metric_labels=metric_labels or {},
        batch=(
            BatchSettings(config.batch_poll_seconds, config.batch_fallback)
            if config.batch
            else None
        ),
        rates=given_rates(
            config.price_in, config.price_cache_read, config.price_cache_write, config.price_out
        ),
        max_cost_usd=config.max_cost,
    )
