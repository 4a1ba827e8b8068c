"""Labels set beside a score run's results: per labelled trajectory, what the labeller said
and what the judge did (pure: the results document in, plain values out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjudge.calibration.labels import DecisiveLabel, LabelSet, TrajectoryLabels, trajectory_file
from agentjudge.judge.taxonomy import FAILURES, NO_FAILURE


@dataclass
class TrajectoryAgreement:
    """One labelled trajectory: its (label, judge) pairs and whether the judge found its
    labelled decisive step and agent (None where the labels say nothing)."""

    name: str
    steps: list[tuple[bool, bool]] = field(default_factory=list)  # (labelled pass, judged)
    categories: list[tuple[str, str]] = field(default_factory=list)  # (labelled, judged)
    unscored_steps: int = 0  # labelled steps the judge gave no score (or that do not exist)
    outcome: tuple[str, str] | None = None  # (labelled, judged) pass/fail of the root
    decisive_step: bool | None = None
    decisive_agent: bool | None = None
    predicted: dict[str, Any] | None = None  # the results' decisive_failure, as it was


def agreements(
    labels: LabelSet, labels_path: Path, document: dict[str, Any], threshold: float
) -> list[TrajectoryAgreement]:
    """Each labelled trajectory (in the labels' order) against its tree in `document` (a
    score results document); a step passes in the judge's eyes when its score is at least
    `threshold` (the failure threshold). A trajectory missing from the results has every
    labelled step unscored and no decisive prediction."""
    trees = {_resolved(entry["root"]): entry for entry in document.get("trajectories", [])}
    out = []
    for name, labelled in labels.trajectories.items():
        tree = trees.get(_resolved(str(trajectory_file(labels_path, name))))
        out.append(_agreement(name, labelled, tree, labels_path.parent, threshold))
    return out


def _resolved(path: str) -> Path:
    return Path(path).resolve()


def _agreement(
    name: str,
    labelled: TrajectoryLabels,
    tree: dict[str, Any] | None,
    folder: Path,
    threshold: float,
) -> TrajectoryAgreement:
    result = TrajectoryAgreement(name)
    nodes: list[dict[str, Any]] = tree["nodes"] if tree else []
    for label in labelled.steps:
        step = _step(_node(nodes, label.node, folder), label.step_id)
        score = step.get("score") if step else None
        if not isinstance(score, int | float) or step is None:
            result.unscored_steps += 1
            continue
        if label.passed is not None:
            result.steps.append((label.passed, score >= threshold))
        if label.category is not None:
            judged = step.get("category")
            result.categories.append((label.category, judged if judged in FAILURES else NO_FAILURE))
    if labelled.outcome is not None and nodes and nodes[0].get("passed") is not None:
        result.outcome = (labelled.outcome, "pass" if nodes[0]["passed"] else "fail")
    if labelled.decisive is not None:
        predicted = tree.get("decisive_failure") if tree else None
        result.predicted = predicted
        _decisive(result, labelled.decisive, predicted, nodes, folder)
    return result


def _decisive(
    result: TrajectoryAgreement,
    label: DecisiveLabel,
    predicted: dict[str, Any] | None,
    nodes: list[dict[str, Any]],
    folder: Path,
) -> None:
    """Score the judge's decisive failure against the label: the same step of the same
    node; an agent whose name holds the labelled one, ignoring case (Who&When labels
    `Orchestrator` for the speaker `Orchestrator (thought)`). No prediction is a miss."""
    if label.step_id is not None:
        node = _node(nodes, label.node, folder)
        result.decisive_step = bool(
            predicted
            and node is not None
            and predicted.get("node_id") == node.get("id")
            and predicted.get("step_id") == label.step_id
        )
    if label.agent is not None:
        agent = predicted.get("agent") if predicted else None
        result.decisive_agent = isinstance(agent, str) and (
            label.agent.casefold() in agent.casefold()
        )


def _node(nodes: list[dict[str, Any]], name: str | None, folder: Path) -> dict[str, Any] | None:
    """The root (`name` None), else the node whose trajectory_id is `name` or whose file is
    `name` relative to the labels file's folder."""
    if not nodes:
        return None
    if name is None:
        return nodes[0]
    target = (folder / name).resolve()
    for node in nodes:
        if node.get("trajectory_id") == name:
            return node
    for node in nodes:
        if node.get("file") and _resolved(node["file"]) == target and "#" not in node["id"]:
            return node
    return None


def _step(node: dict[str, Any] | None, step_id: int) -> dict[str, Any] | None:
    """A node's step by id (a continued node's first segment holding it)."""
    for step in node.get("steps", []) if node else []:
        if step.get("step_id") == step_id:
            return dict(step)
    return None
