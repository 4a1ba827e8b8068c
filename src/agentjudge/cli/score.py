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
from agentjudge.cli.aliases import accepting, flag_of
from agentjudge.cli.options import (
    SCORE_ALIASES,
    Batch,
    CachePath,
    ConfigFile,
    DryRun,
    DryRunJson,
    FailUnder,
    HelpConfig,
    Judge,
    JudgeTemperature,
    JudgeUrl,
    MaxCost,
    MlflowExperiment,
    MlflowTrackingUri,
    NoCache,
    OtlpEvaluations,
    PriceCacheRead,
    PriceCacheWrite,
    PriceIn,
    PriceOut,
    Ray,
    RayAddress,
    Rubric,
    Samples,
    ScoreConcurrency,
    ScoreHtml,
    ScoreJudgeCallTimeout,
    ScoreJudgeModel,
    ScoreJudgeTimeout,
    ScoreOutput,
    ScorePaths,
    ScoreQuiet,
    ScoringMode,
    Settings,
    TraceFormat,
    one_store_choice,
)
from agentjudge.cli.settings import command_line_config
from agentjudge.collisions import Named
from agentjudge.errors import EXIT_INVALID, EXIT_JOB_FAILED, EXIT_OK, UsageError
from agentjudge.files import check_writable, write_text_atomic
from agentjudge.printable import printable
from agentjudge.scoring.config import RAY_ADDRESS, ScoreConfig

if TYPE_CHECKING:
    from agentjudge.api import ScoreRun
    from agentjudge.judge.client import JudgeClient


@accepting(SCORE_ALIASES)
def score_command(
    paths: ScorePaths = None,
    trace_format: TraceFormat = None,
    config_file: ConfigFile = None,
    settings: Settings = None,
    help_config: HelpConfig = False,
    output: ScoreOutput = None,
    judge: Judge = None,
    judge_model: ScoreJudgeModel = None,
    judge_url: JudgeUrl = None,
    concurrency: ScoreConcurrency = None,
    judge_call_timeout: ScoreJudgeCallTimeout = None,
    judge_timeout: ScoreJudgeTimeout = None,
    cache_path: CachePath = None,
    no_cache: NoCache = False,
    batch: Batch = False,
    scoring_mode: ScoringMode = None,
    rubric: Rubric = None,
    samples: Samples = None,
    temperature: JudgeTemperature = None,
    fail_under: FailUnder = None,
    dry_run: DryRun = False,
    as_json: DryRunJson = False,
    price_in: PriceIn = None,
    price_cache_read: PriceCacheRead = None,
    price_cache_write: PriceCacheWrite = None,
    price_out: PriceOut = None,
    max_cost: MaxCost = None,
    html: ScoreHtml = None,
    ray: Ray = False,
    ray_address: RayAddress = None,
    mlflow_tracking_uri: MlflowTrackingUri = None,
    mlflow_experiment: MlflowExperiment = "agentjudge",
    otlp_evaluations: OtlpEvaluations = None,
    quiet: ScoreQuiet = False,
    aliased: dict[str, str] | None = None,  # the old flags given (see cli/aliases.py)
) -> int:
    """Score ATIF trajectories step by step with an LLM judge, over their subagent trees.

    Every other parameter: --config FILE or --set KEY=VALUE (--help-config lists them).

    Exit 0: succeeded and complete; 1: succeeded but incomplete (--judge-timeout reached,
    say) or below --fail-under; 2: the job failed; 3: usage or configuration error.
    """
    one_store_choice(cache_path, no_cache)
    if as_json and not dry_run:  # alone it would be dropped without a word: a run, not JSON
        raise UsageError(
            "--json prints the plan of --dry-run as JSON: add --dry-run, or drop --json (the "
            "results are a JSON file already: -o FILE)"
        )
    if ray and paths:
        _check_not_an_address(paths)
    flags: dict[str, tuple[str, Any]] = {
        "trajectory_path": ("PATHS", paths or None),
        "trace_format": ("--format", trace_format),
        "output": ("--output", output),
        "ray_address": ("--ray-address", ray_address or ("local" if ray else None)),
        **judge_flags(
            judge,
            judge_model,
            judge_url,
            concurrency,
            judge_call_timeout,
            judge_timeout,
            cache_path,
            no_cache,
        ),
        "batch": ("--batch", True if batch else None),
        "scoring_mode": ("--scoring-mode", scoring_mode),
        "rubric": ("--rubric", rubric),
        "samples": ("--samples", samples),
        "judge_temperature": ("--temperature", temperature),
        "fail_under": ("--fail-under", fail_under),
        **price_flags(price_in, price_cache_read, price_cache_write, price_out, max_cost),
    }
    old = {key: (flag_of(SCORE_ALIASES, key), value) for key, value in (aliased or {}).items()}
    config = command_line_config(config_file, flags, settings or [], old)
    if not config.trajectory_path:
        raise UsageError(
            "no input: name trajectory files or folders (or trajectory_path in --config)"
        )
    if otlp_evaluations:
        from agentjudge.report.otlp_send import check_receiver_url

        check_receiver_url(otlp_evaluations, "--otlp-evaluations")
    if dry_run:
        return run_dry_run(config, as_json)
    interactive = sys.stderr.isatty() and not quiet
    reads = [Named("the config file", config_file)] if config_file is not None else []
    return run_score(
        config,
        interactive,
        quiet,
        mlflow_tracking_uri,
        mlflow_experiment,
        html,
        reads,
        otlp_evaluations,
    )


def judge_flags(
    judge: str | None,
    judge_model: str | None,
    judge_url: str | None,
    concurrency: int | None,
    judge_call_timeout: float | None,
    judge_timeout: float | None,
    cache_path: str | None,
    no_cache: bool,
) -> dict[str, tuple[str, Any]]:
    """The judge's flags of `score` and `calibrate`: configuration key -> (flag, value)."""
    return {
        "judge": ("--judge", judge),
        "judge_model": ("--judge-model", judge_model),
        "judge_url": ("--judge-url", judge_url),
        "concurrency_limit": ("--concurrency", concurrency),
        "judge_timeout_seconds": ("--judge-call-timeout", judge_call_timeout),
        "judge_phase_timeout_seconds": ("--judge-timeout", judge_timeout),
        "cache_path": ("--cache", cache_path),
        "cache": ("--no-cache", False if no_cache else None),
    }


def price_flags(
    price_in: float | None,
    price_cache_read: float | None,
    price_cache_write: float | None,
    price_out: float | None,
    max_cost: float | None,
) -> dict[str, tuple[str, Any]]:
    """The price flags of `score` and `calibrate`: configuration key -> (flag, value)."""
    return {
        "price_in": ("--price-in", price_in),
        "price_cache_read": ("--price-cache-read", price_cache_read),
        "price_cache_write": ("--price-cache-write", price_cache_write),
        "price_out": ("--price-out", price_out),
        "max_cost": ("--max-cost", max_cost),
    }


def _check_not_an_address(paths: list[str]) -> None:
    """`--ray auto x.json` meant the old `--ray ADDRESS`: say so rather than look for a
    trajectory file named `auto`."""
    for path in paths:
        if re.match(RAY_ADDRESS, path) and not Path(path).exists():
            raise UsageError(
                f"{printable(path[:100])}: no such file, and --ray takes no address: "
                f"write --ray-address {printable(path[:100])}"
            )


def run_dry_run(config: ScoreConfig, as_json: bool) -> int:
    """Print what the job would send and what it would cost (see `plan_trajectories`);
    exit 3 when it is over a budget, else 0."""
    from agentjudge.api import check_budgets, job_pricer, plan_trajectories
    from agentjudge.report.plan import plan_document, plan_lines

    figures = plan_trajectories(config)
    pricer = job_pricer(config)
    document = plan_document(figures, pricer, batch=config.batch)
    if as_json:
        typer.echo(json.dumps(document))
    else:
        for line in plan_lines(document):
            typer.echo(line)
    check_budgets(config, figures, pricer)
    return EXIT_OK


def run_score(
    config: ScoreConfig,
    interactive: bool,
    quiet: bool,
    mlflow_uri: str | None = None,
    mlflow_experiment: str = "agentjudge",
    html: Path | None = None,
    reads: Sequence[Named] = (),
    otlp_evaluations: str | None = None,
) -> int:
    """Run the job and report it; return the exit code. `reads`: files read besides the
    job's own (its config file), which no output may overwrite. `otlp_evaluations`: an
    OTLP/HTTP receiver the verdicts on traces' spans are sent to, after the results file
    is written; one it does not take is a note, and the exit code stays the job's.

    On a terminal: a progress bar and a summary table; otherwise (CI) one summary line on
    stderr. Then, either way, a short table of the roots (score, passed, where each went
    wrong) and the HTML report's path. `--quiet`: none of these.
    """
    # the scoring job and its reports load here, so the other commands start faster
    from agentjudge.api import score_trajectories
    from agentjudge.judge.samples import temperature_note
    from agentjudge.report.decisive import roots_table
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
        from agentjudge.report.html import score_page  # its modules only when asked

        write_text_atomic(html, score_page(run.document), "--html", "the HTML report")
    if mlflow_uri:
        _log_to_mlflow(run, config, mlflow_uri, mlflow_experiment, console)
    if otlp_evaluations:
        _send_evaluations(run, otlp_evaluations, quiet, console)
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


def _log_to_mlflow(
    run: ScoreRun, config: ScoreConfig, uri: str, experiment: str, console: Console
) -> None:
    """Log the run to MLflow. A tracking server that cannot be reached or refuses costs one
    warning line, as a receiver of --otlp-evaluations does: the results file is written
    already and the exit code is the run's. Its URI is shown without credentials."""
    from agentjudge.judge.secrets import redact_endpoint
    from agentjudge.report.mlflow import log_run

    try:
        run_id = log_run(run.document, config, run.manifests, uri, experiment)
    except Exception as exc:
        # MLflow's own errors and its HTTP client's (OSError); anything else is a bug of ours
        if not (isinstance(exc, OSError) or type(exc).__module__.startswith("mlflow.")):
            raise
        console.print(
            printable(
                f"warning: the run could not be logged to MLflow at {redact_endpoint(uri)} "
                f"({type(exc).__name__}); the results file is written"
            ),
            markup=False,
            highlight=False,
        )
        return
    console.print(f"mlflow run {run_id} in experiment {experiment!r}")


def _send_evaluations(run: ScoreRun, url: str, quiet: bool, console: Console) -> None:
    """The verdicts on traces' spans, to the receiver at `url`; what was sent in one
    line, or why not in one warning (even with --quiet: the user asked for them)."""
    from agentjudge.judge.secrets import redact_endpoint
    from agentjudge.report.otlp_evaluations import evaluations
    from agentjudge.report.otlp_send import send

    def warn(text: str) -> None:
        console.print(f"[yellow]warning:[/yellow] {escape(printable(text))}", highlight=False)

    found = evaluations(run.document)
    if not found:
        if not quiet:
            warn("no verdict is on a trace's span (ATIF input, or nothing judged): none sent")
        return
    delivery = send(found, url, warn)
    if delivery.taken and not quiet:
        shown = f"{len(found)} evaluations sent to {redact_endpoint(url)} {delivery.forms()}"
        console.print(printable(shown), markup=False, highlight=False)


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
    _print_timeout(run, config, console)
    _print_fail_under(run, config, console)
    lost = unanswered(document, stats)
    if lost is not None:
        # a job that succeeded all the same (its steps from the verdict store, only the
        # categorizations or picks unanswered) exits 0: its line is a warning, not an error
        kind = "error" if error else "warning"
        console.print(
            f"{kind}: {lost}; check --judge-url and that the server is up",
            markup=False,
            highlight=False,
        )


def _print_timeout(run: ScoreRun, config: ScoreConfig, console: Console) -> None:
    """Say, even with --quiet, that --judge-timeout or --max-cost stopped judging: it is
    why the run is incomplete (exit 1)."""
    from agentjudge.judge.price import COST_CAP
    from agentjudge.scoring.job import JUDGE_TIMEOUT

    reasons = [a.reason for t in run.result.trees for a in t.aggregates]
    for reason, what in (
        (JUDGE_TIMEOUT, f"--judge-timeout {config.judge_phase_timeout_seconds or 0:g} s"),
        (COST_CAP, f"--max-cost {config.max_cost or 0:g} USD (${run.stats.cost_usd:,.4f} spent)"),
    ):
        cut = reasons.count(reason)
        if not cut:
            continue
        console.print(
            f"judging stopped at {what}: {cut} node(s) left unjudged; what was judged is kept "
            "(in the results and, unless --no-cache, the verdict store, so the same command "
            "again judges only the rest)",
            markup=False,
            highlight=False,
        )


def _print_fail_under(run: ScoreRun, config: ScoreConfig, console: Console) -> None:
    """Say, even with --quiet, that --fail-under is why a job that succeeded exits 1: its
    summary says `succeeded` and may say `atif_complete=true`."""
    if not run.result.failed and config.fail_under is not None and _below_fail_under(run, config):
        overall = run.document["overall_score"]
        shown = "-" if overall is None else f"{overall:.4f}"
        console.print(
            f"atif_overall_score {shown} is below --fail-under {config.fail_under:g}: exit 1",
            markup=False,
            highlight=False,
        )


def _exit_code(run: ScoreRun, config: ScoreConfig) -> int:
    """2 when the job failed; 1 when it is incomplete or under --fail-under; else 0."""
    if run.result.failed:
        return EXIT_JOB_FAILED
    return EXIT_OK if run.result.complete and not _below_fail_under(run, config) else EXIT_INVALID


def _below_fail_under(run: ScoreRun, config: ScoreConfig) -> bool:
    """Whether --fail-under is set and the overall score is under it (or there is none)."""
    overall = run.document["overall_score"]
    return config.fail_under is not None and (overall is None or overall < config.fail_under)
