"""agentjudge as an eval-hub provider: the real eval-hub server, MLflow server and judge server.

A job is submitted through eval-hub's REST API; eval-hub runs our adapter as a local
process; we check the job's metrics and the MLflow artifact through MLflow's REST API.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, with_refs, write
from tests.conftest import REPO
from tests.e2e.conftest import free_port, start, stop, wait_for

pytestmark = pytest.mark.timeout(240)

EVALHUB = Path(sys.executable).parent / "eval-hub-server"


@pytest.fixture(scope="module")
def evalhub_url(tmp_path_factory: pytest.TempPathFactory, mlflow_url: str) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("evalhub")
    port = free_port()
    config = {
        "service": {"port": port, "host": "127.0.0.1", "disable_auth": True},
        "database": {"driver": "sqlite", "url": f"file:{folder / 'evalhub.db'}"},
        "mlflow": {"tracking_uri": mlflow_url},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    provider = yaml.safe_load((REPO / "deploy/evalhub/providers/agentjudge.yaml").read_text())
    # the adapter runs from this checkout's virtual environment
    provider["runtime"]["local"]["command"] = f"{sys.executable} -m agentjudge.integrations.evalhub"
    (folder / "providers").mkdir()
    (folder / "providers" / "agentjudge.yaml").write_text(yaml.safe_dump(provider))
    env = {
        **os.environ,
        "AGENTJUDGE_CACHE_DIR": str(folder / "cache"),
        "PYTHONPATH": str(REPO / "src"),
    }
    proc = start(
        [str(EVALHUB), "-local", "-configdir", str(folder)], folder / "evalhub.log", REPO, env
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/api/v1/health", 60)
        yield f"http://127.0.0.1:{port}/api/v1"
    finally:
        stop(proc)


def trajectories(folder: Path, second_step: str) -> Path:
    root = doc(3)
    root["steps"][1]["message"] = second_step
    root["steps"][2]["message"] = "done [[score=0.25]] [[category=reasoning_failure]]"
    with_refs(root, 2, [{"trajectory_path": "child.json"}])
    write(folder / "runs" / "root.json", root)
    child = doc(2)
    child["steps"][1]["message"] = "looked [[score=0.75]]"
    write(folder / "runs" / "child.json", child)
    return folder / "runs"


def run_job(evalhub_url: str, judge: JudgeServer, runs: Path, name: str) -> dict[str, Any]:
    body = {
        "name": name,
        "model": {"url": judge.base_url, "name": "judge"},
        "benchmarks": [
            {
                "id": "atif_trajectory_default",
                "provider_id": "agentjudge",
                "parameters": {
                    "trajectory_path": str(runs),
                    "subagent_aggregation": "hierarchical",
                    "judge_max_attempts": 2,
                    "judge_initial_backoff_seconds": 0.01,
                },
            }
        ],
        "experiment": {"name": f"agentjudge-{name}"},
    }
    submitted = httpx.post(f"{evalhub_url}/evaluations/jobs", json=body, timeout=30)
    assert submitted.status_code == 202, submitted.text
    job_id = submitted.json()["resource"]["id"]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        job = httpx.get(f"{evalhub_url}/evaluations/jobs/{job_id}", timeout=30).json()
        if job["status"]["state"] not in ("pending", "running"):
            logs = httpx.get(f"{evalhub_url}/evaluations/jobs/{job_id}/logs", timeout=30).text
            httpx.delete(
                f"{evalhub_url}/evaluations/jobs/{job_id}",
                params={"hard_delete": "true"},
                timeout=30,
            )
            return {"job": job, "logs": logs}
        time.sleep(0.5)
    raise AssertionError(f"job {job_id} still {job['status']['state']} after 180 s")


def test_job_completes_with_metrics_and_an_mlflow_artifact(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, runs, "ok")
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    (bench,) = job["results"]["benchmarks"]
    # the root's first step scores by hash, so the overall score is only range-checked here;
    # exact numbers are the score CLI tests' job
    metrics = bench["metrics"]
    assert metrics["atif_trajectory_count"] == 1
    assert metrics["atif_failure_categorization_rate"] == 1.0
    assert 0.0 <= metrics["atif_overall_score"] <= 1.0
    assert {m["name"] for m in bench["metrics_schema"]} == set(metrics)
    assert bench["test"]["pass"] == (metrics["atif_overall_score"] >= 0.5)
    run_id = bench["mlflow_run_id"]
    artifact = httpx.get(
        f"{mlflow_url}/get-artifact",
        params={"run_id": run_id, "path": "atif/evaluation_results.json"},
        timeout=30,
    )
    assert artifact.status_code == 200
    details = artifact.json()
    assert details["metrics"]["atif_overall_score"] == pytest.approx(metrics["atif_overall_score"])
    root, child = details["trajectories"][0]["nodes"]
    assert [s["score"] for s in root["steps"]][1:] == [0.5, 0.25]
    assert root["steps"][2]["category"] == "reasoning_failure"
    assert child["steps"][1]["score"] == 0.75
    run = httpx.get(
        f"{mlflow_url}/api/2.0/mlflow/runs/get", params={"run_id": run_id}, timeout=30
    ).json()
    params = {p["key"]: p["value"] for p in run["run"]["data"]["params"]}
    assert params["atif_prompt_version"] == "agentjudge-atif-v1"
    assert params["atif_judge"] == "openai-compatible/judge"
    assert params["subagent_aggregation"] == "hierarchical"
    tags = {t["key"]: t["value"] for t in run["run"]["data"]["tags"]}
    assert tags["atif_complete"] == "true"


def test_a_failing_judge_ends_the_job_failed_with_our_code(
    tmp_path: Path, evalhub_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[fault=503]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, runs, "fail")
    job = outcome["job"]
    assert job["status"]["state"] == "failed", outcome["logs"]
    (bench,) = job["status"]["benchmarks"]
    assert bench["error_message"]["message_code"] == "agentjudge_job_failed"
    assert bench["error_message"]["message"] == "the scoring job failed: judge_error"
