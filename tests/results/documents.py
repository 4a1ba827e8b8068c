"""Whole, valid results documents for reader tests: every key the contract names, with
plain defaults a test overrides; `score_document` and `document` (grade) check the whole
against the contract, so a test's document is one a writer could have written."""

from __future__ import annotations

from typing import Any, cast

from agentjudge.results.grade import (
    GRADE,
    STATUSES,
    CaseResult,
    GradeResults,
    JudgeScore,
    QualityResult,
)
from agentjudge.results.score import (
    SCORE,
    NodeRecord,
    ScoreResults,
    StepRecord,
    TrajectoryRecord,
)

RUBRIC = {
    "name": "agentjudge-default",
    "aggregation": "weighted_mean",
    "criteria": [
        {"name": "step_quality", "description": "How well the step helps.", "weight": 1.0}
    ],
}


def step(step_id: int, score: float | None, **fields: Any) -> StepRecord:
    """A judged step, not a failure candidate unless `fields` say so."""
    record = {
        "segment": 0, "step_id": step_id, "source": "agent", "tool_names": [], "score": score,
        "scores": {}, "rationale": "fine", "error": None, "error_message": None,
        "category": None, "confidence": None, "categorization_status": None,
        "category_rationale": "", "truncated": False, **fields,
    }  # fmt: skip
    return cast(StepRecord, record)


def node(node_id: str, parent: str | None, status: str = "scored", **fields: Any) -> NodeRecord:
    """A node of a tree: the root when `parent` is None, else a subagent in its own file."""
    record = {
        "id": node_id, "kind": "root" if parent is None else "file",
        "file": node_id.partition("#")[0], "input_sha256": None, "trajectory_id": None,
        "session_id": "s", "agent": {"name": "agent", "version": "1", "model": "m"},
        "schema_version": "ATIF-v1.7", "depth": 0 if parent is None else 1,
        "parent_id": parent, "parent_step_id": None if parent is None else 2, "status": status,
        "reason": None, "complete": True, "own_score": None, "aggregate": None, "passed": False,
        "step_count": 0, "subtree_step_count": 0, "failure_candidates": 0,
        "criteria": ["step_quality"], "omitted": [], "problems": [], "steps": [],
        "rubric": None, **fields,
    }  # fmt: skip
    return cast(NodeRecord, record)


def tree(nodes: list[NodeRecord], **fields: Any) -> TrajectoryRecord:
    record = {"root": nodes[0]["id"], "training_eligible": None, "decisive_failure": None,
              "nodes": nodes, **fields}  # fmt: skip
    return cast(TrajectoryRecord, record)


def score_document(trees: list[TrajectoryRecord], **fields: Any) -> ScoreResults:
    """A whole results document over `trees`; `fields` replace top-level keys."""
    document = {
        "schema": "agentjudge.score/v1", "status": "succeeded", "error": None,
        "overall_score": None, "num_examples_evaluated": 0,
        "metrics": {"atif_overall_score": None, "atif_trajectory_count": 0,
                    "atif_failure_categorization_rate": None},
        "metrics_interval": {"atif_overall_score": None, "level": 0.95, "resamples": 1000,
                             "seed": 0},
        "run_parameters": {
            "atif_judge": "fake/fake-judge", "atif_prompt_version": "agentjudge-atif-v4+score",
            "atif_scored_frames": "all", "scoring_mode": "default",
            "subagent_aggregation": "flat", "failure_threshold": 0.5,
            "completion_threshold": 0.5, "max_subagent_depth": 3,
            "partial_result_policy": "fail_fast", "context_steps": 6, "samples": 1,
            "judge_temperature": 0.0, "decisive_rule": "first_below_threshold",
            "bootstrap_seed": 0, "bootstrap_resamples": 1000,
        },
        "run_metadata": {
            "atif_complete": True, "unstable_steps": 0, "judge_notice": None,
            "tool": "agentjudge", "tool_version": "0.1.0",
            "started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:00:01+00:00",
        },
        "judge": {
            "endpoint": "http://127.0.0.1:9/v1", "requests": {}, "notes": [], "calls": 0,
            "successes": 0, "errors": 0, "protocol_errors": 0, "retries": 0, "cache_hits": 0,
            "store_rejected": 0, "verdicts": 0, "input_tokens": 0, "output_tokens": 0,
            "mean_latency_ms": None, "steps_judged": 0, "decisive_picks": 0,
            "second_round": {"steps": 0, "recovered": 0}, "input_tokens_per_step": None,
            "shared_prefix_fraction": None,
        },
        "criteria": {"mode": "default", "answer": "score", "benchmark_name": None,
                     "registry_version": None, "rubric": RUBRIC, "references": [],
                     "auto_derived": 0, "auto_fallbacks": 0},
        "failure_categories": {}, "step_errors": {}, "incomplete": [],
        "training_threshold": None, "trajectories": trees, **fields,
    }  # fmt: skip
    return SCORE.check(document, "the test's document")


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
    return GRADE.check(data, "the test's document")
