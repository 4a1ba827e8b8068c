"""graph-agents-cli's own results reproduce: `agentjudge grade` on the golden inputs.

The golden files are what graph-agents-cli 0.3.1 wrote (fixtures/graph-agents-cli). We
compare everything but the volatile fields (time, absolute paths) and the warnings' wording
(ours is our own; their presence, order and subject are compared; agentjudge adds one more
kind, a case lacking what its judge needs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "graph-agents-cli" / "golden"
VOLATILE = {"graded_at", "traces_files", "dataset_paths", "config", "warnings"}
# keys agentjudge adds after graph-agents-cli's (it never renames or drops one)
OURS = ["judge_usage", "judge_cost", "metrics_interval", "schema"]


def run_grade(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MODEL_", "JUDGE_"))}
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "grade", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def project(tmp_path: Path) -> Path:
    """A graph-agents-cli project holding the golden dataset and config where they live."""
    (tmp_path / "graph-agents-cli-manifest.yaml").write_text("name: proj\n")
    datasets = tmp_path / "tests" / "eval" / "datasets"
    datasets.mkdir(parents=True)
    shutil.copy(GOLDEN / "basic" / "dataset.json", datasets / "basic-dataset.json")
    shutil.copy(GOLDEN / "basic" / "eval_config.yaml", tmp_path / "tests" / "eval")
    shutil.copytree(GOLDEN / "basic" / "traces", tmp_path / "traces")
    return tmp_path


def stable(document: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in document.items() if k not in VOLATILE | set(OURS)}


@pytest.mark.parametrize(("name", "code"), [("all_pass", 0), ("fail_and_missing", 2), ("error", 2)])
def test_basic_golden_results_reproduce(tmp_path: Path, name: str, code: int) -> None:
    root = project(tmp_path)
    done = run_grade(root, "--traces", f"traces/{name}.json", "--output", "out.json")
    assert done.returncode == code, done.stderr
    ours = json.loads((root / "out.json").read_text())
    golden = json.loads((GOLDEN / "basic" / "results" / f"{name}.results.json").read_text())
    assert list(ours) == [*golden, *OURS]  # same keys, same order, then ours
    assert ours["schema"] == "agentjudge.grade/v1"
    assert stable(ours) == stable(golden)
    assert ours["dataset_paths"] == [str(root / "tests/eval/datasets/basic-dataset.json")]
    assert ours["config"] == str(root / "tests/eval/eval_config.yaml")
    # the warnings: one per fake side, in the same order, each saying it is no quality
    # signal; then ours alone: cases that lack what a built-in judge needs (weather has no
    # reference for task_success)
    theirs = ours["warnings"][: len(golden["warnings"])]
    assert [w for w in ours["warnings"][len(theirs) :] if "to judge against" not in w] == []
    for ours_text, side in zip(theirs, golden["fake_model"], strict=True):
        assert f"the {side}" in ours_text
        assert "plumbing check only" in ours_text
    text = (root / "out.json").read_text()
    assert text.endswith("}\n")
    assert text.startswith('{\n  "dataset_hash"')  # indent=2, as graph-agents-cli writes it
    # ours: the pass rates' bootstrap intervals, and the pass rate with it on the console
    interval = ours["metrics_interval"]
    assert (interval["level"], interval["resamples"], interval["seed"]) == (0.95, 1000, 0)
    passed, planned = ours["summary"]["passed"], ours["planned"]
    if passed in (0, planned):  # every resample has the same rate
        assert interval["pass_rate"] == [passed / planned] * 2
    low, high = interval["pass_rate"]
    assert low <= passed / planned <= high
    assert f"pass rate: {passed / planned:.0%} (95% CI {low:.0%}\u2013{high:.0%})" in done.stdout


@pytest.mark.parametrize(("name", "code"), [("t1", 2), ("t2", 0)])
def test_accounting_only_golden_results_reproduce(tmp_path: Path, name: str, code: int) -> None:
    shutil.copy(GOLDEN / "accounting-only" / f"{name}.json", tmp_path)
    done = run_grade(tmp_path, "--traces", f"{name}.json", "--output", "out.json")
    assert done.returncode == code, done.stderr
    ours = json.loads((tmp_path / "out.json").read_text())
    golden_name = {"t1": "r1", "t2": "r2"}[name]
    golden = json.loads((GOLDEN / "accounting-only" / f"{golden_name}.json").read_text())
    assert stable(ours) == stable(golden)
    assert ours["warnings"] == golden["warnings"] == []
    assert ours["traces_files"] == [f"{name}.json"]


def test_a_configuration_error_exits_3_and_writes_nothing(tmp_path: Path) -> None:
    root = project(tmp_path)
    config = root / "tests" / "eval" / "eval_config.yaml"
    config.write_text(config.read_text() + "unknown_key: 1\n")
    done = run_grade(root, "--traces", "traces/all_pass.json", "--output", "out.json")
    assert done.returncode == 3
    assert done.stderr.startswith(f"error: {config}: unknown top-level key(s) unknown_key")
    assert len(done.stderr.strip().splitlines()) == 1
    assert "Traceback" not in done.stderr
    assert not (root / "out.json").exists()
