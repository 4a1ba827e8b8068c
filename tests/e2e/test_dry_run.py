"""`agentjudge score --dry-run` and the budgets checked before the first call: the real CLI,
the real judge server (which must see nothing)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjudge.scoring.prompts import CATEGORIZE_SYSTEM, DECISIVE_SYSTEM
from agentjudge.testing import JudgeServer
from tests.e2e.test_score_cli import judge_flags, score, tree

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def server() -> Any:
    with JudgeServer() as running:
        yield running


def plan(runs: Path, server: JudgeServer, cwd: Path, *flags: str) -> dict[str, Any]:
    done = score(runs, *judge_flags(server), "--dry-run", "--json", *flags, cwd=cwd)
    assert done.returncode == 0, done.stderr
    document: dict[str, Any] = json.loads(done.stdout)
    return document


def test_a_dry_run_sends_nothing_and_counts_the_calls_the_run_then_makes(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)  # a root of 3 steps and its subagent of 2; one step scores 0.0
    before = plan(runs, server, tmp_path, "--price-in", "2.5", "--price-out", "10")
    assert server.log == []
    assert (before["trajectories"], before["nodes"], before["step_calls"]) == (1, 2, 5)
    assert (before["step_calls_stored"], before["calls_to_send"]) == (0, 5)
    assert before["categorizations_at_most"] == 5
    assert before["cost"]["input_to_send"] == pytest.approx(
        before["input_tokens_to_send"] * 2.5 / 1e6, abs=1e-6
    )  # dollars to six decimals
    done = score(runs, *judge_flags(server), "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    categorizations = [
        r for r in server.log if r.body["messages"][0]["content"] == CATEGORIZE_SYSTEM
    ]
    assert len(server.log) - len(categorizations) == before["step_calls"]
    assert len(categorizations) <= before["categorizations_at_most"]
    after = plan(runs, server, tmp_path)
    assert (after["step_calls_stored"], after["calls_to_send"]) == (5, 0)
    assert len(server.log) == 5 + len(categorizations)  # the second dry run sent nothing


def test_the_lines_of_a_dry_run(tmp_path: Path, server: JudgeServer) -> None:
    runs = tree(tmp_path)
    prices = ("--price-in", "1", "--price-out", "1")
    done = score(runs, *judge_flags(server), "--dry-run", *prices, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "dry run, no judge call: 1 trajectories, 2 nodes (2 to judge)"
    assert lines[1].startswith("judge calls: 5 step scores (0 already in the verdict store)")
    assert "fitted to a BPE tokenizer" in lines[2]
    assert lines[3].startswith("cost: at most $0.0")
    assert not (tmp_path / "agentjudge-results.json").exists()
    assert server.log == []


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--set", "max_judge_requests=4"], "the job would make 5 judge calls"),
        (["--set", "max_input_tokens=100"], "input tokens (5 judge calls"),
    ],
)
def test_a_job_over_its_budget_is_refused_before_the_first_call(
    tmp_path: Path, server: JudgeServer, flags: list[str], message: str
) -> None:
    runs = tree(tmp_path)
    done = score(runs, *judge_flags(server), *flags, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 3
    (line,) = done.stderr.splitlines()
    assert message in line
    assert server.log == []
    assert not (tmp_path / "out.json").exists()
    within = score(runs, *judge_flags(server), "--set", "max_judge_requests=5", cwd=tmp_path)
    assert within.returncode == 0, within.stderr


def test_a_dry_run_counts_the_decisive_picks_the_run_then_makes(
    tmp_path: Path, server: JudgeServer
) -> None:
    runs = tree(tmp_path)
    flags = ("--set", "decisive_rule=judge_pick", "--set", "completion_threshold=0.9")
    before = plan(runs, server, tmp_path, *flags, "--price-in", "1", "--price-out", "1")
    assert (before["decisive_picks_at_most"], before["calls_to_send"]) == (1, 5)
    assert before["decisive_input_tokens_at_most"] > 0
    lines = score(runs, *judge_flags(server), "--dry-run", *flags, cwd=tmp_path).stdout
    assert "decisive_rule judge_pick: at most 1 more calls (one per root that does not pass)" in (
        lines
    )
    done = score(runs, *judge_flags(server), *flags, "-o", "out.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    picks = [r for r in server.log if r.body["messages"][0]["content"] == DECISIVE_SYSTEM]
    assert len(picks) == before["decisive_picks_at_most"]  # the root fails at 0.9
    assert json.loads((tmp_path / "out.json").read_text())["judge"]["decisive_picks"] == 1
    plain = plan(runs, server, tmp_path, "--set", "completion_threshold=0.9")
    assert plain["decisive_picks_at_most"] == 0


@pytest.mark.parametrize(
    ("judge", "model", "key_env"),
    [
        ("gemini", "gemini-2.5-flash", "GEMINI_API_KEY"),
        ("azure", "gpt-5-mini", "AZURE_OPENAI_API_KEY"),
    ],
)
def test_a_dry_run_refuses_batch_mode_for_a_judge_without_a_batch_api(
    tmp_path: Path, judge: str, model: str, key_env: str
) -> None:
    """The run refuses `--batch` for these judges (no batch API spoken): a dry run must not
    foretell them at the batch discount and exit 0, but refuse as the run does."""
    runs = tree(tmp_path)
    flags = ("--judge", judge, "--judge-model", model, "--batch", "--dry-run", "--json")
    done = score(runs, *flags, "--judge-url", "https://127.0.0.1:9", cwd=tmp_path, **{key_env: "k"})
    assert done.returncode == 3, done.stdout
    (line,) = done.stderr.splitlines()
    assert f"--batch: the {judge} judge has no batch API that agentjudge speaks" in line
    assert done.stdout == ""
