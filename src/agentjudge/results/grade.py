"""The grade results document: its keys and their types, declared once.

`agentjudge grade` writes it (`cases/grade.py` builds it, `cases/outcome/results_file.py`
writes it) and `compare`, `analyze`, `report` and grade's own reporters read it. The layout
is graph-agents-cli 0.3.1's, key for key and in its order, so either tool reads the other's
files; agentjudge adds `judge_usage`, `metrics_interval` and, last, `schema`
(`GRADE_SCHEMA`), which graph-agents-cli ignores as it ignores every key it does not read.

The types are TypedDicts: the writer fills plain dicts on its hot path at no cost, and mypy
holds every reader to these keys. Reading validates a parsed file against the same types with
pydantic (`grade_results`, `read_grade_results`); `schemas.py` generates their JSON Schema
(docs/schemas/grade-results.schema.json). A file without `schema` (graph-agents-cli's own, and
agentjudge's written before the field was added) is read as this version: the keys are the
same.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, NotRequired

from typing_extensions import TypedDict  # pydantic reads a TypedDict only from here on 3.11

from agentjudge.errors import UsageError, clip
from agentjudge.files import read_json

if TYPE_CHECKING:
    from pydantic import TypeAdapter
    from pydantic_core import ErrorDetails

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
    metrics_interval: NotRequired[MetricsInterval]
    schema: NotRequired[Literal["agentjudge.grade/v1"]]


# A newer graph-agents-cli may add a summary key: kept, so `compare` shows it as it changes.
GradeSummary.__pydantic_config__ = {"extra": "allow"}  # type: ignore[attr-defined]


_FIX = "pass a results file written by `agentjudge grade` or graph-agents-cli's `eval grade`"


class InvalidGradeResults(ValueError):
    """A document that is not grade results of this version: says which field and why;
    `fix` says what to do."""

    def __init__(self, problem: str, fix: str = _FIX) -> None:
        super().__init__(problem)
        self.fix = fix


@cache
def _adapter() -> TypeAdapter[GradeResults]:
    from pydantic import TypeAdapter  # built on first read: `grade` itself never validates

    return TypeAdapter(GradeResults)


def grade_results(document: Any) -> GradeResults:
    """`document` (parsed JSON) checked against the types above and returned as read, every
    value as it was written; raises InvalidGradeResults naming the first field that differs.

    Strict: nothing is converted ("3" is not a count), so a reader sees the file's values."""
    from pydantic import ValidationError

    if isinstance(document, dict) and "schema" in document:
        schema = document["schema"]
        if schema != GRADE_SCHEMA:
            raise InvalidGradeResults(
                f"schema: {schema!r} is not a version this agentjudge reads ({GRADE_SCHEMA!r})",
                "upgrade agentjudge",
            )
    try:
        return _adapter().validate_python(document, strict=True)
    except ValidationError as exc:
        raise InvalidGradeResults(_first_problem(document, exc.errors())) from None


def read_grade_results(path: Path) -> GradeResults:
    """The grade results in `path`; a missing, unreadable or non-matching file is a usage
    error (exit 3) of one line: the file, the field and the fix."""
    return check_grade_results(read_json(path, "results file"), path)


def check_grade_results(document: Any, source: Path | str) -> GradeResults:
    """`grade_results` of a document read from `source`, its problem a usage error (exit 3)
    of one line: the file, the field and the fix."""
    try:
        return grade_results(document)
    except InvalidGradeResults as exc:
        raise UsageError(f"results file {source}: {exc}; {exc.fix}") from None


def _first_problem(document: Any, errors: list[ErrorDetails]) -> str:
    """The first field pydantic refused, as `cases[3].status: Input should be ...`. One
    field of a union (a number: int or float) gives an error per member: said together."""
    field = _field(document, errors[0])
    said = [e["msg"] for e in errors if _field(document, e) == field]
    text = ", or ".join(
        dict.fromkeys([said[0], *(m.removeprefix("Input should be ") for m in said[1:])])
    )
    if errors[0]["type"] != "missing":
        text += f" (it is {clip(repr(errors[0]['input']), 60)})"
    return f"{field}: {text}"


def _field(document: Any, error: ErrorDetails) -> str:
    """Where an error is, as a reader writes it (`cases[3].judge_scores.x.score`): the parts
    of its location that lead into the document (a union member's tag does not), and the
    name of a missing key."""
    text, node = "", document
    for part in error["loc"]:
        found = (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)
        )
        if not found and not (error["type"] == "missing" and isinstance(node, dict)):
            break
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
        if not found:
            break
        node = node[part]
    return text or "the top level"
