"""Reading grade results: graph-agents-cli's files and agentjudge's older ones (no `schema`)
read as this version, every value as written; anything else is one line naming the file,
the field and the fix (exit 3)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.errors import EXIT_USAGE, UsageError
from agentjudge.results.grade import GRADE, GRADE_SCHEMA
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "graph-agents-cli" / "golden"
FIX = "pass a results file written by `agentjudge grade` or graph-agents-cli's `eval grade`"


def golden() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(
        (GOLDEN / "basic" / "results" / "fail_and_missing.results.json").read_text()
    )
    return data


@pytest.mark.parametrize(
    "path",
    [*sorted((GOLDEN / "basic" / "results").glob("*.json")), GOLDEN / "accounting-only/r1.json"],
    ids=lambda p: p.name,
)
def test_a_file_without_schema_reads_as_written(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert '"schema"' not in text  # graph-agents-cli 0.3.1 wrote it
    # the same values, types (a 3 stays 3, not 3.0) and key order
    assert json.dumps(GRADE.read(path)) == json.dumps(json.loads(text))


def test_a_file_of_this_version_reads_and_an_int_threshold_stays_an_int() -> None:
    document = {**golden(), "schema": GRADE_SCHEMA}
    document["cases"][1]["judge_scores"]["task_success"]["threshold"] = 3
    assert json.dumps(GRADE.check(copy.deepcopy(document), "r.json")) == json.dumps(document)


def _bad(document: Any, tmp_path: Path) -> str:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(UsageError) as caught:
        GRADE.read(path)
    assert caught.value.exit_code == EXIT_USAGE
    text = str(caught.value)
    assert "\n" not in text
    prefix = f"{path}: not a valid agentjudge.grade/v1 results file: "
    assert text.startswith(prefix)
    return text.removeprefix(prefix)


def _without(document: dict[str, Any], *keys: str | int) -> dict[str, Any]:
    node: Any = document
    for key in keys[:-1]:
        node = node[key]
    del node[keys[-1]]
    return document


def _with(document: dict[str, Any], value: Any, *keys: str | int) -> dict[str, Any]:
    node: Any = document
    for key in keys[:-1]:
        node = node[key]
    node[keys[-1]] = value
    return document


@pytest.mark.parametrize(
    ("document", "said"),
    [
        ([], "the top level: Input should be a valid dictionary (it is [])"),
        (_without(golden(), "cases"), "cases: Field required"),
        ({**golden(), "schema": 1}, "schema: Input should be 'agentjudge.grade/v1' (it is 1)"),
        (_without(golden(), "summary", "exit_code"), "summary.exit_code: Field required"),
        (_with(golden(), [3], "cases"), "cases[0]: Input should be a valid dictionary (it is 3)"),
        (_without(golden(), "cases", 0, "id"), "cases[0].id: Field required"),
        (
            _with(golden(), 1, "cases", 1, "status"),
            "cases[1].status: Input should be a valid string (it is 1)",
        ),
        (
            _with(golden(), "x", "cases", 0, "reasons"),
            "cases[0].reasons: Input should be a valid list (it is 'x')",
        ),
        (
            _with(golden(), True, "summary", "passed"),
            "summary.passed: Input should be a valid integer (it is True)",
        ),
        (
            _with(golden(), "5", "cases", 1, "judge_scores", "task_success", "score"),
            "cases[1].judge_scores.task_success.score: Input should be a valid integer, or a "
            "valid number (it is '5')",
        ),
        (
            _with(golden(), "meh", "quality", "response_quality", "status"),
            "quality.response_quality.status: Input should be 'met', 'not_met', 'incomplete' "
            "or 'not_run' (it is 'meh')",
        ),
    ],
)  # fmt: skip
def test_a_file_that_does_not_match_is_one_line_naming_the_field(
    tmp_path: Path, document: Any, said: str
) -> None:
    assert _bad(document, tmp_path) == f"{said}; {FIX}"


def test_a_later_schema_asks_for_a_later_agentjudge(tmp_path: Path) -> None:
    document = {**golden(), "schema": "agentjudge.grade/v2"}
    assert _bad(document, tmp_path) == (
        "schema: 'agentjudge.grade/v2' is a version this agentjudge does not read; "
        "upgrade agentjudge"
    )


def test_not_json_and_no_file_are_usage_errors(tmp_path: Path) -> None:
    (path := tmp_path / "results.json").write_text("{not json")
    with pytest.raises(UsageError, match="is not valid JSON"):
        GRADE.read(path)
    with pytest.raises(UsageError) as caught:
        GRADE.read(tmp_path / "nope.json")
    assert str(caught.value) == f"results file not found: {tmp_path / 'nope.json'}"
