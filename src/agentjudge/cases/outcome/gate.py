"""The gate: each case's status and reasons, the quality rates, and the exit code.

Statuses, worst first: missing > error > failed > quality_below_threshold > passed.
Exit: any error or missing → 2; else any failed case or a quality metric not met → 1 (and,
with `--fail-on-unstable`, any unstable case: its judge samples fall on both sides of a
threshold); else 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, NamedTuple

from agentjudge.cases.checking import run_checks
from agentjudge.cases.judging import MetricResult
from agentjudge.cases.loading import Case, EvalConfig
from agentjudge.errors import UsageError, clip
from agentjudge.judge.samples import sampled_score
from agentjudge.results.grade import (
    ERROR,
    FAILED,
    MISSING,
    PASSED,
    STATUSES,
    CaseResult,
    CheckResult,
    JudgeScore,
    QualityResult,
)
from agentjudge.results.grade import QUALITY_BELOW_THRESHOLD as QUALITY

MetricKind = Literal["judge", "custom"]


@dataclass(slots=True)
class CaseGrade:
    """One case's grade, built in stages; `status` and `reasons` follow from the lists."""

    id: str
    checks: dict[str, CheckResult] = field(default_factory=dict)
    judge_scores: dict[str, JudgeScore] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    quality_misses: list[str] = field(default_factory=list)
    judge_notes: list[str] = field(default_factory=list)
    lacking: list[str] = field(default_factory=list)  # what its judges need and it has not
    truncated_results: int = 0
    unrecorded_turns: int = 0
    final_turn_only: bool = False
    unstable: list[str] = field(default_factory=list)  # metrics whose samples disagree
    # its checks pass, but graph-agents-cli's first-match matching fails one of them
    first_match_fails: bool = False

    @property
    def status(self) -> str:
        if self.missing:
            return MISSING
        if self.errors:
            return ERROR
        if self.failures:
            return FAILED
        if self.quality_misses:
            return QUALITY
        return PASSED

    @property
    def reasons(self) -> list[str]:
        return [*self.missing, *self.errors, *self.failures, *self.quality_misses]

    @property
    def judgeable(self) -> bool:
        """Judges and custom metrics run only while nothing mandatory has gone wrong."""
        return not (self.missing or self.errors or self.failures)

    def as_dict(self) -> CaseResult:
        """The case as graph-agents-cli writes it (`judge_notes` only when there are some)."""
        data: CaseResult = {
            "id": self.id,
            "status": self.status,
            "reasons": self.reasons,
            "checks": self.checks,
            "judge_scores": self.judge_scores,
        }
        if self.judge_notes:
            data["judge_notes"] = list(self.judge_notes)
        if self.unstable:
            data["unstable"] = list(self.unstable)
        return data

    def tally(self) -> CaseTally:
        """What the run's summary, rates and warnings need of this case, once it is final."""
        scores = {
            name: {"passed": entry["passed"], "quality": entry.get("quality", False)}
            for name, entry in self.judge_scores.items()
        }
        return CaseTally(
            self.id,
            self.status,
            scores or _NO_SCORES,
            self.truncated_results,
            self.final_turn_only,
            tuple(self.lacking),
            self.unrecorded_turns,
            bool(self.unstable),
            self.first_match_fails,
        )


# shared by every case without judge or custom metrics (most of a checks-only run)
_NO_SCORES: Mapping[str, Mapping[str, Any]] = MappingProxyType({})


class CaseTally(NamedTuple):
    """A final case as the summary, the quality rates, the intervals and the warnings read
    it: what a run keeps of each case once its record is written (see grade.py). A tuple:
    one is made per case, and a frozen dataclass takes four times as long to build."""

    id: str
    status: str
    judge_scores: Mapping[str, Mapping[str, Any]]  # per metric: passed, quality
    truncated_results: int
    final_turn_only: bool
    lacking: tuple[str, ...]
    unrecorded_turns: int
    unstable: bool
    first_match_fails: bool


def grade_checks(case: Case, trace: dict[str, Any] | None) -> CaseGrade:
    """Case accounting, then the deterministic checks the case declares."""
    grade = CaseGrade(case.id)
    if trace is None:
        grade.missing.append("missing: no trace for case")
        return grade
    status = trace.get("status")
    if status == "missing":
        grade.missing.append(f"missing: {trace.get('error') or 'trace has no response'}")
        return grade
    if status == "error":
        grade.errors.append(f"error: {trace.get('error') or 'generation failed'}")
        return grade
    if trace.get("response") is None:
        grade.missing.append("missing: trace has no response")
        return grade
    first_match_fails = False
    for name, result in run_checks(case.expect, trace).items():
        grade.checks[name] = {"passed": result.passed, "reason": result.reason}
        if not result.passed:
            grade.failures.append(f"{name}: {result.reason}")
        first_match_fails |= result.first_match_fails
    # graph-agents-cli fails the case on its checks (and judges nothing) where we go on;
    # a case another check fails here fails there too
    grade.first_match_fails = first_match_fails and not grade.failures
    turns = trace.get("turns")
    grade.final_turn_only = (
        case.expect.get("scope") == "all_turns"
        and case.user_turns() > 1
        and not (isinstance(turns, list) and turns)
    )
    return grade


def case_metrics(config: EvalConfig, case: Case) -> dict[str, dict[str, Any]]:
    """The metrics a case runs: its own `judge` keys, then every custom metric."""
    metrics = {name: dict(spec) for name, spec in case.judge.items()}
    for name in config.custom_metrics:
        metrics.setdefault(name, {})
    return metrics


def check_case_metrics(config: EvalConfig, case: Case) -> None:
    """An unknown metric or one with no threshold is a usage error, found before judging."""
    if not case.judge and not config.custom_metrics:
        return  # no metric (most cases of a run of checks alone)
    known = config.metric_names()
    for name, spec in case_metrics(config, case).items():
        if name not in known:
            raise UsageError(
                f"case {clip(repr(case.id))}: judge.{name}: unknown metric (known: "
                f"{', '.join(sorted(known))}); define it under judges: in eval_config.yaml"
            )
        config.threshold(name, spec)


def open_scores(config: EvalConfig, case: Case, grade: CaseGrade) -> list[tuple[str, MetricKind]]:
    """Enter an empty score for each metric of a judgeable case; return what to run."""
    planned: list[tuple[str, MetricKind]] = []
    for name, spec in case_metrics(config, case).items():
        kind: MetricKind = "custom" if name in config.custom_metrics else "judge"
        grade.judge_scores[name] = {
            "score": None,
            "threshold": config.threshold(name, spec),
            "passed": None,
            "quality": name in config.quality_metrics,
            "reasoning": "",
            "error": None,
            "kind": kind,
        }
        planned.append((name, kind))
    return planned


def apply_result(grade: CaseGrade, metric: str, result: MetricResult | None) -> None:
    """Fold one metric's result into the grade: an error, a failure, a quality miss."""
    entry = grade.judge_scores[metric]
    label = "custom metric" if entry["kind"] == "custom" else "judge"
    if result is None:
        entry["error"] = "no result from judge runner"
        grade.errors.append(f"error: {label} {metric}: no result from judge runner")
        return
    if result.error is not None:
        entry["error"] = result.error
        grade.errors.append(f"error: {label} {metric}: {result.error}")
        return
    score = result.score
    if not isinstance(score, int | float) or isinstance(score, bool):
        entry["error"] = f"{label} returned no numeric score ({clip(repr(score))})"
        grade.errors.append(f"error: {label} {metric}: no numeric score")
        return
    entry["score"] = float(score)
    entry["reasoning"] = result.reasoning
    if len(result.samples) > 1:
        sampled = sampled_score(result.samples, entry["threshold"])
        entry["samples"] = list(sampled.scores)
        entry["spread"] = sampled.spread
        entry["stdev"] = sampled.stdev
        entry["unstable"] = sampled.unstable
        if sampled.unstable:
            grade.unstable.append(metric)
    passed = float(score) >= entry["threshold"]
    entry["passed"] = passed
    if passed:
        return
    text = f"{metric}: score {_number(score)} below threshold {_number(entry['threshold'])}"
    if entry["quality"]:
        grade.quality_misses.append(f"{text} (quality)")
    else:
        grade.failures.append(text)


def summarize(grades: Sequence[CaseTally]) -> dict[str, int]:
    """How many cases ended in each status."""
    summary: dict[str, int] = dict.fromkeys(STATUSES, 0)
    for grade in grades:
        summary[grade.status] += 1
    return summary


def quality(config: EvalConfig, grades: Sequence[CaseTally]) -> dict[str, QualityResult]:
    """Per quality metric: the pass rate over the cases it scored, and whether it is met.

    A run with an error or missing case (or no case) is `incomplete` and a metric no case
    scored is `not_run`: neither has a rate, and neither can fail the gate on its own.
    """
    complete = bool(grades) and all(g.status not in (ERROR, MISSING) for g in grades)
    report: dict[str, QualityResult] = {}
    for name, metric in config.quality_metrics.items():
        scored = below = 0
        for grade in grades:
            entry = grade.judge_scores.get(name)
            if entry is None or not entry["quality"] or entry["passed"] is None:
                continue
            scored += 1
            below += entry["passed"] is False
        result: QualityResult = {
            "pass_rate": None,
            "min_pass_rate": metric.min_pass_rate,
            "met": None,
            "below_threshold": below,
            "scored": scored,
            "passed": scored - below,
            "status": "incomplete",
        }
        if complete and not scored:
            result["status"] = "not_run"
        elif complete:
            rate = (scored - below) / scored
            result["pass_rate"] = round(rate, 4)
            result["met"] = rate >= metric.min_pass_rate
            result["status"] = "met" if result["met"] else "not_met"
        report[name] = result
    return report


def exit_code(
    summary: dict[str, int], quality_report: dict[str, QualityResult], unstable: int = 0
) -> int:
    """2 for an incomplete run, 1 for a failed gate, 0 when it is met; `unstable` counts
    the unstable cases that fail the gate (`--fail-on-unstable`; else 0)."""
    if summary[ERROR] or summary[MISSING]:
        return 2
    failed_quality = any(q["met"] is False for q in quality_report.values())
    if summary[FAILED] or failed_quality or unstable:
        return 1
    return 0


def _number(value: float) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
