"""`agentjudge score --mlflow-tracking-uri`: the run, its parameters and its details in MLflow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write

pytestmark = pytest.mark.timeout(180)


def test_score_logs_the_run_to_mlflow(tmp_path: Path, mlflow_url: str) -> None:
    run_ = doc(2)
    run_["steps"][1]["message"] = "ok [[score=0.8]]"
    write(tmp_path / "runs" / "a.json", run_)
    env = {**os.environ, "AGENTJUDGE_CACHE_DIR": str(tmp_path / "cache")}
    with JudgeServer() as judge:
        command = [
            sys.executable, "-m", "agentjudge", "score", str(tmp_path / "runs"),
            "--judge-url", judge.base_url, "--judge-model", "judge", "-o", "out.json",
            "--mlflow-tracking-uri", mlflow_url, "--mlflow-experiment", "score-cli",
        ]  # fmt: skip
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=170
        )
    assert done.returncode == 0, done.stderr
    run_id = done.stderr.split("mlflow run ", 1)[1].split()[0]
    run = httpx.get(
        f"{mlflow_url}/api/2.0/mlflow/runs/get", params={"run_id": run_id}, timeout=30
    ).json()["run"]
    params = {p["key"]: p["value"] for p in run["data"]["params"]}
    metrics = {m["key"]: m["value"] for m in run["data"]["metrics"]}
    tags = {t["key"]: t["value"] for t in run["data"]["tags"]}
    assert params["atif_prompt_version"] == "agentjudge-atif-v5+score"
    assert params["atif_scored_frames"] == "all"
    assert metrics["atif_trajectory_count"] == 1
    assert tags["atif_complete"] == "true"
    artifact = httpx.get(
        f"{mlflow_url}/get-artifact",
        params={"run_id": run_id, "path": "atif/agentjudge_results.json"},
        timeout=30,
    )
    assert artifact.json() == json.loads((tmp_path / "out.json").read_text())
    assert mlflow_url not in artifact.text
    # the contrib provider's name holds its shape, as the adapter's runs have it
    contrib = httpx.get(
        f"{mlflow_url}/get-artifact",
        params={"run_id": run_id, "path": "atif/evaluation_results.json"},
        timeout=30,
    ).json()
    assert (contrib["id"], contrib["model_name"]) == (run_id, "judge")
    assert contrib["num_examples_evaluated"] == 1
    (scored,) = contrib["trajectory_results"]
    assert Path(scored["source_path"]) == tmp_path / "runs" / "a.json"
