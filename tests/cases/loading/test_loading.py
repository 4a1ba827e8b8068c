"""Loading datasets, traces and eval_config.yaml: what is accepted, merged and refused."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from agentjudge.cases.loading import (
    agent_package,
    load_config,
    load_dataset,
    load_traces,
    parse_config,
    trace_files,
)
from agentjudge.cases.loading.project import MANIFEST
from agentjudge.errors import UsageError
from tests.conftest import FIXTURES

SCAFFOLD = FIXTURES / "graph-agents-cli" / "scaffold"
GOLDEN = FIXTURES / "graph-agents-cli" / "golden"


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data))
    return path


def case(case_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "messages": [{"role": "user", "content": "hi"}], **extra}


def test_the_scaffold_dataset_hashes_as_graph_agents_cli_records_it() -> None:
    dataset = load_dataset([SCAFFOLD / "basic-dataset.json"])
    assert dataset.hash == "79cbb3f2778b082bd21a7f916a4ee0fcd0406d9240cbae3e9cbc27de54cf79fd"


def test_the_golden_dataset_hash_matches_its_traces() -> None:
    dataset = load_dataset([GOLDEN / "basic" / "dataset.json"])
    traces = json.loads((GOLDEN / "basic" / "traces" / "all_pass.json").read_text())
    assert dataset.hash == traces["dataset_hash"]


def test_bare_tool_names_are_hashed_in_their_canonical_form(tmp_path: Path) -> None:
    bare = write(tmp_path / "a.json", {"cases": [case("x", expect={"tool_calls": ["s"]})]})
    named = write(
        tmp_path / "b.json", {"cases": [case("x", expect={"tool_calls": [{"name": "s"}]})]}
    )
    assert load_dataset([bare]).hash == load_dataset([named]).hash
    assert load_dataset([bare]).cases[0].raw["expect"]["tool_calls"] == [{"name": "s"}]


def test_datasets_merge_and_a_duplicate_id_is_refused(tmp_path: Path) -> None:
    first = write(tmp_path / "a.json", {"cases": [case("x")]})
    second = write(tmp_path / "b.json", {"cases": [case("y")]})
    assert [c.id for c in load_dataset([first, second]).cases] == ["x", "y"]
    again = write(tmp_path / "c.json", {"cases": [case("x")]})
    with pytest.raises(UsageError, match=r"cases\[0\]\.id 'x' is already used in .*a\.json"):
        load_dataset([first, again])


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"cases": []}, "cases is empty"),
        ({"items": []}, r'must be an object \{"cases": \[\.\.\.\]\}'),
        ({"cases": [{"id": "", "messages": []}]}, r"cases\[0\]\.id: must be a non-empty string"),
        ({"cases": [case("x", messages=[])]}, "messages: must be a non-empty list"),
        (
            {"cases": [case("x", messages=[{"role": "system", "content": "s"}])]},
            "needs at least one user message",
        ),
        ({"cases": [case("x", judge={"m": {"threshold": True}})]}, "judge.m.threshold"),
        ({"cases": [case("x", reference=3)]}, "reference: must be a string"),
        ({"cases": [case("x", expect={"contain": ["a"]})]}, "expect.contain"),
    ],
)
def test_dataset_problems_name_the_file_case_and_field(
    tmp_path: Path, data: Any, message: str
) -> None:
    path = write(tmp_path / "d.json", data)
    with pytest.raises(UsageError, match=message) as caught:
        load_dataset([path])
    assert str(path) in str(caught.value)
    assert "\n" not in str(caught.value)


def test_not_json_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text("{nope")
    with pytest.raises(UsageError, match=r"d\.json is not valid JSON"):
        load_dataset([path])


def trace(case_id: str, response: str) -> dict[str, Any]:
    return {"case_id": case_id, "status": "ok", "response": response}


def test_traces_merge_the_later_generated_at_wins(tmp_path: Path) -> None:
    new = {"dataset_hash": "h", "generated_at": "2026-02-01", "traces": [trace("a", "new")]}
    old = {"dataset_hash": "h", "generated_at": "2026-01-01", "traces": [trace("a", "old")]}
    merged = load_traces([write(tmp_path / "1.json", new), write(tmp_path / "2.json", old)])
    found = merged.find("a")
    assert found is not None
    assert found["response"] == "new"
    tie = {**old, "generated_at": "2026-02-01", "traces": [trace("a", "tie")]}
    merged = load_traces([write(tmp_path / "1.json", new), write(tmp_path / "3.json", tie)])
    found = merged.find("a")
    assert found is not None
    assert found["response"] == "tie"


def test_traces_of_two_datasets_are_refused(tmp_path: Path) -> None:
    one = write(tmp_path / "1.json", {"dataset_hash": "a", "traces": []})
    two = write(tmp_path / "2.json", {"dataset_hash": "b", "traces": []})
    nulls = write(tmp_path / "3.json", {"dataset_hash": None, "traces": []})
    assert load_traces([one, nulls]).dataset_hash == "a"
    with pytest.raises(UsageError, match="grade the traces of one dataset at a time"):
        load_traces([one, two])


def test_a_traces_folder_merges_its_json_files_in_order(tmp_path: Path) -> None:
    write(tmp_path / "b.json", {"traces": [trace("b", "x")]})
    write(tmp_path / "a.json", {"traces": [trace("a", "x")]})
    (tmp_path / "notes.txt").write_text("ignored")
    files = trace_files(None, str(tmp_path))
    assert [f.name for f in files] == ["a.json", "b.json"]
    assert list(load_traces(files).traces) == ["a", "b"]
    with pytest.raises(UsageError, match="pass --traces"):
        trace_files(None, None)


def test_the_projects_newest_traces_file_must_stay_in_its_folder(tmp_path: Path) -> None:
    folder = tmp_path / "proj" / "artifacts" / "traces"
    folder.mkdir(parents=True)
    os.utime(write(folder / "traces_20260101_000000.json", {"traces": []}), (1, 1))  # older
    write(tmp_path / "elsewhere.json", {"traces": []})
    (folder / "traces_20260202_000000.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(UsageError) as caught:
        trace_files(tmp_path / "proj", None)
    link = folder / "traces_20260202_000000.json"
    assert str(caught.value).startswith(
        f"traces file {link}: $: symbolic link to {tmp_path}/elsewhere.json, outside the input "
        f"folder {folder}; it was not opened"
    )
    link.unlink()
    link.symlink_to(folder / "gone.json")  # a dangling link is refused, not a traceback
    with pytest.raises(UsageError, match=r"\[input\.symlink_dangling\]$"):
        trace_files(tmp_path / "proj", None)


def test_a_trace_without_case_id_is_refused(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", {"traces": [{"response": "x"}]})
    with pytest.raises(UsageError, match=r"traces\[0\]\.case_id is missing"):
        load_traces([path])


def test_config_defaults_and_merges() -> None:
    config = parse_config(
        {
            "judge": {"provider": "fake", "max_tool_result_chars": None},
            "judges": {"task_success": {"threshold": 3}},
            "custom_metrics": [
                "m.mod:fn",
                {"callable": "m.mod:other", "name": "o", "threshold": 0.5},
            ],
            "quality_metrics": {"fn": 1, "task_success": {"threshold": 4, "min_pass_rate": 0.9}},
        },
        None,
    )
    assert config.judge_provider == "fake"
    assert config.max_tool_result_chars is None
    assert config.judges["task_success"].threshold == 3
    assert set(config.custom_metrics) == {"fn", "o"}
    assert config.threshold("task_success", {"threshold": 2}) == 2  # the case's own first
    assert config.threshold("task_success", None) == 4  # then quality_metrics
    assert config.threshold("o", None) == 0.5  # the custom metric's last
    with pytest.raises(UsageError, match="'groundedness' has no threshold"):
        config.threshold("groundedness", {})
    assert load_config(None).max_tool_result_chars == 50_000


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"extra": 1}, "unknown top-level key"),
        ({"judge": {"url": "x"}}, "judge: unknown key"),
        ({"judge": {"max_tool_result_chars": True}}, "max_tool_result_chars"),
        ({"quality_metrics": {"nope": 3}}, "quality_metrics.nope: not a known"),
        ({"quality_metrics": {"groundedness": {}}}, r"groundedness\.threshold: required"),
        (
            {"quality_metrics": {"groundedness": {"threshold": 3, "min_pass_rate": 2}}},
            "between 0 and 1",
        ),
        ({"custom_metrics": ["a:f", "b:f"]}, "used twice"),
        ({"custom_metrics": ["a:groundedness"]}, "both a judge and a custom metric"),
        ({"judges": {"new": {"scale": 5}}}, "new"),
    ],
)
def test_config_problems(data: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        parse_config(data, Path("cfg.yaml"))


def test_a_missing_config_is_defaults_unless_asked_for(tmp_path: Path) -> None:
    assert load_config(tmp_path / "none.yaml").source is None
    with pytest.raises(UsageError, match="no such file"):
        load_config(tmp_path / "none.yaml", required=True)
    bad = tmp_path / "bad.yaml"
    bad.write_text("judge: [\n")
    with pytest.raises(UsageError, match=r"not valid YAML \(line"):
        load_config(bad)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("agent_directory:\n  " + "[" * 100_000 + "]" * 100_000, "nested more than 100"),
        (b"agent_directory: \xffapp\n", "not UTF-8 text"),
    ],
)
def test_a_manifest_that_cannot_be_read_safely_is_one_line(
    tmp_path: Path, text: str | bytes, message: str
) -> None:
    # a deep manifest was a RecursionError, a byte that is not UTF-8 a UnicodeDecodeError
    manifest = tmp_path / MANIFEST
    manifest.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(UsageError, match=message):
        agent_package(tmp_path)


def test_a_manifest_that_is_missing_or_not_yaml_names_the_default_package(tmp_path: Path) -> None:
    assert agent_package(tmp_path) == "app"
    (tmp_path / MANIFEST).write_text("agent_directory: [unclosed\n")
    assert agent_package(tmp_path) == "app"
    (tmp_path / MANIFEST).write_text("agent_directory: my_agent\n")
    assert agent_package(tmp_path) == "my_agent"
