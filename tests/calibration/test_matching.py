"""Labels matched to a score results document (as `agentjudge score` writes it), with the
decisive failure of the shared interface."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.calibration.figures import calibration_document
from agentjudge.calibration.labels import LabelSet, load_labels
from agentjudge.calibration.matching import agreements
from agentjudge.errors import UsageError
from agentjudge.results.score import DecisiveFailureRecord, ScoreResults
from tests.results.documents import node, score_document, step, tree


def results(folder: Path, decisive: DecisiveFailureRecord | None) -> ScoreResults:
    root = str(folder / "runs" / "a.json")
    child = node(
        f"{root}#$.subagent_trajectories[0]", root, trajectory_id="helper",
        steps=[step(1, 0.1, category="context_loss")],
    )  # fmt: skip
    steps = [step(1, 0.9), step(2, 0.4, category="none"), step(3, None)]
    return score_document([tree([node(root, None, steps=steps), child], decisive_failure=decisive)])


LABELS = {
    "version": 1,
    "trajectories": {
        "runs/a.json": {
            "outcome": "fail",
            "steps": [
                {"step_id": 1, "pass": True},
                {"step_id": 2, "pass": False, "category": "reasoning_failure"},
                {"step_id": 3, "pass": False},
                {"node": "helper", "step_id": 1, "pass": False, "category": "context_loss"},
            ],
            "decisive": {"node": "helper", "step_id": 1, "agent": "Helper"},
        }
    },
}


def decisive(node_id: str, step_id: int, agent: str | None) -> DecisiveFailureRecord:
    return {
        "rule": "first_below_threshold",
        "node_id": node_id,
        "agent": agent,
        "segment": 0,
        "step_id": step_id,
        "order": 0,
        "score": 0.1,
        "category": None,
        "reason": "",
        "pick_status": None,
    }


@pytest.fixture
def labels_path(tmp_path: Path) -> Path:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "a.json").write_text("{}")
    path = tmp_path / "labels.json"
    path.write_text(LabelSet.model_validate(LABELS).model_dump_json(by_alias=True))
    return path


def test_steps_categories_and_decisive_failure_match(labels_path: Path) -> None:
    labels = load_labels(labels_path)
    folder = labels_path.parent
    child = f"{folder / 'runs' / 'a.json'}#$.subagent_trajectories[0]"
    hit = decisive(child, 1, "helper (thought)")
    [item] = agreements(labels, labels_path, results(folder, hit), 0.5)
    assert item.steps == [(True, True), (False, False), (False, False)]
    assert item.unscored_steps == 1  # step 3 has no score
    assert item.categories == [("reasoning_failure", "none"), ("context_loss", "context_loss")]
    assert item.outcome == ("fail", "fail")
    assert (item.decisive_step, item.decisive_agent) == (True, True)
    root = str(folder / "runs" / "a.json")
    [miss] = agreements(labels, labels_path, results(folder, decisive(root, 1, "Other")), 0.5)
    assert (miss.decisive_step, miss.decisive_agent) == (False, False)
    [none] = agreements(labels, labels_path, results(folder, None), 0.5)
    assert (none.decisive_step, none.decisive_agent, none.predicted) == (False, False, None)
    document = calibration_document([item, miss, none])
    figures = document["figures"]
    assert figures["decisive_step_accuracy"]["value"] == 1 / 3
    assert figures["agent_accuracy"] | {"interval": None} == {
        "value": 1 / 3,
        "interval": None,
        "labelled": 3,
        "correct": 1,
        "no_prediction": 1,
    }
    assert figures["step_accuracy"]["value"] == 1.0
    assert figures["kappa"]["value"] == 1.0
    # context_loss: tp 3; reasoning_failure: fn 3 -> macro F1 (1 + 0) / 2
    assert figures["category_macro_f1"]["value"] == 0.5
    assert document["categories"]["reasoning_failure"]["recall"] == 0.0


def test_a_trajectory_missing_from_the_results_has_no_prediction(labels_path: Path) -> None:
    labels = load_labels(labels_path)
    [item] = agreements(labels, labels_path, score_document([]), 0.5)
    assert (item.steps, item.unscored_steps, item.decisive_step) == ([], 4, False)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"version": 2}, "version: Input should be 1"),
        ({"trajectories": {}}, "trajectories: label at least one trajectory"),
        (
            {"trajectories": {"runs/a.json": {"steps": [{"step_id": 1, "category": "slow"}]}}},
            "trajectories.runs/a.json.steps.0.category: Input should be 'tool_selection_failure'",
        ),
        (
            {"trajectories": {"runs/a.json": {"decisive": {}}}},
            "trajectories.runs/a.json.decisive: give step_id, agent or both",
        ),
        (
            {"trajectories": {"runs/a.json": {"steps": [{"step_id": 1}, {"step_id": 1}]}}},
            "trajectories.runs/a.json: step 1 of node root twice",
        ),
        ({"trajectories": {"runs/a.json": {"passed": True}}}, "passed: unknown field"),
        ({"trajectories": {"runs/b.json": {}}}, "trajectories.runs/b.json: no such file"),
        ({"trajectories": {"../a.json": {}}}, "must be a path inside the labels file's folder"),
    ],
)
def test_a_bad_labels_file_is_one_line(
    labels_path: Path, change: dict[str, Any], message: str
) -> None:
    labels_path.write_text(json.dumps({**LABELS, **change}))
    with pytest.raises(UsageError) as caught:
        load_labels(labels_path)
    assert str(caught.value).startswith(f"{labels_path}: ")
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)
