"""The score results contract (results/score.py): what `agentjudge score` writes loads, and a
file that differs from it in any key is one usage error naming the file, field and fix.

`data/score-results.json` was written by `agentjudge score` with the scripted judge (two
roots, a subagent, a categorized failure, a training threshold): a v1 file must keep
loading for as long as this agentjudge says it reads v1 (docs/results.md, "Versions")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.errors import EXIT_USAGE, UsageError
from agentjudge.results.contract import field_path
from agentjudge.results.score import SCORE
from agentjudge.testing import JudgeServer
from tests.e2e.test_score_cli import tree

DATA = Path(__file__).parent / "data"
FIX = "pass a results file written by `agentjudge score` (agentjudge.score/v1), unmodified"


def written() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((DATA / "score-results.json").read_text())
    return data


def refused(document: Any) -> str:
    with pytest.raises(UsageError) as caught:
        SCORE.check(document, "old.json")
    assert caught.value.exit_code == EXIT_USAGE
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_a_file_score_wrote_loads_as_it_was_read() -> None:
    document = written()
    loaded = SCORE.check(document, "score-results.json")
    assert loaded is document  # the values as in the file: no 1 turned into 1.0
    assert loaded["trajectories"][1]["nodes"][1]["parent_step_id"] == 3


def test_what_score_writes_now_loads(tmp_path: Path) -> None:
    """A fresh run through the Python API, the writer's output as it is today."""
    from agentjudge.api import score_trajectories
    from agentjudge.scoring.config import load_config

    runs = tree(tmp_path)
    with JudgeServer() as server:
        config = load_config(None, {
            "trajectory_path": [str(runs)], "judge": "openai-compatible",
            "judge_url": server.base_url, "judge_model": "judge", "samples": 2,
            "judge_temperature": 0.5, "training_threshold": 0.5,
            "output": str(tmp_path / "out.json"), "cache_path": str(tmp_path / "store.sqlite"),
        })  # fmt: skip
        run = score_trajectories(config)
    on_disk = json.loads((tmp_path / "out.json").read_text())
    assert SCORE.check(on_disk, "out.json") == run.document
    step = on_disk["trajectories"][0]["nodes"][0]["steps"][0]
    assert set(step) >= {"samples", "spread", "stdev", "unstable"}  # NotRequired keys too


def test_a_renamed_field_is_refused_naming_it() -> None:
    document = written()
    node = document["trajectories"][0]["nodes"][0]
    node["node_score"] = node.pop("own_score")
    assert refused(document) == (
        "old.json: not a valid agentjudge.score/v1 results file: "
        f"trajectories[0].nodes[0].own_score: Field required (and 1 more); {FIX}"
    )


@pytest.mark.parametrize(
    ("change", "where", "problem"),
    [
        (lambda d: d["judge"].update(endpoint_url="x"), "judge.endpoint_url",
         "Extra inputs are not permitted (it is 'x')"),
        (lambda d: d["metrics"].update(atif_trajectory_count="3"), "metrics.atif_trajectory_count",
         "Input should be a valid integer (it is '3')"),
        (lambda d: d["trajectories"][0]["nodes"][0].update(passed=1),
         "trajectories[0].nodes[0].passed", "Input should be a valid boolean (it is 1)"),
        (lambda d: d["trajectories"][0]["nodes"][0]["steps"][0].update(truncated=None),
         "trajectories[0].nodes[0].steps[0].truncated",
         "Input should be a valid boolean (it is None)"),
        (lambda d: d.update(status="done"), "status",
         "Input should be 'succeeded' or 'failed' (it is 'done')"),
        (lambda d: d["trajectories"][0]["nodes"][0]["steps"][0].update(score="0.5"),
         "trajectories[0].nodes[0].steps[0].score",
         "Input should be a valid number (it is '0.5')"),
        (lambda d: d.pop("trajectories"), "trajectories", "Field required"),
    ],
)  # fmt: skip
def test_each_kind_of_difference_is_one_line(change: Any, where: str, problem: str) -> None:
    document = written()
    change(document)
    assert refused(document) == (
        f"old.json: not a valid agentjudge.score/v1 results file: {where}: {problem}; {FIX}"
    )


def test_what_is_not_an_object_is_refused_at_the_top() -> None:
    assert refused([1, 2]) == (
        "old.json: not a valid agentjudge.score/v1 results file: the top level: Input should be "
        f"a valid dictionary (it is [1, 2]); {FIX}"
    )


def test_a_later_version_asks_for_a_later_agentjudge() -> None:
    document = {**written(), "schema": "agentjudge.score/v2"}
    assert refused(document) == (
        "old.json: not a valid agentjudge.score/v1 results file: schema: "
        "'agentjudge.score/v2' is a version this agentjudge does not read; upgrade agentjudge"
    )


def test_a_refused_file_is_never_changed() -> None:
    document = written()
    document["metrics"]["atif_overall_score"] = "high"
    before = copy.deepcopy(document)
    refused(document)
    assert document == before


def test_field_paths_read_as_in_jq_without_a_union_member_s_tag() -> None:
    document = {"trajectories": [{"nodes": [{"steps": "x"}]}]}

    def at(*loc: str | int, kind: str = "list_type") -> str:
        return field_path(document, {"type": kind, "loc": loc, "msg": "", "input": None})

    assert at("trajectories", 0, "nodes", 0, "steps") == "trajectories[0].nodes[0].steps"
    assert at("trajectories", 0, "nodes", 0, "steps", "list[float]") == (
        "trajectories[0].nodes[0].steps"
    )
    assert at("trajectories", 0, "nodes", 0, "id", kind="missing") == "trajectories[0].nodes[0].id"
    assert at() == "the top level"
