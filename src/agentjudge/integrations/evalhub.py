"""agentjudge as an eval-hub adapter (eval-hub-sdk `FrameworkAdapter`).

The job spec comes from EVALHUB_JOB_SPEC_PATH; the judge is the job's `model.url` and
`model.name` (its key through `model.auth.secret_ref`); the parameters are named as the
eval-hub-contrib `atif` provider names them. Any failure ends in a `failed` status event with
a fixed error code and a message without secrets, and a non-zero exit: eval-hub ignores exit
codes, and an adapter that dies silently leaves its job pending for ever.

Run as `agentjudge evalhub` or `python -m agentjudge.integrations.evalhub`; needs
`agentjudge[evalhub]` (and `agentjudge[mlflow]` to log run parameters to MLflow).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from evalhub.adapter import (
    DefaultCallbacks,
    EvaluationResult,
    FrameworkAdapter,
    JobCallbacks,
    JobPhase,
    JobResults,
    JobSpec,
    JobStatus,
    JobStatusUpdate,
    MessageInfo,
    resolve_model_credentials,
)
from evalhub.adapter.mlflow import MlflowArtifact
from evalhub.models.api import MetricSchema, ResultType

from agentjudge.api import ScoreRun, score_trajectories
from agentjudge.errors import AgentJudgeError, InputError, UsageError
from agentjudge.scoring.config import ScoreConfig, load_config

ARTIFACT_PATH = "atif/evaluation_results.json"
METRICS = ("atif_overall_score", "atif_trajectory_count", "atif_failure_categorization_rate")
# parameters of the eval-hub-contrib atif provider that name a rubric
RUBRIC_ALIASES = ("custom_rubric", "custom_rubric_path")


class JobFailed(Exception):
    """The scoring job ran and failed (all roots failed, fail_fast, nothing scored)."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class AgentJudgeAdapter(FrameworkAdapter):
    """Scores the job's ATIF trajectories with the job's model as the judge."""

    last_run: ScoreRun | None = None

    def run_benchmark_job(self, config: JobSpec, callbacks: JobCallbacks) -> JobResults:
        started = time.monotonic()
        _status(callbacks, JobPhase.INITIALIZING, "reading the job's parameters")
        score_config = job_config(config, self._output_dir())
        api_key = resolve_model_credentials().api_key if config.model.auth else None
        _status(callbacks, JobPhase.LOADING_DATA, "loading trajectories")

        def loaded(roots: int) -> None:
            _status(callbacks, JobPhase.RUNNING_EVALUATION, f"judging {roots} trajectories")

        run = score_trajectories(score_config, api_key=api_key, on_loaded=loaded)
        if run.result.failed:
            raise JobFailed(run.result.failed)
        _status(callbacks, JobPhase.POST_PROCESSING, "reporting metrics")
        self.last_run = run
        return job_results(config, run, time.monotonic() - started)

    def _output_dir(self) -> Path:
        # the job's own folder in local mode; elsewhere (Kubernetes) the working directory
        try:
            base = self.local_jobs_base_path
        except Exception:  # outside local mode the SDK has no job folder
            base = None
        return Path(base) if base is not None else Path.cwd()


def job_config(spec: JobSpec, output_dir: Path) -> ScoreConfig:
    """The scoring configuration of a job: its parameters, with its model as the judge."""
    params: dict[str, Any] = dict(spec.parameters or {})
    provider_params = params.pop("provider_params", None) or {}
    for alias in RUBRIC_ALIASES:
        if alias in params:
            params.setdefault("rubric", params.pop(alias))
    if isinstance(provider_params, dict) and "rubric" in provider_params:
        params.setdefault("rubric", provider_params["rubric"])
    if isinstance(params.get("trajectory_path"), str):
        params["trajectory_path"] = [params["trajectory_path"]]
    for forced in ("judge", "judge_url", "judge_model", "judge_api_key_file", "output"):
        if forced in params:
            raise UsageError(f"job parameter {forced!r} is set by eval-hub; remove it")
    params.update(
        judge="openai-compatible",
        judge_url=spec.model.url,
        judge_model=spec.model.name,
        output=str(output_dir / "evaluation_results.json"),
    )
    return load_config(None, params)


def job_results(spec: JobSpec, run: ScoreRun, seconds: float) -> JobResults:
    """The three metrics, their schema and the overall score, as eval-hub expects them."""
    metrics = run.document["metrics"]
    count = metrics["atif_trajectory_count"]
    results = [
        EvaluationResult(metric_name=name, metric_value=metrics[name], num_samples=count)
        for name in METRICS
        if metrics[name] is not None
    ]
    return JobResults(
        id=spec.id,
        benchmark_id=spec.benchmark_id,
        benchmark_index=spec.benchmark_index,
        model_name=spec.model.name,
        results=results,
        metrics_schema=[MetricSchema(name=r.metric_name, type=ResultType.NUMERIC) for r in results],
        overall_score=run.document["overall_score"],
        num_examples_evaluated=count,
        duration_seconds=seconds,
    )


def main() -> int:
    """Run the job named by EVALHUB_JOB_SPEC_PATH; report `failed` whatever goes wrong."""
    try:
        adapter = AgentJudgeAdapter()
        callbacks = DefaultCallbacks.from_adapter(adapter)
    except Exception as exc:
        print(f"error: cannot start the eval-hub adapter: {type(exc).__name__}", file=sys.stderr)
        return 3
    try:
        results = adapter.run_benchmark_job(adapter.job_spec, callbacks)
        run = adapter.last_run
        assert run is not None
        _status(callbacks, JobPhase.PERSISTING_ARTIFACTS, "saving details to MLflow")
        artifact = json.dumps(run.document, ensure_ascii=False).encode()
        run_id = callbacks.mlflow.save(
            results,
            adapter.job_spec,
            artifacts=[MlflowArtifact(ARTIFACT_PATH, artifact, "application/json")],
        )
        if run_id:
            results.mlflow_run_id = run_id
            _log_parameters(run_id, run)
        callbacks.report_results(results)
        return 0
    except JobFailed as exc:
        return _fail(callbacks, "agentjudge_job_failed", f"the scoring job failed: {exc.kind}")
    except UsageError as exc:
        return _fail(callbacks, "agentjudge_invalid_configuration", str(exc))
    except InputError as exc:
        return _fail(callbacks, "agentjudge_invalid_input", str(exc.problems[0]))
    except AgentJudgeError as exc:
        return _fail(callbacks, "agentjudge_error", str(exc))
    except Exception as exc:
        # the type only: a library's message may hold a URL with credentials or a body
        return _fail(callbacks, "agentjudge_internal_error", f"unexpected {type(exc).__name__}")


def _log_parameters(run_id: str, run: ScoreRun) -> None:
    """Our run parameters and `atif_complete` on the MLflow run the SDK created."""
    from mlflow import MlflowClient

    client = MlflowClient()
    parameters = run.document["run_parameters"]
    for key, value in parameters.items():
        client.log_param(run_id, key, value)
    client.set_tag(
        run_id, "atif_complete", str(run.document["run_metadata"]["atif_complete"]).lower()
    )


def _status(callbacks: JobCallbacks, phase: JobPhase, message: str) -> None:
    callbacks.report_status(
        JobStatusUpdate(
            status=JobStatus.RUNNING,
            phase=phase,
            message=MessageInfo(message=message, message_code=f"agentjudge_{phase.value}"),
        )
    )


def _fail(callbacks: JobCallbacks, code: str, message: str) -> int:
    callbacks.report_status(
        JobStatusUpdate(
            status=JobStatus.FAILED,
            error_message=MessageInfo(message=message[:2000], message_code=code),
        )
    )
    print(f"error: {code}: {message}", file=sys.stderr)
    return 2


__all__ = ["AgentJudgeAdapter", "job_config", "job_results", "main"]

if __name__ == "__main__":
    sys.exit(main())
