"""Our results in the contrib `atif` provider's shapes (report/contrib_shape.py,
report/training.py), checked against hand-written expectations: a training pipeline
written for the contrib provider reads our artifacts as it reads its own."""

from __future__ import annotations

from typing import Any

import pytest

from agentjudge.report.contrib_shape import (
    evaluation_results,
    flatten,
    scored_trees,
    source_location,
    trajectory_scores,
)
from agentjudge.report.training import training_manifests
from agentjudge.results.score import NodeRecord, ScoreResults, StepRecord
from agentjudge.scoring.config import load_config
from tests.results.documents import node as whole_node
from tests.results.documents import score_document, tree
from tests.results.documents import step as judged

CONFIG = load_config(
    None,
    {
        "trajectory_path": ["/test_data/runs"],
        "judge": "fake",
        "max_total_steps": 900,
        "max_judge_requests": 40,
    },
)
S3 = {"TEST_DATA_S3_BUCKET": "bkt", "TEST_DATA_S3_KEY": "/pre/"}
JOB = {"id": "job-1", "benchmark_id": "atif_trajectory_default", "benchmark_index": 0}


def step(step_id: int, score: float | None, **extra: Any) -> StepRecord:
    """A step of our results document: judged, not a failure candidate unless `extra`."""
    return judged(step_id, score, rationale=f"rationale {step_id}", **extra)


def node(id_: str, kind: str, file: str, parent: str | None, **extra: Any) -> NodeRecord:
    """A node of our results document, scored and complete unless `extra` says otherwise."""
    fields = {
        "kind": kind, "file": file, "trajectory_id": f"t-{id_}", "session_id": f"s-{id_}",
        "agent": {"name": f"agent-{id_}", "version": "1.0", "model": "m"},
        "schema_version": "ATIF-v1.6", "depth": id_.count("/"), "passed": True,
    }  # fmt: skip
    return whole_node(id_, parent, **{**fields, **extra})


def document(threshold: float | None = 0.6) -> ScoreResults:
    """Two roots: `a` (complete, with a subagent embedded in its file) and `b` (whose
    subagent `b/c`, its own file, failed; below it `b/c/d`, beyond the depth limit)."""
    a = node(
        "a", "root", "/test_data/runs/a.json", None,
        own_score=0.7, aggregate=0.8, step_count=2, subtree_step_count=3,
        steps=[
            step(1, 1.0, tool_names=["grep", "sed"], scores={"helpful": 1.0}),
            step(
                2, 0.4, category="reasoning_failure", confidence=0.7,
                categorization_status="categorized", category_rationale="it guessed",
            ),
        ],
    )  # fmt: skip
    embedded = node(
        "a/e", "embedded", "/test_data/runs/a.json", "a",
        own_score=1.0, aggregate=1.0, step_count=1, subtree_step_count=1,
        steps=[step(1, 1.0)],
    )  # fmt: skip
    b = node(
        "b", "root", "/test_data/runs/b.json", None,
        own_score=0.9, aggregate=0.9, step_count=2, subtree_step_count=2,
        complete=False, passed=False,
        omitted=[{"ref_path": "gone.json", "parent_step_id": 2, "target": "gone.json",
                  "reason": "file_not_found"}],
        steps=[
            step(1, 1.0),
            step(2, 0.3, categorization_status="invalid_response"),
            step(3, 0.2, category="none", confidence=0.9,
                 categorization_status="categorized", category_rationale="fine really"),
        ],
    )  # fmt: skip
    failed = node(
        "b/c", "file", "/test_data/runs/c.json", "b",
        status="failed", reason="judge_error", complete=False, passed=False,
        own_score=None, aggregate=None, step_count=2, subtree_step_count=0,
        steps=[step(1, None, error="http_503")],
    )  # fmt: skip
    deep = node(
        "b/c/d", "embedded", "/test_data/runs/c.json", "b/c",
        status="unscored", reason="beyond max_subagent_depth", passed=False,
        own_score=None, aggregate=None, step_count=4, subtree_step_count=0,
    )  # fmt: skip
    document = score_document(
        [tree([a, embedded]), tree([b, failed, deep])],
        overall_score=0.85, num_examples_evaluated=3, training_threshold=threshold,
        metrics={"atif_overall_score": 0.85, "atif_trajectory_count": 3,
                 "atif_failure_categorization_rate": 0.5},
        incomplete=[
            {"node": "b", "file": "/test_data/runs/b.json", "depth": 0,
             "reason": "omitted subagent: gone.json (file_not_found)"},
            {"node": "b/c", "file": "/test_data/runs/c.json", "depth": 1,
             "reason": "failed: judge_error (http_503: down)"},
        ],
    )  # fmt: skip
    document["run_parameters"].update(
        {"max_subagent_depth": 1, "partial_result_policy": "skip_failed_trajectory"}
    )
    document["run_metadata"].update(
        {
            "started_at": "2025-01-02T03:04:05+00:00",
            "finished_at": "2025-01-02T03:04:07.500000+00:00",
        }
    )
    document["judge"].update(
        {"calls": 9, "successes": 8, "errors": 1, "input_tokens": 1000, "output_tokens": 50}
    )
    document["criteria"].update(
        {"mode": "custom", "rubric": {"name": "mine", "aggregation": "mean", "criteria": []}}
    )  # fmt: skip
    return document


def test_a_scored_node_has_contribs_keys_and_steps() -> None:
    root = scored_trees(document())[0]
    assert root["steps"] == [
        {
            "trajectory_id": "t-a", "step_index": 0, "step_id": 1, "score": 1.0,
            "tool_name": "grep", "tool_names": ["grep", "sed"],
            "criterion_scores": {"helpful": 1.0}, "score_rationale": "rationale 1",
        },
        {
            "trajectory_id": "t-a", "step_index": 1, "step_id": 2, "score": 0.4,
            "category": "reasoning_failure", "confidence": 0.7, "rationale": "it guessed",
            "categorization_status": "categorized", "score_rationale": "rationale 2",
        },
    ]  # fmt: skip
    (child,) = root.pop("subagent_trajectories")
    root.pop("steps")
    assert root == {
        "trajectory_id": "t-a",
        "source_path": "/test_data/runs/a.json",
        "score": 0.7,
        "detectable_failure_count": 1,
        "categorized_failure_count": 1,
        "uncategorized_failure_count": 0,
        "categorization_judge_error_count": 0,
        "step_count": 2,
        "total_step_count": 3,
        "aggregate_score": 0.8,
        "status": "scored",
        "training_eligible": True,
        "completion_threshold": 0.5,
        "passed": True,
        "id": "a",
        "depth": 0,
        "complete": True,
        "omitted": [],
    }
    # embedded in its parent's file: no file of its own (contrib's have none either)
    assert (child["source_path"], child["training_eligible"]) == (None, True)


def test_failure_candidates_uncategorized_and_none() -> None:
    b = scored_trees(document())[1]
    assert b["steps"][1:] == [
        {
            "trajectory_id": "t-b", "step_index": 1, "step_id": 2, "score": 0.3,
            "category": "uncategorized", "confidence": 0.0, "rationale": "",
            "categorization_status": "uncategorized", "score_rationale": "rationale 2",
        },
        {
            "trajectory_id": "t-b", "step_index": 2, "step_id": 3, "score": 0.2,
            "category": "none", "confidence": 0.9, "rationale": "fine really",
            "categorization_status": "categorized", "score_rationale": "rationale 3",
        },
    ]  # fmt: skip
    # `none` is a category from the taxonomy (counted as contrib counts it), not an
    # actionable one (the seed's rate: see the metadata test)
    counts = (
        "detectable_failure_count",
        "categorized_failure_count",
        "uncategorized_failure_count",
    )
    assert [b[k] for k in counts] == [2, 1, 1]
    # scored at 0.9, but a subagent failed and another is omitted: not for training
    assert (b["training_eligible"], b["passed"], b["complete"]) == (False, False, False)
    assert b["omitted"][0]["reason"] == "file_not_found"


def test_failed_and_unscored_nodes_have_the_failed_nodes_keys() -> None:
    (failed,) = scored_trees(document())[1]["subagent_trajectories"]
    (deep,) = failed.pop("subagent_trajectories")
    assert failed == {
        "trajectory_id": "t-b/c",
        "source_path": "/test_data/runs/c.json",
        "status": "failed",
        "error_type": "judge_error",
        "error": "failed: judge_error (http_503: down)",
        "step_count": 2,
        "training_eligible": False,
        "id": "b/c",
        "depth": 1,
        "complete": False,
        "omitted": [],
    }
    assert deep == {
        "trajectory_id": "t-b/c/d",
        "source_path": None,
        "status": "unscored",
        "error_type": "beyond max_subagent_depth",
        "error": "unscored",
        "step_count": 4,
        "subagent_trajectories": [],
        "training_eligible": False,
        "id": "b/c/d",
        "depth": 2,
        "complete": True,
        "omitted": [],
    }


def test_the_training_manifests_have_contribs_keys_and_the_eligible_files() -> None:
    manifests = training_manifests(document(), S3)
    eligible, ineligible = manifests["eligible"], manifests["ineligible"]
    assert {k: v for k, v in eligible.items() if k not in ("trajectories", "eligible_when")} == {
        "schema_version": 1,
        "selection": "eligible",
        "training_threshold": 0.6,
        "trajectory_count": 2,
        "source_paths": ["s3://bkt/pre/runs/a.json"],
        "manifest": ["s3://bkt/pre/runs/a.json"],
    }
    assert [n["id"] for n in eligible["trajectories"]] == ["a", "a/e"]
    assert [n["id"] for n in ineligible["trajectories"]] == ["b", "b/c", "b/c/d"]
    assert ineligible["source_paths"] == ["s3://bkt/pre/runs/b.json", "s3://bkt/pre/runs/c.json"]
    assert (ineligible["trajectory_count"], ineligible["manifest"]) == (3, [])
    assert "whole subtree" in eligible["eligible_when"]


def test_a_subagent_is_eligible_by_its_own_subtree() -> None:
    doc = document(threshold=0.85)  # a's aggregate 0.8 is below, its subagent's 1.0 not
    flat = flatten(scored_trees(doc))
    assert [(n["id"], n["training_eligible"]) for n in flat] == [
        ("a", False), ("a/e", True), ("b", False), ("b/c", False), ("b/c/d", False),
    ]  # fmt: skip


def test_without_a_threshold_no_node_says_eligible_or_not() -> None:
    flat = flatten(scored_trees(document(threshold=None)))
    assert {n["training_eligible"] for n in flat} == {None}


def test_evaluation_results_as_the_sdks_job_results_with_contribs_metadata() -> None:
    job = {**JOB, "model_name": "judge"}
    results = evaluation_results(document(), CONFIG, job, {"framework_name": "x"}, S3)
    assert list(results) == [
        "id", "benchmark_id", "benchmark_index", "model_name", "results", "overall_score",
        "num_examples_evaluated", "duration_seconds", "completed_at", "trajectory_results",
        "evaluation_metadata", "oci_artifact", "mlflow_run_id", "eval_card", "env_card",
        "metrics_schema", "additional_info",
    ]  # fmt: skip
    assert results["results"][0] == {
        "metric_name": "atif_overall_score",
        "metric_value": 0.85,
        "metric_type": "float",
        "confidence_interval": None,
        "num_samples": 3,
        "metadata": {},
    }
    assert [r["metric_name"] for r in results["results"]] == [
        "atif_overall_score",
        "atif_trajectory_count",
        "atif_failure_categorization_rate",
    ]
    assert results["duration_seconds"] == pytest.approx(2.5)
    assert results["completed_at"] == "2025-01-02T03:04:07.500000+00:00"
    assert results["env_card"] == {"framework_name": "x"}
    assert results["trajectory_results"][1] == {
        "trajectory_id": "t-a/e",
        "source_path": None,
        "score": 1.0,
        "aggregate_score": 1.0,
        "status": "scored",
        "training_eligible": True,
    }
    assert [r["status"] for r in results["trajectory_results"]] == [
        "scored", "scored", "scored", "failed", "unscored",
    ]  # fmt: skip
    assert results["trajectory_results"][3]["score"] is None
    metadata = results["evaluation_metadata"]
    trees = metadata.pop("atif_trajectories")
    assert trajectory_scores(flatten(trees)) == results["trajectory_results"]
    assert metadata.pop("atif_trajectory_metadata")[1] == {
        "trajectory_id": "t-b",
        "session_id": "s-b",
        "atif_schema_version": "ATIF-v1.6",
        "task_instruction": None,
        "agent_name": "agent-b",
        "agent_version": "1.0",
        "model": "m",
        "tool_definitions_count": None,
    }
    assert metadata == {
        "atif_scoring_mode": "custom",
        "atif_subagent_aggregation": "flat",
        "atif_subagent_depth_limit": 1,
        "atif_total_step_limit": 900,
        "atif_reference_rubric": None,
        "atif_benchmark_name": None,
        "atif_benchmark_registry_version": None,
        "atif_custom_rubric": "mine",
        "atif_custom_aggregation": "mean",
        "atif_failure_threshold": 0.5,
        "atif_completion_threshold": 0.5,
        "atif_detectable_failure_count": 3,
        "atif_categorized_failure_count": 2,
        "atif_uncategorized_failure_count": 1,
        "atif_categorization_judge_error_count": 0,
        "atif_detectable_failure_trajectory_count": 2,
        # a's candidate is reasoning_failure; b's are uncategorized and none
        "atif_categorized_failure_trajectory_count": 1,
        "atif_failure_categorization_rate": 0.5,
        "atif_training_threshold": 0.6,
        "atif_training_manifest": ["s3://bkt/pre/runs/a.json"],
        "atif_partial_result_policy": "skip_failed_trajectory",
        "atif_failed_trajectory_count": 1,
        "atif_judge_request_count": 9,
        "atif_judge_request_limit": 40,
        "atif_judge_prompt_token_count": 1000,
        "atif_judge_completion_token_count": 50,
        "atif_judge_token_count": 1050,
        "atif_judge_success_count": 8,
        "atif_judge_error_count": 1,
    }


def test_benchmark_and_reference_modes_name_their_rubric() -> None:
    doc = document()
    doc["criteria"] |= {"mode": "benchmark", "benchmark_name": "swe-bench-lite"}
    doc["criteria"]["registry_version"] = "agentjudge-benchmarks-v1"
    metadata = evaluation_results(doc, CONFIG, {**JOB, "model_name": "j"})["evaluation_metadata"]
    assert metadata["atif_reference_rubric"] == metadata["atif_benchmark_name"] == "swe-bench-lite"
    assert metadata["atif_benchmark_registry_version"] == "agentjudge-benchmarks-v1"
    assert metadata["atif_custom_rubric"] is None
    doc["criteria"] |= {"mode": "reference", "benchmark_name": None}
    metadata = evaluation_results(doc, CONFIG, {**JOB, "model_name": "j"})["evaluation_metadata"]
    assert (metadata["atif_reference_rubric"], metadata["atif_benchmark_name"]) == ("default", None)


@pytest.mark.parametrize(
    ("file", "environ", "expected"),
    [
        ("/test_data/runs/a.json", S3, "s3://bkt/pre/runs/a.json"),
        ("/test_data/runs/a.json", {"TEST_DATA_S3_BUCKET": "bkt"}, "/test_data/runs/a.json"),
        ("/elsewhere/a.json", S3, "/elsewhere/a.json"),
        ("/test_data_other/a.json", S3, "/test_data_other/a.json"),
        ("runs/a.json", {}, "runs/a.json"),
    ],
)
def test_source_location(file: str, environ: dict[str, str], expected: str) -> None:
    assert source_location(file, environ) == expected
