"""`agentjudge convert who-and-when` on the whole Who&When dataset, and on files that are not
Who&When runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.atif import load_trees
from agentjudge.calibration.labels import load_labels
from agentjudge.cli import main
from agentjudge.convert.folder import convert_who_and_when
from agentjudge.errors import InputError, UsageError
from tests.conftest import FIXTURES

WHO_AND_WHEN = FIXTURES / "who-and-when"


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("who-and-when")
    assert main(["convert", "who-and-when", str(WHO_AND_WHEN), str(out)]) == 0
    return out


def runs() -> list[Path]:
    return sorted(WHO_AND_WHEN.rglob("*.json"))


def read(path: Path) -> Any:
    return json.loads(path.read_text())


def test_every_run_converts_to_valid_atif(converted: Path) -> None:
    files = sorted((converted / "trajectories").iterdir())
    assert len(runs()) == len(files) == 184
    assert {f.name for f in files} == {f"{p.parent.name}-{p.stem}.json" for p in runs()}
    roots = list(load_trees([converted / "trajectories"]))
    assert len(roots) == 184
    assert [str(p) for r in roots for p in r.all_problems()] == []
    assert all(r.valid and r.steps == len(read(Path(r.file))["steps"]) for r in roots)


def test_every_labelled_step_is_mapped_exactly(converted: Path) -> None:
    labels = load_labels(converted / "labels.json")
    assert len(labels.trajectories) == 184
    for source in runs():
        run = read(source)
        name = f"trajectories/{source.parent.name}-{source.stem}.json"
        trajectory = read(converted / name)
        history, index = run["history"], int(run["mistake_step"])
        assert [s["message"] for s in trajectory["steps"]] == [m["content"] for m in history]
        step = trajectory["steps"][index]
        assert step["step_id"] == index + 1
        assert step["message"] == history[index]["content"]
        speaker = history[index].get("name") or history[index]["role"]
        assert step["extra"]["agent_name"] == speaker
        label = labels.trajectories[name]
        assert label.outcome == "fail"
        assert label.decisive is not None
        assert (label.decisive.step_id, label.decisive.agent) == (index + 1, run["mistake_agent"])
        assert [(s.step_id, s.passed) for s in label.steps] == [
            *((i, True) for i in range(1, index + 1)),
            (index + 1, False),
        ]
        assert all(s.category is None for s in label.steps)
        assert trajectory["extra"]["task_instruction"] == run["question"]
        assert trajectory["extra"]["ground_truth"] == run["ground_truth"]


def test_who_speaks_decides_the_source(converted: Path) -> None:
    hand = read(converted / "trajectories" / "hand-crafted-1.json")
    assert hand["agent"]["name"] == "magentic-one"
    assert hand["steps"][0]["source"] == "user"  # the human's question
    assert {s["source"] for s in hand["steps"][1:]} == {"agent"}
    generated = read(converted / "trajectories" / "algorithm-generated-1.json")
    assert generated["agent"]["name"] == "captain-agent"
    # AutoGen's role `user` on what another agent said: still that agent's step
    terminal = generated["steps"][1]
    assert terminal["extra"] == {"agent_name": "Computer_terminal", "role": "user"}
    assert terminal["source"] == "agent"


def test_the_ground_truths_are_a_reference_registry(converted: Path) -> None:
    registry = read(converted / "references.json")
    references = registry["rubrics"]["default"]["references"]
    assert len(references) == 184
    run = read(WHO_AND_WHEN / "hand-crafted" / "1.json")
    assert references["hand-crafted-1"] == {"answer": run["ground_truth"]}
    assert read(converted / "trajectories" / "hand-crafted-1.json")["extra"]["reference_id"] == (
        "hand-crafted-1"
    )


def test_a_file_that_is_not_who_and_when_is_one_line_per_problem(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    run = read(WHO_AND_WHEN / "hand-crafted" / "1.json")
    (src / "good.json").write_text(json.dumps(run))
    run["mistake_step"] = str(len(run["history"]))
    (src / "bad.json").write_text(json.dumps(run))
    (src / "atif.json").write_text(json.dumps({"schema_version": "ATIF-v1.7", "steps": []}))
    with pytest.raises(InputError) as caught:
        convert_who_and_when(src, tmp_path / "out")
    bad = f"(0 to {len(run['history']) - 1})"
    assert [
        str(p).removesuffix(": not a Who&When run [who_and_when]") for p in caught.value.problems
    ] == [
        f"{src / 'atif.json'}: $.question: must be a string",
        f"{src / 'atif.json'}: $.ground_truth: must be a string",
        f"{src / 'atif.json'}: $.mistake_agent: must be a string naming an agent",
        f"{src / 'atif.json'}: $.history: must be a non-empty list of messages",
        f"{src / 'bad.json'}: $.mistake_step: must be a string holding an index into history {bad}",
    ]
    assert all(
        str(p).endswith(": not a Who&When run [who_and_when]") for p in caught.value.problems
    )
    assert not (tmp_path / "out").exists()  # nothing written


def test_bad_arguments_are_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.json").write_text("{")
    assert main(["convert", "who-and-when", str(tmp_path / "broken.json"), str(tmp_path)]) == 3
    assert f"Who&When file {tmp_path / 'broken.json'} is not valid JSON" in capsys.readouterr().err
    with pytest.raises(UsageError, match="no such file or folder"):
        convert_who_and_when(tmp_path / "missing", tmp_path / "out")
    (tmp_path / "file").write_text("")
    with pytest.raises(UsageError, match="OUT must name a folder"):
        convert_who_and_when(WHO_AND_WHEN / "hand-crafted" / "1.json", tmp_path / "file")
