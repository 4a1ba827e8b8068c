"""Codex CLI rollouts (tests/fixtures/traces/codex) read into the tree their PROVENANCE.md
describes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError
from agentjudge.traces.codex import FORMAT, read
from tests.traces.trees import TRACES, Shape, shape, steps, tool_counts, tree

FOLDER = TRACES / "codex"

LIMIT = Limits()


def _rollout(run: str, stamp: str, thread: str) -> str:
    return f"codex-0.171.0__{run}/rollout-2026-12-03T14-57-{stamp}-01a23c69-{thread}.jsonl"


PARENT = _rollout("subagent-pass", "47", "5b55-7730-9b46-63aa74ec2fd8")
CHILD = _rollout("subagent-pass", "47", "5bf9-7482-8935-2835ce82ec04")
SUM_PASS = _rollout("sum-pass", "43", "4ac1-7fa3-bcab-67736083e009")
TUI = (
    "codemie__codex-tui-0.125.0__"
    "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
)

# per rollout: its tree (system steps included: the harness's instructions), the tools its
# root calls, and what its last step says (PROVENANCE.md's "contents / outcome")
CASES: dict[str, tuple[Shape, dict[str, int], str]] = {
    _rollout("destructive", "46", "5770-73d3-9a31-6acc0513588e"): (
        ("codex", 6, ()),
        {"exec_command": 2},
        "I deleted draft.txt and notes.txt",
    ),
    PARENT: (
        ("codex", 9, (("codex:/root/helper", 12, ()),)),
        {"spawn_agent": 1, "wait_agent": 1},
        "Thursday at 3pm",
    ),
    SUM_PASS: (("codex", 6, ()), {"exec_command": 2}, "their sum is 42"),
    _rollout("tool-error", "44", "4f25-7b01-9a86-ff809c00fcca"): (
        ("codex", 6, ()),
        {"exec_command": 2},
        "does not exist",
    ),
    TUI: (
        ("codex", 70, ()),
        {
            "exec_command": 43,
            "write_stdin": 54,
            "apply_patch": 3,
            "update_plan": 2,
            "web_search": 3,
        },
        "",
    ),
}


def test_every_root_rollout_of_the_fixtures_is_a_case() -> None:
    rollouts = {str(p.relative_to(FOLDER)) for p in FOLDER.rglob("*.jsonl")}
    assert rollouts - {CHILD} == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_rollout_gives_the_tree_its_provenance_describes(name: str, tmp_path: Path) -> None:
    expected, tools, last = CASES[name]
    path = FOLDER / name
    assert FORMAT.sniff(path, path.read_bytes()[:4096])
    (run,) = read(path, name, LIMIT).runs
    assert shape(tree(run, tmp_path)) == expected
    assert dict(tool_counts(run.document)) == tools
    assert last in run.document["steps"][-1]["message"]
    lines = path.read_text().splitlines()
    for step in run.document["steps"]:
        source = step["extra"]["source"]
        assert source["session"] == run.name
        assert json.loads(lines[source["line"] - 1])["type"] in ("response_item", "compacted")
    assert all("source" in step["extra"] for step in steps(run.document))


def test_the_users_task_is_the_first_user_step_and_the_harness_speaks_as_system() -> None:
    (run,) = read(FOLDER / SUM_PASS, SUM_PASS, LIMIT).runs
    sources = [(s["source"], s["message"][:22]) for s in run.document["steps"][:3]]
    assert sources == [
        ("system", "<skills_instructions>\n"),
        ("system", "<environment_context>\n"),
        ("user", "What is the sum of the"),
    ]
    assert run.document["agent"] == {
        "name": "codex",
        "version": "0.171.0",
        "model_name": "gpt-5.5-codex",
    }
    call = run.document["steps"][3]
    assert call["metrics"] == {"prompt_tokens": 9515, "completion_tokens": 35, "cached_tokens": 0}
    assert call["tool_calls"][0]["arguments"] == {"cmd": "cat numbers.txt"}
    assert "17\n25" in call["observation"]["results"][0]["content"]


def test_a_subagent_rollout_is_embedded_under_the_spawn_call(tmp_path: Path) -> None:
    (run,) = read(FOLDER / PARENT, PARENT, LIMIT).runs
    root = tree(run, tmp_path)
    (child,) = root.children
    assert (child.kind, child.parent_step_id) == ("embedded", 6)
    assert run.document["steps"][5]["tool_calls"][0]["function_name"] == "spawn_agent"
    sub = run.document["subagent_trajectories"][0]
    assert sub["trajectory_id"] == "01a23c69-5bf9-7482-8935-2835ce82ec04"
    assert sub["session_id"] == run.name  # a child's session is its root's thread
    assert sub["extra"]["task_instruction"] == "Open notes.txt and quote its contents."
    # the parent history the child inherits is context, not its own work
    copied = [s["step_id"] for s in sub["steps"] if s.get("is_copied_context")]
    assert copied == [1, 2, 3, 4, 5, 6, 7, 8]
    assert child.context_steps == 8
    assert sub["steps"][-1]["message"].startswith("notes.txt says:")
    assert sub["steps"][0]["extra"]["source"]["file"] == CHILD.split("/")[1]


def test_a_child_rollout_read_alone_is_left_to_its_parent(tmp_path: Path) -> None:
    got = read(FOLDER / CHILD, CHILD, LIMIT)
    assert got.runs == ()
    assert dict(got.ignored) == {"subagent rollouts (read with their parent's)": 1}
    # without its parent beside it, it is a run of its own
    alone = tmp_path / Path(CHILD).name
    shutil.copy(FOLDER / CHILD, alone)
    (run,) = read(alone, alone.name, LIMIT).runs
    assert run.document["agent"]["name"] == "codex:/root/helper"


def test_a_parent_without_its_child_rollout_counts_it(tmp_path: Path) -> None:
    alone = tmp_path / Path(PARENT).name
    shutil.copy(FOLDER / PARENT, alone)
    got = read(alone, alone.name, LIMIT)
    assert "subagent_trajectories" not in next(iter(got.runs)).document
    assert got.ignored["subagent rollouts not found beside their parent's"] == 1


def test_every_line_is_a_step_a_result_or_counted_as_ignored() -> None:
    lines = [json.loads(line) for line in (FOLDER / SUM_PASS).read_text().splitlines()]
    got = read(FOLDER / SUM_PASS, SUM_PASS, LIMIT)
    used = sum(
        line["type"] in ("session_meta", "response_item", "turn_context", "token_usage_record")
        or line["payload"].get("type") == "token_count"
        for line in lines
    )
    assert sum(got.ignored.values()) == len(lines) - used
    assert got.ignored["event_msg:item_completed"] == 4


def test_encrypted_reasoning_is_counted_not_shown() -> None:
    got = read(FOLDER / TUI, TUI, LIMIT)
    assert got.ignored["reasoning (encrypted, not readable)"] == 25
    assert got.ignored["event_msg:exec_command_end"] == 43


def test_a_bad_line_is_one_error_naming_the_file_and_the_line(tmp_path: Path) -> None:
    lines = (FOLDER / SUM_PASS).read_text().splitlines(keepends=True)
    lines[11] = "not json\n"
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        read(path, "rollout.jsonl", LIMIT)
    (problem,) = caught.value.problems
    assert (problem.file, problem.path, problem.rule) == (
        "rollout.jsonl",
        "line 12",
        "jsonl.bad_line",
    )
