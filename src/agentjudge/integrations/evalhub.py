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

import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import yaml
from evalhub.adapter import (
    AdapterSettings,
    DefaultCallbacks,
    EnvironmentCardMetadata,
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
from pydantic import ValidationError

from agentjudge import __version__
from agentjudge.api import ScoreRun, score_trajectories
from agentjudge.errors import EXIT_INTERNAL, AgentJudgeError, InputError, UsageError, clip
from agentjudge.judge.store_path import default_store_path
from agentjudge.nesting import load_yaml
from agentjudge.printable import printable
from agentjudge.report.contrib_shape import trajectory_metadata
from agentjudge.report.failure import unanswered
from agentjudge.report.mlflow import log_run, run_artifacts
from agentjudge.results.score import METRIC_NAMES, ScoreResults
from agentjudge.scoring.config import ScoreConfig, load_config

# parameters of the eval-hub-contrib atif provider that name a rubric
RUBRIC_ALIASES = ("custom_rubric", "custom_rubric_path")
# the contrib provider's defaults where they differ from the CLI's: a job that sets nothing
# is scored as it would be there (eval-hub mounts a job's test data at /test_data)
JOB_DEFAULTS = {"scoring_mode": "auto", "trajectory_path": "/test_data/trajectory.json"}
# parameters whose values the contrib provider lowercases ("Benchmark" is benchmark)
CASELESS = ("scoring_mode", "subagent_aggregation", "partial_result_policy")
# root trees scored at once (the contrib provider's concurrency_limit and its default)
TRAJECTORIES_AT_ONCE = 10
# the scoring job's keys that a job names otherwise
JOB_NAMES = {
    "trajectory_concurrency_limit": "concurrency_limit",
    "concurrency_limit": "judge_concurrency_limit",
}
# the experiment of the run that records a job whose spec names none
DEFAULT_EXPERIMENT = "agentjudge"


class JobFailed(Exception):
    """The scoring job ran and failed (all roots failed, fail_fast, nothing scored); the
    message, if any, says why (for invalid input: each bad file and its rule)."""

    def __init__(self, kind: str, message: str | None = None) -> None:
        super().__init__(kind)
        self.kind = kind
        self.message = message


class AgentJudgeAdapter(FrameworkAdapter):
    """Scores the job's ATIF trajectories with the job's model as the judge."""

    last_run: ScoreRun | None = None

    def run_benchmark_job(self, config: JobSpec, callbacks: JobCallbacks) -> JobResults:
        started = time.monotonic()
        _status(callbacks, JobPhase.INITIALIZING, "reading the job's parameters")
        score_config = job_config(config, self._output_dir())
        credentials = resolve_model_credentials() if config.model.auth else None
        api_key = credentials.api_key if credentials else None
        if credentials is not None and credentials.ca_cert_path:
            # the model's CA certificate, mounted by eval-hub beside its key
            score_config = score_config.model_copy(
                update={"judge_ca_bundle": str(credentials.ca_cert_path)}
            )
        _status(callbacks, JobPhase.LOADING_DATA, "loading trajectories")

        def loaded(roots: int) -> None:
            _status(callbacks, JobPhase.RUNNING_EVALUATION, f"judging {roots} trajectories")

        labels = {"evalhub.job.id": config.id, "evalhub.benchmark.id": config.benchmark_id}
        run = score_trajectories(
            score_config, api_key=api_key, on_loaded=loaded, metric_labels=labels
        )
        if run.result.failed:
            raise JobFailed(run.result.failed, failure_message(run))
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


def failure_message(run: ScoreRun) -> str | None:
    """Why the job failed, as `agentjudge score` says it: the results' error message
    (each bad file with its rule, or the judge's HTTP status and its own words, redacted)
    and, when no judge call got an answer, where the judge was looked for."""
    message = run.result.failed_message
    lost = unanswered(run.document, run.stats)
    if lost is None:
        return message
    where = f"{lost}; check the job's model.url and that the server is up"
    return f"{message}; {where}" if message else where


def job_config(spec: JobSpec, output_dir: Path) -> ScoreConfig:
    """The scoring configuration of a job: its parameters read as the contrib provider
    reads them (a null is "not set"; one rubric source at most; a rubric given as text is
    the rubric; `benchmark_name` in any case, and only for benchmark mode), with its model
    as the judge."""
    given = {k: v for k, v in (spec.parameters or {}).items() if v is not None}
    params: dict[str, Any] = {**JOB_DEFAULTS, **given}
    provider_params = params.pop("provider_params", None) or {}
    if isinstance(provider_params, dict) and provider_params.get("rubric") is not None:
        params.setdefault("provider_params.rubric", provider_params["rubric"])
    sources = [k for k in ("rubric", *RUBRIC_ALIASES, "provider_params.rubric") if k in params]
    if len(sources) > 1:
        raise UsageError(f"job parameters {' and '.join(sources)} both give a rubric: keep one")
    if sources:
        rubric = params.pop(sources[0])
        if sources[0] == "custom_rubric" and isinstance(rubric, str):
            rubric = _rubric_text(rubric)
        params["rubric"] = rubric
    if isinstance(params.get("benchmark_name"), str):
        params["benchmark_name"] = params["benchmark_name"].strip().lower()
    for name in CASELESS:
        if isinstance(params.get(name), str):
            params[name] = params[name].lower()
    _concurrency(params)
    _verdict_store(params, spec.id)
    if params.get("scoring_mode") != "benchmark":
        params.pop("benchmark_name", None)  # the contrib provider ignores it there too
    if isinstance(params.get("trajectory_path"), str):
        params["trajectory_path"] = [params["trajectory_path"]]
    for forced in (
        "judge",
        "judge_url",
        "judge_model",
        "judge_api_key_file",
        "judge_ca_bundle",
        "output",
    ):
        if forced in params:
            raise UsageError(f"job parameter {clip(repr(forced))} is set by eval-hub; remove it")
    params.update(
        judge="openai-compatible",
        judge_url=spec.model.url,
        judge_model=spec.model.name,
        # our results document, named as its MLflow artifact (evaluation_results.json is
        # the contrib provider's shape there)
        output=str(output_dir / "agentjudge_results.json"),
    )
    return load_config(None, params, "job parameters", JOB_NAMES)


def _concurrency(params: dict[str, Any]) -> None:
    """The contrib provider's `concurrency_limit` (root trees at once, 10 by default) and
    ours, `judge_concurrency_limit` (judge calls in flight), as the scoring job's keys."""
    if "trajectory_concurrency_limit" in params:
        raise UsageError(
            "job parameter trajectory_concurrency_limit: write concurrency_limit (root "
            "trajectories scored at once) instead"
        )
    params["trajectory_concurrency_limit"] = params.pop("concurrency_limit", TRAJECTORIES_AT_ONCE)
    judge_calls = params.pop("judge_concurrency_limit", None)
    if judge_calls is not None:
        params["concurrency_limit"] = judge_calls


def _verdict_store(params: dict[str, Any], job_id: str) -> None:
    """The job's own verdict store: a job resumes its own calls but never takes another
    job's verdicts (the judge behind a URL and model name may have changed), unless it
    asks with `reuse_verdicts: true` (the shared store) or names one (`cache_path`)."""
    reuse = params.pop("reuse_verdicts", False)
    if not isinstance(reuse, bool):
        raise UsageError("job parameter reuse_verdicts: true or false")
    if not reuse and "cache_path" not in params:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", job_id)[:200] or "job"
        params["cache_path"] = str(default_store_path().parent / "jobs" / f"{safe}.sqlite")


def _rubric_text(text: str) -> dict[str, Any]:
    """A rubric written as JSON or YAML text in `custom_rubric`."""
    try:
        rubric = load_yaml(text, "job parameter custom_rubric")
    except yaml.YAMLError:
        rubric = None
    if not isinstance(rubric, dict):
        raise UsageError(
            "job parameter custom_rubric: a rubric as an object, or as JSON or YAML text of "
            "one (its file goes in custom_rubric_path)"
        )
    return rubric


def job_results(spec: JobSpec, run: ScoreRun, seconds: float) -> JobResults:
    """The three metrics, their schema and the overall score, as eval-hub expects them;
    whether the run is complete, and what is not, in `additional_info` (which eval-hub
    keeps with the job's results)."""
    metrics = run.document["metrics"]
    count = metrics["atif_trajectory_count"]
    results = [
        EvaluationResult(metric_name=name, metric_value=metrics[name], num_samples=count)
        for name in METRIC_NAMES
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
        # never silently: how much of the job the verdict store answered
        additional_info={**completeness(run.document), "verdicts_from_store": run.stats.store_hits},
    )


def completeness(document: ScoreResults) -> dict[str, Any]:
    """What eval-hub shows of a run's completeness: the flag, the incomplete nodes (at most
    50, with their count) and the failure categories."""
    incomplete = document["incomplete"]
    return {
        "atif_complete": document["run_metadata"]["atif_complete"],
        "incomplete_count": len(incomplete),
        "incomplete_nodes": incomplete[:50],
        "failure_categories": document["failure_categories"],
    }


def incomplete_warning(document: ScoreResults) -> MessageInfo | None:
    """The completed event's warning when the run is incomplete, naming what is."""
    if document["run_metadata"]["atif_complete"]:
        return None
    incomplete = document["incomplete"]
    shown = "; ".join(f"{n['file']}: {n['reason']}" for n in incomplete[:3])
    more = f" and {len(incomplete) - 3} more" if len(incomplete) > 3 else ""
    return MessageInfo(
        message=f"scored, but incomplete: {len(incomplete)} node(s) not fully scored "
        f"({shown}{more}); see additional_info and the MLflow artifact"[:2000],
        message_code="agentjudge_incomplete",
    )


def warn_on_completion(callbacks: DefaultCallbacks, warning: MessageInfo) -> None:
    """Have the completed event `callbacks` will send carry `warning`: eval-hub stores it
    with the benchmark's status, but the SDK's report_results takes no warning, so it goes
    into the event the SDK builds (an SDK without that step sends the event without it;
    `additional_info` still says the run is incomplete)."""
    build = getattr(callbacks, "_build_base_status_event", None)
    if build is None:
        return

    def with_warning(status: str) -> dict[str, Any]:
        event: dict[str, Any] = build(status)
        if status == JobStatus.COMPLETED.value:
            event["warning_message"] = callbacks._message_payload(warning)
        return event

    callbacks.__dict__["_build_base_status_event"] = with_warning


def start_error(exc: Exception) -> str:
    """Why the adapter could not start, in one line naming the job spec file and the fix.
    The spec's values are never quoted: its `model.auth` may hold a secret."""
    try:
        path = str(AdapterSettings.from_env().resolved_job_spec_path)
    except Exception:  # settings the SDK itself refuses: the variable is all there is
        path = os.environ.get("EVALHUB_JOB_SPEC_PATH") or "the job spec"
    if isinstance(exc, FileNotFoundError):
        return f"{path}: no such job spec file; set EVALHUB_JOB_SPEC_PATH to the job's job.json"
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "$"
        return f"{path}: {where}: {first['msg']}; fix the job spec (an eval-hub JobSpec)"
    if isinstance(exc, ValueError):  # the SDK's for a file that is not JSON
        return f"{path}: the job spec is not valid JSON; fix the file"
    if isinstance(exc, OSError):
        return f"{path}: cannot read the job spec ({exc.strerror or type(exc).__name__})"
    return f"cannot start the eval-hub adapter: {type(exc).__name__}"


def main() -> int:
    """Run the job named by EVALHUB_JOB_SPEC_PATH; report `failed` whatever goes wrong."""
    try:
        adapter = AgentJudgeAdapter()
        callbacks = DefaultCallbacks.from_adapter(adapter)
    except Exception as exc:
        print(f"error: {printable(clip(start_error(exc), 2000))}", file=sys.stderr)
        return 3
    try:
        results = adapter.run_benchmark_job(adapter.job_spec, callbacks)
        run = adapter.last_run
        assert run is not None
        _status(callbacks, JobPhase.PERSISTING_ARTIFACTS, "saving details to MLflow")
        job, card = job_identity(results), environment_card(run)
        run_id = callbacks.mlflow.save(
            results, adapter.job_spec, artifacts=mlflow_artifacts(run, job, card)
        )
        if run_id:
            _log_parameters(run_id, run)
        elif os.environ.get("MLFLOW_TRACKING_URI"):
            # no experiment named: the run is recorded (and tagged) all the same
            run_id = _log_own_run(run, adapter.job_spec, job, card)
        if run_id:
            results.mlflow_run_id = run_id
        warning = incomplete_warning(run.document)
        if warning is not None:
            warn_on_completion(callbacks, warning)
            # the job's log says it too, as the console would
            print(
                printable(f"warning: {warning.message_code}: {warning.message}"),
                file=sys.stderr,
                flush=True,
            )
        callbacks.report_results(results)
        return 0
    except JobFailed as exc:
        why = f": {exc.message}" if exc.message else ""
        return _fail(callbacks, "agentjudge_job_failed", f"the scoring job failed: {exc.kind}{why}")
    except UsageError as exc:
        return _fail(callbacks, "agentjudge_invalid_configuration", str(exc))
    except InputError as exc:
        return _fail(callbacks, "agentjudge_invalid_input", "; ".join(map(str, exc.problems)))
    except AgentJudgeError as exc:
        return _fail(callbacks, "agentjudge_error", str(exc))
    except Exception as exc:
        # the type only: a library's message may hold a URL with credentials or a body
        if os.environ.get("AGENTJUDGE_DEBUG") == "1":
            traceback.print_exception(exc)
        _fail(
            callbacks,
            "agentjudge_internal_error",
            f"unexpected {type(exc).__name__}: a bug in agentjudge; please report it with the "
            "job's log (set AGENTJUDGE_DEBUG=1 on the job for the traceback)",
        )
        return EXIT_INTERNAL


def mlflow_artifacts(
    run: ScoreRun, job: dict[str, Any], card: dict[str, Any] | None = None
) -> list[MlflowArtifact]:
    """The run's artifacts (`report.mlflow.run_artifacts`): `atif/agentjudge_results.json`
    (ours, every node and step), `atif/evaluation_results.json` (the contrib provider's
    shape, for `job`, with the environment `card`) and, with a training threshold, the two
    training manifests (`atif/training/{eligible,ineligible}_trajectories.json`)."""
    texts = run_artifacts(run.document, run.config, run.manifests, job, card)
    return [MlflowArtifact(path, text.encode(), "application/json") for path, text in texts.items()]


def job_identity(results: JobResults) -> dict[str, Any]:
    """What `evaluation_results.json` names the job by, as the SDK's `JobResults` does."""
    return {
        "id": results.id,
        "benchmark_id": results.benchmark_id,
        "benchmark_index": results.benchmark_index,
        "model_name": results.model_name,
    }


def environment_card(run: ScoreRun) -> dict[str, Any]:
    """The SDK's environment card of the job, as the contrib provider fills it: where it
    ran, and the first trajectory's agent with every trajectory's identity in `custom`."""
    card = EnvironmentCardMetadata.capture(
        framework_name="agentjudge", framework_version=__version__
    )
    roots = trajectory_metadata(run.document)
    first = roots[0] if roots else {}
    return card.model_copy(
        update={
            "model_id": first.get("model"),
            "model_version": first.get("agent_version"),
            "custom": {
                "atif_schema_version": first.get("atif_schema_version"),
                "agent_name": first.get("agent_name"),
                "agent_version": first.get("agent_version"),
                "model": first.get("model"),
                "trajectory_count": len(roots),
                "trajectories": roots,
            },
        }
    ).model_dump(mode="json")


def _log_own_run(run: ScoreRun, spec: JobSpec, job: dict[str, Any], card: dict[str, Any]) -> str:
    """A run in DEFAULT_EXPERIMENT for a job that names no experiment, with the same
    parameters, metrics, tag and artifacts."""
    from mlflow import MlflowClient

    run_id = log_run(
        run.document,
        run.config,
        run.manifests,
        os.environ["MLFLOW_TRACKING_URI"],
        DEFAULT_EXPERIMENT,
        job,
        card,
    )
    MlflowClient().set_tag(run_id, "evalhub.job.id", spec.id)
    return run_id


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
    # the log first: once the job is failed, its log may be read at any moment
    print(printable(f"error: {code}: {message}"), file=sys.stderr, flush=True)
    callbacks.report_status(
        JobStatusUpdate(
            status=JobStatus.FAILED,
            error_message=MessageInfo(message=message[:2000], message_code=code),
        )
    )
    return 2


__all__ = ["AgentJudgeAdapter", "job_config", "job_results", "main"]

if __name__ == "__main__":
    sys.exit(main())
