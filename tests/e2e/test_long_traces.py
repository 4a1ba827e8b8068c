"""Traces longer than the judge (issue 37, item 4): a 400-step run with a 2 MB tool result,
scored by a judge of a small context (`judge_context_tokens`) that refuses any prompt over
it. Every step whose prompt fits (cut down if need be, each cut marked) is scored; the one
that cannot fit even cut is `not_evaluated: context_overflow`, never 0, and named. The
test prints its figures (run it with `-s`)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentjudge.atif.models import Step
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.estimate import prompt_budget
from agentjudge.scoring.plan import MIN_STEP_CHARS
from agentjudge.scoring.prompts import quote, system_prompt, user_prompt
from agentjudge.scoring.steps import render
from agentjudge.testing import JudgeServer, Script
from tests.atif.docs import doc, write
from tests.e2e.test_score_cli import score

pytestmark = pytest.mark.timeout(300)
CONTEXT_TOKENS = 4096  # the judge's window: the server refuses a prompt over it
STEPS = 400
BIG_RESULT = 400  # the step whose tool result is 2 MB
WIDE = 250  # a step of 3,000 parallel tool calls: its markers alone overflow the window
LONG_MESSAGES = range(100, 110)  # steps of 6,000 characters: their context is windowed


def words(n: int, seed: int) -> str:
    """`n` characters of varied text (words with digits, as logs and code have)."""
    cycle = "".join(f"val{(seed + 7 * k) % 97}x{(seed + 7 * k) % 13} " for k in range(97 * 13))
    return (cycle * (n // len(cycle) + 1))[:n]


def long_run(folder: Path) -> Path:
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": "Fix the build."}]
    for i in range(2, STEPS + 1):
        step: dict[str, Any] = {
            "step_id": i,
            "source": "agent",
            "message": f"[[score=0.8]] step {i}: " + words(120, i),
        }
        if i == BIG_RESULT:
            call = {"tool_call_id": "big", "function_name": "cat", "arguments": {"path": "log"}}
            step["tool_calls"] = [call]
            step["observation"] = {
                "results": [{"source_call_id": "big", "content": words(2_000_000, i)}]
            }
        if i == WIDE:
            step["tool_calls"] = [
                {"tool_call_id": f"c{k}", "function_name": "probe", "arguments": {"k": k}}
                for k in range(3000)
            ]
        if i in LONG_MESSAGES:
            step["message"] += words(6000, i)
        steps.append(step)
    write(folder / "runs" / "long.json", doc(1, steps=steps))
    return folder / "runs"


def test_a_run_longer_than_the_judge_is_scored_with_its_cuts_marked(tmp_path: Path) -> None:
    runs = long_run(tmp_path)
    script = Script(max_context_tokens=CONTEXT_TOKENS)
    with JudgeServer(script) as server:
        started = time.monotonic()
        run = score(
            runs, "--judge", "openai-compatible", "--judge-url", server.base_url,
            "--judge-model", "judge", "--set", f"judge_context_tokens={CONTEXT_TOKENS}",
            "--set", "max_file_bytes=10000000",
            "--set", "partial_result_policy=skip_failed_trajectory",
            "-o", tmp_path / "out.json", "--cache", tmp_path / "store.sqlite", cwd=tmp_path,
        )  # fmt: skip
        seconds = time.monotonic() - started
        refused = [r for r in server.log if r.status != 200]
        longest = max(len(json.dumps(r.body)) for r in server.log)
    assert run.returncode == 1, run.stderr  # incomplete: one step could not be judged
    assert refused == []  # no prompt sent was over the judge's context
    data = json.loads((tmp_path / "out.json").read_text())
    (node,) = data["trajectories"][0]["nodes"]
    steps = {s["step_id"]: s for s in node["steps"]}
    assert len(steps) == STEPS  # every step is in the results, in order
    assert [s["step_id"] for s in node["steps"]] == list(range(1, STEPS + 1))

    # the one that cannot fit: not judged, no score (never 0), counted and named
    overflow = [s for s in node["steps"] if s.get("not_evaluated")]
    assert [s["step_id"] for s in overflow] == [WIDE]
    assert overflow[0]["score"] is None
    assert overflow[0]["error"] is None
    assert data["steps_not_evaluated"] == {"context_overflow": 1}
    assert data["run_metadata"]["atif_complete"] is False
    assert node["complete"] is False
    assert "context_overflow" in data["incomplete"][0]["reason"]
    assert "steps_not_evaluated=1 (context_overflow)" in run.stdout + run.stderr
    # and it truly cannot: alone, cut to the fewest characters a step is shown, it is over
    assert not fits_alone(WIDE, runs)

    # everything else fits, and is scored as the judge read it (no 0 anywhere)
    scored = [s for s in node["steps"] if s["step_id"] != WIDE]
    assert all(s["score"] is not None for s in scored)
    assert {s["score"] for s in scored if s["source"] == "agent"} == {0.8}
    assert 0.0 not in [s["score"] for s in node["steps"]]
    # the 2 MB result was cut below the usual 8,000 characters, around its marker
    big = steps[BIG_RESULT]
    assert big["truncated"] is True
    assert big["shown_chars"] < 8000
    assert big["shown_chars"] + big["hidden_chars"] > 2_000_000
    # the long messages' neighbours had their earlier steps windowed, and say so
    windowed = [s["step_id"] for s in node["steps"] if s.get("context_left_out")]
    assert set(windowed) >= set(range(LONG_MESSAGES.stop, LONG_MESSAGES.stop + 3))
    print(
        json.dumps(
            {
                "steps": STEPS,
                "judge_context_tokens": CONTEXT_TOKENS,
                "scored": len(scored),
                "not_evaluated": len(overflow),
                "step_text_cut": sum(s["truncated"] for s in node["steps"]),
                "context_windowed": len(windowed),
                "largest_request_chars": longest,
                "judge_calls": data["judge"]["calls"],
                "input_tokens": data["judge"]["input_tokens"],
                "seconds": round(seconds, 1),
            }
        )
    )


def fits_alone(step_id: int, runs: Path) -> bool:
    """Whether the step's prompt, with no context and its texts cut to MIN_STEP_CHARS,
    fits the judge's window as the plan counts it."""
    document = json.loads((runs / "long.json").read_text())
    step = Step.model_validate(document["steps"][step_id - 1])
    data, cut = render(step, MIN_STEP_CHARS)
    rubric = resolve_criteria("default").rubric
    system = system_prompt(rubric, "score")
    budget = prompt_budget(CONTEXT_TOKENS, 512)
    user = user_prompt(quote("Fix the build."), None, [], quote(data), cut)
    return budget.count(system) + budget.count(user.content) <= budget.tokens
