"""`agentjudge calibrate` as a user runs it: the real CLI in a subprocess against the test
judge server, whose `[[score=X]]` and `[[category=C]]` markers fix its verdicts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.convert.folder import convert_who_and_when
from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.conftest import FIXTURES

pytestmark = pytest.mark.timeout(120)


def calibrate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["AGENTJUDGE_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "calibrate", *map(str, args)],
        capture_output=True, text=True, timeout=110, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def judge_flags(server: JudgeServer) -> list[str]:
    return ["--judge-url", server.base_url, "--judge-model", "judge"]


def trajectory(messages: list[str]) -> dict[str, Any]:
    document = doc(len(messages))
    for step, message in zip(document["steps"], messages, strict=True):
        step["message"] = message
    return document


def labelled_set(folder: Path) -> Path:
    """Two runs the judge scores as the markers say (failure threshold 0.5):
    a: 1.0 0.9 0.2(context_loss) 0.8, labelled pass pass fail(context_loss) fail;
    b: 1.0 0.3(reasoning_failure) 0.1(tool_selection_failure), labelled pass pass(none)
       fail(reasoning_failure)."""
    write(
        folder / "runs" / "a.json",
        trajectory(
            [
                "Fix the bug [[score=1.0]]",
                "Read the code [[score=0.9]]",
                "Forgot the task [[score=0.2]] [[category=context_loss]]",
                "Wrote a test [[score=0.8]]",
            ]
        ),
    )
    write(
        folder / "runs" / "b.json",
        trajectory(
            [
                "Sum the column [[score=1.0]]",
                "Guessed [[score=0.3]] [[category=reasoning_failure]]",
                "Called the wrong tool [[score=0.1]] [[category=tool_selection_failure]]",
            ]
        ),
    )
    labels = {
        "version": 1,
        "trajectories": {
            "runs/a.json": {
                "outcome": "fail",
                "steps": [
                    {"step_id": 1, "pass": True},
                    {"step_id": 2, "pass": True},
                    {"step_id": 3, "pass": False, "category": "context_loss"},
                    {"step_id": 4, "pass": False},
                ],
                "decisive": {"step_id": 3, "agent": "agent"},
            },
            "runs/b.json": {
                "outcome": "fail",
                "steps": [
                    {"step_id": 1, "pass": True},
                    {"step_id": 2, "pass": True, "category": "none"},
                    {"step_id": 3, "pass": False, "category": "reasoning_failure"},
                ],
                "decisive": {"step_id": 3},
            },
        },
    }
    (folder / "labels.json").write_text(json.dumps(labels))
    return folder / "labels.json"


def test_calibrate_gives_the_figures_computed_by_hand(tmp_path: Path, server: JudgeServer) -> None:
    labels = labelled_set(tmp_path)
    done = calibrate(labels, *judge_flags(server), "--json", "-o", "report.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert json.loads((tmp_path / "report.json").read_text()) == report
    figures = report["figures"]
    # (labelled, judged) pass: a (T,T) (T,T) (F,F) (F,T); b (T,T) (T,F) (F,F)
    assert figures["step_accuracy"]["value"] == pytest.approx(5 / 7)
    assert (figures["step_accuracy"]["agree"], figures["step_accuracy"]["steps"]) == (5, 7)
    # p_o = 35/49; labels 4/7 pass, judge 4/7 -> p_e = 16/49 + 9/49 = 25/49;
    # kappa = (35/49 - 25/49) / (1 - 25/49) = 10/24
    assert figures["kappa"]["value"] == pytest.approx(5 / 12)
    assert figures["kappa"]["labelled_fail_judged_pass"] == 1
    # (labelled, judged) categories: (context_loss, context_loss), (none, reasoning_failure),
    # (reasoning_failure, tool_selection_failure): F1 1, 0, 0 -> macro 1/3
    assert figures["category_macro_f1"]["value"] == pytest.approx(1 / 3)
    categories = report["categories"]
    assert categories["context_loss"] | {"f1": 1.0} == {
        "true_positives": 1,
        "false_positives": 0,
        "false_negatives": 0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    assert (
        categories["reasoning_failure"]["precision"],
        categories["reasoning_failure"]["recall"],
    ) == (0.0, 0.0)
    assert categories["tool_selection_failure"]["recall"] is None
    assert categories["policy_boundary_violation"]["f1"] is None
    # a's steps average 0.725 (passes, labelled fail), b's 0.4667 (fails, labelled fail)
    assert figures["outcome_accuracy"] | {"interval": None} == {
        "value": 0.5,
        "interval": None,
        "labelled": 2,
        "correct": 1,
    }
    assert figures["decisive_step_accuracy"]["labelled"] == 2
    assert report["unscored_steps"] == 0
    low, high = figures["kappa"]["interval"]
    assert low <= high
    # the same set and seed: the same intervals, from the verdict store
    again = calibrate(labels, *judge_flags(server), "--json", cwd=tmp_path)
    assert json.loads(again.stdout)["figures"] == figures


def test_min_kappa_decides_the_exit_code(tmp_path: Path, server: JudgeServer) -> None:
    labels = labelled_set(tmp_path)
    assert (
        calibrate(labels, *judge_flags(server), "--min-kappa", "0.4", cwd=tmp_path).returncode == 0
    )
    below = calibrate(labels, *judge_flags(server), "--min-kappa", "0.5", cwd=tmp_path)
    assert below.returncode == 1
    assert "kappa 0.4167 is below --min-kappa 0.5" in below.stderr
    assert "step_accuracy" in below.stdout  # the table is shown either way


def test_a_bad_labels_file_exits_3_before_any_judge_call(
    tmp_path: Path, server: JudgeServer
) -> None:
    labels = labelled_set(tmp_path)
    labels.write_text(json.dumps({"version": 1, "trajectories": {"runs/c.json": {}}}))
    done = calibrate(labels, *judge_flags(server), cwd=tmp_path)
    assert done.returncode == 3
    assert done.stderr.startswith(f"error: {labels}: trajectories.runs/c.json: no such file")
    assert server.log == []


def test_calibrate_runs_on_converted_who_and_when(tmp_path: Path, server: JudgeServer) -> None:
    convert_who_and_when(FIXTURES / "who-and-when", tmp_path / "ww")
    everything = json.loads((tmp_path / "ww" / "labels.json").read_text())
    names = [
        "trajectories/algorithm-generated-57.json",
        "trajectories/hand-crafted-1.json",
        "trajectories/algorithm-generated-1.json",
    ]
    subset = {**everything, "trajectories": {n: everything["trajectories"][n] for n in names}}
    (tmp_path / "ww" / "subset.json").write_text(json.dumps(subset))
    done = calibrate(tmp_path / "ww" / "subset.json", *judge_flags(server), "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    labelled = sum(len(subset["trajectories"][n]["steps"]) for n in names)
    assert report["trajectories"] == 3
    assert report["figures"]["step_accuracy"]["steps"] == labelled
    assert report["figures"]["agent_accuracy"]["labelled"] == 3
    assert report["unscored_steps"] == 0
