"""Log a scoring run to MLflow: the same parameters, metrics and artifacts as the adapter.

Needs `agentjudge[mlflow]`. The tracking URI is never written anywhere (it may hold
credentials); the run records the judge as provider/model only.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from agentjudge.errors import UsageError
from agentjudge.report.contrib_shape import BENCHMARK_ID, evaluation_results
from agentjudge.report.training import Selection, manifest_name
from agentjudge.results.score import METRIC_NAMES, ScoreResults
from agentjudge.scoring.config import ScoreConfig

ARTIFACT_DIR = "atif"
# our results document, every node and step: under its own name
DETAILS_PATH = f"{ARTIFACT_DIR}/agentjudge_results.json"
# the contrib provider's names and shapes (report/contrib_shape.py)
RESULTS_PATH = f"{ARTIFACT_DIR}/evaluation_results.json"
TRAINING_DIR = f"{ARTIFACT_DIR}/training"


def run_artifacts(
    document: ScoreResults,
    config: ScoreConfig,
    manifests: Mapping[Selection, dict[str, Any]],
    job: Mapping[str, Any],
    env_card: dict[str, Any] | None = None,
) -> dict[str, str]:
    """Every artifact of a run, path -> JSON text: our results document, the contrib
    provider's `evaluation_results.json` (`job`: its id, benchmark_id, benchmark_index,
    model_name) and, with a training threshold, the two training `manifests`. The contrib
    files are indented as the contrib provider writes them."""
    contrib = evaluation_results(document, config, job, env_card, os.environ)
    texts = {
        DETAILS_PATH: json.dumps(document, ensure_ascii=False),
        RESULTS_PATH: json.dumps(contrib, ensure_ascii=False, indent=2),
    }
    for selection, manifest in manifests.items():
        path = f"{TRAINING_DIR}/{manifest_name(selection)}"
        texts[path] = json.dumps(manifest, ensure_ascii=False, indent=2)
    return texts


def log_run(
    document: ScoreResults,
    config: ScoreConfig,
    manifests: Mapping[Selection, dict[str, Any]],
    tracking_uri: str,
    experiment: str,
    job: Mapping[str, Any] | None = None,
    env_card: dict[str, Any] | None = None,
) -> str:
    """Create a run in `experiment` holding a job's results (`document`, its `config` and
    training `manifests`) as `run_artifacts` has them; return its id. `job`: the
    eval-hub job it records; without one (the CLI) `evaluation_results.json` names the
    MLflow run as its id and `atif_trajectory_default` as its benchmark."""
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise UsageError(
            "--mlflow-tracking-uri needs MLflow: pip install 'agentjudge[mlflow]'"
        ) from None
    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    created = client.create_run(experiment_id, run_name="agentjudge score")
    run_id: str = created.info.run_id
    for key, value in document["run_parameters"].items():
        client.log_param(run_id, key, value)
    for name in METRIC_NAMES:
        if (value := document["metrics"][name]) is not None:
            client.log_metric(run_id, name, float(value))
    client.set_tag(run_id, "atif_complete", str(document["run_metadata"]["atif_complete"]).lower())
    if job is None:
        # atif_judge is provider/model: the model is the judge's, eval-hub's model_name
        model = document["run_parameters"]["atif_judge"].split("/", 1)[-1]
        job = {
            "id": run_id,
            "benchmark_id": BENCHMARK_ID,
            "benchmark_index": 0,
            "model_name": model,
        }
    for path, text in run_artifacts(document, config, manifests, job, env_card).items():
        client.log_text(run_id, text, path)
    client.set_terminated(run_id, "FINISHED" if document["status"] == "succeeded" else "FAILED")
    return run_id
