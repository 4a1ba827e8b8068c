"""Training-data manifests: which scored trajectories are good enough to learn from.

With a `training_threshold`, every node of a scoring run is eligible or not (our rule,
stricter than the contrib provider's: its whole subtree scored, none failed, unscored or
omitted, and its aggregate at or above the threshold). The two manifests have the contrib
provider's keys (`report/contrib_shape.py`): each lists its nodes and the files they are, so
a training pipeline written for either provider takes the one and leaves the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from agentjudge.report.contrib_shape import flatten, scored_trees
from agentjudge.results.score import ScoreResults

TRAINING_SCHEMA = 1  # the contrib provider's schema_version of its manifests
Selection = Literal["eligible", "ineligible"]
SELECTIONS: tuple[Selection, ...] = ("eligible", "ineligible")
# says, in each manifest, which rule chose its nodes (contrib's reader ignores it)
ELIGIBLE_WHEN = (
    "status scored, its whole subtree scored (none failed, unscored or omitted) "
    "and aggregate_score >= training_threshold"
)


def training_manifests(
    document: ScoreResults, environ: Mapping[str, str] | None = None
) -> dict[Selection, dict[str, Any]]:
    """The eligible and the ineligible manifests of a results document scored with a
    training threshold; `environ` gives the S3 origin of eval-hub's test data
    (`contrib_shape.source_location`)."""
    threshold = document["training_threshold"]
    chosen: dict[Selection, list[dict[str, Any]]] = {"eligible": [], "ineligible": []}
    for node in flatten(scored_trees(document, environ)):
        chosen["eligible" if node["training_eligible"] else "ineligible"].append(node)
    manifests: dict[Selection, dict[str, Any]] = {}
    for selection, nodes in chosen.items():
        paths = [n["source_path"] for n in nodes if n["source_path"] is not None]
        manifests[selection] = {
            "schema_version": TRAINING_SCHEMA,
            "selection": selection,
            "training_threshold": threshold,
            "trajectory_count": len(nodes),
            "source_paths": paths,
            "manifest": paths if selection == "eligible" else [],
            "trajectories": nodes,
            "eligible_when": ELIGIBLE_WHEN,
        }
    return manifests


def manifest_name(selection: Selection) -> str:
    """`eligible_trajectories.json` or `ineligible_trajectories.json`."""
    return f"{selection}_trajectories.json"


def manifest_path(results: Path, selection: Selection) -> Path:
    """Beside the results file: `results.eligible_trajectories.json`, ..."""
    return results.with_name(f"{results.stem}.{manifest_name(selection)}")
