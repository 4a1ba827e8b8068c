"""The `agentjudge` command: parses flags, calls the library, maps errors to exit codes.

Exit codes (docs/scoring.md, docs/cases.md): 0 success, 1 invalid input (or an
incomplete/failed gate), 2 job failed, 3 usage or configuration error, 4 internal error (a
bug), 130 interrupted.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from agentjudge import __version__
from agentjudge.atif import Limits, Node, load_trees
from agentjudge.cli_cases import register as register_case_commands
from agentjudge.cli_report import register as register_report_commands
from agentjudge.cli_report import write_html_report
from agentjudge.errors import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    EXIT_JOB_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    AgentJudgeError,
    InputError,
    UsageError,
    clip,
)
from agentjudge.judge.secrets import API_KEY_ENV
from agentjudge.report.files import check_writable
from agentjudge.report.validation import ValidationSummary, root_line, root_record
from agentjudge.scoring.config import ScoreConfig, load_config

# error kinds of calls that got no answer at all (every other kind is the server's)
LOST_CALLS = frozenset({"transport_error", "timeout"})

if TYPE_CHECKING:
    from agentjudge.judge.client import JudgeClient

app = typer.Typer(
    name="agentjudge",
    help="Judge recorded AI-agent runs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# typer vendors click privately; its public BadParameter lets us name the base of usage errors.
_ClickException: type[Exception] = next(
    c for c in typer.BadParameter.__mro__ if c.__name__ == "ClickException"
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"agentjudge {__version__}")
        raise typer.Exit(EXIT_OK)


# Set by --debug (or AGENTJUDGE_DEBUG=1): an internal error then shows its traceback.
_debug = {"on": False}


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", help="Show the traceback of an internal error (exit 4), to report it."
        ),
    ] = False,
) -> None:
    """Judge recorded AI-agent runs."""
    _debug["on"] = debug


MaxFileBytes = Annotated[
    int, typer.Option("--max-file-bytes", min=1, help="Largest trajectory file accepted.")
]
MaxFiles = Annotated[
    int, typer.Option("--max-trajectory-files", min=1, help="Most trajectory files accepted.")
]
MaxSteps = Annotated[
    int, typer.Option("--max-steps-per-trajectory", min=1, help="Most steps in one node.")
]
MaxTotal = Annotated[int, typer.Option("--max-total-steps", min=1, help="Most steps in one tree.")]

_DEFAULTS = Limits()


@app.command()
def validate(
    paths: Annotated[
        list[Path], typer.Argument(help="ATIF files or folders (searched recursively).")
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document.")] = False,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print only invalid roots and the summary.")
    ] = False,
    max_file_bytes: MaxFileBytes = _DEFAULTS.max_file_bytes,
    max_trajectory_files: MaxFiles = _DEFAULTS.max_trajectory_files,
    max_steps_per_trajectory: MaxSteps = _DEFAULTS.max_steps_per_trajectory,
    max_total_steps: MaxTotal = _DEFAULTS.max_total_steps,
) -> int:
    """Check ATIF trajectories and their subagent trees without judging anything.

    Prints one line per root trajectory and a summary. Exit 0 when every tree is valid,
    1 when any is not, 3 on a usage error.
    """
    limits = Limits(max_file_bytes, max_trajectory_files, max_steps_per_trajectory, max_total_steps)
    summary = ValidationSummary()
    records = []
    for root in load_trees(paths, limits):
        summary.add(root)
        if as_json:
            records.append(root_record(root))
        elif not quiet or not root.valid:
            typer.echo(root_line(root))
            for problem in root.all_problems():
                typer.echo(f"    {problem}")
    if as_json:
        typer.echo(json.dumps({"roots": records, "summary": summary.as_dict()}, indent=2))
    else:
        typer.echo(summary.line())
    return EXIT_OK if summary.invalid == 0 else EXIT_INVALID


def _opt(flag: str, help: str) -> Any:
    return typer.Option(flag, help=help, show_default=False)


@app.command()
def score(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="ATIF files or folders (or trajectory_path in --config)."),
    ] = None,
    config_file: Annotated[
        Path | None, _opt("--config", "YAML file of parameters; flags override it.")
    ] = None,
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Results JSON path [agentjudge-results.json]."),
    ] = None,
    scoring_mode: Annotated[
        str | None,
        _opt("--scoring-mode", "default | custom | reference | auto | benchmark [default]."),
    ] = None,
    benchmark_name: Annotated[
        str | None,
        _opt("--benchmark-name", "benchmark mode: swe-bench-lite | terminal-bench | humaneval."),
    ] = None,
    rubric: Annotated[str | None, _opt("--rubric", "Custom rubric file (YAML or JSON).")] = None,
    reference_registry: Annotated[
        str | None, _opt("--reference-registry", "Registry of rubrics with reference answers.")
    ] = None,
    reference_rubric: Annotated[
        str | None, _opt("--reference-rubric", "Rubric name in the registry [default].")
    ] = None,
    scored_frames: Annotated[str | None, _opt("--scored-frames", "all | agent [all].")] = None,
    context_steps: Annotated[
        int | None, _opt("--context-steps", "Earlier steps per context block [6].")
    ] = None,
    subagent_aggregation: Annotated[
        str | None, _opt("--subagent-aggregation", "flat | hierarchical | separate [flat].")
    ] = None,
    failure_threshold: Annotated[
        float | None, _opt("--failure-threshold", "Steps below it are categorized [0.5].")
    ] = None,
    completion_threshold: Annotated[
        float | None, _opt("--completion-threshold", "Nodes at or above it pass [0.5].")
    ] = None,
    max_subagent_depth: Annotated[
        int | None, _opt("--max-subagent-depth", "Deeper nodes are unscored [3].")
    ] = None,
    partial_result_policy: Annotated[
        str | None,
        _opt("--partial-result-policy", "fail_fast | skip_failed_trajectory [fail_fast]."),
    ] = None,
    concurrency_limit: Annotated[
        int | None, _opt("--concurrency-limit", "Judge calls in flight [16].")
    ] = None,
    judge_timeout_seconds: Annotated[
        float | None, _opt("--judge-timeout-seconds", "Per call [30].")
    ] = None,
    judge_max_attempts: Annotated[
        int | None,
        _opt("--judge-max-attempts", "Failures a call may meet (5xx, drops, timeouts) [3]."),
    ] = None,
    judge_retry_budget_seconds: Annotated[
        float | None,
        _opt("--judge-retry-budget-seconds", "Time a call may wait out rate limits [300]."),
    ] = None,
    judge_retry_round_pause_seconds: Annotated[
        float | None,
        _opt(
            "--judge-retry-round-pause-seconds",
            "Pause before failed steps get their second round [5].",
        ),
    ] = None,
    judge_initial_backoff_seconds: Annotated[
        float | None, _opt("--judge-initial-backoff-seconds", "[0.5].")
    ] = None,
    max_judge_requests: Annotated[
        int | None,
        _opt(
            "--max-judge-requests",
            "Cap on judge calls: the plan is checked before the first, the run stops at it.",
        ),
    ] = None,
    max_input_tokens: Annotated[
        int | None,
        _opt("--max-input-tokens", "Refuse (exit 3) a job whose plan sends more input tokens."),
    ] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Plan only: judge calls, tokens, store hits and cost; no judge call.",
        ),
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")
    ] = False,
    price_in: Annotated[
        float | None,
        typer.Option("--price-in", min=0, help="With --dry-run: USD per million input tokens."),
    ] = None,
    price_out: Annotated[
        float | None,
        typer.Option("--price-out", min=0, help="With --dry-run: USD per million output tokens."),
    ] = None,
    max_file_bytes: Annotated[
        int | None, _opt("--max-file-bytes", "Largest trajectory file [10 MiB].")
    ] = None,
    max_trajectory_files: Annotated[int | None, _opt("--max-trajectory-files", "[10000].")] = None,
    max_steps_per_trajectory: Annotated[
        int | None, _opt("--max-steps-per-trajectory", "[500].")
    ] = None,
    max_total_steps: Annotated[int | None, _opt("--max-total-steps", "[10000].")] = None,
    fail_under: Annotated[
        float | None, _opt("--fail-under", "Exit 1 when atif_overall_score is below it.")
    ] = None,
    training_threshold: Annotated[
        float | None,
        _opt(
            "--training-threshold",
            "Also write manifests of the roots at or above it (training data) and the rest.",
        ),
    ] = None,
    no_cache: Annotated[
        bool, typer.Option("--no-cache", help="Do not read or write the verdict store.")
    ] = False,
    cache_path: Annotated[
        str | None, _opt("--cache", "Verdict store path [~/.cache/agentjudge/verdicts.sqlite].")
    ] = None,
    judge: Annotated[
        str | None,
        _opt(
            "--judge",
            "openai-compatible | openai | azure | anthropic | gemini | local | fake "
            "[openai-compatible].",
        ),
    ] = None,
    judge_url: Annotated[
        str | None,
        _opt("--judge-url", "Judge base URL (…/v1); openai, anthropic, gemini have defaults."),
    ] = None,
    judge_model: Annotated[
        str | None, _opt("--judge-model", "Judge model name (Azure: the deployment).")
    ] = None,
    judge_api_key_file: Annotated[
        str | None,
        _opt(
            "--judge-api-key-file",
            f"File holding the key [else ${API_KEY_ENV}, else the provider's own variable].",
        ),
    ] = None,
    judge_api_version: Annotated[
        str | None, _opt("--judge-api-version", "Azure OpenAI api-version [2024-10-21].")
    ] = None,
    judge_ca_bundle: Annotated[
        str | None,
        _opt(
            "--judge-ca-bundle",
            "CA certificates (PEM) of an HTTPS judge (default: the system's).",
        ),
    ] = None,
    judge_reasoning_effort: Annotated[
        str | None,
        _opt("--judge-reasoning-effort", "Reasoning models: none | minimal | low | medium | high."),
    ] = None,
    mlflow_tracking_uri: Annotated[
        str | None,
        _opt("--mlflow-tracking-uri", "Also log the run (params, metrics, details) to MLflow."),
    ] = None,
    mlflow_experiment: Annotated[
        str, typer.Option("--mlflow-experiment", help="MLflow experiment name.")
    ] = "agentjudge",
    html: Annotated[
        Path | None, _opt("--html", "Also write the HTML report of the results here.")
    ] = None,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="No progress bar and no table.")
    ] = False,
) -> int:
    """Score ATIF trajectories step by step with an LLM judge, over their subagent trees.

    Exit 0: succeeded and complete; 1: succeeded but incomplete or below --fail-under;
    2: the job failed; 3: usage or configuration error.
    """
    overrides: dict[str, Any] = {
        "trajectory_path": paths or None,
        "output": output,
        "scoring_mode": scoring_mode,
        "benchmark_name": benchmark_name,
        "rubric": rubric,
        "reference_registry_path": reference_registry,
        "reference_rubric": reference_rubric,
        "scored_frames": scored_frames,
        "context_steps": context_steps,
        "subagent_aggregation": subagent_aggregation,
        "failure_threshold": failure_threshold,
        "completion_threshold": completion_threshold,
        "max_subagent_depth": max_subagent_depth,
        "partial_result_policy": partial_result_policy,
        "concurrency_limit": concurrency_limit,
        "judge_timeout_seconds": judge_timeout_seconds,
        "judge_max_attempts": judge_max_attempts,
        "judge_retry_budget_seconds": judge_retry_budget_seconds,
        "judge_retry_round_pause_seconds": judge_retry_round_pause_seconds,
        "judge_initial_backoff_seconds": judge_initial_backoff_seconds,
        "max_judge_requests": max_judge_requests,
        "max_input_tokens": max_input_tokens,
        "max_file_bytes": max_file_bytes,
        "max_trajectory_files": max_trajectory_files,
        "max_steps_per_trajectory": max_steps_per_trajectory,
        "max_total_steps": max_total_steps,
        "fail_under": fail_under,
        "training_threshold": training_threshold,
        "cache": False if no_cache else None,
        "cache_path": cache_path,
        "judge": judge,
        "judge_url": judge_url,
        "judge_model": judge_model,
        "judge_api_key_file": judge_api_key_file,
        "judge_api_version": judge_api_version,
        "judge_ca_bundle": judge_ca_bundle,
        "judge_reasoning_effort": judge_reasoning_effort,
    }
    config = load_config(config_file, overrides)
    if not config.trajectory_path:
        raise UsageError(
            "no input: name trajectory files or folders (or trajectory_path in --config)"
        )
    if dry_run:
        return run_dry_run(config, as_json, price_in, price_out)
    interactive = sys.stderr.isatty() and not quiet
    return run_score(config, interactive, quiet, mlflow_tracking_uri, mlflow_experiment, html)


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


@app.command()
def evalhub() -> int:
    """Run as an eval-hub adapter: the job spec is read from EVALHUB_JOB_SPEC_PATH."""
    try:
        from agentjudge.integrations.evalhub import main as adapter_main
    except ImportError:
        raise UsageError(
            "the eval-hub adapter needs eval-hub-sdk: pip install 'agentjudge[evalhub]'"
        ) from None
    return adapter_main()


@app.command("judge-server")
def judge_server(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")] = 8000,
    latency: Annotated[float, typer.Option(min=0, help="Seconds per answer.")] = 0.0,
    capacity: Annotated[
        int | None, typer.Option(min=1, help="Concurrent requests before answering 429.")
    ] = None,
    mimic: Annotated[
        str | None,
        typer.Option(
            metavar="API",
            help="Mimic an API: openai|anthropic|gemini|vllm|ollama|azure "
            "[a permissive OpenAI-compatible server].",
        ),
    ] = None,
    api_key: Annotated[
        str | None,
        typer.Option(help="The only key accepted, by the mimicked APIs that check one."),
    ] = None,
) -> int:
    """Run the scriptable test judge (OpenAI-compatible, or mimicking an API) for plumbing checks.

    Not a judge of quality: its scores come from score markers in the request, or from a
    hash of it."""
    from agentjudge.testing import JudgeServer, Script
    from agentjudge.testing.mimic import DIALECTS

    if mimic is not None and mimic not in DIALECTS:
        raise UsageError(f"--mimic must be one of {', '.join(DIALECTS)}, not {clip(repr(mimic))}")

    async def serve() -> None:
        script = Script(latency=latency, capacity=capacity)
        server = JudgeServer(script, port=port, keep_log=False, mimic=mimic, api_key=api_key)
        await server.start()
        title = server.dialect.title
        speaks = f"mimicking the {title} API" if mimic else f"({title})"
        typer.echo(f"test judge {speaks} listening on {server.base_url} (Ctrl-C stops it)")
        await asyncio.Event().wait()

    asyncio.run(serve())
    return EXIT_OK


# after score, validate and the tools above, so `--help` lists them first
register_case_commands(app)
register_report_commands(app)


def run_score(
    config: ScoreConfig,
    interactive: bool,
    quiet: bool,
    mlflow_uri: str | None = None,
    mlflow_experiment: str = "agentjudge",
    html: Path | None = None,
) -> int:
    """Run the job and report it; return the exit code.

    On a terminal: a progress bar and a summary table. Otherwise (CI): one summary line on
    stderr. `--quiet`: neither.
    """
    # the scoring job and its reports load here, so the other commands start faster
    from agentjudge.api import score_trajectories
    from agentjudge.judge.store import store_line
    from agentjudge.report.mlflow import log_run
    from agentjudge.report.results import summary_line, summary_table
    from agentjudge.report.training import manifest_path

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
        if client.provider.notice:
            console.print(f"[yellow]note:[/yellow] {client.provider.notice}")
        task = bar.add_task("steps", total=total, calls=0, tokens=0)
        stats = client.stats

        def advance(steps: int) -> None:
            tokens = stats.input_tokens + stats.output_tokens
            bar.update(task, advance=steps, calls=stats.calls, tokens=tokens)

        return advance

    def note(text: str) -> None:
        if not quiet:
            console.print(f"[yellow]note:[/yellow] {escape(text)}", highlight=False)

    if html is not None:
        check_writable(html, "--html", "the HTML report")
    with bar:
        run = score_trajectories(config, progress=progress, on_note=note)
    document, result, stats = run.document, run.result, run.stats
    if html is not None:
        write_html_report(document, html, run.output, "--html")
    if mlflow_uri:
        run_id = log_run(document, mlflow_uri, mlflow_experiment)
        console.print(f"mlflow run {run_id} in experiment {mlflow_experiment!r}")
    if interactive:
        summary_table(document, Console())
    elif not quiet:
        console.print(summary_line(document, run.output))
    if not quiet and run.manifests:
        eligible, ineligible = run.manifests["eligible"], run.manifests["ineligible"]
        console.print(
            f"training manifests: {eligible['count']} eligible, {ineligible['count']} not "
            f"(threshold {config.training_threshold:g}): "
            f"{manifest_path(run.output, 'eligible')}, {manifest_path(run.output, 'ineligible')}",
            markup=False,
            highlight=False,
        )
    if not quiet and stats.cache_hits:
        console.print(store_line(stats, config.cache_path), highlight=False)
    error = document["error"]
    if error and error.get("message"):
        console.print(f"error: {error['type']}: {error['message']}", markup=False, highlight=False)
    if not quiet and document["step_errors"] and not error:
        kinds = ", ".join(f"{kind} ({count})" for kind, count in document["step_errors"].items())
        console.print(f"steps the judge gave no verdict for: {kinds}", highlight=False)
    endpoint = document["judge"].get("endpoint")
    unanswered = not error or str(error.get("message")).split(":")[0] in LOST_CALLS
    if stats.calls and not stats.successes and endpoint and unanswered:
        console.print(
            f"error: none of {stats.calls} judge calls got an answer from {endpoint}; "
            "check --judge-url and that the server is up",
            markup=False,
            highlight=False,
        )
    if result.failed:
        return EXIT_JOB_FAILED
    overall = document["overall_score"]
    below = config.fail_under is not None and (overall is None or overall < config.fail_under)
    return EXIT_OK if result.complete and not below else EXIT_INVALID


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; user errors print one line each and map to their exit code."""
    try:
        result = app(args=argv, standalone_mode=False)
    except _ClickException as exc:
        exc.show()  # type: ignore[attr-defined]  # click's ClickException.show
        return EXIT_USAGE
    except InputError as exc:
        for problem in exc.problems:
            typer.echo(f"error: {problem}", err=True)
        return exc.exit_code
    except AgentJudgeError as exc:
        # the sites that quote a value cut it; this bounds the ones that do not
        typer.echo(f"error: {clip(str(exc), 2000)}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        result = EXIT_INTERRUPTED
    except Exception as exc:  # a bug of ours: CI must tell it from a failing gate
        return internal_error(exc, _debug["on"] or os.environ.get("AGENTJUDGE_DEBUG") == "1")
    if result == EXIT_INTERRUPTED:  # typer turns Ctrl-C into this code itself
        typer.echo(
            "interrupted: nothing was written; the verdicts judged so far are kept in the "
            "verdict store (unless --no-cache), so running the same command again resumes",
            err=True,
        )
    return result if isinstance(result, int) else EXIT_OK


def internal_error(exc: BaseException, debug: bool) -> int:
    """Say in one line that `exc` is a bug of ours and how to report it; the traceback only
    when `debug`. The exception's own text is left out: it may hold input or a credential."""
    if debug:
        traceback.print_exception(exc)
    where = _origin(exc)
    typer.echo(
        f"error: internal error ({type(exc).__name__}{where}): this is a bug in agentjudge "
        f"{__version__}, not in your input; please report it to the agentjudge maintainers "
        "with the command and what it prints when run again as `agentjudge --debug ...` "
        "(or with AGENTJUDGE_DEBUG=1)",
        err=True,
    )
    return EXIT_INTERNAL


def _origin(exc: BaseException) -> str:
    """` at module.py:123`: the innermost frame of ours, to make a report findable."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if f"{os.sep}agentjudge{os.sep}" in f.filename]
    if not ours:
        return ""
    frame = ours[-1]
    return f" at {clip(os.path.basename(frame.filename), 60)}:{frame.lineno}"


if __name__ == "__main__":
    sys.exit(main())
