"""The results document of `agentjudge score` (`agentjudge.score/v1`), key by key.

`report/results.py` writes it (the one writer); every reader takes `ScoreResults`. A file
read back is checked by `SCORE.check`. Every key is always written unless `NotRequired`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired, get_args

from typing_extensions import TypedDict  # pydantic reads TypedDicts from here before 3.12

from agentjudge.results.contract import Contract, record

if TYPE_CHECKING:
    from pydantic import JsonValue  # resolved where the validator is built (Contract.adapter)

SCORE_SCHEMA: Final = "agentjudge.score/v1"
MetricName = Literal[
    "atif_overall_score", "atif_trajectory_count", "atif_failure_categorization_rate"
]
METRIC_NAMES: tuple[MetricName, ...] = get_args(MetricName)
NodeStatus = Literal["scored", "failed", "unscored"]
CategorizationStatus = Literal["categorized", "invalid_response", "judge_error"]


@record
class JobError(TypedDict):
    """Why a job failed: a fixed error type and, when there is one, the judge's words."""

    type: str
    message: str | None


@record
class Metrics(TypedDict):
    """The collection metrics, named as MLflow and eval-hub show them."""

    atif_overall_score: float | None
    atif_trajectory_count: int
    atif_failure_categorization_rate: float | None


@record
class MetricsInterval(TypedDict):
    """The bootstrap interval of `atif_overall_score` over root trees."""

    atif_overall_score: list[float] | None
    """[low, high]; null when the run has no overall score."""
    level: float
    resamples: int
    seed: int


@record
class RunParameters(TypedDict):
    """What decides the numbers (MLflow's parameters; `compare` checks runs agree on them)."""

    atif_judge: str
    """provider/model"""
    atif_prompt_version: str
    atif_scored_frames: str
    scoring_mode: str
    subagent_aggregation: str
    failure_threshold: float
    completion_threshold: float
    max_subagent_depth: int
    partial_result_policy: str
    context_steps: int
    samples: int
    judge_temperature: float
    decisive_rule: str
    bootstrap_seed: int
    bootstrap_resamples: int


@record
class RunMetadata(TypedDict):
    atif_complete: bool
    """Every node of every root scored, none omitted."""
    unstable_steps: int
    """Steps whose samples fell on both sides of the failure threshold."""
    judge_notice: str | None
    """The judge's note on its own verdicts (the fake and embedded judges have one)."""
    tool: str
    tool_version: str
    started_at: str
    finished_at: str


@record
class JudgeCounters(TypedDict):
    """The judge client's counters (`judge.stats.ClientStats.as_dict`)."""

    calls: int
    successes: int
    errors: int
    protocol_errors: int
    retries: int
    cache_hits: int
    """Verdicts the verdict store answered."""
    store_rejected: int
    verdicts: int
    input_tokens: int
    """Every input token billed, cached ones included."""
    output_tokens: int
    """Every generated token billed, thinking included."""
    cache_read_tokens: NotRequired[int]
    """Of `input_tokens`: read from the provider's prompt cache. This and the next two are
    written by every run since agentjudge counted them; files from before lack them."""
    cache_write_tokens: NotRequired[int]
    """Of `input_tokens`: written to the provider's prompt cache (Anthropic)."""
    reasoning_tokens: NotRequired[int]
    """Of `output_tokens`: the judge's thinking."""
    mean_latency_ms: float | None


@record
class JudgeCost(TypedDict):
    """What the judge's calls cost (`judge/price.py`), from the usage counted above."""

    usd: float | None
    """None when there is no price: `reason` says why (never a guessed price). Written by
    every run since agentjudge priced runs; files from before lack `cost`."""
    source: str
    """The price database and its version (`genai-prices 0.2.3`)."""
    model: str | None
    """The database's model the judge's model matched."""
    reason: str | None


@record
class SecondRound(TypedDict):
    steps: int
    recovered: int


@record
class JudgeSetup(TypedDict):
    """Where the judge was reached and how its requests were built."""

    endpoint: str
    """Without credentials."""
    requests: dict[str, JsonValue]
    """How requests were built once adapted to the server (the provider's own keys)."""
    notes: list[str]
    """What the judge client said as it adapted (`JudgeClient.notes`)."""


@record
class JudgeRecord(JudgeSetup, JudgeCounters):
    """The judge: where it was reached, how its requests were built, and its work."""

    steps_judged: int
    decisive_picks: int
    second_round: SecondRound
    input_tokens_per_step: float | None
    shared_prefix_fraction: float | None
    cost: NotRequired[JudgeCost]


@record
class CriterionRecord(TypedDict):
    name: str
    description: str
    weight: float


@record
class RubricRecord(TypedDict):
    """A rubric in full: `compare` refuses runs whose rubrics differ."""

    name: str
    aggregation: str
    criteria: list[CriterionRecord]


@record
class CriteriaRecord(TypedDict):
    mode: str
    answer: str
    benchmark_name: str | None
    registry_version: str | None
    rubric: RubricRecord
    references: list[str]
    auto_derived: int
    auto_fallbacks: int


@record
class IncompleteNode(TypedDict):
    node: str
    file: str
    depth: int
    reason: str


@record
class DecisiveFailureRecord(TypedDict):
    """Where a root that did not pass went wrong."""

    rule: str
    node_id: str
    agent: str | None
    segment: int
    step_id: int
    order: int
    score: float | None
    category: str | None
    reason: str
    pick_status: str | None
    excerpt: NotRequired[str]
    """The start of the step's own message (what the agent said or did), on one printable
    line of at most 160 characters, credential-shaped strings masked; a step with no text
    names its tool calls. Absent from results written before it was added."""


@record
class AgentRecord(TypedDict):
    name: str | None
    version: str | None
    model: str | None


@record
class OmittedRecord(TypedDict):
    """A subagent a ref names that resolves to nothing."""

    ref_path: str
    parent_step_id: int | None
    target: str
    reason: str


@record
class ProblemRecord(TypedDict):
    """Why a file is not valid input (`errors.Problem`)."""

    file: str
    path: str
    rule: str
    message: str


@record
class StepRecord(TypedDict):
    segment: int
    step_id: int
    source: str
    tool_names: list[str]
    score: float | None
    scores: dict[str, float]
    rationale: str
    error: str | None
    """A fixed error kind (`http_401`, `timeout`, ...): the judge gave no verdict."""
    error_message: str | None
    category: str | None
    confidence: float | None
    categorization_status: CategorizationStatus | None
    """Set on a failure candidate (a step below the failure threshold) only."""
    category_rationale: str
    truncated: bool
    shown_chars: NotRequired[int]
    """A truncated step only: how much of its texts the judge saw."""
    hidden_chars: NotRequired[int]
    samples: NotRequired[list[float | None]]
    """With samples > 1 only (as the next three): every sample's score, null for one
    without a verdict."""
    spread: NotRequired[float | None]
    stdev: NotRequired[float | None]
    unstable: NotRequired[bool]
    """Samples on both sides of the failure threshold."""
    sample_categories: NotRequired[list[str]]
    """With samples > 1, a categorized step only: the category each sample that answered
    gave (the step's `category` is their majority)."""
    origin: NotRequired[dict[str, Any]]
    """A step read from a trace file only: where it was recorded (trace and span ids, a
    session's line, an eval log's sample), as its reader gives it (docs/formats.md)."""
    not_evaluated: NotRequired[Literal["context_overflow"]]
    """A step whose prompt does not fit the judge's context even cut down only: it was not
    judged and has no score (never 0); its node is not complete."""
    context_left_out: NotRequired[int]
    """A step whose prompt was fitted to the judge's context only: the earlier steps its
    context window shows that were left out (the judge was told how many)."""


@record
class NodeRecord(TypedDict):
    """One trajectory of a tree: the root, or a subagent below it."""

    id: str
    kind: Literal["root", "embedded", "file", "session", "sidechain"]
    file: str
    input_sha256: str | None
    trajectory_id: str | None
    session_id: str | None
    agent: AgentRecord
    schema_version: str | None
    depth: int
    parent_id: str | None
    parent_step_id: int | None
    status: NodeStatus
    reason: str | None
    complete: bool
    own_score: float | None
    aggregate: float | None
    passed: bool
    step_count: int
    subtree_step_count: int
    failure_candidates: int
    criteria: list[str]
    omitted: list[OmittedRecord]
    problems: list[ProblemRecord]
    steps: list[StepRecord]
    rubric: RubricRecord | None


@record
class TrajectoryRecord(TypedDict):
    """A root's tree: its nodes root first, each after its parent."""

    root: str
    training_eligible: bool | None
    decisive_failure: DecisiveFailureRecord | None
    decisive_absent: NotRequired[str | None]
    """Why a root asked for a decisive failure (one that did not pass) has none:
    `only_user_or_system_steps_below_threshold` (a decisive failure is always a step an
    agent took) or `no_scored_agent_step`; null otherwise."""
    cost_usd: NotRequired[float | None]
    """What the judge calls made for this root's tree cost (USD; the run's `judge.cost`
    summed per root: a verdict from the store costs nothing, an auto-mode derivation is
    paid by the first root of its task); null when the run has no price. Written by every
    run since agentjudge priced roots; files from before lack it."""
    nodes: list[NodeRecord]


@record
class ScoreResults(TypedDict):
    """The results of `agentjudge score`: metrics, how they were made, and every node and
    step of every tree."""

    schema: Literal["agentjudge.score/v1"]
    status: Literal["succeeded", "failed"]
    error: JobError | None
    overall_score: float | None
    num_examples_evaluated: int
    metrics: Metrics
    metrics_interval: MetricsInterval
    run_parameters: RunParameters
    run_metadata: RunMetadata
    judge: JudgeRecord
    criteria: CriteriaRecord
    failure_categories: dict[str, int]
    """Steps below the failure threshold, by category."""
    step_errors: dict[str, int]
    """Steps the judge gave no verdict for, by error kind."""
    steps_not_evaluated: NotRequired[dict[str, int]]
    """Steps not sent to the judge, by why (`context_overflow`)."""
    incomplete: list[IncompleteNode]
    training_threshold: float | None
    trajectories: list[TrajectoryRecord]


SCORE: Contract[ScoreResults] = Contract(
    "score-results",
    SCORE_SCHEMA,
    ScoreResults,
    f"pass a results file written by `agentjudge score` ({SCORE_SCHEMA}), unmodified",
)
