"""Inspect eval logs (tests/fixtures/traces/inspect) read into the trees their
PROVENANCE.md describes: each sample a root."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError
from agentjudge.traces.inspect_log import FORMAT, read
from tests.traces.trees import TRACES, Shape, results, shape, steps, tool_counts, tree

FOLDER = TRACES / "inspect"
WORKSPACE = "inspect-ai-0.3.285__workspace-8samples"
RESEARCHER = (("researcher", 3, ()),)

# per sample of the 8-sample run (the .eval and the .json hold two runs of the same 8): its
# tree, the tools its root calls, and the score Inspect gave it
SAMPLES: dict[str, tuple[Shape, dict[str, int], str | None]] = {
    "destructive_epoch_1": (
        ("coordinator", 5, ()),
        {"list_files": 1, "delete_file": 2, "submit": 1},
        "I",
    ),
    "handoff-pass_epoch_1": (
        ("coordinator", 3, RESEARCHER),
        {"transfer_to_researcher": 1, "submit": 1},
        "C",
    ),
    "subagent-pass_epoch_1": (("coordinator", 3, RESEARCHER), {"researcher": 1, "submit": 1}, "C"),
    "subagent-wrong_epoch_1": (("coordinator", 3, RESEARCHER), {"researcher": 1, "submit": 1}, "I"),
    "sum-pass_epoch_1": (
        ("coordinator", 4, ()),
        {"read_file": 1, "add_numbers": 1, "submit": 1},
        "C",
    ),
    "sum-wrong_epoch_1": (("coordinator", 3, ()), {"read_file": 1, "submit": 1}, "I"),
    "tool-crash_epoch_1": (("coordinator", 2, ()), {"word_count": 1}, None),
    "tool-error_epoch_1": (
        ("coordinator", 4, ()),
        {"read_file": 1, "list_files": 1, "submit": 1},
        "C",
    ),
}

LIMIT = Limits()


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_each_sample_of_the_workspace_run_is_the_tree_provenance_describes(
    suffix: str, tmp_path: Path
) -> None:
    path = FOLDER / (WORKSPACE + suffix)
    assert FORMAT.sniff(path, path.read_bytes()[:4096])
    got = read(path, path.name, LIMIT)
    assert [run.name for run in got.runs] == sorted(SAMPLES)
    for run in got.runs:
        expected, tools, score = SAMPLES[run.name]
        assert shape(tree(run, tmp_path)) == expected, run.name
        assert dict(tool_counts(run.document)) == tools, run.name
        extra = run.document["extra"]
        assert extra.get("scores", {}).get("answer_and_workspace") == score
        for step in steps(run.document):
            source = step["extra"]["source"]
            assert source["sample_id"] == run.name.removesuffix("_epoch_1")
            assert source["epoch"] == 1
    # what was not mapped is counted by event kind, never dropped
    assert got.ignored["event:store"] == 37
    assert set(got.ignored) == {
        "event:sample_init",
        "event:store",
        "event:state",
        "event:score",
        "event:logger",
        "event:error",
    }


def test_an_agent_used_as_a_tool_is_a_subagent_under_its_call(tmp_path: Path) -> None:
    got = read(FOLDER / (WORKSPACE + ".json"), WORKSPACE, LIMIT)
    run = next(r for r in got.runs if r.name == "subagent-pass_epoch_1")
    root = tree(run, tmp_path)
    (child,) = root.children
    assert (child.kind, child.parent_step_id) == ("embedded", 2)
    sub = run.document["subagent_trajectories"][0]
    assert sub["steps"][0] == {
        "step_id": 1,
        "source": "user",
        "message": "Open notes.txt and quote its contents.",
        "extra": {
            "source": {
                "log_eval_id": "D2RGA7fZgUNn7ucdQVoiyi",
                "sample_id": "subagent-pass",
                "epoch": 1,
                "field": "arguments",
                "call": "call_3d7fd0867b8bc3d4c9f48d74",
            }
        },
    }
    # a model step names the event it came from in the sample
    sample = next(
        s
        for s in json.loads((FOLDER / (WORKSPACE + ".json")).read_text())["samples"]
        if s["id"] == "subagent-pass"
    )
    for step in run.document["steps"][1:]:
        source = step["extra"]["source"]
        assert sample["events"][source["event"]]["uuid"] == source["uuid"]
        assert sample["events"][source["event"]]["event"] == "model"


def test_a_tool_error_and_a_crashed_sample_are_kept() -> None:
    got = read(FOLDER / (WORKSPACE + ".eval"), WORKSPACE, LIMIT)
    runs = {run.name: run.document for run in got.runs}
    (error,) = [r for r in results(runs["tool-error_epoch_1"]) if r.get("extra")]
    assert error["content"] == "error (unknown): No such file: config.yaml"
    assert runs["tool-crash_epoch_1"]["extra"]["error"].startswith("RuntimeError")


@pytest.mark.parametrize(
    ("name", "expected", "tools"),
    [
        (
            "inspect_ai-repo__2025-05-12T20-27-36-04-00_browser.json",
            ("browser", 6, ()),
            {"web_browser_go": 1, "web_browser_click": 3},
        ),
        (
            "inspect_ai-repo__log_message_deduplication.eval",
            ("inspect_test_utils/guess_number", 7, ()),
            {"bash": 5},
        ),
    ],
)
def test_the_public_logs_give_their_one_sample(
    name: str, expected: Shape, tools: dict[str, int], tmp_path: Path
) -> None:
    (run,) = read(FOLDER / name, name, LIMIT).runs
    assert shape(tree(run, tmp_path)) == expected
    assert dict(tool_counts(run.document)) == tools


def test_a_zstd_log_without_zstandard_says_which_extra_reads_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)
    with pytest.raises(InputError) as caught:
        read(FOLDER / (WORKSPACE + ".eval"), "w.eval", LIMIT)
    (problem,) = caught.value.problems
    assert (problem.file, problem.path, problem.rule) == (
        "w.eval",
        "header.json",
        "inspect.needs_zstd",
    )
    assert "agentjudge[inspect]" in problem.message


def test_a_damaged_log_is_one_clear_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    broken.write_bytes((FOLDER / (WORKSPACE + ".eval")).read_bytes()[:3000])
    with pytest.raises(InputError, match=r"broken\.eval: \$: not a readable \.eval zip"):
        read(broken, "broken.eval", LIMIT)
    text = tmp_path / "log.json"
    text.write_text('{"version": 2, "status": "success", "samples": [')
    with pytest.raises(InputError) as caught:
        read(text, "log.json", LIMIT)
    assert caught.value.problems[0].rule == "inspect.bad_json"


def test_a_call_recorded_inside_the_agent_it_started_makes_no_cycle(tmp_path: Path) -> None:
    # a damaged log: the tool event that starts agent X is recorded in X's own span
    events = [
        {"event": "span_begin", "id": "P", "type": "agent", "name": "boss"},
        {"event": "span_begin", "id": "T", "parent_id": "P", "type": "tool", "name": "f"},
        {"event": "tool", "id": "c1", "function": "f", "span_id": "X", "arguments": {}},
        {"event": "span_begin", "id": "X", "parent_id": "T", "type": "agent", "name": "helper"},
        {
            "event": "model",
            "span_id": "X",
            "output": {"choices": [{"message": {"content": "done"}}]},
        },
    ]
    log = {
        "version": 2,
        "status": "success",
        "samples": [{"id": 1, "input": "go", "events": events}],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    (run,) = read(path, "log.json", LIMIT).runs
    assert shape(tree(run, tmp_path)) == ("inspect", 1, (("helper", 2, ()),))
