"""Training-data manifests: which scored trajectories are good enough to learn from.

With a `training_threshold`, every root of a scoring run is eligible when its subtree was
scored completely (no failed, unscored or omitted node) and its aggregate is at or above
the threshold. The two manifests list the eligible roots and the others, with where they
came from, so a training pipeline can take the one and leave the other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

TRAINING_SCHEMA = "agentjudge.training/v1"
Selection = Literal["eligible", "ineligible"]
SELECTIONS: tuple[Selection, ...] = ("eligible", "ineligible")


def training_manifests(
    document: dict[str, Any], sources: list[str]
) -> dict[Selection, dict[str, Any]]:
    """The eligible and the ineligible manifests of a results document scored with a
    training threshold (`sources`: the trajectory paths the run was given)."""
    threshold = document["training_threshold"]
    chosen: dict[Selection, list[dict[str, Any]]] = {"eligible": [], "ineligible": []}
    for tree in document["trajectories"]:
        root = tree["nodes"][0]
        selection: Selection = "eligible" if tree["training_eligible"] else "ineligible"
        chosen[selection].append(
            {
                "id": root["id"],
                "trajectory_id": root["trajectory_id"],
                "path": root["file"],
                "score": root["own_score"],
                "aggregate": root["aggregate"],
                "status": root["status"],
                "complete": root["complete"],
            }
        )
    return {
        selection: {
            "schema_version": TRAINING_SCHEMA,
            "selection": selection,
            "threshold": threshold,
            "count": len(entries),
            "source_paths": sources,
            "trajectories": entries,
        }
        for selection, entries in chosen.items()
    }


def manifest_name(selection: Selection) -> str:
    """`eligible_trajectories.json` or `ineligible_trajectories.json`."""
    return f"{selection}_trajectories.json"


def manifest_path(results: Path, selection: Selection) -> Path:
    """Beside the results file: `results.eligible_trajectories.json`, ..."""
    return results.with_name(f"{results.stem}.{manifest_name(selection)}")
