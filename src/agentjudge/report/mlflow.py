"""Log a scoring run to MLflow: the same parameters, metrics and artifact as the adapter.

Needs `agentjudge[mlflow]`. The tracking URI is never written anywhere (it may hold
credentials); the run records the judge as provider/model only.
"""

from __future__ import annotations

import json
from typing import Any

from agentjudge.errors import UsageError

ARTIFACT_DIR = "atif"
ARTIFACT_NAME = "evaluation_results.json"


def log_run(document: dict[str, Any], tracking_uri: str, experiment: str) -> str:
    """Create a run in `experiment` holding the results; return its id."""
    try:
        from mlflow import MlflowClient
    except ImportError:
        raise UsageError(
            "--mlflow-tracking-uri needs MLflow: pip install 'agentjudge[mlflow]'"
        ) from None
    client = MlflowClient(tracking_uri=tracking_uri)
    found = client.get_experiment_by_name(experiment)
    experiment_id = found.experiment_id if found else client.create_experiment(experiment)
    run = client.create_run(experiment_id, run_name="agentjudge score")
    run_id: str = run.info.run_id
    for key, value in document["run_parameters"].items():
        client.log_param(run_id, key, value)
    for key, value in document["metrics"].items():
        if value is not None:
            client.log_metric(run_id, key, float(value))
    client.set_tag(run_id, "atif_complete", str(document["run_metadata"]["atif_complete"]).lower())
    client.log_text(
        run_id, json.dumps(document, ensure_ascii=False), f"{ARTIFACT_DIR}/{ARTIFACT_NAME}"
    )
    client.set_terminated(run_id, "FINISHED" if document["status"] == "succeeded" else "FAILED")
    return run_id
