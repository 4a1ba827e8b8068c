"""The typer options of the commands, as Annotated aliases: each command's signature then
takes one line per option. Each alias keeps the flag, help text and bounds it was written
with; a default stays in the command's signature."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from agentjudge.cases.loading import DEFAULT_CONFIG, RESULTS_DIR
from agentjudge.judge.defaults import SCORE_CALLS
from agentjudge.judge.secrets import API_KEY_ENV


def _opt(flag: str, help: str) -> Any:
    # score's defaults come from its configuration, so its help texts name them in brackets
    return typer.Option(flag, help=help, show_default=False)


# --- shared by score and grade

NoCache = Annotated[
    bool, typer.Option("--no-cache", help="Do not read or write the verdict store.")
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

Paths = Annotated[list[Path], typer.Argument(help="ATIF files or folders (searched recursively).")]
TraceFormat = Annotated[
    str | None,
    typer.Option(
        "--format",
        help="Read every file in this format (atif, openinference, otlp-genai); "
        "default: recognised by content.",
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
    typer.Option("--output", "-o", help="Results JSON path [agentjudge-results.json]."),
]
ScoringMode = Annotated[
    str | None,
    _opt("--scoring-mode", "default | custom | reference | auto | benchmark [default]."),
]
BenchmarkName = Annotated[
    str | None,
    _opt("--benchmark-name", "benchmark mode: swe-bench-lite | terminal-bench | humaneval."),
]
Rubric = Annotated[str | None, _opt("--rubric", "Custom rubric file (YAML or JSON).")]
ReferenceRegistry = Annotated[
    str | None, _opt("--reference-registry", "Registry of rubrics with reference answers.")
]
ReferenceRubric = Annotated[
    str | None, _opt("--reference-rubric", "Rubric name in the registry [default].")
]
ScoredFrames = Annotated[str | None, _opt("--scored-frames", "all | agent [all].")]
ContextSteps = Annotated[
    int | None, _opt("--context-steps", "Earlier steps per context block [6].")
]
SubagentAggregation = Annotated[
    str | None, _opt("--subagent-aggregation", "flat | hierarchical | separate [flat].")
]
FailureThreshold = Annotated[
    float | None, _opt("--failure-threshold", "Steps below it are categorized [0.5].")
]
Samples = Annotated[int | None, _opt("--samples", f"{SAMPLES_HELP} [1].")]
JudgeTemperature = Annotated[float | None, _opt("--temperature", f"{TEMPERATURE_HELP} [0].")]
CompletionThreshold = Annotated[
    float | None, _opt("--completion-threshold", "Nodes at or above it pass [0.5].")
]
DecisiveRule = Annotated[
    str | None,
    _opt(
        "--decisive-rule",
        "How the step a failed run went wrong at is found: first_below_threshold | "
        "lowest_score | judge_pick (one more judge call per failed root) "
        "[first_below_threshold].",
    ),
]
MaxSubagentDepth = Annotated[
    int | None, _opt("--max-subagent-depth", "Deeper nodes are unscored [3].")
]
PartialResultPolicy = Annotated[
    str | None,
    _opt("--partial-result-policy", "fail_fast | skip_failed_trajectory [fail_fast]."),
]
ConcurrencyLimit = Annotated[int | None, _opt("--concurrency-limit", "Judge calls in flight [16].")]
JudgeTimeoutSeconds = Annotated[
    float | None, _opt("--judge-timeout-seconds", f"Per call [{SCORE_CALLS.timeout:g}].")
]
JudgeMaxAttempts = Annotated[
    int | None,
    _opt(
        "--judge-max-attempts",
        f"Failures a call may meet (5xx, drops, timeouts) [{SCORE_CALLS.max_attempts}].",
    ),
]
JudgeRetryBudgetSeconds = Annotated[
    float | None,
    _opt(
        "--judge-retry-budget-seconds",
        f"Time a call may wait out rate limits [{SCORE_CALLS.retry_budget:g}].",
    ),
]
JudgeRetryRoundPauseSeconds = Annotated[
    float | None,
    _opt(
        "--judge-retry-round-pause-seconds",
        "Pause before failed steps get their second round [5].",
    ),
]
JudgeInitialBackoffSeconds = Annotated[
    float | None, _opt("--judge-initial-backoff-seconds", f"[{SCORE_CALLS.initial_backoff:g}].")
]
MaxJudgeRequests = Annotated[
    int | None,
    _opt(
        "--max-judge-requests",
        "Cap on judge calls: the plan is checked before the first, the run stops at it.",
    ),
]
MaxInputTokens = Annotated[
    int | None,
    _opt("--max-input-tokens", "Refuse (exit 3) a job whose plan sends more input tokens."),
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
    typer.Option("--price-in", min=0, help="With --dry-run: USD per million input tokens."),
]
PriceOut = Annotated[
    float | None,
    typer.Option("--price-out", min=0, help="With --dry-run: USD per million output tokens."),
]
ScoreMaxFileBytes = Annotated[
    int | None, _opt("--max-file-bytes", "Largest trajectory file [10 MiB].")
]
ScoreMaxFiles = Annotated[int | None, _opt("--max-trajectory-files", "[10000].")]
ScoreMaxSteps = Annotated[int | None, _opt("--max-steps-per-trajectory", "[500].")]
ScoreMaxTotal = Annotated[int | None, _opt("--max-total-steps", "[10000].")]
FailUnder = Annotated[
    float | None, _opt("--fail-under", "Exit 1 when atif_overall_score is below it.")
]
TrainingThreshold = Annotated[
    float | None,
    _opt(
        "--training-threshold",
        "Also write manifests of the roots at or above it (training data) and the rest.",
    ),
]
CachePath = Annotated[
    str | None, _opt("--cache", "Verdict store path [~/.cache/agentjudge/verdicts.sqlite].")
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
JudgeApiKeyFile = Annotated[
    str | None,
    _opt(
        "--judge-api-key-file",
        f"File holding the key [else ${API_KEY_ENV}, else the provider's own variable].",
    ),
]
JudgeApiVersion = Annotated[
    str | None, _opt("--judge-api-version", "Azure OpenAI api-version [2024-10-21].")
]
ScoreJudgeCaBundle = Annotated[
    str | None,
    _opt(
        "--judge-ca-bundle",
        "CA certificates (PEM) of an HTTPS judge (default: the system's).",
    ),
]
JudgeReasoningEffort = Annotated[
    str | None,
    _opt("--judge-reasoning-effort", "Reasoning models: none | minimal | low | medium | high."),
]
MlflowTrackingUri = Annotated[
    str | None,
    _opt("--mlflow-tracking-uri", "Also log the run (params, metrics, details) to MLflow."),
]
MlflowExperiment = Annotated[
    str, typer.Option("--mlflow-experiment", help="MLflow experiment name.")
]
ScoreHtml = Annotated[
    Path | None, _opt("--html", "Also write the HTML report of the results here.")
]
RayAddress = Annotated[
    str | None,
    _opt(
        "--ray",
        "Score on a Ray cluster (needs agentjudge[ray]; docs/distributed.md): auto joins the "
        "one RAY_ADDRESS or `ray start` made, HOST:PORT or ray://HOST:PORT names its head; a "
        "bare --ray starts one on this machine.",
    ),
]
ScoreQuiet = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar and no table.")]

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
JudgeProvider = Annotated[
    str | None,
    typer.Option(
        help="Judge provider: openai-compatible, openai, azure, anthropic, gemini, local or fake."
    ),
]
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
    Path, typer.Argument(help="Labels JSON; its trajectories are found relative to it.")
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
