"""agentjudge as an eval-hub provider: the real eval-hub server, MLflow server and judge server.

A job is submitted through eval-hub's REST API; eval-hub runs our adapter as a local
process; we check the job's metrics and the MLflow artifact through MLflow's REST API.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agentjudge.judge.telemetry import METRIC_NAMES
from agentjudge.testing import JudgeServer, Script
from tests.atif.docs import doc, with_refs, write
from tests.conftest import REPO
from tests.e2e.conftest import free_port, start, stop, wait_for
from tests.e2e.otlp import Receiver, otlp_receiver

pytestmark = pytest.mark.timeout(240)

EVALHUB = Path(sys.executable).parent / "eval-hub-server"


@pytest.fixture(scope="module")
def collector() -> Iterator[Receiver]:
    """An OTLP receiver, eval-hub's jobs' collector (OTEL_EXPORTER_OTLP_ENDPOINT, gRPC)."""
    with otlp_receiver() as running:
        yield running


@pytest.fixture(scope="module")
def evalhub_url(
    tmp_path_factory: pytest.TempPathFactory, mlflow_url: str, collector: Receiver
) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("evalhub")
    port = free_port()
    config = {
        "service": {"port": port, "host": "127.0.0.1", "disable_auth": True},
        "database": {"driver": "sqlite", "url": f"file:{folder / 'evalhub.db'}"},
        "mlflow": {"tracking_uri": mlflow_url},
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    (folder / "providers").mkdir()
    # both: agentjudge under its own id, and as the drop-in for the contrib `atif` provider
    for name in ("agentjudge.yaml", "atif.yaml"):
        provider = yaml.safe_load((REPO / "deploy/evalhub/providers" / name).read_text())
        # the adapter runs from this checkout's virtual environment
        command = f"{sys.executable} -m agentjudge.integrations.evalhub"
        provider["runtime"]["local"]["command"] = command
        (folder / "providers" / name).write_text(yaml.safe_dump(provider))
    env = {
        **os.environ,
        "AGENTJUDGE_CACHE_DIR": str(folder / "cache"),
        "PYTHONPATH": str(REPO / "src"),
        # eval-hub's convention: its jobs export OpenTelemetry over gRPC to a collector
        "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
        "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
        "OTEL_EXPORTER_OTLP_TIMEOUT": "2",
        # a job with ray_address joins the test's own cluster (see LocalRayCluster)
        "RAY_USAGE_STATS_ENABLED": "0",
        "RAY_AUTH_MODE": "disabled",
    }
    env.pop("RAY_ADDRESS", None)
    proc = start(
        [str(EVALHUB), "-local", "-configdir", str(folder)], folder / "evalhub.log", REPO, env
    )
    try:
        wait_for(f"http://127.0.0.1:{port}/api/v1/health", 60)
        yield f"http://127.0.0.1:{port}/api/v1"
    finally:
        # its log says it shuts down at once, but it does not exit within 15 s: nothing to keep
        stop(proc, grace=3)


def trajectories(folder: Path, second_step: str) -> Path:
    root = doc(3)
    # every step marked: a step's score never hangs on a hash of the prompt's wording
    root["steps"][0]["message"] = "the task [[score=1.0]]"
    root["steps"][1]["message"] = second_step
    root["steps"][2]["message"] = "done [[score=0.25]] [[category=reasoning_failure]]"
    with_refs(root, 2, [{"trajectory_path": "child.json"}])
    write(folder / "runs" / "root.json", root)
    child = doc(2)
    child["steps"][0]["message"] = "look [[score=1.0]]"
    child["steps"][1]["message"] = "looked [[score=0.75]]"
    write(folder / "runs" / "child.json", child)
    return folder / "runs"


def run_job(
    evalhub_url: str,
    judge: JudgeServer,
    parameters: dict[str, Any],
    name: str,
    experiment: bool = True,
    provider: str = "agentjudge",
    url: str | None = None,
) -> dict[str, Any]:
    """Submit a job through eval-hub's API, wait for it to end; the job as eval-hub keeps
    it, its logs, and its id."""
    body: dict[str, Any] = {
        "name": name,
        "model": {"url": url or judge.base_url, "name": "judge"},
        "benchmarks": [
            {"id": "atif_trajectory_default", "provider_id": provider, "parameters": parameters}
        ],
    }
    if experiment:
        body["experiment"] = {"name": f"agentjudge-{name}"}
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
            return {"job": job, "logs": logs, "id": job_id}
        time.sleep(0.1)  # jobs take seconds: a 0.5 s poll added 0.25 s to each, on average
    raise AssertionError(f"job {job_id} still {job['status']['state']} after 180 s")


def ours(runs: Path) -> dict[str, Any]:
    """The parameters of our tests' jobs beyond the contrib provider's: fast retries."""
    return {
        "trajectory_path": str(runs),
        "subagent_aggregation": "hierarchical",
        "judge_max_attempts": 2,
        "judge_initial_backoff_seconds": 0.01,
    }


def artifact(mlflow_url: str, run_id: str, path: str) -> Any:
    got = httpx.get(
        f"{mlflow_url}/get-artifact", params={"run_id": run_id, "path": path}, timeout=30
    )
    assert got.status_code == 200, (path, got.text)
    return got.json()


def test_job_completes_with_metrics_and_an_mlflow_artifact(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, {**ours(runs), "scoring_mode": "default"}, "ok")
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    (bench,) = job["results"]["benchmarks"]
    metrics = bench["metrics"]
    assert metrics["atif_trajectory_count"] == 1
    assert metrics["atif_failure_categorization_rate"] == 1.0
    # hierarchical: the root's 1.0, 0.5, 0.25 and its subagent's 1.0, 0.75
    assert metrics["atif_overall_score"] == pytest.approx(3.5 / 5)
    assert {m["name"] for m in bench["metrics_schema"]} == set(metrics)
    assert bench["test"]["pass"] == (metrics["atif_overall_score"] >= 0.5)
    run_id = bench["mlflow_run_id"]
    details = artifact(mlflow_url, run_id, "atif/agentjudge_results.json")
    assert details["metrics"]["atif_overall_score"] == pytest.approx(metrics["atif_overall_score"])
    root, child = details["trajectories"][0]["nodes"]
    assert [s["score"] for s in root["steps"]][1:] == [0.5, 0.25]
    assert root["steps"][2]["category"] == "reasoning_failure"
    assert child["steps"][1]["score"] == 0.75
    run = httpx.get(
        f"{mlflow_url}/api/2.0/mlflow/runs/get", params={"run_id": run_id}, timeout=30
    ).json()
    params = {p["key"]: p["value"] for p in run["run"]["data"]["params"]}
    assert params["atif_prompt_version"] == "agentjudge-atif-v5+score"
    assert params["atif_judge"] == "openai-compatible/judge"
    assert params["subagent_aggregation"] == "hierarchical"
    tags = {t["key"]: t["value"] for t in run["run"]["data"]["tags"]}
    assert tags["atif_complete"] == "true"


def test_a_job_with_ray_address_scores_on_the_cluster_as_it_would_locally(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, evalhub_url: str, mlflow_url: str
) -> None:
    pytest.importorskip("ray")
    from agentjudge.testing.ray_cluster import LocalRayCluster

    runs = trajectories(tmp_path, "step [[score=0.5]] [[category=tool_misuse]]")
    parameters = {**ours(runs), "scoring_mode": "default", "cache": False}
    with LocalRayCluster(tmp_path_factory.mktemp("ray"), nodes=2, cpus=1) as cluster:
        with JudgeServer() as judge:
            local = run_job(evalhub_url, judge, parameters, "here")
            assert units_run(cluster.folder) == 0
            calls = len(judge.log)
            on_ray = run_job(
                evalhub_url, judge, {**parameters, "ray_address": cluster.address}, "on-ray"
            )
            assert len(judge.log) == 2 * calls  # the same calls, made by the cluster's workers
        assert units_run(cluster.folder) > 0  # the job did run on the cluster
    for outcome in (local, on_ray):
        assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
    (here,) = local["job"]["results"]["benchmarks"]
    (there,) = on_ray["job"]["results"]["benchmarks"]
    assert there["metrics"] == here["metrics"]
    assert there["metrics"]["atif_overall_score"] == pytest.approx(3.5 / 5)
    details = artifact(mlflow_url, there["mlflow_run_id"], "atif/agentjudge_results.json")
    expected = artifact(mlflow_url, here["mlflow_run_id"], "atif/agentjudge_results.json")
    assert details["trajectories"] == expected["trajectories"]


def units_run(folder: Path) -> int:
    """The units of trees the cluster's workers ran, as their logs name the tasks."""
    return sum(
        log.read_text(errors="replace").count(":task_name:score_unit")
        for log in folder.glob("n*/session_*/logs/worker-*.out")
    )


def test_a_failing_judge_ends_the_job_failed_with_our_code(
    tmp_path: Path, evalhub_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[fault=503]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, ours(runs), "fail")
    job = outcome["job"]
    assert job["status"]["state"] == "failed", outcome["logs"]
    (bench,) = job["status"]["benchmarks"]
    assert bench["error_message"]["message_code"] == "agentjudge_job_failed"
    # with the why, as the results' error.message has it (the server's own words, redacted)
    message = "the scoring job failed: judge_error: http_503: scripted 503"
    assert bench["error_message"]["message"] == message


def test_credentials_in_the_judge_url_are_its_key_never_shown(
    tmp_path: Path, evalhub_url: str
) -> None:
    """The job that crashed (`unexpected ExceptionGroup`) when the URL carried user info."""
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        url = judge.base_url.replace("http://", "http://user:hunter2secret@")
        outcome = run_job(evalhub_url, judge, ours(runs), "creds", url=url)
    assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
    assert {entry.headers.get("authorization") for entry in judge.log} == {"Bearer hunter2secret"}
    # eval-hub keeps (and logs) the job's model.url as given: anywhere else is ours
    shown = (json.dumps(outcome["job"]) + outcome["logs"]).replace(url, "")
    assert "hunter2secret" not in shown


REGISTRY = {
    "version": 1,
    "rubrics": {
        "default": {
            "criteria": [{"name": "matches_reference", "description": "agrees with it"}],
            "references": {"default": {"answer": "42"}},
        }
    },
}


def contrib_job(mode: str, runs: Path, folder: Path) -> dict[str, Any]:
    """A job as the contrib atif provider's documentation writes one: its parameters only."""
    job: dict[str, Any] = {"trajectory_path": str(runs)}
    if mode != "auto":  # the contrib default: not written
        job["scoring_mode"] = mode
    if mode == "benchmark":
        job["benchmark_name"] = "swe-bench-lite"
    if mode == "custom":
        job["custom_rubric"] = {"criteria": [{"name": "helpful", "description": "it helps"}]}
    if mode == "reference":
        (folder / "registry.yaml").write_text(yaml.safe_dump(REGISTRY))
        job["reference_registry_path"] = str(folder / "registry.yaml")
        job["reference_rubric"] = "default"
    return job


@pytest.mark.parametrize("mode", ["auto", "benchmark", "reference", "custom"])
def test_the_contrib_providers_jobs_run_unchanged(
    tmp_path: Path, evalhub_url: str, mlflow_url: str, mode: str
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        # the contrib provider's id too: atif.yaml in the server's providers
        job = contrib_job(mode, runs, tmp_path)
        outcome = run_job(evalhub_url, judge, job, f"mode-{mode}", provider="atif")
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    (bench,) = job["results"]["benchmarks"]
    assert set(bench["metrics"]) == {
        "atif_overall_score",
        "atif_trajectory_count",
        "atif_failure_categorization_rate",
    }
    details = artifact(mlflow_url, bench["mlflow_run_id"], "atif/agentjudge_results.json")
    assert details["criteria"]["mode"] == mode
    names = [c["name"] for c in details["criteria"]["rubric"]["criteria"]]
    expected = {
        "auto": ["correctness", "efficiency"],  # what our judge server derives
        "benchmark": ["task_correctness", "patch_quality", "regression_safety"],
        "reference": ["matches_reference"],
        "custom": ["helpful"],
    }[mode]
    root = details["trajectories"][0]["nodes"][0]
    assert (names if mode != "auto" else root["criteria"]) == expected
    if mode == "benchmark":
        assert details["criteria"]["registry_version"] == "agentjudge-benchmarks-v1"


def test_training_manifests_list_the_right_trajectories(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    runs = tmp_path / "runs"
    for name, score in (("good", "0.9"), ("bad", "0.2"), ("fine", "0.7")):
        document = doc(2)
        document["steps"][0]["message"] = f"task [[score={score}]]"
        document["steps"][1]["message"] = f"step [[score={score}]]"
        write(runs / f"{name}.json", document)
    parameters = {"trajectory_path": str(runs), "training_threshold": 0.6}
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, parameters, "training")
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    run_id = job["results"]["benchmarks"][0]["mlflow_run_id"]
    eligible = artifact(mlflow_url, run_id, "atif/training/eligible_trajectories.json")
    ineligible = artifact(mlflow_url, run_id, "atif/training/ineligible_trajectories.json")
    # the contrib provider's keys: a training pipeline written for it reads ours
    for manifest, selection in ((eligible, "eligible"), (ineligible, "ineligible")):
        assert set(CONTRIB_MANIFEST_KEYS) <= set(manifest)
        assert (manifest["schema_version"], manifest["selection"]) == (1, selection)
        assert manifest["training_threshold"] == 0.6
    # the eligible files themselves, not the job's folder
    assert sorted(eligible["source_paths"]) == [str(runs / "fine.json"), str(runs / "good.json")]
    assert eligible["manifest"] == eligible["source_paths"]
    assert ineligible["source_paths"] == [str(runs / "bad.json")]
    assert ineligible["manifest"] == []
    assert (eligible["trajectory_count"], ineligible["trajectory_count"]) == (2, 1)
    (bad,) = ineligible["trajectories"]
    assert bad["aggregate_score"] == pytest.approx(0.2)
    assert (bad["status"], bad["training_eligible"]) == ("scored", False)
    # written with a threshold too (the contrib provider does not), naming the same files
    results = artifact(mlflow_url, run_id, "atif/evaluation_results.json")
    manifest = results["evaluation_metadata"]["atif_training_manifest"]
    assert sorted(manifest) == eligible["source_paths"]


CONTRIB_MANIFEST_KEYS = (
    "schema_version", "selection", "training_threshold", "trajectory_count", "source_paths",
    "manifest", "trajectories",
)  # fmt: skip
# eval-hub-sdk's JobResults as the contrib provider dumps it, and its evaluation_metadata
CONTRIB_RESULTS_KEYS = (
    "id", "benchmark_id", "benchmark_index", "model_name", "results", "overall_score",
    "num_examples_evaluated", "duration_seconds", "completed_at", "trajectory_results",
    "evaluation_metadata", "env_card",
)  # fmt: skip
CONTRIB_METADATA_KEYS = (
    "atif_trajectories", "atif_trajectory_metadata", "atif_scoring_mode",
    "atif_subagent_aggregation", "atif_subagent_depth_limit", "atif_total_step_limit",
    "atif_reference_rubric", "atif_benchmark_name", "atif_benchmark_registry_version",
    "atif_custom_rubric", "atif_custom_aggregation", "atif_failure_threshold",
    "atif_completion_threshold", "atif_detectable_failure_count",
    "atif_categorized_failure_count", "atif_uncategorized_failure_count",
    "atif_categorization_judge_error_count", "atif_detectable_failure_trajectory_count",
    "atif_categorized_failure_trajectory_count", "atif_failure_categorization_rate",
    "atif_training_threshold", "atif_training_manifest", "atif_partial_result_policy",
    "atif_failed_trajectory_count", "atif_judge_request_count", "atif_judge_request_limit",
    "atif_judge_prompt_token_count", "atif_judge_completion_token_count",
    "atif_judge_token_count", "atif_judge_success_count", "atif_judge_error_count",
)  # fmt: skip


def test_evaluation_results_is_the_contrib_providers_document(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, contrib_job("custom", runs, tmp_path), "contrib")
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    (bench,) = job["results"]["benchmarks"]
    results = artifact(mlflow_url, bench["mlflow_run_id"], "atif/evaluation_results.json")
    assert set(CONTRIB_RESULTS_KEYS) <= set(results)
    assert (results["id"], results["benchmark_id"]) == (outcome["id"], "atif_trajectory_default")
    assert results["model_name"] == "judge"
    assert {r["metric_name"]: r["metric_value"] for r in results["results"]} == bench["metrics"]
    assert {r["metric_type"] for r in results["results"]} == {"float"}
    assert results["overall_score"] == pytest.approx(bench["metrics"]["atif_overall_score"])
    # every node, root first: the subagent is its own file
    assert [(Path(t["source_path"]).name, t["status"]) for t in results["trajectory_results"]] == [
        ("root.json", "scored"),
        ("child.json", "scored"),
    ]
    assert all(t["training_eligible"] is None for t in results["trajectory_results"])
    metadata = results["evaluation_metadata"]
    assert set(CONTRIB_METADATA_KEYS) <= set(metadata)
    assert (metadata["atif_scoring_mode"], metadata["atif_custom_rubric"]) == ("custom", "custom")
    (root,) = metadata["atif_trajectories"]
    (child,) = root["subagent_trajectories"]
    assert [s["score"] for s in child["steps"]] == [1.0, 0.75]
    assert [(s["step_index"], s["step_id"]) for s in root["steps"]] == [(0, 1), (1, 2), (2, 3)]
    low = root["steps"][2]  # 0.25 with a category: a failure candidate
    assert (low["category"], low["categorization_status"]) == ("reasoning_failure", "categorized")
    assert results["env_card"]["custom"]["trajectory_count"] == 1


def test_an_incomplete_job_says_so_in_what_eval_hub_keeps(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    root = doc(3)
    root["steps"][1]["message"] = "step [[score=0.8]]"
    with_refs(root, 2, [{"trajectory_path": "missing-child.json"}])  # an omitted subagent
    write(tmp_path / "runs" / "root.json", root)
    with JudgeServer() as judge:
        # no experiment named: the run is recorded and tagged all the same
        outcome = run_job(
            evalhub_url, judge, ours(tmp_path / "runs"), "incomplete", experiment=False
        )
    job = outcome["job"]
    assert job["status"]["state"] == "completed", outcome["logs"]
    (status,) = job["status"]["benchmarks"]
    warning = status["warning_message"]
    assert warning["message_code"] == "agentjudge_incomplete"
    assert "missing-child.json" in warning["message"]
    assert f"warning: agentjudge_incomplete: {warning['message']}" in outcome["logs"]
    (bench,) = job["results"]["benchmarks"]
    info = bench["additional_info"]
    assert info["atif_complete"] is False
    assert info["incomplete_count"] == 1
    assert "omitted subagent" in info["incomplete_nodes"][0]["reason"]
    run = httpx.get(
        f"{mlflow_url}/api/2.0/mlflow/runs/get",
        params={"run_id": bench["mlflow_run_id"]},
        timeout=30,
    ).json()
    tags = {t["key"]: t["value"] for t in run["run"]["data"]["tags"]}
    assert tags["atif_complete"] == "false"


def test_judge_metrics_reach_the_collector_labelled_with_the_job(
    tmp_path: Path, evalhub_url: str, collector: Receiver
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    odd = doc(1)  # its categorization answer names no category of the taxonomy
    odd["steps"][0]["message"] = "off [[score=0.1]] [[category=not_one_of_them]]"
    write(runs / "odd.json", odd)
    # every request fails once (503) before it is answered: errors too
    with JudgeServer(Script(fail_first=1, fail_first_fault="503")) as judge:
        outcome = run_job(evalhub_url, judge, ours(runs), "otel")
    assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
    points = [(n, a) for n, a in collector.points if a.get("evalhub.job.id") == outcome["id"]]
    assert {name for name, _ in points} == set(METRIC_NAMES)  # all six, with the job's label
    assert {a["evalhub.benchmark.id"] for _, a in points} == {"atif_trajectory_default"}
    assert {a["atif.scoring_mode"] for _, a in points} == {"auto"}


def test_with_the_collector_down_the_job_still_completes(
    tmp_path: Path, evalhub_url: str, collector: Receiver
) -> None:
    collector.stop()  # the last test of the module: nothing listens at the endpoint now
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, ours(runs), "otel-down")
    assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
    assert outcome["job"]["results"]["benchmarks"][0]["metrics"]["atif_trajectory_count"] == 1
    # one line per job (the SDK said it again, after the job, when the export outlived it)
    said = [line for line in outcome["logs"].splitlines() if "OpenTelemetry" in line]
    assert len(said) == 1, outcome["logs"]
    assert "could not be exported" in said[0]


def test_a_job_with_invalid_files_names_each_with_its_rule(
    tmp_path: Path, evalhub_url: str
) -> None:
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    (runs / "broken.json").write_text("{not json")
    (runs / "empty.json").write_text("{}")
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, ours(runs), "invalid")
        assert judge.log == []  # refused before any judge call
    job = outcome["job"]
    assert job["status"]["state"] == "failed", outcome["logs"]
    (bench,) = job["status"]["benchmarks"]
    assert bench["error_message"]["message_code"] == "agentjudge_job_failed"
    message = bench["error_message"]["message"]
    assert message.startswith(
        "the scoring job failed: invalid_input: 2 invalid trajectory file(s): "
    )
    assert f"{runs / 'broken.json'}: $: not valid JSON" in message
    assert "[schema.json_invalid]" in message
    assert f"{runs / 'empty.json'}: $" in message


def test_a_verdict_store_over_a_subagent_file_is_refused_before_judging(
    tmp_path: Path, evalhub_url: str
) -> None:
    """child.json is not named: only root.json's ref reaches it, once loaded."""
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    child = (runs / "child.json").read_bytes()
    parameters = {**ours(runs / "root.json"), "cache_path": str(runs / "child.json")}
    with JudgeServer() as judge:
        outcome = run_job(evalhub_url, judge, parameters, "store-over-child")
        assert judge.log == []
    job = outcome["job"]
    assert job["status"]["state"] == "failed", outcome["logs"]
    (bench,) = job["status"]["benchmarks"]
    assert bench["error_message"]["message_code"] == "agentjudge_invalid_configuration"
    message = bench["error_message"]["message"]
    assert "the verdict store would overwrite the subagent trajectory" in message
    assert str(runs / "child.json") in message
    assert (runs / "child.json").read_bytes() == child


def fast(runs: Path) -> dict[str, Any]:
    """`ours`, and no pause before the second round of calls that got no answer."""
    return {**ours(runs), "judge_retry_round_pause_seconds": 0}


@pytest.mark.parametrize("judge_fault", ["refused_key", "unknown_model", "unreachable"])
def test_a_judge_that_cannot_be_used_says_why_in_the_jobs_status_and_log(
    tmp_path: Path, evalhub_url: str, judge_fault: str
) -> None:
    """Each said `the scoring job failed: judge_error` and no more, or `transport_error`."""
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    models = ("other-model",) if judge_fault == "unknown_model" else None
    with JudgeServer(mimic="openai", api_key="sk-right-0000", models=models) as judge:
        key = "sk-wrong-0000" if judge_fault == "refused_key" else "sk-right-0000"
        # the URL's credentials are the job's key (see the test above)
        url = judge.base_url.replace("http://", f"http://user:{key}@")
        if judge_fault == "unreachable":
            url = f"http://user:{key}@127.0.0.1:9/v1"  # nothing listens on port 9
        outcome = run_job(evalhub_url, judge, fast(runs), f"judge-{judge_fault}", url=url)
    job = outcome["job"]
    assert job["status"]["state"] == "failed", outcome["logs"]
    (bench,) = job["status"]["benchmarks"]
    assert bench["error_message"]["message_code"] == "agentjudge_job_failed"
    message = bench["error_message"]["message"]
    expected = {
        "refused_key": "judge_error: http_401: Incorrect API key provided",
        "unknown_model": "judge_error: http_404: The model `judge` does not exist",
        "unreachable": "judge_error: transport_error: connection refused; none of ",
    }[judge_fault]
    assert message.startswith(f"the scoring job failed: {expected}"), message
    if judge_fault == "unreachable":  # where it was looked for, without the credentials
        assert message.endswith(
            " judge calls got an answer from http://127.0.0.1:9/v1/chat/completions; check "
            "the job's model.url and that the server is up"
        ), message
    assert f"error: agentjudge_job_failed: {message}" in outcome["logs"]  # the job's log too
    assert "sk-wrong-0000" not in message + outcome["logs"]
    assert "sk-right-0000" not in message + outcome["logs"].replace(url, "")


def test_a_job_never_takes_another_jobs_verdicts_unless_it_asks(
    tmp_path: Path, evalhub_url: str
) -> None:
    """A judge at 0.1 replaced by one at 0.9 under the same URL and model name: the next
    job reported 0.1, from the verdict store."""
    runs = tmp_path / "runs"
    write(runs / "run.json", doc(2))  # no score markers: the judge alone decides
    parameters = {**fast(runs), "scoring_mode": "default"}
    port = free_port()
    with JudgeServer(Script(scores={"": 0.1}), port=port) as judge:
        first = run_job(evalhub_url, judge, {**parameters, "reuse_verdicts": True}, "j-0.1")
    with JudgeServer(Script(scores={"": 0.9}), port=port) as judge:
        second = run_job(evalhub_url, judge, parameters, "j-0.9")
        reused = run_job(evalhub_url, judge, {**parameters, "reuse_verdicts": True}, "j-reuse")
    scores, from_store = [], []
    for outcome in (first, second, reused):
        assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
        (bench,) = outcome["job"]["results"]["benchmarks"]
        scores.append(bench["metrics"]["atif_overall_score"])
        from_store.append(bench["additional_info"]["verdicts_from_store"])
    assert scores == [pytest.approx(0.1), pytest.approx(0.9), pytest.approx(0.1)]
    assert from_store[:2] == [0, 0]
    assert from_store[2] > 0  # asked for: the first job's verdicts, and it says so


def test_a_benchmark_job_completes_against_a_judge_that_serves_the_contrib_provider(
    tmp_path: Path, evalhub_url: str, mlflow_url: str
) -> None:
    """Such a judge answers one `score` for a benchmark's criteria: every `benchmark_name`
    job failed with protocol_error when it was asked for one score per criterion."""
    runs = trajectories(tmp_path, "step [[score=0.5]]")
    with JudgeServer(Script(contrib=True)) as judge:
        job = contrib_job("benchmark", runs, tmp_path)
        outcome = run_job(evalhub_url, judge, job, "contrib-judge", provider="atif")
        assert {entry.outcome for entry in judge.log} == {"ok"}
    assert outcome["job"]["status"]["state"] == "completed", outcome["logs"]
    (bench,) = outcome["job"]["results"]["benchmarks"]
    # flat, the contrib default: the root's 1.0, 0.5, 0.25 and its subagent's 1.0, 0.75
    expected = ((1.0 + 0.5 + 0.25) / 3 + (1.0 + 0.75) / 2) / 2
    assert bench["metrics"]["atif_overall_score"] == pytest.approx(expected)
    details = artifact(mlflow_url, bench["mlflow_run_id"], "atif/agentjudge_results.json")
    assert details["run_parameters"]["atif_prompt_version"] == "agentjudge-atif-v5+score"
    root = details["trajectories"][0]["nodes"][0]
    assert [s["scores"] for s in root["steps"]] == [{}, {}, {}]
