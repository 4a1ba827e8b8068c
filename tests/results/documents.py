"""Score results records built whole for tests: every key the contract names, with plain
defaults a test overrides (`**fields`); `score_document` checks the whole against the
contract, so a test's document is one `agentjudge score` could have written."""

from __future__ import annotations

from typing import Any, cast

from agentjudge.results.score import (
    NodeRecord,
    ScoreResults,
    StepRecord,
    TrajectoryRecord,
    score_results,
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
    return score_results(document, "the test's document")
