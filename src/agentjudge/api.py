"""The Python API: what the CLI and the eval-hub adapter call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentjudge.atif import Node
from agentjudge.judge import ClientStats, JudgeClient
from agentjudge.judge.providers import JudgeSpec, build_provider
from agentjudge.judge.running import run_judging
from agentjudge.judge.secrets import load_api_key
from agentjudge.judge.store import VerdictStore, default_store_path
from agentjudge.judge.telemetry import exporting
from agentjudge.report.files import check_writable, write_atomic
from agentjudge.report.results import results_document
from agentjudge.report.training import SELECTIONS, Selection, manifest_path, training_manifests
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.job import JobResult, ScoringJob, load_roots

# (roots, steps to judge, the job) -> a callback taking the steps judged so far
Progress = Callable[[list[Node], int, JudgeClient], Callable[[int], None]]


@dataclass
class ScoreRun:
    """A finished scoring job: its results document (as written) and the judge's counters."""

    document: dict[str, Any]
    result: JobResult
    stats: ClientStats
    output: Path
    notice: str | None
    # with a training threshold: the eligible and ineligible manifests (written beside)
    manifests: dict[Selection, dict[str, Any]] = field(default_factory=dict)


def score_trajectories(
    config: ScoreConfig,
    api_key: str | None = None,
    progress: Progress | None = None,
    on_loaded: Callable[[int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    metric_labels: dict[str, str] | None = None,
) -> ScoreRun:
    """Run a scoring job and write its results file; raise `UsageError`/`InputError` for
    configuration or input that cannot run. `api_key` overrides the configured key source;
    `on_note` hears, once each, how the judge's requests adapted to its server;
    `metric_labels` go on every OpenTelemetry point (with the scoring mode)."""
    started = datetime.now(UTC)
    output = Path(config.output)
    check_writable(output)  # before any judge call: never judge work that cannot be saved
    if config.training_threshold is not None:
        for selection in SELECTIONS:
            check_writable(manifest_path(output, selection), "--output", "a training manifest")
    criteria = resolve_criteria(
        config.scoring_mode,
        config.rubric,
        config.reference_registry_path,
        config.reference_rubric,
        config.benchmark_name,
    )
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
    provider = build_provider(spec)
    notice = provider.notice
    concurrency, timeout = config.concurrency_limit, config.judge_timeout_seconds
    if provider.max_concurrency is not None:  # more calls than a server takes only queue
        concurrency = min(concurrency, provider.max_concurrency)
    if provider.min_timeout is not None:  # e.g. a judge on this machine's CPU
        timeout = max(timeout, provider.min_timeout)
    store = VerdictStore(config.cache_path or default_store_path()) if config.cache else None
    damage = store.damage_line() if store is not None else None
    if damage is not None and on_note is not None:
        on_note(damage)
    try:
        roots = load_roots(config)
        if on_loaded is not None:
            on_loaded(len(roots))
        # after loading: the exporter's thread would make loading's workers use forkserver
        with exporting() as meter:
            client = JudgeClient(
                provider,
                concurrency=concurrency,
                timeout=timeout,
                max_attempts=config.judge_max_attempts,
                retry_budget=config.judge_retry_budget_seconds,
                initial_backoff=config.judge_initial_backoff_seconds,
                max_requests=config.max_judge_requests,
                store=store,
                meter=meter,
                ca_bundle=config.judge_ca_bundle,
                on_note=on_note,
                metric_labels={"atif.scoring_mode": config.scoring_mode, **(metric_labels or {})},
            )
            job = ScoringJob(config, criteria, client)
            if progress is not None:
                job.on_step = progress(roots, job.steps_to_judge(roots), client)

            async def go() -> JobResult:
                # an embedded judge's server lives this long
                async with provider.serving(), client:
                    return await job.run(roots)

            result = run_judging(go())
    finally:
        if store is not None:
            store.close()
    judge_name = f"{provider.name}/{provider.model}"
    details = {
        "endpoint": provider.safe_endpoint,
        "requests": provider.settled(),
        "notes": client.notes,
    }
    document = results_document(
        result, config, criteria, judge_name, notice, client.stats, started, details
    )
    manifests: dict[Selection, dict[str, Any]] = {}
    if config.training_threshold is not None:
        manifests = training_manifests(document, list(config.trajectory_path))
        for selection, manifest in manifests.items():
            write_atomic(manifest_path(output, selection), manifest, what="a training manifest")
    write_atomic(output, document)
    return ScoreRun(document, result, client.stats, output, notice, manifests)
