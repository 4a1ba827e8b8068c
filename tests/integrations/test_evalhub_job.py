"""An eval-hub job's parameters as the eval-hub-contrib `atif` provider names them: every
one our provider YAMLs list is taken, with the contrib defaults; others are refused. The
adapter end to end: tests/e2e/test_evalhub.py."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentjudge.errors import UsageError
from agentjudge.judge.defaults import SCORE_CALLS
from tests.conftest import REPO

with warnings.catch_warnings():  # eval-hub-sdk still uses pydantic's class-based config
    warnings.simplefilter("ignore", DeprecationWarning)
    from evalhub.adapter import JobSpec

    from agentjudge.integrations.evalhub import job_config

SAMPLES: dict[str, Any] = {
    "trajectory_path": "/data/runs",
    "scoring_mode": "benchmark",
    "benchmark_name": "terminal-bench",
    "custom_rubric": {"criteria": [{"name": "ok", "description": "it is ok"}]},
    "custom_rubric_path": "rubric.yaml",
    "reference_registry_path": "registry.yaml",
    "reference_rubric": "default",
    "training_threshold": 0.8,
    "scored_frames": "agent",
    "subagent_aggregation": "hierarchical",
    "failure_threshold": 0.4,
    "completion_threshold": 0.6,
    "max_subagent_depth": 2,
    "partial_result_policy": "skip_failed_trajectory",
    "concurrency_limit": 8,
    "judge_concurrency_limit": 4,
    "reuse_verdicts": True,
    "judge_timeout_seconds": 20.0,
    "judge_max_attempts": 4,
    "judge_retry_budget_seconds": 60.0,
    "judge_retry_round_pause_seconds": 1.0,
    "judge_initial_backoff_seconds": 0.2,
    "max_judge_requests": 1000,
    "max_file_bytes": 1000000,
    "max_trajectory_files": 100,
    "max_steps_per_trajectory": 50,
    "max_total_steps": 500,
}
# ours alone (agentjudge.yaml), not the contrib provider's
OURS: dict[str, Any] = {
    "ray_address": "auto",
    "batch": True,
    "batch_poll_seconds": 60.0,
    "batch_fallback": "online",
}


def spec(parameters: dict[str, Any]) -> JobSpec:
    return JobSpec(
        id="job-1",
        provider_id="atif",
        benchmark_id="atif_trajectory_default",
        benchmark_index=0,
        model={"url": "http://127.0.0.1:9/v1", "name": "judge"},
        parameters=parameters,
        callback_url="http://127.0.0.1:9",
    )


def test_a_job_calls_its_judge_as_score_does(tmp_path: Path) -> None:
    # the contrib provider's 30 s and 3 attempts, said once, in judge/defaults.py
    assert job_config(spec({}), tmp_path).call_limits() == SCORE_CALLS


@pytest.mark.parametrize("provider", ["atif.yaml", "agentjudge.yaml"])
def test_every_listed_parameter_is_taken(provider: str, tmp_path: Path) -> None:
    listed = yaml.safe_load((REPO / "deploy/evalhub/providers" / provider).read_text())
    names = [p["name"] for p in listed["parameters"]]
    samples = SAMPLES if provider == "atif.yaml" else {**SAMPLES, **OURS}
    assert sorted(names) == sorted(samples)
    for name in names:
        params = {name: samples[name]}
        if name == "benchmark_name":
            params["scoring_mode"] = "benchmark"
        if name in ("custom_rubric", "custom_rubric_path"):
            params["scoring_mode"] = "custom"
        config = job_config(spec(params), tmp_path)
        assert config.judge_url == "http://127.0.0.1:9/v1"


def test_a_job_that_sets_nothing_is_scored_as_the_contrib_provider_scores_it(
    tmp_path: Path,
) -> None:
    config = job_config(spec({}), tmp_path)
    assert config.scoring_mode == "auto"
    assert config.trajectory_path == ["/test_data/trajectory.json"]
    # ours, named as its MLflow artifact: evaluation_results.json is the contrib shape there
    assert config.output == str(tmp_path / "agentjudge_results.json")


def test_the_contrib_names_map_onto_ours(tmp_path: Path) -> None:
    config = job_config(
        spec({"scoring_mode": "custom", "custom_rubric_path": "r.yaml", "training_threshold": 0.7}),
        tmp_path,
    )
    assert (config.rubric, config.training_threshold) == ("r.yaml", 0.7)
    benchmark = job_config(
        spec({"scoring_mode": "benchmark", "benchmark_name": "humaneval"}), tmp_path
    )
    assert benchmark.benchmark_name == "humaneval"


def test_ray_address_scores_the_job_on_a_ray_cluster(tmp_path: Path) -> None:
    assert job_config(spec({"ray_address": "auto"}), tmp_path).ray_address == "auto"
    assert job_config(spec({}), tmp_path).ray_address is None
    with pytest.raises(UsageError, match="not a Ray address"):
        job_config(spec({"ray_address": "http://head:8265"}), tmp_path)


def test_an_unknown_parameter_is_still_an_error(tmp_path: Path) -> None:
    with pytest.raises(
        UsageError,
        match=r"job parameters: trainng_threshold: unknown parameter \(did you mean "
        r"training_threshold\?\)",
    ):
        job_config(spec({"trainng_threshold": 0.5}), tmp_path)
    with pytest.raises(UsageError, match="'judge_url' is set by eval-hub"):
        job_config(spec({"judge_url": "http://elsewhere/v1"}), tmp_path)


def test_a_null_is_not_set_as_the_contrib_provider_reads_it(tmp_path: Path) -> None:
    config = job_config(
        spec({"scoring_mode": None, "trajectory_path": None, "custom_rubric": None}), tmp_path
    )
    assert (config.scoring_mode, config.trajectory_path) == ("auto", ["/test_data/trajectory.json"])
    config = job_config(
        spec({"scoring_mode": "custom", "custom_rubric": None, "custom_rubric_path": "r.yaml"}),
        tmp_path,
    )
    assert config.rubric == "r.yaml"


def test_a_rubric_as_text_benchmark_names_and_rubric_sources(tmp_path: Path) -> None:
    text = '{"criteria": [{"name": "ok", "description": "it is ok"}]}'
    config = job_config(spec({"scoring_mode": "custom", "custom_rubric": text}), tmp_path)
    assert config.rubric == {"criteria": [{"name": "ok", "description": "it is ok"}]}
    named = job_config(
        spec({"scoring_mode": "benchmark", "benchmark_name": " SWE-bench-lite "}), tmp_path
    )
    assert named.benchmark_name == "swe-bench-lite"
    ignored = job_config(spec({"benchmark_name": "humaneval"}), tmp_path)  # auto mode
    assert ignored.benchmark_name is None
    with pytest.raises(UsageError, match="custom_rubric and custom_rubric_path both give"):
        job_config(spec({"custom_rubric": text, "custom_rubric_path": "r.yaml"}), tmp_path)
    with pytest.raises(UsageError, match="custom_rubric: a rubric as an object"):
        job_config(spec({"scoring_mode": "custom", "custom_rubric": "just words"}), tmp_path)


def test_a_rubric_text_nested_deeply_is_one_line(tmp_path: Path) -> None:
    # PyYAML composes recursively: 100,000 levels was a RecursionError (exit 4)
    deep = "[" * 100_000 + "]" * 100_000
    params = {"scoring_mode": "custom", "custom_rubric": deep, "trajectory_path": "/data/runs"}
    with pytest.raises(UsageError, match=r"custom_rubric.*nested more than 100 levels"):
        job_config(spec(params), tmp_path)


def test_enum_values_in_any_case_as_the_contrib_provider_lowercases_them(tmp_path: Path) -> None:
    config = job_config(
        spec(
            {
                "scoring_mode": "Benchmark",
                "benchmark_name": "SWE-Bench-Lite",
                "subagent_aggregation": "Hierarchical",
                "partial_result_policy": "SKIP_FAILED_TRAJECTORY",
            }
        ),
        tmp_path,
    )
    assert (config.scoring_mode, config.benchmark_name) == ("benchmark", "swe-bench-lite")
    assert config.subagent_aggregation == "hierarchical"
    assert config.partial_result_policy == "skip_failed_trajectory"


def test_concurrency_limit_is_trajectories_at_once_and_judge_calls_their_own(
    tmp_path: Path,
) -> None:
    default = job_config(spec({}), tmp_path)
    # the contrib provider's meaning and default; the judge calls the CLI's default
    assert (default.trajectory_concurrency_limit, default.concurrency_limit) == (10, 16)
    both = job_config(spec({"concurrency_limit": 3, "judge_concurrency_limit": 5}), tmp_path)
    assert (both.trajectory_concurrency_limit, both.concurrency_limit) == (3, 5)
    with pytest.raises(UsageError, match="job parameters: concurrency_limit: Input should be"):
        job_config(spec({"concurrency_limit": 0}), tmp_path)
    with pytest.raises(UsageError, match="write concurrency_limit"):
        job_config(spec({"trajectory_concurrency_limit": 3}), tmp_path)


def test_each_job_has_its_own_verdict_store_unless_it_asks_to_reuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTJUDGE_CACHE_DIR", str(tmp_path / "cache"))
    own = job_config(spec({}), tmp_path)
    assert own.cache
    assert own.cache_path == str(tmp_path / "cache" / "jobs" / "job-1.sqlite")
    shared = job_config(spec({"reuse_verdicts": True}), tmp_path)
    assert shared.cache
    assert shared.cache_path is None
    named = job_config(spec({"cache_path": str(tmp_path / "mine.sqlite")}), tmp_path)
    assert named.cache_path == str(tmp_path / "mine.sqlite")
    with pytest.raises(UsageError, match="reuse_verdicts: true or false"):
        job_config(spec({"reuse_verdicts": "yes"}), tmp_path)
