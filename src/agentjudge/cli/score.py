"""`agentjudge score`: score ATIF trajectories step by step with an LLM judge."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentjudge.atif import Node
from agentjudge.cli.options import (
    BenchmarkName,
    BootstrapResamples,
    BootstrapSeed,
    CachePath,
    CompletionThreshold,
    ConcurrencyLimit,
    ConfigFile,
    ContextSteps,
    DecisiveRule,
    DryRun,
    DryRunJson,
    FailUnder,
    FailureThreshold,
    Judge,
    JudgeApiKeyFile,
    JudgeApiVersion,
    JudgeInitialBackoffSeconds,
    JudgeMaxAttempts,
    JudgeReasoningEffort,
    JudgeRetryBudgetSeconds,
    JudgeRetryRoundPauseSeconds,
    JudgeTemperature,
    JudgeTimeoutSeconds,
    JudgeUrl,
    MaxInputTokens,
    MaxJudgeRequests,
    MaxSubagentDepth,
    MlflowExperiment,
    MlflowTrackingUri,
    NoCache,
    PartialResultPolicy,
    PriceIn,
    PriceOut,
    RayAddress,
    ReferenceRegistry,
    ReferenceRubric,
    Rubric,
    Samples,
    ScoredFrames,
    ScoreHtml,
    ScoreJudgeCaBundle,
    ScoreJudgeModel,
    ScoreMaxFileBytes,
    ScoreMaxFiles,
    ScoreMaxSteps,
    ScoreMaxTotal,
    ScoreOutput,
    ScorePaths,
    ScoreQuiet,
    ScoringMode,
    SubagentAggregation,
    TraceFormat,
    TrainingThreshold,
)
from agentjudge.cli.report import write_html_report
from agentjudge.collisions import Named
from agentjudge.errors import EXIT_INVALID, EXIT_JOB_FAILED, EXIT_OK, UsageError
from agentjudge.files import check_writable
from agentjudge.printable import printable
from agentjudge.scoring.config import RAY_ADDRESS, ScoreConfig, load_config

if TYPE_CHECKING:
    from agentjudge.api import ScoreRun
    from agentjudge.judge.client import JudgeClient

# score's flags that are not configuration keys: a new one must be added here, or
# load_config rejects it as an unknown parameter
_NOT_CONFIG = frozenset(
    {
        "config_file",
        "dry_run",
        "as_json",
        "price_in",
        "price_out",
        "mlflow_tracking_uri",
        "mlflow_experiment",
        "html",
        "quiet",
    }
)
# the flags named otherwise than their configuration key (the others share its name)
_RENAMED = {
    "paths": "trajectory_path",
    "reference_registry": "reference_registry_path",
    "no_cache": "cache",
    "ray": "ray_address",
}
# a --ray that names no address (the last word, or followed by a flag or a path)
RAY_FLAG = "--ray"
RAY_WORD = re.compile(RAY_ADDRESS)


def score_command(
    paths: ScorePaths = None,
    trace_format: TraceFormat = None,
    config_file: ConfigFile = None,
    output: ScoreOutput = None,
    scoring_mode: ScoringMode = None,
    benchmark_name: BenchmarkName = None,
    rubric: Rubric = None,
    reference_registry: ReferenceRegistry = None,
    reference_rubric: ReferenceRubric = None,
    scored_frames: ScoredFrames = None,
    context_steps: ContextSteps = None,
    subagent_aggregation: SubagentAggregation = None,
    failure_threshold: FailureThreshold = None,
    samples: Samples = None,
    judge_temperature: JudgeTemperature = None,
    completion_threshold: CompletionThreshold = None,
    decisive_rule: DecisiveRule = None,
    max_subagent_depth: MaxSubagentDepth = None,
    partial_result_policy: PartialResultPolicy = None,
    concurrency_limit: ConcurrencyLimit = None,
    judge_timeout_seconds: JudgeTimeoutSeconds = None,
    judge_max_attempts: JudgeMaxAttempts = None,
    judge_retry_budget_seconds: JudgeRetryBudgetSeconds = None,
    judge_retry_round_pause_seconds: JudgeRetryRoundPauseSeconds = None,
    judge_initial_backoff_seconds: JudgeInitialBackoffSeconds = None,
    max_judge_requests: MaxJudgeRequests = None,
    max_input_tokens: MaxInputTokens = None,
    dry_run: DryRun = False,
    as_json: DryRunJson = False,
    price_in: PriceIn = None,
    price_out: PriceOut = None,
    max_file_bytes: ScoreMaxFileBytes = None,
    max_trajectory_files: ScoreMaxFiles = None,
    max_steps_per_trajectory: ScoreMaxSteps = None,
    max_total_steps: ScoreMaxTotal = None,
    fail_under: FailUnder = None,
    training_threshold: TrainingThreshold = None,
    bootstrap_seed: BootstrapSeed = None,
    bootstrap_resamples: BootstrapResamples = None,
    no_cache: NoCache = False,
    cache_path: CachePath = None,
    judge: Judge = None,
    judge_url: JudgeUrl = None,
    judge_model: ScoreJudgeModel = None,
    judge_api_key_file: JudgeApiKeyFile = None,
    judge_api_version: JudgeApiVersion = None,
    judge_ca_bundle: ScoreJudgeCaBundle = None,
    judge_reasoning_effort: JudgeReasoningEffort = None,
    mlflow_tracking_uri: MlflowTrackingUri = None,
    mlflow_experiment: MlflowExperiment = "agentjudge",
    html: ScoreHtml = None,
    ray: RayAddress = None,
    quiet: ScoreQuiet = False,
) -> int:
    """Score ATIF trajectories step by step with an LLM judge, over their subagent trees.

    Exit 0: succeeded and complete; 1: succeeded but incomplete or below --fail-under;
    2: the job failed; 3: usage or configuration error.
    """
    # first, while the arguments are the only locals: most flags are configuration keys
    config = load_config(config_file, config_overrides(locals()))
    if not config.trajectory_path:
        raise UsageError(
            "no input: name trajectory files or folders (or trajectory_path in --config)"
        )
    if dry_run:
        return run_dry_run(config, as_json, price_in, price_out)
    interactive = sys.stderr.isatty() and not quiet
    reads = [Named("the config file", config_file)] if config_file is not None else []
    return run_score(
        config, interactive, quiet, mlflow_tracking_uri, mlflow_experiment, html, reads
    )


def bare_ray_flag(argv: list[str]) -> list[str]:
    """`argv` with a bare `--ray` (no address after it) read as `--ray=local`: click has
    no option whose value may be left out."""
    out = list(argv)
    for index, word in enumerate(out):
        if word == "--":
            break
        following = out[index + 1] if index + 1 < len(out) else None
        if word == RAY_FLAG and (following is None or not RAY_WORD.match(following)):
            out[index] = f"{RAY_FLAG}=local"
    return out


def config_overrides(flags: dict[str, Any]) -> dict[str, Any]:
    """The configuration keys that `score`'s `flags` (its arguments by name) set, in the
    flags' order; None means not given, so the config file's value or the default applies."""
    overrides = {_RENAMED.get(k, k): v for k, v in flags.items() if k not in _NOT_CONFIG}
    overrides["trajectory_path"] = overrides["trajectory_path"] or None
    overrides["cache"] = False if overrides["cache"] else None
    return overrides


def run_dry_run(
    config: ScoreConfig, as_json: bool, price_in: float | None, price_out: float | None
) -> int:
    """Print what the job would send (see `plan_trajectories`); exit 3 when it is over a
    budget, else 0."""
    from agentjudge.api import check_budgets, plan_trajectories
    from agentjudge.report.plan import plan_document, plan_lines

    figures = plan_trajectories(config)
    document = plan_document(figures, price_in, price_out)
    if as_json:
        typer.echo(json.dumps(document))
    else:
        for line in plan_lines(document):
            typer.echo(line)
    check_budgets(config, figures)
    return EXIT_OK


def run_score(
    config: ScoreConfig,
    interactive: bool,
    quiet: bool,
    mlflow_uri: str | None = None,
    mlflow_experiment: str = "agentjudge",
    html: Path | None = None,
    reads: Sequence[Named] = (),
) -> int:
    """Run the job and report it; return the exit code. `reads`: files read besides the
    job's own (its config file), which no output may overwrite.

    On a terminal: a progress bar and a summary table; otherwise (CI) one summary line on
    stderr. Then, either way, a short table of the roots (score, passed, where each went
    wrong) and the HTML report's path. `--quiet`: none of these.
    """
    # the scoring job and its reports load here, so the other commands start faster
    from agentjudge.api import score_trajectories
    from agentjudge.judge.samples import temperature_note
    from agentjudge.report.decisive import roots_table
    from agentjudge.report.mlflow import log_run
    from agentjudge.report.results import summary_line, summary_table

    console = Console(stderr=True, soft_wrap=True)
    bar = Progress(
        TextColumn("scoring"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("steps · {task.fields[calls]} judge calls · {task.fields[tokens]} tokens"),
        TimeRemainingColumn(),
        console=console,
        disable=not interactive,
        transient=True,
    )

    def progress(roots: list[Node], total: int, client: JudgeClient) -> Callable[[int], None]:
        # called once the configuration, the judge and the input are known to be usable
        if client.provider.note:
            console.print(f"[yellow]note:[/yellow] {client.provider.note}")
        task = bar.add_task("steps", total=total, calls=0, tokens=0)
        stats = client.stats

        def advance(steps: int) -> None:
            tokens = stats.input_tokens + stats.output_tokens
            bar.update(task, advance=steps, calls=stats.calls, tokens=tokens)

        return advance

    def note(text: str) -> None:
        if not quiet:
            console.print(f"[yellow]note:[/yellow] {escape(printable(text))}", highlight=False)

    if html is not None:
        check_writable(html, "--html", "the HTML report")
    sampling = temperature_note(config.samples, config.judge_temperature)
    if sampling is not None:
        note(sampling)
    with bar:
        writes = [Named("--html", html)] if html is not None else []
        run = score_trajectories(
            config, progress=progress, on_note=note, reads=reads, writes=writes
        )
    if html is not None:
        write_html_report(run.document, html, run.output, "--html")
    if mlflow_uri:
        run_id = log_run(run.document, config, run.manifests, mlflow_uri, mlflow_experiment)
        console.print(f"mlflow run {run_id} in experiment {mlflow_experiment!r}")
    if interactive:
        summary_table(run.document, Console())
    elif not quiet:
        console.print(summary_line(run.document, run.output), markup=False, highlight=False)
    if not quiet:
        # a failed job's roots have no story to tell: its error line (below) has
        for line in [] if run.document["error"] else roots_table(run.document):
            console.print(line, markup=False, highlight=False)
        if html is not None:
            console.print(printable(f"HTML report: {html}"), markup=False, highlight=False)
    _print_notes(run, config, quiet, console)
    return _exit_code(run, config)


def _print_notes(run: ScoreRun, config: ScoreConfig, quiet: bool, console: Console) -> None:
    """After the summary: the unstable steps, the training manifests, store hits, the
    job's error, the steps without a verdict, and a judge that never answered."""
    from agentjudge.judge.store import store_line
    from agentjudge.report.failure import unanswered
    from agentjudge.report.invalid_input import invalid_input_lines
    from agentjudge.report.results import unstable_line
    from agentjudge.report.training import manifest_path

    document, stats = run.document, run.stats
    unstable = document["run_metadata"]["unstable_steps"]
    if not quiet and unstable:
        console.print(unstable_line(unstable, document["run_parameters"]), highlight=False)
    if not quiet and run.manifests:
        eligible, ineligible = run.manifests["eligible"], run.manifests["ineligible"]
        console.print(
            f"training manifests: {eligible['trajectory_count']} eligible, "
            f"{ineligible['trajectory_count']} not "
            f"(threshold {config.training_threshold:g}): "
            f"{manifest_path(run.output, 'eligible')}, {manifest_path(run.output, 'ineligible')}",
            markup=False,
            highlight=False,
        )
    if not quiet and stats.store_hits:
        console.print(store_line(stats, config.cache_path), highlight=False)
    error = document["error"]
    if not quiet and not error:
        for line in invalid_input_lines(document):
            console.print(printable(line), markup=False, highlight=False)
    if error and error.get("message"):
        shown = printable(f"error: {error['type']}: {error['message']}")
        console.print(shown, markup=False, highlight=False)
    if not quiet and document["step_errors"] and not error:
        kinds = ", ".join(f"{kind} ({count})" for kind, count in document["step_errors"].items())
        console.print(f"steps the judge gave no verdict for: {kinds}", highlight=False)
    lost = unanswered(document, stats)
    if lost is not None:
        console.print(
            f"error: {lost}; check --judge-url and that the server is up",
            markup=False,
            highlight=False,
        )


def _exit_code(run: ScoreRun, config: ScoreConfig) -> int:
    """2 when the job failed; 1 when it is incomplete or under --fail-under; else 0."""
    if run.result.failed:
        return EXIT_JOB_FAILED
    overall = run.document["overall_score"]
    below = config.fail_under is not None and (overall is None or overall < config.fail_under)
    return EXIT_OK if run.result.complete and not below else EXIT_INVALID
