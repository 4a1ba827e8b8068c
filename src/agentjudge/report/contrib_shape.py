"""Our results in the eval-hub-contrib `atif` provider's shapes, for readers written for it.

The contrib provider's MLflow artifacts are `atif/evaluation_results.json` (eval-hub-sdk's
`JobResults` dumped, the scored tree in `evaluation_metadata.atif_trajectories`) and, with a
training threshold, `atif/training/{eligible,ineligible}_trajectories.json`. This module maps
a results document (`agentjudge.score/v1`) onto those shapes, and nothing else: no I/O, no
SDK (the adapter checks the SDK accepts what is built here).

How our model maps (docs/evalhub.md, "Which artifact is which"):
- a node `scored` is a contrib scored node (`score` its own mean, `aggregate_score` its
  subtree's); `failed` is a contrib failed node (`error_type` our fixed kind, `error` why);
  `unscored` (beyond max_subagent_depth) has the failed node's keys with its own status;
  an omitted subagent is no node: its parent lists it under `omitted`;
- a failure candidate's `category` is `uncategorized` when the judge gave none, its
  `categorization_status` `uncategorized` for our `invalid_response`, and its `rationale`
  the categorization's (as contrib's); the score's own rationale is `score_rationale`;
- a node is training-eligible under our rule, stricter than contrib's: its whole subtree
  scored (none failed, unscored or omitted) and its aggregate at or above the threshold;
- `source_path` is the node's file when the node is that whole file (a root, a subagent
  given by its own file), null for a subagent inside another file (contrib's embedded
  subagents have none either), with eval-hub's S3 location when the job's data came from S3.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import PurePosixPath
from typing import Any

from agentjudge.judge.taxonomy import FAILURES, UNCATEGORIZED
from agentjudge.results.score import NodeRecord, ScoreResults, StepRecord
from agentjudge.scoring.config import ScoreConfig

# the node kinds that are a whole file: their file is a trajectory on its own
WHOLE_FILE_KINDS = ("root", "file", "session")
# the contrib provider's names of a failure candidate's categorization outcomes
CATEGORIZATION_STATUS = {
    "categorized": "categorized",
    "invalid_response": "uncategorized",
    "judge_error": "judge_error",
}
# eval-hub mounts a job's test data here; from S3 when these variables name its origin
TEST_DATA = PurePosixPath("/test_data")
BENCHMARK_ID = "atif_trajectory_default"  # the benchmark a CLI run's results stand for


def source_location(file: str, environ: Mapping[str, str]) -> str:
    """Where a trajectory file came from, as the contrib provider says it: its S3 object
    (`s3://$TEST_DATA_S3_BUCKET/$TEST_DATA_S3_KEY/<path under /test_data>`) when eval-hub
    fetched the job's data from S3, else the path itself."""
    bucket = environ.get("TEST_DATA_S3_BUCKET", "").strip()
    prefix = environ.get("TEST_DATA_S3_KEY", "").strip().strip("/")
    path = PurePosixPath(file)
    if bucket and prefix and path.is_relative_to(TEST_DATA) and path != TEST_DATA:
        return f"s3://{bucket}/{prefix}/{path.relative_to(TEST_DATA).as_posix()}"
    return file


def scored_trees(
    document: ScoreResults, environ: Mapping[str, str] | None = None
) -> list[dict[str, Any]]:
    """`atif_trajectories`: each root's tree as contrib nodes, children nested under
    `subagent_trajectories`. `environ` gives the S3 origin of the files (`source_location`)."""
    threshold = document["training_threshold"]
    completion = document["run_parameters"]["completion_threshold"]
    why = {entry["node"]: entry["reason"] for entry in document["incomplete"]}
    trees = []
    for tree in document["trajectories"]:
        nodes = tree["nodes"]
        children: dict[str | None, list[NodeRecord]] = {}
        for node in nodes:
            children.setdefault(node["parent_id"], []).append(node)
        trees.append(_node(nodes[0], children, threshold, completion, why, environ or {}))
    return trees


def _node(
    node: NodeRecord,
    children: dict[str | None, list[NodeRecord]],
    threshold: float | None,
    completion: float,
    why: dict[str, str],
    environ: Mapping[str, str],
) -> dict[str, Any]:
    below = [
        _node(child, children, threshold, completion, why, environ)
        for child in children.get(node["id"], [])
    ]
    whole = node["kind"] in WHOLE_FILE_KINDS
    common = {
        "trajectory_id": node["trajectory_id"],
        "source_path": source_location(node["file"], environ) if whole else None,
    }
    # ours, beside contrib's keys: the node's id (its trajectory_id may be null or
    # repeated), depth, completeness and the subagents its refs name that resolve to nothing
    ours = {
        "id": node["id"],
        "depth": node["depth"],
        "complete": node["complete"],
        "omitted": node["omitted"],
    }
    if node["status"] != "scored":
        return {
            **common,
            "status": node["status"],
            "error_type": node["reason"] or node["status"],
            "error": why.get(node["id"], node["status"]),
            "step_count": node["step_count"],
            "subagent_trajectories": below,
            "training_eligible": None if threshold is None else False,
            **ours,
        }
    steps = [_step(step, index, node["trajectory_id"]) for index, step in enumerate(node["steps"])]
    candidates = [s for s in steps if "categorization_status" in s]
    categorized = sum(s["categorization_status"] == "categorized" for s in candidates)
    return {
        **common,
        "score": node["own_score"],
        "steps": steps,
        "detectable_failure_count": len(candidates),
        "categorized_failure_count": categorized,
        "uncategorized_failure_count": len(candidates) - categorized,
        "categorization_judge_error_count": sum(
            s["categorization_status"] == "judge_error" for s in candidates
        ),
        "step_count": node["step_count"],
        "total_step_count": node["subtree_step_count"],
        "subagent_trajectories": below,
        "aggregate_score": node["aggregate"],
        "status": "scored",
        "training_eligible": None if threshold is None else _eligible(node, below, threshold),
        "completion_threshold": completion,
        "passed": node["passed"],
        **ours,
    }


def _eligible(node: NodeRecord, below: list[dict[str, Any]], threshold: float) -> bool:
    # ours: the whole subtree scored, complete, and the node's aggregate at the threshold
    # (a child is eligible-or-not by the same rule, so its subtree is judged already)
    whole = node["complete"] and all(
        child["status"] == "scored" and child["complete"] for child in _walk(below)
    )
    return whole and node["aggregate"] is not None and node["aggregate"] >= threshold


def _step(step: StepRecord, index: int, trajectory_id: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "trajectory_id": trajectory_id,
        "step_index": index,
        "step_id": step["step_id"],
        "score": step["score"],
    }
    if step["tool_names"]:
        out["tool_name"] = step["tool_names"][0]
        out["tool_names"] = step["tool_names"]
    if step["scores"]:
        out["criterion_scores"] = step["scores"]
    status = step["categorization_status"]
    if status is not None:  # a failure candidate: contrib's categorization keys
        out["category"] = step["category"] or UNCATEGORIZED
        out["confidence"] = step["confidence"] if step["confidence"] is not None else 0.0
        out["rationale"] = step["category_rationale"]
        out["categorization_status"] = CATEGORIZATION_STATUS[status]
    out["score_rationale"] = step["rationale"]
    if step["error"] is not None:
        out["error"] = step["error"]
    return out


def flatten(trees: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every node of `trees`, each root first then its subagents depth first (each still
    holding its own `subagent_trajectories`, as contrib's flattened nodes do)."""
    return list(_walk(trees))


def _walk(nodes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        yield node
        yield from _walk(node["subagent_trajectories"])


def trajectory_scores(flat: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`trajectory_results`: eval-hub-sdk's `TrajectoryScore` of every node."""
    return [
        {
            "trajectory_id": node["trajectory_id"],
            "source_path": node["source_path"],
            "score": node.get("score"),
            "aggregate_score": node.get("aggregate_score"),
            "status": node["status"],
            "training_eligible": node["training_eligible"],
        }
        for node in flat
    ]


def eligible_paths(flat: list[dict[str, Any]]) -> list[str]:
    """The files of the eligible nodes that are whole files, in tree order."""
    return [n["source_path"] for n in flat if n["training_eligible"] and n["source_path"]]


def evaluation_metadata(
    document: ScoreResults, config: ScoreConfig, trees: list[dict[str, Any]]
) -> dict[str, Any]:
    """`evaluation_metadata` with the contrib provider's keys, from our document."""
    params = document["run_parameters"]
    criteria = document["criteria"]
    judge = document["judge"]
    flat = flatten(trees)
    scored = [n for n in flat if n["status"] == "scored"]
    mode = criteria["mode"]
    custom = criteria["rubric"] if mode == "custom" else None
    with_failures = [n for n in scored if n["detectable_failure_count"]]
    return {
        "atif_trajectories": trees,
        "atif_trajectory_metadata": trajectory_metadata(document),
        "atif_scoring_mode": mode,
        "atif_subagent_aggregation": params["subagent_aggregation"],
        "atif_subagent_depth_limit": params["max_subagent_depth"],
        "atif_total_step_limit": config.max_total_steps,
        "atif_reference_rubric": {
            "reference": config.reference_rubric,
            "benchmark": criteria["benchmark_name"],
        }.get(mode),
        "atif_benchmark_name": criteria["benchmark_name"] if mode == "benchmark" else None,
        "atif_benchmark_registry_version": criteria["registry_version"],
        "atif_custom_rubric": custom["name"] if custom else None,
        "atif_custom_aggregation": custom["aggregation"] if custom else None,
        "atif_failure_threshold": params["failure_threshold"],
        "atif_completion_threshold": params["completion_threshold"],
        "atif_detectable_failure_count": sum(n["detectable_failure_count"] for n in scored),
        "atif_categorized_failure_count": sum(n["categorized_failure_count"] for n in scored),
        "atif_uncategorized_failure_count": sum(n["uncategorized_failure_count"] for n in scored),
        "atif_categorization_judge_error_count": sum(
            n["categorization_judge_error_count"] for n in scored
        ),
        "atif_detectable_failure_trajectory_count": len(with_failures),
        # the seed's rule, as atif_failure_categorization_rate counts: every candidate step
        # of the node has an actionable category (`none` is not one)
        "atif_categorized_failure_trajectory_count": sum(
            all(s.get("category") in FAILURES for s in n["steps"] if "category" in s)
            for n in with_failures
        ),
        "atif_failure_categorization_rate": document["metrics"]["atif_failure_categorization_rate"],
        "atif_training_threshold": document["training_threshold"],
        "atif_training_manifest": eligible_paths(flat),
        "atif_partial_result_policy": params["partial_result_policy"],
        "atif_failed_trajectory_count": sum(n["status"] == "failed" for n in flat),
        "atif_judge_request_count": judge["calls"],
        "atif_judge_request_limit": config.max_judge_requests,
        "atif_judge_prompt_token_count": judge["input_tokens"],
        "atif_judge_completion_token_count": judge["output_tokens"],
        "atif_judge_token_count": judge["input_tokens"] + judge["output_tokens"],
        "atif_judge_success_count": judge["successes"],
        "atif_judge_error_count": judge["errors"],
    }


def trajectory_metadata(document: ScoreResults) -> list[dict[str, Any]]:
    """`atif_trajectory_metadata`: each root trajectory's identity as the results keep it
    (its raw steps, task instruction and tool definitions are in its file, not copied:
    those two keys are null, and there is no `steps`)."""
    return [_metadata(tree["nodes"][0]) for tree in document["trajectories"]]


def _metadata(root: NodeRecord) -> dict[str, Any]:
    return {
        "trajectory_id": root["trajectory_id"],
        "session_id": root["session_id"],
        "atif_schema_version": root["schema_version"],
        "task_instruction": None,
        "agent_name": root["agent"]["name"],
        "agent_version": root["agent"]["version"],
        "model": root["agent"]["model"],
        "tool_definitions_count": None,
    }


def evaluation_results(
    document: ScoreResults,
    config: ScoreConfig,
    job: Mapping[str, Any],
    env_card: dict[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """`atif/evaluation_results.json` as the contrib provider writes it: eval-hub-sdk's
    `JobResults` as JSON, with `trajectory_results`. `job`: the job's `id`, `benchmark_id`,
    `benchmark_index` and `model_name` (the judge's); `env_card`: the SDK's environment
    card as JSON, when there is one."""
    trees = scored_trees(document, environ)
    metrics = document["metrics"]
    count = metrics["atif_trajectory_count"]
    started = datetime.fromisoformat(document["run_metadata"]["started_at"])
    finished = datetime.fromisoformat(document["run_metadata"]["finished_at"])
    return {
        "id": job["id"],
        "benchmark_id": job["benchmark_id"],
        "benchmark_index": job["benchmark_index"],
        "model_name": job["model_name"],
        "results": [
            {
                "metric_name": name,
                "metric_value": value,
                "metric_type": "float",
                "confidence_interval": None,
                "num_samples": count,
                "metadata": {},
            }
            for name, value in metrics.items()
            if value is not None
        ],
        "overall_score": document["overall_score"],
        "num_examples_evaluated": document["num_examples_evaluated"],
        "duration_seconds": (finished - started).total_seconds(),
        "completed_at": document["run_metadata"]["finished_at"],
        "trajectory_results": trajectory_scores(flatten(trees)),
        "evaluation_metadata": evaluation_metadata(document, config, trees),
        "oci_artifact": None,
        "mlflow_run_id": None,
        "eval_card": None,
        "env_card": env_card,
        "metrics_schema": None,
        "additional_info": None,
    }
