"""Whole, valid grade results documents for reader tests: each test says only what it is
about, and every document it reads is one a writer could have written."""

from __future__ import annotations

from typing import Any

from agentjudge.results.grade import (
    STATUSES,
    CaseResult,
    GradeResults,
    JudgeScore,
    QualityResult,
    grade_results,
)


def judge_score(score: float | None, threshold: float = 3.0, **more: Any) -> JudgeScore:
    """A judge metric's entry: passed when `score` reaches `threshold`."""
    entry: dict[str, Any] = {
        "score": score,
        "threshold": threshold,
        "passed": None if score is None else score >= threshold,
        "quality": False,
        "reasoning": "",
        "error": None,
        "kind": "judge",
        **more,
    }
    return entry  # type: ignore[return-value]  # checked with its document


def case(
    case_id: str,
    status: str,
    *reasons: str,
    judge_scores: dict[str, Any] | None = None,
    **more: Any,
) -> CaseResult:
    """A case record with no checks."""
    record: dict[str, Any] = {
        "id": case_id,
        "status": status,
        "reasons": list(reasons),
        "checks": {},
        "judge_scores": judge_scores or {},
        **more,
    }
    return record  # type: ignore[return-value]  # checked with its document


def quality(
    pass_rate: float | None, min_pass_rate: float, met: bool | None, **more: Any
) -> QualityResult:
    """A quality metric's entry (its counts from `more`, else none scored)."""
    status = "met" if met else "not_met" if met is False else "not_run"
    entry: dict[str, Any] = {
        "pass_rate": pass_rate,
        "min_pass_rate": min_pass_rate,
        "met": met,
        "below_threshold": 0,
        "scored": 0,
        "passed": 0,
        "status": status,
        **more,
    }
    return entry  # type: ignore[return-value]  # checked with its document


def document(
    cases: list[CaseResult],
    *,
    exit_code: int = 0,
    quality: dict[str, QualityResult] | None = None,
    dataset_hash: str | None = "h",
    **more: Any,
) -> GradeResults:
    """A results document of `cases` (its summary counted from them), checked against the
    results types."""
    counts = dict.fromkeys(STATUSES, 0)
    for record in cases:
        if record["status"] in counts:
            counts[record["status"]] += 1
    data: dict[str, Any] = {
        "dataset_hash": dataset_hash,
        "traces_dataset_hash": dataset_hash,
        "graded_at": "2026-01-01T00:00:00+00:00",
        "generated_at": None,
        "judge": {"provider": None, "model": None},
        "capture": None,
        "agent_version": None,
        "model": None,
        "traces_files": ["traces.json"],
        "dataset_paths": [],
        "config": None,
        "planned": len(cases),
        "summary": {**counts, "exit_code": exit_code},
        "quality": quality or {},
        "fake_model": [],
        "warnings": [],
        "cases": cases,
        **more,
    }
    return grade_results(data)
