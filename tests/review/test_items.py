"""The items of a results file a person reviews: read from score results (with the
trajectories they name, for the task and context) and from grade results."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentjudge.errors import UsageError
from agentjudge.review.items import ContextStep, ReviewItem, load_items
from tests.review.runs import edit_score, grade_run, score_run


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return score_run(tmp_path_factory.mktemp("scored"))


def by_key(items: list[ReviewItem]) -> dict[str, ReviewItem]:
    return {item.key: item for item in items}


def test_every_step_of_every_node_is_one_item(scored: Path) -> None:
    document = json.loads(scored.read_text())
    items, digest = load_items(scored)
    assert digest == hashlib.sha256(scored.read_bytes()).hexdigest()
    expected = [
        f"{tree['root']}#{'' if node['parent_id'] is None else node['id']}#{step['step_id']}"
        for tree in document["trajectories"]
        for node in tree["nodes"]
        for step in node["steps"]
    ]
    assert [item.key for item in items] == expected
    assert len(expected) == 3 + 2 + 29
    root = str(scored.parent / "runs" / "multiagent.json")
    child = by_key(items)[f"{root}#{root}#$.subagent_trajectories[0]#2"]
    assert (child.root, child.node, child.step_id, child.kind) == (root, child.node, 2, "step")
    assert child.node == f"{root}#$.subagent_trajectories[0]"
    step = document["trajectories"][0]["nodes"][1]["steps"][1]
    assert child.score == step["score"]
    assert child.samples == tuple(step["samples"])
    assert (child.threshold, child.scale) == (0.5, (0.0, 1.0))
    assert child.rationale == step["rationale"]
    assert child.category == step["category"]


def test_context_is_the_trajectory_up_to_the_step_and_the_task(scored: Path) -> None:
    items = by_key(load_items(scored)[0])
    who = str(scored.parent / "runs" / "who-and-when.json")
    fifth = items[f"{who}##5"]
    assert [s.step_id for s in fifth.context] == [1, 2, 3, 4, 5]
    assert fifth.task.startswith("Where can I take martial arts classes")
    assert fifth.context[0].source == "user"
    assert fifth.context[0].text.startswith("Where can")
    spoke = json.loads((scored.parent / "runs" / "who-and-when.json").read_text())["steps"][4]
    assert fifth.agent == spoke["extra"]["agent_name"] == "WebSurfer"  # the speaker, not the team
    first = items[f"{who}##1"]
    assert len(first.context) == 1


def test_the_decisive_step_is_marked(scored: Path) -> None:
    document = json.loads(scored.read_text())
    items = load_items(scored)[0]
    marked = [(i.root, i.node or i.root, i.step_id) for i in items if i.decisive]
    expected = [
        (t["root"], t["decisive_failure"]["node_id"], t["decisive_failure"]["step_id"])
        for t in document["trajectories"]
    ]
    assert marked == expected
    assert len(marked) == 2


def test_tool_calls_and_observations_are_text(tmp_path: Path, atif_fixtures: Path) -> None:
    results = score_run(tmp_path)
    steps = [s for item in load_items(results)[0] for s in item.context]
    calls = [c for s in steps for c in s.tool_calls]
    assert calls
    assert all("(" in c and c.endswith(")") for c in calls)
    assert any(s.observations for s in steps)


def test_moved_results_read_relative_roots_from_their_folder(
    scored: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(scored.parent / "runs", tmp_path / "runs")

    def relative(document: dict[str, Any]) -> None:
        text = json.dumps(document).replace(str(scored.parent) + "/", "")
        document.clear()
        document.update(json.loads(text))

    shutil.copy(scored, tmp_path / "results.json")
    edit_score(tmp_path / "results.json", relative)
    monkeypatch.chdir("/")
    items = load_items(tmp_path / "results.json")[0]
    assert items[0].root == "runs/multiagent.json"
    assert items[0].task
    assert items[0].context[0].step_id == 1


def test_a_trajectory_that_is_gone_is_said_in_the_context(scored: Path, tmp_path: Path) -> None:
    moved = tmp_path / "results.json"
    shutil.copy(scored, moved)
    document = json.loads(moved.read_text())
    document["trajectories"][0]["root"] = str(tmp_path / "gone.json")
    moved.write_text(json.dumps(document))
    item = load_items(moved)[0][0]
    assert item.task == ""
    [said] = item.context
    assert said.source == "system"
    assert "context not shown" in said.text
    assert "gone.json" in said.text


def test_grade_results_give_one_item_per_judge_metric(tmp_path: Path) -> None:
    items = load_items(grade_run(tmp_path))[0]
    assert [i.key for i in items] == ["greeting#response_quality", "weather#task_success"]
    weather = items[1]
    assert (weather.kind, weather.root, weather.metric, weather.step_id) == (
        "case_metric", "weather", "task_success", None,
    )  # fmt: skip
    assert (weather.score, weather.threshold, weather.scale) == (5.0, 3.0, (1.0, 5.0))
    assert weather.task == "weather in SF?"
    assert weather.context[-1] == ContextStep(
        2, "agent", "It is sunny in SF.", ('get_weather({"query": "SF", "units": "c"})',),
        ("sunny",),
    )  # fmt: skip


def test_grade_results_without_their_traces_still_load(tmp_path: Path) -> None:
    items = load_items(grade_run(tmp_path, traces=False))[0]
    assert [(i.task, i.context) for i in items] == [("", ()), ("", ())]


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ("{", "not valid JSON"),
        ('{"hello": 1}', "schema: not a score or grade results file"),
        ('{"schema": "agentjudge.score/v1"}', "not a valid agentjudge.score/v1 results file"),
    ],
)
def test_bad_input_is_one_line_naming_the_file(tmp_path: Path, content: str, said: str) -> None:
    path = tmp_path / "r.json"
    path.write_text(content)
    with pytest.raises(UsageError) as caught:
        load_items(path)
    assert str(path) in str(caught.value)
    assert said in str(caught.value)
    assert "\n" not in str(caught.value)


def test_a_missing_results_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="results file not found"):
        load_items(tmp_path / "nothing.json")


def test_a_root_that_is_not_a_trajectory_shows_none_of_its_text(
    scored: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "notes.json"
    secret.write_text('{"steps": "hunter2 is the password"}')
    moved = tmp_path / "results.json"
    document = json.loads(scored.read_text())
    document["trajectories"][0]["root"] = str(secret)
    moved.write_text(json.dumps(document))
    item = load_items(moved)[0][0]
    shown = item.task + "".join(s.text for s in item.context)
    assert "hunter2" not in shown
    assert "is not a readable trajectory" in shown
