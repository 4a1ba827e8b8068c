"""`score` against the OpenAI and Anthropic mimics, which count prompt-cache use as each API
documents it: the cached tokens they report are the results' (issue 37, item 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, write
from tests.e2e.test_judge_providers import KEY, Case, clean_env, run

pytestmark = pytest.mark.timeout(120)


def long_runs(folder: Path, roots: int = 2, steps: int = 8) -> Path:
    """Trajectories whose task alone passes the minimum cacheable length (about 1,500
    tokens), with steps of a few hundred tokens each."""
    for r in range(roots):
        run_ = doc(steps, session_id=f"s{r}")
        run_["steps"][0]["message"] = f"Task {r}: " + "fix the parser. " * 380
        for i, step in enumerate(run_["steps"][1:], start=2):
            step["message"] = f"step {i} of run {r} [[score=0.5]] " + "read the file. " * 60
        write(folder / "runs" / f"r{r}.json", run_)
    return folder / "runs"


@pytest.mark.parametrize(
    "case",
    [
        Case("anthropic", "anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        Case("openai", "openai", "gpt-4o-mini", "OPENAI_API_KEY"),
    ],
    ids=str,
)
def test_the_cached_tokens_a_provider_reports_are_the_results(tmp_path: Path, case: Case) -> None:
    runs = long_runs(tmp_path)
    with JudgeServer(mimic=case.mimic, api_key=KEY) as server:
        done = run(
            [
                "score", runs, "--judge", case.provider, "--judge-model", case.model,
                "--judge-url", server.base_url, "-o", "out.json",
            ],
            tmp_path,
            clean_env(tmp_path, case),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # the steps' requests (not the preflight call, nor a categorization)
        bodies = [
            r.body for r in server.log if "Score the step in the step tag" in json.dumps(r.body)
        ]
        assert all(r.status == 200 for r in server.log)
    judge = json.loads((tmp_path / "out.json").read_text())["judge"]
    assert len(bodies) == 16
    read, written = judge["cache_read_tokens"], judge["cache_write_tokens"]
    if case.provider == "anthropic":
        marked = [b for b in bodies if isinstance(b["messages"][0]["content"], list)]
        assert len(marked) == 16  # every step's opening passes Sonnet's minimum
        assert written > 0
        # the first step of each run writes its opening; the seven after it read at least it
        assert read >= 2 * 7 * 1400
    else:
        keys = [b["prompt_cache_key"] for b in bodies]
        assert len(set(keys)) == 2
        assert all(keys.count(k) == 8 for k in set(keys))
        assert written == 0  # OpenAI bills no writes on these models
        assert read >= 2 * 7 * 1024
    assert read + written < judge["input_tokens"]  # parts of the input, counted in it
