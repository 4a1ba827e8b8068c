"""The typer options of the commands, as Annotated aliases: each command's signature then
takes one line per option. Each alias keeps the flag, help text and bounds it was written
with; a default stays in the command's signature."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from agentjudge.cases.loading import DEFAULT_CONFIG, RESULTS_DIR
from agentjudge.cli.aliases import Alias, setting
from agentjudge.errors import UsageError
from agentjudge.judge.defaults import SCORE_CALLS


def _config_help(value: bool) -> None:
    # the configuration model loads only when asked: `grade` imports these options too,
    # and its start-up is part of every CI gate's time
    if value:
        from agentjudge.cli.settings import print_config_help

        print_config_help(value)


def _opt(flag: str, help: str) -> Any:
    # score's defaults come from its configuration, so its help texts name them in
    # brackets: escaped, or rich would read `[default]` as markup and drop it
    return typer.Option(flag, help=escape(help), show_default=False)


# --- shared by score and grade

NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the verdict store.")
]

Batch = Annotated[
    bool,
    typer.Option(
        "--batch",
        help="Judge through the provider's batch API (openai, anthropic): half price, "
        "answered within 24 h; a re-run polls the same batches (docs/judge.md).",
    ),
]

BootstrapSeed = Annotated[
    int | None,
    _opt("--bootstrap-seed", "Seed of the bootstrap intervals (reproducible) [0]."),
]
BootstrapResamples = Annotated[
    int | None,
    typer.Option(
        "--bootstrap-resamples",
        min=10,
        max=100_000,
        help="Resamples of the bootstrap intervals [1000].",
        show_default=False,
    ),
]

# --- shared by score and grade: repeated judge samples (judge/samples.py)

SAMPLES_HELP = "Judge answers per step / per judge metric; the score is their mean"
TEMPERATURE_HELP = "Judge temperature (0 makes samples agree by construction)"

# --- validate

Paths = Annotated[
    list[Path],
    typer.Argument(help="ATIF or trace files, or folders (searched recursively)."),
]
TraceFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Read every file in this format (atif, openinference, otlp-genai, claude-code, "
        "codex, inspect); default: recognised by content.",
    ),
]
ValidateJson = Annotated[bool, typer.Option("--json", help="Print one JSON document.")]
ValidateQuiet = Annotated[
    bool, typer.Option("--quiet", "-q", help="Print only invalid roots and the summary.")
]
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

# --- score: None means "not given", so the config file's value or the default applies

ScorePaths = Annotated[
    list[str] | None,
    typer.Argument(help="ATIF files or folders (or trajectory_path in --config)."),
]
ConfigFile = Annotated[Path | None, _opt("--config", "YAML file of parameters; flags override it.")]
ScoreOutput = Annotated[
    str | None,
    typer.Option("--output", "-o", help=escape("Results JSON path [agentjudge-results.json].")),
]
ScoringMode = Annotated[
    str | None,
    _opt("--scoring-mode", "default | custom | reference | auto | benchmark [default]."),
]
Rubric = Annotated[str | None, _opt("--rubric", "Custom rubric file (YAML or JSON).")]
Samples = Annotated[int | None, _opt("--samples", f"{SAMPLES_HELP} [1].")]
JudgeTemperature = Annotated[float | None, _opt("--temperature", f"{TEMPERATURE_HELP} [0].")]
ScoreConcurrency = Annotated[int | None, _opt("--concurrency", "Judge calls in flight [16].")]
ScoreJudgeCallTimeout = Annotated[
    float | None,
    _opt(
        "--judge-call-timeout",
        f"Seconds one attempt of one judge call may take [{SCORE_CALLS.timeout:g}].",
    ),
]
ScoreJudgeTimeout = Annotated[
    float | None,
    _opt(
        "--judge-timeout",
        "Seconds the whole judging phase may take: then judging stops, what was judged is "
        "kept and the run is incomplete (exit 1) [no limit].",
    ),
]
Settings = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Any other parameter, as a --config file sets it (repeatable); "
        "--help-config lists them.",
        show_default=False,
    ),
]
HelpConfig = Annotated[
    bool,
    typer.Option(
        "--help-config",
        is_eager=True,
        callback=_config_help,
        help="List every --config/--set key with its type, default and description.",
    ),
]
DryRun = Annotated[
    bool,
    typer.Option(
        "--dry-run",
        help="Plan only: judge calls, tokens, store hits and cost; no judge call.",
    ),
]
DryRunJson = Annotated[bool, typer.Option("--json", help="With --dry-run: print the plan as JSON.")]
PriceIn = Annotated[
    float | None,
    _opt(
        "--price-in", "USD per million input tokens, over the price database's (with --price-out)."
    ),
]
PriceCacheRead = Annotated[
    float | None,
    _opt(
        "--price-cache-read",
        "USD per million input tokens read from the prompt cache [--price-in].",
    ),
]
PriceCacheWrite = Annotated[
    float | None,
    _opt(
        "--price-cache-write",
        "USD per million input tokens written to the prompt cache [--price-in].",
    ),
]
PriceOut = Annotated[
    float | None,
    _opt(
        "--price-out", "USD per million output tokens, over the price database's (with --price-in)."
    ),
]
MaxCost = Annotated[
    float | None,
    _opt(
        "--max-cost",
        "USD: refuse a job foretold to cost more (exit 3); stop judging once spent (exit 1).",
    ),
]
FailUnder = Annotated[
    float | None, _opt("--fail-under", "Exit 1 when atif_overall_score is below it.")
]


def _store_path(value: str | None) -> str | None:
    # an empty path would fall back to the shared default store without a word
    if value is not None and not value.strip():
        raise typer.BadParameter("an empty path: give the verdict store's file, or --no-cache")
    return value


def one_store_choice(cache_path: str | None, no_cache: bool) -> None:
    """Refuse `--cache FILE` with `--no-cache`: one of the two would be dropped without a
    word (usage error, exit 3)."""
    if no_cache and cache_path is not None:
        raise UsageError(
            "--cache names a verdict store and --no-cache uses none: give one of the two"
        )


CachePath = Annotated[
    str | None,
    typer.Option(
        "--cache",
        help=escape("Verdict store path [~/.cache/agentjudge/verdicts.sqlite]."),
        show_default=False,
        callback=_store_path,
    ),
]
Judge = Annotated[
    str | None,
    _opt(
        "--judge",
        "openai-compatible | openai | azure | anthropic | gemini | local | fake "
        "[openai-compatible].",
    ),
]
JudgeUrl = Annotated[
    str | None,
    _opt("--judge-url", "Judge base URL (…/v1); openai, anthropic, gemini have defaults."),
]
ScoreJudgeModel = Annotated[
    str | None, _opt("--judge-model", "Judge model name (Azure: the deployment).")
]
MlflowTrackingUri = Annotated[
    str | None,
    _opt("--mlflow-tracking-uri", "Also log the run (params, metrics, details) to MLflow."),
]
MlflowExperiment = Annotated[
    str, typer.Option("--mlflow-experiment", help="MLflow experiment name.")
]
OtlpEvaluations = Annotated[
    str | None,
    _opt(
        "--otlp-evaluations",
        "Also send each verdict on a trace's span back as a gen_ai.evaluation.result "
        "event, to this OTLP/HTTP receiver (its base URL, or its full /v1/logs URL).",
    ),
]
ScoreHtml = Annotated[
    Path | None, _opt("--html", "Also write the HTML report of the results here.")
]
Ray = Annotated[
    bool,
    typer.Option(
        "--ray",
        help=escape(
            "Score on a Ray cluster started on this machine (needs agentjudge[ray]; "
            "docs/distributed.md)."
        ),
    ),
]
RayAddress = Annotated[
    str | None,
    _opt(
        "--ray-address",
        "Score on the Ray cluster at this address: auto (the one RAY_ADDRESS or `ray start` "
        "made), local, HOST:PORT or ray://HOST:PORT.",
    ),
]
ScoreQuiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no table.")]

# score's old flags of the keys that now have no flag of their own (`--set`), and the two
# renamed; each warns once when given (cli/aliases.py)
SCORE_ALIASES = (
    Alias("--concurrency-limit", "concurrency_limit", "--concurrency N"),
    Alias("--judge-timeout-seconds", "judge_timeout_seconds", "--judge-call-timeout SECONDS"),
    setting("--reference-registry", "reference_registry_path"),
    *(
        setting("--" + key.replace("_", "-"), key)
        for key in (
            "benchmark_name",
            "reference_rubric",
            "scored_frames",
            "context_steps",
            "subagent_aggregation",
            "failure_threshold",
            "completion_threshold",
            "decisive_rule",
            "max_subagent_depth",
            "partial_result_policy",
            "judge_max_attempts",
            "judge_retry_budget_seconds",
            "judge_retry_round_pause_seconds",
            "judge_initial_backoff_seconds",
            "max_judge_requests",
            "max_input_tokens",
            "max_file_bytes",
            "max_trajectory_files",
            "max_steps_per_trajectory",
            "max_total_steps",
            "training_threshold",
            "bootstrap_seed",
            "bootstrap_resamples",
            "judge_api_key_file",
            "judge_api_version",
            "judge_ca_bundle",
            "judge_reasoning_effort",
        )
    ),
)
# calibrate had score's judge and scoring flags, not its input limits or outputs
CALIBRATE_ALIASES = tuple(
    alias
    for alias in SCORE_ALIASES
    if alias.key
    not in {
        "benchmark_name",
        "subagent_aggregation",
        "max_file_bytes",
        "max_trajectory_files",
        "max_steps_per_trajectory",
        "max_total_steps",
        "training_threshold",
        "bootstrap_seed",
        "bootstrap_resamples",
    }
)

# --- grade: the flags graph-agents-cli passes to an `eval.grade` override, then agentjudge's

Traces = Annotated[
    str | None,
    typer.Option(
        help="Traces file, ATIF trajectory, or a folder whose *.json files are merged "
        "[the project's newest artifacts/traces/traces_*.json]."
    ),
]
Dataset = Annotated[
    str | None,
    typer.Option(help="Dataset file or folder [the dataset recorded in the traces]."),
]
EvalConfigFile = Annotated[
    str | None, typer.Option(help=f"Eval config [{DEFAULT_CONFIG}, if present].")
]
GradeOutput = Annotated[
    str | None,
    typer.Option(
        "--output", "-o", help=f"Results file, or a folder [{RESULTS_DIR}/results_<ts>.json]."
    ),
]
GradeJudge = Annotated[
    str | None,
    typer.Option(
        "--judge",
        help="Judge provider: openai-compatible, openai, azure, anthropic, gemini, local or "
        "fake (graph-agents-cli passes it as --judge-provider, also accepted).",
    ),
]
# graph-agents-cli's spelling of --judge, which it passes to an `eval.grade` override: kept
# for good, silently
GRADE_ALIASES = (Alias("--judge-provider", "judge"),)
GradeJudgeModel = Annotated[str | None, typer.Option(help="Judge model name.")]
JudgeTimeout = Annotated[
    float,
    typer.Option(
        min=1,
        help="Seconds the whole judging phase may take (graph-agents-cli's meaning); "
        "over it: exit 3, nothing written.",
    ),
]
JudgeCallTimeout = Annotated[
    float, typer.Option(min=1, help="Seconds one attempt of one judge call may take.")
]
GradeJudgeCaBundle = Annotated[
    str | None,
    typer.Option(help="CA certificates (PEM) of an HTTPS judge (default: the system's)."),
]
Junit = Annotated[
    Path | None, typer.Option(help="Also write JUnit XML here (one testcase per case).")
]
GradeHtml = Annotated[
    Path | None, typer.Option(help="Also write the HTML report of the results here.")
]
Concurrency = Annotated[int, typer.Option(min=1, help="Judge calls in flight at most.")]
# grade has no --set: batch mode's two settings are flags of their own there
BatchPollSeconds = Annotated[
    float, typer.Option(min=0.01, help="With --batch: seconds between polls of a batch.")
]
BatchFallback = Annotated[
    str,
    typer.Option(
        help="With --batch: a request 3 batches did not answer is an error (batch) or "
        "judged online at full price (online).",
    ),
]
GradeSamples = Annotated[
    int | None,
    typer.Option("--samples", help=f"{SAMPLES_HELP} (judge.samples in eval_config.yaml, else 1)."),
]
GradeTemperature = Annotated[
    float | None,
    typer.Option("--temperature", help=f"{TEMPERATURE_HELP} (judge.temperature, else 0)."),
]
FailOnUnstable = Annotated[
    bool,
    typer.Option(
        "--fail-on-unstable",
        help="Fail the gate (exit 1) when a case's samples fall on both sides of a threshold.",
    ),
]
GradeQuiet = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the result.")]

# --- judge-server

Port = Annotated[int, typer.Option(help="Port on 127.0.0.1 (0 picks a free one).")]
Latency = Annotated[float, typer.Option(min=0, help="Seconds per answer.")]
Capacity = Annotated[
    int | None, typer.Option(min=1, help="Concurrent requests before answering 429.")
]
Mimic = Annotated[
    str | None,
    typer.Option(
        metavar="API",
        help="Mimic an API: openai|anthropic|gemini|vllm|ollama|azure "
        "[a permissive OpenAI-compatible server].",
    ),
]
ApiKey = Annotated[
    str | None,
    typer.Option(help="The only key accepted, by the mimicked APIs that check one."),
]

# --- compare

Baseline = Annotated[Path, typer.Argument(help="The earlier results file.")]
Candidate = Annotated[Path, typer.Argument(help="The later results file.")]
FailOnRegression = Annotated[
    bool, typer.Option("--fail-on-regression", help="Exit 1 when anything regressed.")
]
CompareJson = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
AllowIncomparable = Annotated[
    bool,
    typer.Option(
        "--allow-incomparable",
        help="Score results: compare runs whose judge, prompt, scoring mode or rubric differ.",
    ),
]
Significance = Annotated[
    float,
    typer.Option(
        "--significance",
        min=0.0,
        max=1.0,
        help="Score results: the p-value under which a mean drop is a regression.",
    ),
]

# --- analyze

ResultsFile = Annotated[
    Path | None,
    typer.Option(help=f"Results file [the project's newest {RESULTS_DIR}/results_*.json]."),
]
TopK = Annotated[int | None, typer.Option(min=1, help="Show the K largest clusters.")]

# --- metric list

CatalogueJson = Annotated[bool, typer.Option("--json", help="Print the catalogue as JSON.")]

# --- report

Results = Annotated[
    Path, typer.Argument(help="Results JSON of agentjudge score or agentjudge grade.")
]
HtmlOutput = Annotated[Path, typer.Option("--output", "-o", help="HTML file to write.")]

# --- calibrate (and the judge's flags of score)

LabelsFile = Annotated[
    Path,
    typer.Argument(
        help="Labels JSON; its trajectories are found relative to it. With --labels: the "
        "results file the review's labels were made on.",
        metavar="LABELS_OR_RESULTS",
    ),
]
ReviewLabelsFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--labels",
        help="A labels file `agentjudge review` wrote; the figures come from the results "
        "given and these labels, with no judge call. Twice: also the two reviewers' agreement.",
    ),
]
CalibrateJson = Annotated[bool, typer.Option("--json", help="Print the report as JSON.")]
CalibrateOutput = Annotated[
    Path | None, typer.Option("--output", "-o", help="Also write the report (JSON) here.")
]
CalibrateScoreOutput = Annotated[
    Path | None,
    typer.Option("--score-output", help="Keep the score results here [not kept]."),
]
MinKappa = Annotated[
    float | None,
    typer.Option("--min-kappa", help="Exit 1 when the steps' Cohen's kappa is below it."),
]

# --- review

ReviewResults = Annotated[
    Path, typer.Argument(help="Results JSON of agentjudge score or agentjudge grade.")
]
ReviewLabels = Annotated[
    Path | None,
    typer.Option(
        "--labels",
        help="Labels file to write and resume (one per reviewer) [RESULTS.labels.json "
        "beside the results].",
    ),
]
Reviewer = Annotated[
    str | None,
    typer.Option(
        "--reviewer", help="Your name, written with every label (your login name if not given)."
    ),
]
ReviewPort = Annotated[
    int,
    typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 [0: a free one]."),
]
NoOpen = Annotated[
    bool, typer.Option("--no-open", help="Print the page's URL only; open no browser.")
]
Seed = Annotated[
    int,
    typer.Option("--seed", help="Seed of the random sample at the end of the order [0]."),
]
