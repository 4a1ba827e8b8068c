"""`agentjudge compare`, `analyze` and `metric list` through the real CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

GAC = FIXTURES / "graph-agents-cli"
PROJECT = Path(__file__).resolve().parents[1] / "cases" / "data" / "project"


def run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "JUDGE_"))}
    env["COLUMNS"] = "80"
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_compare_reproduces_graph_agents_cli(tmp_path: Path) -> None:
    for name in ("before.json", "after.json"):
        shutil.copy(GAC / "compare-reports" / name, tmp_path)
    done = run(tmp_path, "compare", "before.json", "after.json", "--json")
    assert done.returncode == 0, done.stderr
    golden = (GAC / "golden" / "compare" / "before_vs_after.compare.json").read_text()
    assert json.loads(done.stdout) == json.loads(golden)
    done = run(tmp_path, "compare", "before.json", "after.json", "--fail-on-regression")
    assert done.returncode == 1
    golden_text = (GAC / "golden" / "compare" / "before_vs_after.compare.txt").read_text()
    assert done.stdout == golden_text


@pytest.mark.results_edited
def test_compare_analyze_and_report_refuse_a_file_that_is_not_results(tmp_path: Path) -> None:
    document = json.loads((GAC / "compare-reports" / "before.json").read_text())
    del document["cases"][2]["reasons"]
    (tmp_path / "a.json").write_text(json.dumps(document))
    shutil.copy(GAC / "compare-reports" / "after.json", tmp_path)
    said = "cases[2].reasons: Field required; pass "  # then how: the grade results of ...
    for command in (
        ["compare", "after.json", "a.json"],
        ["analyze", "--results", "a.json"],
        ["report", "a.json", "-o", "r.html"],
    ):
        done = run(tmp_path, *command)
        assert done.returncode == 3, command
        assert done.stderr.startswith("error: a.json: not a valid agentjudge.grade/v1 results ")
        assert said in done.stderr, command
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not (tmp_path / "r.html").exists()
    assert not (tmp_path / "artifacts").exists()


def test_compare_reads_results_without_schema_and_refuses_a_later_one(tmp_path: Path) -> None:
    # graph-agents-cli's file (no `schema`) is the baseline users compare ours against
    shutil.copy(GAC / "compare-reports" / "before.json", tmp_path)
    ours = json.loads((GAC / "compare-reports" / "after.json").read_text())
    (tmp_path / "ours.json").write_text(json.dumps({**ours, "schema": "agentjudge.grade/v1"}))
    done = run(tmp_path, "compare", "before.json", "ours.json", "--json")
    assert done.returncode == 0, done.stderr
    golden = json.loads((GAC / "golden" / "compare" / "before_vs_after.compare.json").read_text())
    assert json.loads(done.stdout) == {**golden, "candidate": "ours.json"}
    (tmp_path / "later.json").write_text(json.dumps({**ours, "schema": "agentjudge.grade/v2"}))
    done = run(tmp_path, "compare", "before.json", "later.json")
    assert (done.returncode, done.stderr) == (
        3,
        "error: later.json: not a valid agentjudge.grade/v1 results file: schema: "
        "'agentjudge.grade/v2' is a version this agentjudge does not read; upgrade agentjudge\n",
    )


def test_analyze_writes_clusters_of_the_newest_results(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    assert run(root, "grade", "--judge-provider", "fake", "-q").returncode == 1
    done = run(root, "analyze", "--top-k", "1")
    assert done.returncode == 0, done.stderr
    [saved] = (root / "artifacts").glob("analysis_*.json")
    analysis = json.loads(saved.read_text())
    assert analysis["total_cases"] == 7
    assert analysis["flagged_cases"] == 1
    [cluster] = analysis["clusters"]
    assert (cluster["status"], cluster["kind"], cluster["case_ids"]) == (
        "failed",
        "max_latency_ms",
        ["too-slow"],
    )
    assert str(saved) in done.stdout.replace("\n", "")


def test_metric_list_json_shows_the_projects_metrics(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(PROJECT, root)
    done = run(root, "metric", "list", "--json")
    assert done.returncode == 0, done.stderr
    catalog = json.loads(done.stdout)
    assert [c["name"] for c in catalog["checks"]][:3] == ["contains", "not_contains", "regex"]
    assert {m["name"] for m in catalog["modifiers"]} == {"ordered", "case_insensitive", "scope"}
    judges = {j["name"]: j for j in catalog["judges"]}
    assert judges["response_quality"]["source"] == "built-in"
    assert judges["response_quality"]["scale"] == 5
    assert judges["politeness"]["source"] == str(root / "tests/eval/eval_config.yaml")
    assert catalog["custom_metrics"][0]["callable"] == "tests.eval.metrics:answer_length_ok"
    assert catalog["quality_metrics"] == ["response_quality"]
    outside = run(tmp_path, "metric", "list", "--json")
    assert json.loads(outside.stdout)["custom_metrics"] == []
