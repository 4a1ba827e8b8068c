"""The Python API: what the CLI and the eval-hub adapter call."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from agentjudge.atif import Node
from agentjudge.collisions import InputFolder, Named, check_no_collision
from agentjudge.errors import UsageError
from agentjudge.files import check_writable, write_atomic
from agentjudge.judge import ClientStats, JudgeClient
from agentjudge.judge.batching import required_batch_api
from agentjudge.judge.price import Pricer, given_rates
from agentjudge.judge.providers import Provider
from agentjudge.judge.session import JudgeSession
from agentjudge.judge.store_path import default_store_path
from agentjudge.judge.telemetry import exporting
from agentjudge.report.results import results_document
from agentjudge.report.training import SELECTIONS, Selection, manifest_path, training_manifests
from agentjudge.results.score import JudgeSetup, ScoreResults
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria, resolve_criteria
from agentjudge.scoring.estimate import PlanFigures, TokenCounter, estimate_plan, judge_budget
from agentjudge.scoring.foretell import foretell_cost
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.judge_provider import judge_provider, judge_settings
from agentjudge.scoring.scored import JobResult

# (roots, steps to judge, the job) -> a callback taking the steps judged so far
Progress = Callable[[list[Node], int, JudgeClient], Callable[[int], None]]


@dataclass
class ScoreRun:
    """A finished scoring job: its results document (as written), the judge's counters
    and the configuration it ran with."""

    document: ScoreResults
    config: ScoreConfig
    result: JobResult
    stats: ClientStats
    output: Path
    judge_note: str | None  # the judge's note on its own verdicts (see `Provider.note`)
    # with a training threshold: the eligible and ineligible manifests (written beside)
    manifests: dict[Selection, dict[str, Any]] = field(default_factory=dict)


def score_trajectories(
    config: ScoreConfig,
    api_key: str | None = None,
    progress: Progress | None = None,
    on_loaded: Callable[[int], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    metric_labels: dict[str, str] | None = None,
    reads: Sequence[Named] = (),
    writes: Sequence[Named] = (),
) -> ScoreRun:
    """Run a scoring job and write its results file; raise `UsageError`/`InputError` for
    configuration or input that cannot run. `api_key` overrides the configured key source;
    `on_note` hears, once each, how the judge's requests adapted to its server;
    `metric_labels` go on every OpenTelemetry point (with the scoring mode); `reads` and
    `writes` are the caller's own files (a config file, an HTML report): none may collide."""
    started = datetime.now(UTC)
    output = Path(config.output)
    check_score_paths(config, reads, writes)
    check_writable(output)  # before any judge call: never judge work that cannot be saved
    if config.training_threshold is not None:
        for selection in SELECTIONS:
            check_writable(manifest_path(output, selection), "--output", "a training manifest")
    if config.batch and config.ray_address is not None:
        raise UsageError("--batch and --ray: a batch job runs on one machine; drop one of them")
    if config.ray_address is not None:  # before anything else: a missing extra is exit 3
        from agentjudge.distributed import require_ray

        require_ray()
    criteria = job_criteria(config)
    provider = judge_provider(config, api_key)
    judge_note = provider.note
    labels = {"atif.scoring_mode": config.scoring_mode, **(metric_labels or {})}
    settings = judge_settings(config, config.concurrency_limit, labels)
    # loaded before the verdict store is opened: a store that is a subagent's file is
    # refused by `check_reached_files`, not opened
    roots = load_roots(config)
    check_reached_files(config, roots, writes)
    if on_loaded is not None:
        on_loaded(len(roots))
    # after loading: the exporter's thread would make loading's workers use forkserver
    with (
        # the console's notes are quiet with --quiet: so are the rate-limit waits
        JudgeSession(settings, config.cache, config.cache_path, on_note, on_note) as session,
        exporting() as meter,
    ):
        client = session.client(provider, meter)
        job = ScoringJob(config, criteria, client)
        budgets = (config.max_input_tokens, config.max_judge_requests, config.max_cost)
        if any(budget is not None for budget in budgets):
            stored = partial(session.stored, provider)
            figures = estimate_plan(
                roots, config, criteria, stored, *counter(provider), budget=job.budget
            )
            check_budgets(config, figures, client.pricer)
        if progress is not None:
            job.on_step = progress(roots, job.steps_to_judge(roots), client)

        async def go() -> JobResult:
            # an embedded judge's server lives this long
            async with session.serving(client):
                return await job.run(roots)

        if config.judge_phase_timeout_seconds is not None:  # --judge-timeout starts now
            job.deadline = time.time() + config.judge_phase_timeout_seconds
        if config.ray_address is None:
            result = session.run(go())
        else:  # the same job on a Ray cluster (docs/distributed.md)
            from agentjudge.distributed.driver import run_on_ray

            store = session.store.path if session.store is not None else None
            result = run_on_ray(job, roots, store, api_key, job.on_step)
    judge_name = f"{provider.name}/{provider.model}"
    details: JudgeSetup = {
        "endpoint": provider.safe_endpoint,
        "requests": provider.settled(),
        "notes": client.notes,
    }
    document = results_document(
        result,
        config,
        criteria,
        judge_name,
        judge_note,
        client.stats,
        started,
        details,
        client.pricer.cost(client.stats.cost_usd),
    )
    manifests: dict[Selection, dict[str, Any]] = {}
    if config.training_threshold is not None:
        # eval-hub's S3 origin of its test data, when it says so, names the files
        manifests = training_manifests(document, os.environ)
        for selection, manifest in manifests.items():
            write_atomic(manifest_path(output, selection), manifest, what="a training manifest")
    write_atomic(output, document)
    return ScoreRun(document, config, result, client.stats, output, judge_note, manifests)


def score_outputs(config: ScoreConfig, writes: Sequence[Named] = ()) -> list[Named]:
    """Every file a job writes: its results, training manifests, verdict store and the
    caller's `writes`; the store first, so a collision names the other file's flag."""
    outputs = [Named("--output", config.output), *writes]
    if config.training_threshold is not None:
        outputs += [
            Named("the training manifest", manifest_path(Path(config.output), s), "--output")
            for s in SELECTIONS
        ]
    if config.cache:
        store = config.cache_path or default_store_path()
        # first: a collision is then said of the other file, whose flag is the usual fix
        outputs.insert(0, Named("the verdict store", store, "--cache"))
    return outputs


def check_reached_files(
    config: ScoreConfig, roots: Sequence[Node], writes: Sequence[Named] = ()
) -> None:
    """Refuse (exit 3) an output that would overwrite a file loading reached through a
    subagent reference or a continuation: known only once `roots` are loaded, so
    `check_score_paths` (which sees the named paths) cannot tell."""
    reached: dict[Path, Named] = {}
    for root in roots:
        for node in root.walk():
            what = "the trajectory file" if node.kind == "root" else "the subagent trajectory"
            for segment in node.segments:
                reached.setdefault(segment.file, Named(what, segment.file))
    check_no_collision(score_outputs(config, writes), reached.values())


def check_score_paths(
    config: ScoreConfig, reads: Sequence[Named] = (), writes: Sequence[Named] = ()
) -> None:
    """Refuse (exit 3) a job whose results, training manifests, verdict store or the
    caller's `writes` would overwrite one another or a file the job reads (docs/scoring.md)."""
    outputs = score_outputs(config, writes)
    named = [Path(p) for p in config.trajectory_path]
    inputs = [Named("the trajectory file", p) for p in named if not p.is_dir()]
    folders = [InputFolder("the trajectory folder", p) for p in named if p.is_dir()]
    rubric = config.rubric if isinstance(config.rubric, str) else None
    for what, value in (
        ("the reference registry", config.reference_registry_path),
        ("the rubric", rubric),
        ("the judge's API key file", config.judge_api_key_file),
        ("the judge's CA bundle", config.judge_ca_bundle),
    ):
        if value is not None:
            inputs.append(Named(what, value))
    check_no_collision(outputs, [*inputs, *reads], folders)


def job_criteria(config: ScoreConfig) -> Criteria:
    """The criteria a job scores on, resolved (and checked) before any judge call."""
    return resolve_criteria(
        config.scoring_mode,
        config.rubric,
        config.reference_registry_path,
        config.reference_rubric,
        config.benchmark_name,
    )


def plan_trajectories(config: ScoreConfig, api_key: str | None = None) -> PlanFigures:
    """What `score_trajectories(config)` would send, without sending anything: loads and
    validates the trajectories, plans every request, and looks each one up in the verdict
    store (when it exists: a dry run creates none)."""
    criteria = job_criteria(config)
    provider = judge_provider(config, api_key)
    if config.batch:  # refused as the run would refuse it: no foretold batch discount
        required_batch_api(provider)
    roots = load_roots(config)
    settings = judge_settings(config, config.concurrency_limit)
    # the store's look-ups only: one that does not exist yet is not made
    with JudgeSession(settings, config.cache, config.cache_path, create_store=False) as session:
        stored = partial(session.stored, provider)
        window = Pricer(provider.name, provider.model).context_window
        budget = judge_budget(config, provider, window)
        return estimate_plan(roots, config, criteria, stored, *counter(provider), budget=budget)


def counter(provider: Provider) -> tuple[TokenCounter, str] | tuple[()]:
    """`estimate_plan`'s token counter and its name: the judge's own tokenizer when its
    provider knows it, else none (the plan's estimate)."""
    return provider.token_counter() or ()


def job_pricer(config: ScoreConfig, api_key: str | None = None) -> Pricer:
    """How the job's judge is priced: the user's prices (`price_*`), else the database's."""
    provider = judge_provider(config, api_key)
    rates = given_rates(
        config.price_in, config.price_cache_read, config.price_cache_write, config.price_out
    )
    return Pricer(provider.name, provider.model, rates)


def check_budgets(config: ScoreConfig, figures: PlanFigures, pricer: Pricer) -> None:
    """`UsageError`, with the figures, when the plan exceeds `max_input_tokens`,
    `max_judge_requests` or (foretold with `pricer`'s rates) `max_cost`; categorizations
    left out: they depend on scores. `max_cost` with no price for the judge is refused."""
    if config.max_cost is not None:
        check_cost(config.max_cost, figures, pricer, batch=config.batch)
    tokens, calls = figures.input_tokens_to_send, figures.calls_to_send
    if config.max_input_tokens is not None and tokens > config.max_input_tokens:
        raise UsageError(
            f"the job would send about {tokens:,} input tokens ({calls:,} judge calls, "
            f"categorizations not counted), over max_input_tokens={config.max_input_tokens:,}; "
            "raise it (--set max_input_tokens=N), or score fewer trajectories (see --dry-run)"
        )
    if config.max_judge_requests is not None and calls > config.max_judge_requests:
        raise UsageError(
            f"the job would make {calls:,} judge calls (categorizations not counted), over "
            f"max_judge_requests={config.max_judge_requests:,}; raise it "
            "(--set max_judge_requests=N), or score fewer trajectories (see --dry-run)"
        )


def check_cost(max_cost: float, figures: PlanFigures, pricer: Pricer, batch: bool = False) -> None:
    """`UsageError` when the plan's foretold cost is above `max_cost` (USD), or when the
    judge has no price to foretell it with (a price is never guessed)."""
    rates = pricer.rates()
    if rates is None:
        raise UsageError(
            f"--max-cost needs a price for the judge, and {pricer.reason}; give your own "
            "with --price-in and --price-out (USD per million tokens)"
        )
    foretold = foretell_cost(figures, rates, pricer.caches, batch=batch)
    if foretold.usd > max_cost:
        raise UsageError(
            f"the job would cost about ${foretold.usd:,.4f} ({figures.calls_to_send:,} judge "
            f"calls, every answer at its full length, categorizations not counted; "
            f"{pricer.source}), over --max-cost {max_cost:g}; raise it, or score fewer "
            "trajectories (see --dry-run)"
        )
