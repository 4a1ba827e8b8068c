"""The JSON Schema of grade results in docs/ is the one the types generate, and what grade
runs write (and graph-agents-cli's own files) validates against it."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentjudge.testing import JudgeServer
from tests.cases.mixed_set import write_mixed_set
from tests.conftest import FIXTURES, REPO
from tests.e2e.test_grade_cli import PROJECT, TRACES, grade
from tests.e2e.test_grade_golden import GOLDEN
from tests.e2e.test_grade_golden import project as golden_project

SCHEMA_FILE = REPO / "docs" / "schemas" / "grade-results.schema.json"


def validator() -> jsonschema.Draft202012Validator:
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def problems(document: Any) -> list[str]:
    return [f"{e.json_path}: {e.message}" for e in validator().iter_errors(document)]


GAC_FILES = [
    *sorted((GOLDEN / "basic" / "results").glob("*.json")),
    *sorted((GOLDEN / "accounting-only").glob("r*.json")),
    *sorted((FIXTURES / "graph-agents-cli" / "compare-reports").glob("*.json")),
]


@pytest.mark.parametrize("path", GAC_FILES, ids=lambda p: p.name)
def test_graph_agents_cli_s_own_results_validate(path: Path) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    assert "schema" not in document  # its layout, which this version reads as its own
    assert problems(document) == []


def test_what_the_schema_refuses() -> None:
    document = json.loads((GOLDEN / "basic" / "results" / "error.results.json").read_text())
    assert problems({**document, "schema": "agentjudge.grade/v2"}) == [
        "$.schema: 'agentjudge.grade/v1' was expected"
    ]
    del document["cases"][0]["status"]
    document["summary"]["passed"] = "1"
    assert problems(document) == [
        "$.summary.passed: '1' is not of type 'integer'",
        "$.cases[0]: 'status' is a required property",
    ]


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def test_files_that_grade_runs_write_validate(tmp_path: Path, server: JudgeServer) -> None:
    written: list[Path] = []
    # judge and custom metrics, three samples each, through our judge server; one case's
    # samples fall on both sides of its threshold, another is too slow (failed: exit 1)
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    (traces := root / TRACES).write_text(
        traces.read_text().replace("[[score=4]]", "[[samples=2,4,5]]")
    )
    done = grade(root, "--samples", "3", "--output", "sampled.json", server=server)
    assert done.returncode == 1, done.stderr
    written.append(root / "sampled.json")
    # graph-agents-cli's golden inputs: the fake judge, failed, missing and errored cases
    (tmp_path / "golden").mkdir()
    golden = golden_project(tmp_path / "golden")
    for name in ("all_pass", "fail_and_missing", "error"):
        done = grade(golden, "--traces", f"traces/{name}.json", "--output", f"{name}.json")
        assert done.returncode in (0, 2), done.stderr
        written.append(golden / f"{name}.json")
    # the large, messy set: every check kind, traces missing, errored and unasked for
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_mixed_set(mixed, judged=True)
    flags = ["--dataset", "dataset.json", "--config", "eval_config.yaml", "--no-cache"]
    done = grade(mixed, "--quiet", "--traces", "traces", *flags, "--output", "mixed.json")
    assert done.returncode == 2, done.stderr
    written.append(mixed / "mixed.json")
    for path in written:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert document["schema"] == "agentjudge.grade/v1"
        assert problems(document) == [], path.name
    sampled = json.loads(written[0].read_text())
    assert sampled["judge"]["samples"] == 3  # the optional keys were there to be checked
    assert (sampled["summary"]["samples"], sampled["summary"]["unstable"]) == (3, 1)
