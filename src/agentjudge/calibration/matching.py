"""Labels set beside a score run's results: per labelled trajectory, what the labeller said
and what the judge did (pure: the results document in, plain values out)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentjudge.calibration.labels import DecisiveLabel, LabelSet, TrajectoryLabels, trajectory_file
from agentjudge.judge.taxonomy import FAILURES, NO_FAILURE
from agentjudge.results.score import (
    DecisiveFailureRecord,
    NodeRecord,
    ScoreResults,
    StepRecord,
    TrajectoryRecord,
)


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
    predicted: DecisiveFailureRecord | None = None  # the results' decisive_failure, as it was


def agreements(
    labels: LabelSet, labels_path: Path, document: ScoreResults, threshold: float
) -> list[TrajectoryAgreement]:
    """Each labelled trajectory (in the labels' order) against its tree in `document` (a
    score results document); a step passes in the judge's eyes when its score is at least
    `threshold` (the failure threshold). A trajectory missing from the results has every
    labelled step unscored and no decisive prediction."""
    trees = {_resolved(entry["root"]): entry for entry in document["trajectories"]}
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
    tree: TrajectoryRecord | None,
    folder: Path,
    threshold: float,
) -> TrajectoryAgreement:
    result = TrajectoryAgreement(name)
    nodes = tree["nodes"] if tree else []
    for label in labelled.steps:
        step = _step(_node(nodes, label.node, folder), label.step_id)
        score = step["score"] if step else None
        if step is None or score is None:
            result.unscored_steps += 1
            continue
        if label.passed is not None:
            result.steps.append((label.passed, score >= threshold))
        if label.category is not None:
            judged = step["category"]
            result.categories.append((label.category, judged if judged in FAILURES else NO_FAILURE))
    if labelled.outcome is not None and nodes:
        result.outcome = (labelled.outcome, "pass" if nodes[0]["passed"] else "fail")
    if labelled.decisive is not None:
        predicted = tree["decisive_failure"] if tree else None
        result.predicted = predicted
        _decisive(result, labelled.decisive, predicted, nodes, folder)
    return result


def _decisive(
    result: TrajectoryAgreement,
    label: DecisiveLabel,
    predicted: DecisiveFailureRecord | None,
    nodes: list[NodeRecord],
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
            and predicted["node_id"] == node["id"]
            and predicted["step_id"] == label.step_id
        )
    if label.agent is not None:
        agent = predicted["agent"] if predicted else None
        result.decisive_agent = isinstance(agent, str) and (
            label.agent.casefold() in agent.casefold()
        )


def _node(nodes: list[NodeRecord], name: str | None, folder: Path) -> NodeRecord | None:
    """The root (`name` None), else the node whose trajectory_id is `name` or whose file is
    `name` relative to the labels file's folder."""
    if not nodes:
        return None
    if name is None:
        return nodes[0]
    target = (folder / name).resolve()
    for node in nodes:
        if node["trajectory_id"] == name:
            return node
    for node in nodes:
        if _resolved(node["file"]) == target and "#" not in node["id"]:
            return node
    return None


def _step(node: NodeRecord | None, step_id: int) -> StepRecord | None:
    """A node's step by id (a continued node's first segment holding it)."""
    steps = node["steps"] if node else []
    return next((step for step in steps if step["step_id"] == step_id), None)
