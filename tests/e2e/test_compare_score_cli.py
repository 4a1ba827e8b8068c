"""`agentjudge compare` over two `score` results: real runs of the CLI against the test judge
server, steps marked `[[score=X]]` so every root's score is known."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_score_cli import judge_flags, score

pytestmark = pytest.mark.timeout(300)
LEVELS = (0.25, 0.5, 0.75, 1.0)


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def collection(folder: Path, scores: list[float]) -> Path:
    """One root per score, its two steps both marked with it (so its aggregate is that)."""
    for index, value in enumerate(scores):
        root = doc(2, trajectory_id=f"t{index:03d}")
        root["steps"][0]["message"] = f"do task {index} [[score={value}]]"
        root["steps"][1]["message"] = f"did it [[score={value}]]"
        write(folder / f"t{index:03d}.json", root)
    return folder


def compare(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "compare", *map(str, args)],
        capture_output=True, text=True, timeout=110, cwd=cwd,
    )  # fmt: skip


def scored(tmp: Path, server: JudgeServer, scores: list[float], name: str, *flags: str) -> Path:
    runs = collection(tmp / f"{name}-runs", scores)
    run = score(runs, *judge_flags(server), "-o", f"{name}.json", *flags, cwd=tmp)
    assert run.returncode == 0, run.stderr
    return tmp / f"{name}.json"


def baseline_scores() -> list[float]:
    rng = random.Random(19)
    return [rng.choice(LEVELS) for _ in range(100)]


def report(run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def test_identical_runs_compare_with_no_change(tmp_path: Path, server: JudgeServer) -> None:
    scores = [0.25, 0.5, 1.0, 0.75]
    a = scored(tmp_path, server, scores, "a")
    b = scored(tmp_path, server, scores, "b")
    data = json.loads(a.read_text())
    # every node records its full rubric, not only the criterion names
    node = data["trajectories"][0]["nodes"][0]
    assert node["criteria"] == ["step_quality"]
    assert node["rubric"] == data["criteria"]["rubric"]
    assert node["rubric"]["criteria"][0]["description"]
    run = compare(a, b, "--json", "--fail-on-regression", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    out = report(run)
    assert (out["kind"], out["comparable"], out["paired"]) == ("score", True, 4)
    assert (out["mean_delta"], out["mean_delta_interval"], out["p_value"]) == (0.0, [0.0, 0.0], 1.0)
    assert out["regressed"] is False
    assert out["unmatched"] == {"count": 0, "baseline": [], "candidate": []}
    assert [r["baseline"] for r in out["trajectories"]] == scores
    text = compare(a, b, cwd=tmp_path).stdout
    assert "Mean delta: +0.0000 (95% CI +0.0000\u2013+0.0000), p = 1.0000" in text
    assert "No significant regression." in text


def test_different_rubrics_are_refused_unless_allowed(tmp_path: Path, server: JudgeServer) -> None:
    rubric = {"criteria": [{"name": "correct", "description": "The step is correct."}]}
    other = {"criteria": [{"name": "correct", "description": "The step is right and safe."}]}
    (tmp_path / "one.json").write_text(json.dumps(rubric))
    (tmp_path / "two.json").write_text(json.dumps(other))
    custom = ("--scoring-mode", "custom", "--rubric")
    a = scored(tmp_path, server, [0.5, 1.0], "a", *custom, "one.json")
    b = scored(tmp_path, server, [0.5, 1.0], "b", *custom, "two.json")
    run = compare(a, b, cwd=tmp_path)
    assert run.returncode == 3
    assert run.stderr.strip().splitlines() == [
        "error: runs are not comparable: rubric differs (criteria.rubric); "
        "pass --allow-incomparable to compare anyway"
    ]
    allowed = compare(a, b, "--allow-incomparable", "--json", cwd=tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert report(allowed)["comparable"] is False
    assert report(allowed)["difference"] == "rubric differs (criteria.rubric)"


def test_another_judge_or_prompt_version_is_refused(tmp_path: Path, server: JudgeServer) -> None:
    a = scored(tmp_path, server, [0.5, 1.0], "a")
    with JudgeServer() as other:
        b = scored(tmp_path, other, [0.5, 1.0], "b")
    run = compare(a, b, cwd=tmp_path)
    assert run.returncode == 3
    assert "runs are not comparable: judge differs (" in run.stderr
    assert f"at {server.base_url}" in run.stderr
    data = json.loads(a.read_text())
    data["run_parameters"]["atif_prompt_version"] = "older"
    (tmp_path / "older.json").write_text(json.dumps(data))
    run = compare(tmp_path / "older.json", a, cwd=tmp_path)
    assert run.returncode == 3
    assert "atif_prompt_version differs (older vs " in run.stderr


@pytest.mark.results_edited  # its grade results are a stub: only their kind counts
def test_a_score_and_a_grade_result_do_not_mix(tmp_path: Path, server: JudgeServer) -> None:
    a = scored(tmp_path, server, [0.5], "a")
    (tmp_path / "grade.json").write_text(json.dumps({"cases": [], "summary": {}}))
    run = compare(a, tmp_path / "grade.json", cwd=tmp_path)
    assert run.returncode == 2
    assert "grade.json: not a score results file" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_a_planted_regression_is_significant_and_noise_is_not(
    tmp_path: Path, server: JudgeServer
) -> None:
    base = baseline_scores()
    rng = random.Random(7)
    dropped = set(rng.sample(range(100), 30))
    regressed = [max(0.0, s - 0.5) if i in dropped else s for i, s in enumerate(base)]
    # noise: a quarter of the roots move one level up or down, at random
    noisy = [
        min(1.0, max(0.25, s + rng.choice((-0.25, 0.25)))) if rng.random() < 0.25 else s
        for s in base
    ]
    a = scored(tmp_path, server, base, "base")
    b = scored(tmp_path, server, regressed, "regressed")
    c = scored(tmp_path, server, noisy, "noisy")
    run = compare(a, b, "--json", "--fail-on-regression", cwd=tmp_path)
    assert run.returncode == 1, run.stderr
    out = report(run)
    expected = sum(r - s for r, s in zip(regressed, base, strict=True)) / 100
    assert out["mean_delta"] == pytest.approx(expected)
    assert out["p_value"] < 0.01
    assert out["mean_delta_interval"][1] < 0
    assert (out["significant"], out["regressed"], out["paired"]) == (True, True, 100)
    assert sum(r["delta"] != 0 for r in out["trajectories"]) == 30
    # steps below the failure threshold (0.5) are categorized: more of them after the drop
    categories = out["failure_categories"]
    assert sum(e["delta"] for e in categories.values()) > 0
    noise = compare(a, c, "--json", "--fail-on-regression", cwd=tmp_path)
    assert noise.returncode == 0, noise.stderr
    assert report(noise)["p_value"] >= 0.05
    assert report(noise)["regressed"] is False
    text = compare(a, b, cwd=tmp_path).stdout
    assert "Largest score changes (20 of 30)" in text
    assert "Regression: the mean drop is significant at 0.05" in text


def test_unmatched_trajectories_are_listed(tmp_path: Path, server: JudgeServer) -> None:
    a = scored(tmp_path, server, [0.5, 1.0, 0.75], "a")
    b = scored(tmp_path, server, [0.5, 1.0], "b")
    out = report(compare(a, b, "--json", cwd=tmp_path))
    assert out["unmatched"] == {"count": 1, "baseline": ["t002"], "candidate": []}
    assert out["paired"] == 2


def test_the_score_interval_is_seeded_and_shown(tmp_path: Path, server: JudgeServer) -> None:
    scores = baseline_scores()[:40]
    flags = ("--set", "bootstrap_seed=5", "--set", "bootstrap_resamples=500")
    a = json.loads(scored(tmp_path, server, scores, "a", *flags).read_text())
    b = json.loads(scored(tmp_path, server, scores, "b", *flags).read_text())
    assert a["metrics_interval"] == b["metrics_interval"]
    low, high = a["metrics_interval"]["atif_overall_score"]
    assert low < sum(scores) / 40 < high
    assert (a["metrics_interval"]["seed"], a["metrics_interval"]["resamples"]) == (5, 500)
    assert (a["run_parameters"]["bootstrap_seed"], a["run_parameters"]["bootstrap_resamples"]) == (
        5, 500,
    )  # fmt: skip
    runs = tmp_path / "a-runs"
    line = score(runs, *judge_flags(server), *flags, "-o", "c.json", cwd=tmp_path).stderr
    assert f"atif_overall_score={sum(scores) / 40:.4f} (95% CI {low:.4f}\u2013{high:.4f})" in line


def test_auto_rubrics_are_stored_in_full_and_compared(tmp_path: Path, server: JudgeServer) -> None:
    def auto_run(name: str, task: str) -> Path:
        root = doc(2, trajectory_id="t000")
        root["steps"][0]["message"] = task
        root["steps"][1]["message"] = "edit [[score.correctness=1.0]] [[score.efficiency=0.0]]"
        write(tmp_path / f"{name}-runs" / "t000.json", root)
        run = score(tmp_path / f"{name}-runs", *judge_flags(server), "--scoring-mode", "auto",
                    "-o", f"{name}.json", cwd=tmp_path)  # fmt: skip
        assert run.returncode == 0, run.stderr
        return tmp_path / f"{name}.json"

    derived = auto_run("derived", "Refactor the parser")
    fallback = auto_run("fallback", "Refactor the parser [[rubric=bad]]")
    rubric = json.loads(derived.read_text())["trajectories"][0]["nodes"][0]["rubric"]
    assert [(c["name"], c["weight"]) for c in rubric["criteria"]] == [
        ("correctness", 3.0), ("efficiency", 1.0),
    ]  # fmt: skip
    assert all(c["description"] for c in rubric["criteria"])
    # the same run settings and run rubric: only the rubric derived for the task differs
    run = compare(derived, fallback, cwd=tmp_path)
    assert run.returncode == 3
    assert "runs are not comparable: rubric differs (trajectory t000)" in run.stderr
    assert compare(derived, derived, cwd=tmp_path).returncode == 0


@pytest.mark.results_edited
def test_a_file_that_breaks_the_results_contract_is_one_line(
    tmp_path: Path, server: JudgeServer
) -> None:
    a = scored(tmp_path, server, [0.5, 1.0], "a")
    data = json.loads(a.read_text())
    node = data["trajectories"][1]["nodes"][0]
    node["score"] = node.pop("own_score")  # a field renamed
    (tmp_path / "renamed.json").write_text(json.dumps(data))
    line = (
        "error: renamed.json: not a valid agentjudge.score/v1 results file: "
        "trajectories[1].nodes[0].own_score: Field required (and 1 more); pass a results file "
        "written by `agentjudge score` (agentjudge.score/v1), unmodified"
    )
    run = compare("renamed.json", a, cwd=tmp_path)
    assert (run.returncode, run.stderr.strip()) == (3, line)
    run = subprocess.run(
        [sys.executable, "-m", "agentjudge", "report", "renamed.json", "-o", "r.html"],
        capture_output=True, text=True, timeout=110, cwd=tmp_path,
    )  # fmt: skip
    assert (run.returncode, run.stderr.strip()) == (3, line)
    assert not (tmp_path / "r.html").exists()
