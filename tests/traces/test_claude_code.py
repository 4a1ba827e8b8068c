"""Claude Code sessions (tests/fixtures/traces/claude-code) read into the tree their
PROVENANCE.md describes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentjudge.atif.limits import Limits
from agentjudge.errors import InputError
from agentjudge.traces.claude_code import FORMAT, read
from tests.traces.trees import TRACES, Shape, results, shape, steps, tool_counts, tree

FOLDER = TRACES / "claude-code"
SUBAGENT_PASS = "claude-code-2.1.332__subagent-pass/d0fcfd31-b2f2-47b2-95f8-1adc0f1ac317.jsonl"
CODEMIE = "codemie__claude-2.0.64-tmp-private/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"

# per session file: its tree, the tools its root calls, how many results are errors, and
# what its last step says (PROVENANCE.md's "contents / outcome")
CASES: dict[str, tuple[Shape, dict[str, int], int, str]] = {
    "claude-code-2.1.332__destructive/427c9ad3-c5b8-44a9-99c4-4d89c823488d.jsonl": (
        ("claude-code", 4, ()),
        {"Bash": 2},
        0,
        "I deleted draft.txt and notes.txt",
    ),
    SUBAGENT_PASS: (
        ("claude-code", 6, (("claude-code:general-purpose", 3, ()),)),
        {"Agent": 1},
        0,
        "Thursday at 3pm",
    ),
    "claude-code-2.1.332__sum-pass/83d3ec18-f7cd-4c69-92e8-3ba390c1e5ed.jsonl": (
        ("claude-code", 4, ()),
        {"Read": 1, "Bash": 1},
        0,
        "their sum is **42**",
    ),
    "claude-code-2.1.332__sum-wrong/0458f6d1-c279-4ee3-8c1a-37ec60c0efa4.jsonl": (
        ("claude-code", 3, ()),
        {"Read": 1},
        0,
        "the total is 52",
    ),
    "claude-code-2.1.332__tool-error/2a584208-97ae-49fc-832e-6e9845fcd7f7.jsonl": (
        ("claude-code", 4, ()),
        {"Read": 1, "Bash": 1},
        1,
        "does not exist",
    ),
    CODEMIE: (
        ("claude-code", 10, (("claude-code:subagent", 2, ()), ("claude-code:subagent", 2, ()))),
        {"Write": 3, "Read": 1, "Edit": 1, "Bash": 1},
        0,
        "deleted hello.js",
    ),
    "evolving-skills__bleach-kwVZBCH/baa22722-14de-495e-96f4-f8e0487a0e87.jsonl": (
        ("claude-code", 34, ()),
        {"Bash": 18, "Read": 8, "Glob": 2, "Grep": 2, "Edit": 2, "Write": 2},
        4,
        "Issue Fixed",
    ),
    "matraix__acme-support-api-epLjshu/4b97758b-b0ca-4012-86ce-addb1405961d.jsonl": (
        ("claude-code", 11, ()),
        {"Bash": 8, "Read": 1},
        0,
        "transcript is saved",
    ),
}

LIMIT = Limits()


def test_every_session_file_of_the_fixtures_is_a_case() -> None:
    sessions = {
        str(p.relative_to(FOLDER))
        for p in FOLDER.rglob("*.jsonl")
        if not p.name.startswith("agent-")
    }
    assert sessions == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_session_gives_the_tree_its_provenance_describes(name: str, tmp_path: Path) -> None:
    expected, tools, errors, last = CASES[name]
    path = FOLDER / name
    assert FORMAT.sniff(path, path.read_bytes()[:4096])
    (run,) = read(path, name, LIMIT).runs
    assert shape(tree(run, tmp_path)) == expected
    assert dict(tool_counts(run.document)) == tools
    assert (
        sum(bool((r.get("extra") or {}).get("is_error")) for r in results(run.document)) == errors
    )
    assert last in run.document["steps"][-1]["message"]
    for step in steps(run.document):
        assert step["extra"]["source"]["session"] == run.name
    # each step of the session's own agent names the line it came from
    lines = path.read_text().splitlines()
    for step in run.document["steps"]:
        source = step["extra"]["source"]
        assert json.loads(lines[source["line"] - 1])["uuid"] == source["uuid"]


def test_the_claude_code_version_and_model_are_the_sessions() -> None:
    (run,) = read(FOLDER / CODEMIE, CODEMIE, LIMIT).runs
    assert run.document["agent"] == {
        "name": "claude-code",
        "version": "2.0.64",
        "model_name": "claude-sonnet-4-5-20250929",
    }


def test_a_subagent_is_linked_to_the_agent_call_that_started_it(tmp_path: Path) -> None:
    (run,) = read(FOLDER / SUBAGENT_PASS, SUBAGENT_PASS, LIMIT).runs
    root = tree(run, tmp_path)
    (child,) = root.children
    assert (child.kind, child.parent_step_id) == ("embedded", 2)
    spawn = run.document["steps"][1]
    assert spawn["tool_calls"][0]["function_name"] == "Agent"
    (ref,) = spawn["observation"]["results"][0]["subagent_trajectory_ref"]
    assert ref["trajectory_id"] == "agent-ace1e5e06629623dd"
    sub = run.document["subagent_trajectories"][0]
    # its steps point back into its own file
    first = sub["steps"][0]["extra"]["source"]
    assert first["file"].endswith("subagents/agent-ace1e5e06629623dd.jsonl")
    assert first["line"] == 1
    assert sub["extra"]["description"] == "Read the notes file"


def test_an_assistant_message_split_over_lines_is_one_step() -> None:
    (run,) = read(FOLDER / CODEMIE, CODEMIE, LIMIT).runs
    step = run.document["steps"][1]
    assert step["extra"]["source"]["lines"] == [3, 4, 5, 6]
    assert [c["function_name"] for c in step["tool_calls"]] == ["Write", "Write", "Write"]
    assert len(step["observation"]["results"]) == 3


def test_an_agent_file_read_alone_is_left_to_its_session() -> None:
    for name in (
        "codemie__claude-2.0.64-tmp-private/agent-36541525.jsonl",
        "claude-code-2.1.332__subagent-pass/d0fcfd31-b2f2-47b2-95f8-1adc0f1ac317/subagents/"
        "agent-ace1e5e06629623dd.jsonl",
    ):
        got = read(FOLDER / name, name, LIMIT)
        assert got.runs == ()
        assert sum(got.ignored.values()) == 1


def test_every_line_is_a_step_a_result_or_counted_as_ignored() -> None:
    name = "claude-code-2.1.332__sum-pass/83d3ec18-f7cd-4c69-92e8-3ba390c1e5ed.jsonl"
    lines = [json.loads(line) for line in (FOLDER / name).read_text().splitlines()]
    mapped = sum(line["type"] in ("user", "assistant") for line in lines)
    got = read(FOLDER / name, name, LIMIT)
    assert sum(got.ignored.values()) == len(lines) - mapped
    assert got.ignored["queue-operation"] == sum(
        line["type"] == "queue-operation" for line in lines
    )
    assert got.ignored["attachment:date"] == 1


def test_sidechain_lines_in_the_session_file_become_a_subagent(tmp_path: Path) -> None:
    # before agent files, a subagent's lines sat in the session file, marked isSidechain
    # and linked to nothing but the Task call's prompt
    session = "5e551010-0000-4000-8000-000000000001"
    base = {"sessionId": session, "version": "1.0.80", "parentUuid": None}
    lines = [
        {
            **base,
            "type": "user",
            "isSidechain": False,
            "message": {"role": "user", "content": "Look it up"},
        },
        {
            **base,
            "type": "assistant",
            "isSidechain": False,
            "message": {
                "id": "m1",
                "model": "claude-x",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "Task",
                        "input": {"prompt": "Read a.txt"},
                    }
                ],
            },
        },
        {
            **base,
            "type": "user",
            "isSidechain": True,
            "message": {"role": "user", "content": "Read a.txt"},
        },
        {
            **base,
            "type": "assistant",
            "isSidechain": True,
            "message": {
                "id": "m2",
                "model": "claude-y",
                "content": [{"type": "text", "text": "a"}],
            },
        },
        {
            **base,
            "type": "user",
            "isSidechain": False,
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}],
            },
        },
        {"type": "summary", "summary": "s", "leafUuid": "x"},
    ]
    path = tmp_path / f"{session}.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    got = read(path, path.name, LIMIT)
    (run,) = got.runs
    root = tree(run, tmp_path)
    assert shape(root) == ("claude-code", 2, (("claude-code:subagent", 2, ()),))
    assert root.children[0].parent_step_id == 2
    assert dict(got.ignored) == {"summary": 1}


def test_a_bad_line_is_one_error_naming_the_file_and_the_line(tmp_path: Path) -> None:
    name = "claude-code-2.1.332__sum-pass/83d3ec18-f7cd-4c69-92e8-3ba390c1e5ed.jsonl"
    lines = (FOLDER / name).read_text().splitlines(keepends=True)
    lines[6] = '{"type": "user", "message": \n'
    path = tmp_path / "83d3ec18-f7cd-4c69-92e8-3ba390c1e5ed.jsonl"
    path.write_text("".join(lines))
    with pytest.raises(InputError) as caught:
        read(path, "session.jsonl", LIMIT)
    (problem,) = caught.value.problems
    assert str(problem) == (
        "session.jsonl: line 7: not valid JSON (unexpected end of data); a session log holds "
        "one JSON object a line: repair or remove line 7 [jsonl.bad_line]"
    )


def test_a_line_longer_than_the_limit_is_refused_before_it_is_held(tmp_path: Path) -> None:
    name = "claude-code-2.1.332__sum-pass/83d3ec18-f7cd-4c69-92e8-3ba390c1e5ed.jsonl"
    longest = max(len(line) for line in (FOLDER / name).read_bytes().splitlines(keepends=True))
    with pytest.raises(InputError) as caught:
        read(FOLDER / name, "session.jsonl", Limits(max_file_bytes=longest - 1))
    (problem,) = caught.value.problems
    assert f"longer than max_file_bytes={longest - 1:,}" in str(problem)
    assert "raise --max-file-bytes" in str(problem)
    assert read(FOLDER / name, "session.jsonl", Limits(max_file_bytes=longest)).runs


def test_a_file_with_no_conversation_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"type": "queue-operation", "sessionId": "s"}\n')
    with pytest.raises(InputError, match=r"no user or assistant line"):
        read(path, "s.jsonl", LIMIT)


def test_an_agent_file_linked_outside_the_session_folder_is_not_opened(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    shutil.copytree(FOLDER / "codemie__claude-2.0.64-tmp-private", folder)
    outside = tmp_path / "agent-99999999.jsonl"
    outside.write_text(
        '{"type": "user", "sessionId": "4c2ddfdc-b619-4525-8d03-1950fb1b0257", '
        '"isSidechain": true, "agentId": "99999999", "message": {"role": "user", "content": "x"}}\n'
    )
    (folder / "agent-99999999.jsonl").symlink_to(outside)
    got = read(folder / CODEMIE.split("/")[1], "s.jsonl", LIMIT)
    assert got.ignored["agent files outside the session's folder (not opened)"] == 1
    assert len(next(iter(got.runs)).document["subagent_trajectories"]) == 2
