"""The grade results document: its keys and their types, declared once.

`agentjudge grade` writes it (`cases/grade.py` builds it, `cases/outcome/results_file.py`
writes it) and `compare`, `analyze`, `report` and grade's own reporters read it. The layout
is graph-agents-cli 0.3.1's, key for key and in its order, so either tool reads the other's
files; agentjudge adds `judge_usage`, `metrics_interval` and, last, `schema`
(`GRADE_SCHEMA`), which graph-agents-cli ignores as it ignores every key it does not read.

The types are TypedDicts: the writer fills plain dicts on its hot path at no cost, and mypy
holds every reader to these keys. A file read back is checked against the same types
(`GRADE.read`, `results/contract.py`); `schemas.py` generates their JSON Schema
(docs/schemas/grade-results.schema.json). A file without `schema` (graph-agents-cli's own, and
agentjudge's written before the field was added) is read as this version: the keys are the
same.
"""

from __future__ import annotations

from typing import Final, Literal, NotRequired

from typing_extensions import TypedDict  # pydantic reads a TypedDict only from here on 3.11

from agentjudge.results.contract import Contract
from agentjudge.results.score import JudgeCost

GRADE_SCHEMA: Final = "agentjudge.grade/v1"

# Case statuses (graph-agents-cli's), in the summary's order: its counts' keys.
Status = Literal["passed", "failed", "quality_below_threshold", "error", "missing"]
PASSED: Final = "passed"
FAILED: Final = "failed"
QUALITY_BELOW_THRESHOLD: Final = "quality_below_threshold"
ERROR: Final = "error"
MISSING: Final = "missing"
STATUSES: tuple[Status, ...] = (PASSED, FAILED, QUALITY_BELOW_THRESHOLD, ERROR, MISSING)
# How bad each status is (graph-agents-cli's `STATUS_RANK`), higher worse. Error and missing
# tie: neither produced an answer worth grading.
STATUS_RANK: dict[str, int] = {
    PASSED: 0,
    QUALITY_BELOW_THRESHOLD: 1,
    FAILED: 2,
    ERROR: 3,
    MISSING: 3,
}

# Numbers the files may hold as either (a threshold of 3 or 3.0): read back as written.
Number = int | float


class GradeJudge(TypedDict):
    """`judge`: who judged; the sampling settings only when they are not one sample at 0."""

    provider: str | None
    model: str | None
    samples: NotRequired[int]
    temperature: NotRequired[Number]


class GradeSummary(TypedDict):
    """`summary`: cases per status and the exit code; `unstable` and `samples` only when
    each judge metric was asked more than once."""

    passed: int
    failed: int
    quality_below_threshold: int
    error: int
    missing: int
    exit_code: int
    unstable: NotRequired[int]
    samples: NotRequired[int]


class QualityResult(TypedDict):
    """One quality metric in `quality`: its pass rate over the cases it scored, and whether
    it meets `min_pass_rate` (`met` null when the run is incomplete or no case ran it)."""

    pass_rate: Number | None
    min_pass_rate: Number
    met: bool | None
    below_threshold: int
    scored: int
    passed: int
    status: Literal["met", "not_met", "incomplete", "not_run"]


class CheckResult(TypedDict):
    """One `expect` check of a case."""

    passed: bool
    reason: str


class JudgeScore(TypedDict):
    """One judge or custom metric of a case (`score`, `passed` null until it ran, or when it
    erred); the samples' figures only when each was asked more than once."""

    score: Number | None
    threshold: Number
    passed: bool | None
    quality: bool
    reasoning: str
    error: str | None
    kind: Literal["judge", "custom"]
    samples: NotRequired[list[Number | None]]
    spread: NotRequired[Number | None]
    stdev: NotRequired[Number | None]
    unstable: NotRequired[bool]


class CaseResult(TypedDict):
    """One case in `cases`: its status (passed, failed, quality_below_threshold, error or
    missing; `compare` and `analyze` rank any other as graph-agents-cli does), the reasons it
    did not pass, its checks and its judge and custom metrics."""

    id: str
    status: str
    reasons: list[str]
    checks: dict[str, CheckResult]
    judge_scores: dict[str, JudgeScore]
    judge_notes: NotRequired[list[str]]
    unstable: NotRequired[list[str]]


class MetricsInterval(TypedDict):
    """`metrics_interval`: bootstrap intervals [low, high] (null when undefined) of the pass
    rate and of each metric's rate, with how they were drawn."""

    pass_rate: list[float] | None
    level: float
    resamples: int
    seed: int
    metrics: dict[str, list[float] | None]


class GradeResults(TypedDict):
    """The results file of `agentjudge grade`: graph-agents-cli's keys in its order, then
    agentjudge's (absent from graph-agents-cli's files)."""

    dataset_hash: str | None
    traces_dataset_hash: str | None
    graded_at: str
    generated_at: str | None
    judge: GradeJudge
    capture: str | None
    agent_version: str | None
    model: str | None
    traces_files: list[str]
    dataset_paths: list[str]
    config: str | None
    planned: int
    summary: GradeSummary
    quality: dict[str, QualityResult]
    fake_model: list[str]
    warnings: list[str]
    cases: list[CaseResult]
    judge_usage: NotRequired[dict[str, Number | None]]
    judge_cost: NotRequired[JudgeCost | None]
    """What the judge's calls cost (as score's `judge.cost`); null when no judge was
    called. Written by every run since grade priced its calls; files from before lack it."""
    metrics_interval: NotRequired[MetricsInterval]
    schema: NotRequired[Literal["agentjudge.grade/v1"]]


# A newer graph-agents-cli may add a summary key: kept, so `compare` shows it as it changes.
GradeSummary.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]


GRADE: Contract[GradeResults] = Contract(
    "grade-results",
    GRADE_SCHEMA,
    GradeResults,
    "pass a results file written by `agentjudge grade` or graph-agents-cli's `eval grade`",
    keys=("cases", "summary"),
)
