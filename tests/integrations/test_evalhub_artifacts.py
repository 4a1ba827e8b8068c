"""The adapter's MLflow artifacts: ours under its own name, the contrib provider's names
with the contrib shapes (eval-hub-sdk's `JobResults` as JSON). Read back from a real MLflow
server: tests/e2e/test_evalhub.py."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

from agentjudge.api import score_trajectories
from agentjudge.scoring.config import load_config
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write

with warnings.catch_warnings():  # eval-hub-sdk still uses pydantic's class-based config
    warnings.simplefilter("ignore", DeprecationWarning)
    from evalhub.adapter import JobResults

    from agentjudge.integrations.evalhub import environment_card, mlflow_artifacts

JOB = {"id": "job-1", "benchmark_id": "atif_trajectory_default", "benchmark_index": 0}


def test_the_artifacts_names_and_evaluation_results_as_the_sdk_writes_it(tmp_path: Path) -> None:
    for name, score in (("good", "0.9"), ("bad", "0.2")):
        trajectory = doc(2)
        trajectory["steps"][1]["message"] = f"step [[score={score}]]"
        write(tmp_path / "runs" / f"{name}.json", trajectory)
    with JudgeServer() as judge:
        config = load_config(
            None,
            {
                "trajectory_path": [str(tmp_path / "runs")],
                "judge_url": judge.base_url,
                "judge_model": "judge",
                "output": str(tmp_path / "out.json"),
                "cache": False,
                "training_threshold": 0.5,
            },
        )
        run = score_trajectories(config)
    artifacts = {
        a.path: json.loads(a.content)
        for a in mlflow_artifacts(run, {**JOB, "model_name": "judge"}, environment_card(run))
    }
    assert list(artifacts) == [
        "atif/agentjudge_results.json",
        "atif/evaluation_results.json",
        "atif/training/eligible_trajectories.json",
        "atif/training/ineligible_trajectories.json",
    ]
    assert artifacts["atif/agentjudge_results.json"] == run.document
    results = artifacts["atif/evaluation_results.json"]
    # the SDK takes it, and it has every key the SDK's own dump has (and trajectory_results,
    # which this SDK's JobResults does not have yet)
    parsed = JobResults.model_validate(results)
    assert set(parsed.model_dump(mode="json")) | {"trajectory_results"} == set(results)
    assert results["env_card"]["framework_name"] == "agentjudge"
    assert results["env_card"]["custom"]["trajectory_count"] == 2
    assert results["evaluation_metadata"]["atif_training_manifest"] == [
        str(tmp_path / "runs" / "good.json")
    ]
    eligible = artifacts["atif/training/eligible_trajectories.json"]
    assert eligible["source_paths"] == [str(tmp_path / "runs" / "good.json")]
