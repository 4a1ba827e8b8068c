"""What a run costs, end to end: each root's cost adding up to the run's, prices of one's
own (`--price-*`) over the database's, and `--max-cost` before the first call and during
the run (issue 37)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_calibrate_cli import labelled_set
from tests.e2e.test_judge_providers import KEY, PROJECT, Case, clean_env, run

pytestmark = pytest.mark.timeout(120)
GPT_5_MINI = Case("openai", "openai", "gpt-5-mini", "OPENAI_API_KEY")
UNKNOWN = Case("openai", "openai", "gpt-from-the-future", "OPENAI_API_KEY")


def two_roots(folder: Path) -> Path:
    """Root a: six agent steps scored 0 (each then categorized); root b: six scored 1."""
    for name, score in (("a", "0.0"), ("b", "1.0")):
        root = doc(7)
        for i in range(1, 7):
            root["steps"][i]["message"] = f"Step {i} of {name} " + "did this " * 40
            root["steps"][i]["message"] += f"[[score={score}]]"
        write(folder / "runs" / f"{name}.json", root)
    return folder / "runs"


def score(
    tmp: Path, server: JudgeServer, case: Case, *flags: str
) -> tuple[int, str, dict[str, Any] | None]:
    """`score` of `tmp`/runs with `case`'s judge: exit code, stderr, the results (if any)."""
    argv: list[str | Path] = [
        "score", tmp / "runs", "--judge", case.provider, "--judge-model", case.model,
        "--judge-url", server.base_url, "--concurrency", "1", "--no-cache", *flags,
    ]  # fmt: skip
    done = run(argv, tmp, clean_env(tmp, case))
    out = tmp / "out.json"
    document = json.loads(out.read_text()) if out.exists() and "-o" in flags else None
    if "--dry-run" in flags:
        document = json.loads(done.stdout) if done.returncode == 0 else None
    return done.returncode, done.stderr, document


def test_each_root_has_its_cost_and_the_roots_add_up_to_the_run(tmp_path: Path) -> None:
    two_roots(tmp_path)
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        code, err, results = score(tmp_path, server, GPT_5_MINI, "-o", "out.json")
    assert code == 0, err
    assert results is not None
    costs = [tree["cost_usd"] for tree in results["trajectories"]]
    assert all(cost > 0 for cost in costs)
    # root a's steps were categorized too: its calls cost more than b's
    assert costs[0] > costs[1]
    assert sum(costs) == pytest.approx(results["judge"]["cost"]["usd"], abs=2e-6)


def test_prices_of_ones_own_price_a_model_the_database_does_not_know(tmp_path: Path) -> None:
    two_roots(tmp_path)
    prices = ("--price-in", "2", "--price-cache-read", "0.5", "--price-out", "8")
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        code, err, results = score(tmp_path, server, UNKNOWN, *prices, "-o", "out.json")
        assert code == 0, err
        assert results is not None
        judge = results["judge"]
        plain = judge["input_tokens"] - judge["cache_read_tokens"]
        usd = (plain * 2 + judge["cache_read_tokens"] * 0.5 + judge["output_tokens"] * 8) / 1e6
        assert judge["cost"]["usd"] == pytest.approx(usd, abs=1e-6)
        assert judge["cost"]["source"].startswith("--price-* USD per million tokens: input 2,")
        assert [tree["cost_usd"] is not None for tree in results["trajectories"]] == [True] * 2
        # without them, the model is not priced, nor its roots
        (tmp_path / "out.json").unlink()
        code, err, results = score(tmp_path, server, UNKNOWN, "-o", "out.json")
        assert code == 0, err
        assert results is not None
        assert results["judge"]["cost"]["usd"] is None
        assert [tree["cost_usd"] for tree in results["trajectories"]] == [None, None]
        # an input price without an output price is refused before any call
        server.log.clear()
        code, err, _ = score(tmp_path, server, UNKNOWN, "--price-in", "2", "-o", "x.json")
        assert code == 3
        assert err.splitlines() == [
            "error: a price of your own needs --price-in and --price-out (USD per million "
            "tokens; --price-cache-read and --price-cache-write are optional): give both"
        ]
        assert server.log == []


def test_max_cost_is_checked_before_the_first_call(tmp_path: Path) -> None:
    two_roots(tmp_path)
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        code, err, plan = score(tmp_path, server, GPT_5_MINI, "--dry-run", "--json")
        assert code == 0, err
        assert plan is not None
        foretold = plan["cost"]["usd"]
        assert plan["cost"]["model"] == "gpt-5-mini"
        assert plan["cost"]["caching"] is True  # OpenAI caches a repeated start unasked
        assert foretold > 0
        code, err, _ = score(tmp_path, server, GPT_5_MINI, "--max-cost", f"{foretold / 2}")
        assert code == 3
        (line,) = err.splitlines()
        assert line.startswith(f"error: the job would cost about ${foretold:,.4f}")
        assert f"over --max-cost {foretold / 2:g}" in line
        # a judge with no price: --max-cost cannot be checked, so it is refused
        code, err, _ = score(tmp_path, server, UNKNOWN, "--max-cost", "100")
        assert code == 3
        assert err.splitlines() == [
            "error: --max-cost needs a price for the judge, and genai-prices does not know "
            "openai's model 'gpt-from-the-future': no price taken; give your own with "
            "--price-in and --price-out (USD per million tokens)"
        ]
        assert server.log == []
        code, err, _ = score(tmp_path, server, GPT_5_MINI, "--max-cost", f"{foretold}")
        assert code == 0, err


def test_max_cost_stops_judging_once_spent_and_keeps_what_was_judged(tmp_path: Path) -> None:
    # input at $1 a million, output free: the foretold cost is the step calls' input, and
    # root a's categorizations (not foretold: they depend on the scores) pass it
    two_roots(tmp_path)
    flags = ("--price-in", "1", "--price-out", "0", "--set", "trajectory_concurrency_limit=1")
    with JudgeServer() as server:
        judge = Case("openai-compatible", "openai", "m", None)
        code, err, plan = score(tmp_path, server, judge, *flags, "--dry-run", "--json")
        assert code == 0, err
        assert plan is not None
        cap = plan["cost"]["usd"] * 1.05
        code, err, results = score(
            tmp_path, server, judge, *flags, "--max-cost", f"{cap}", "-o", "out.json"
        )
    assert code == 1, err
    assert results is not None
    assert f"judging stopped at --max-cost {cap:g} USD" in err
    spent = results["judge"]["cost"]["usd"]
    assert spent >= cap
    a, b = results["trajectories"]
    # root a was judged (its scores kept), root b's calls were never made
    assert a["nodes"][0]["status"] == "scored"
    assert [s["score"] for s in a["nodes"][0]["steps"]][1:] == [0.0] * 6
    assert (b["nodes"][0]["status"], b["nodes"][0]["reason"]) == ("failed", "cost_cap")
    assert results["run_metadata"]["atif_complete"] is False
    assert results["status"] == "succeeded"


def test_grade_prices_its_calls_with_the_same_flags(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        env = {**clean_env(tmp_path, UNKNOWN), "JUDGE_BASE_URL": server.base_url}
        argv: list[str | Path] = [
            "grade", "--judge-provider", "openai", "--judge-model", UNKNOWN.model,
            "--output", "out.json", "--price-in", "2", "--price-out", "8",
        ]  # fmt: skip
        done = run(argv, project, env)
    assert done.returncode == 1, done.stderr  # the project has one failing case
    document = json.loads((project / "out.json").read_text())
    usage, cost = document["judge_usage"], document["judge_cost"]
    plain = usage["input_tokens"] - usage["cache_read_tokens"]
    # no cache price given: a cached token is billed as input
    usd = (plain * 2 + usage["cache_read_tokens"] * 2 + usage["output_tokens"] * 8) / 1e6
    assert cost["usd"] == pytest.approx(usd, abs=1e-6)
    assert cost["model"] == UNKNOWN.model
    assert f"judge cost: ${cost['usd']:.6f} ({UNKNOWN.model}, --price-* USD per million" in (
        done.stdout
    )


def test_calibrate_records_and_says_what_its_scoring_cost(tmp_path: Path) -> None:
    labels = labelled_set(tmp_path)
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        argv: list[str | Path] = [
            "calibrate", labels, "--judge", "openai", "--judge-model", UNKNOWN.model,
            "--judge-url", server.base_url, "--no-cache", "--price-in", "1", "--price-out", "4",
            "-o", "report.json",
        ]  # fmt: skip
        done = run(argv, tmp_path, clean_env(tmp_path, UNKNOWN))
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    usage, cost = report["judge_usage"], report["judge_cost"]
    assert cost["usd"] == pytest.approx(
        (usage["input_tokens"] * 1 + usage["output_tokens"] * 4) / 1e6, abs=1e-6
    )
    assert f"judge cost: ${cost['usd']:.6f} ({UNKNOWN.model}, --price-* USD" in done.stdout
