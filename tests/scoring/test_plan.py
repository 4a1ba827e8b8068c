"""Step requests: bounded prompts, shared prefixes, quoted data, scored frames."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from agentjudge.atif import load_trees
from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.steps import FileCache, node_steps
from tests.atif.docs import doc, step, write

VERDICT = b'{"choices": [{"message": {"content": "{\\"score\\": 0.9}"}}]}'


def capture_job(folder: Path, **config: object) -> tuple[ScoringJob, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=VERDICT)

    settings = ScoreConfig.model_validate(
        {
            "trajectory_path": [str(folder)],
            "judge": "fake",
            "max_steps_per_trajectory": 600,
            **config,
        }
    )
    client = JudgeClient(
        OpenAICompatible("http://j/v1", "m"), transport=httpx.MockTransport(answer)
    )
    return ScoringJob(settings, resolve_criteria("default"), client), seen


def run(job: ScoringJob) -> None:
    async def go() -> None:
        async with job.client:
            await job.run(load_roots(job.config))

    asyncio.run(go())


def big_step(step_id: int) -> dict[str, object]:
    call = f"c{step_id}"
    return step(
        step_id,
        message="m" * 20_000,
        reasoning_content="r" * 20_000,
        tool_calls=[
            {"tool_call_id": call, "function_name": "bash", "arguments": {"x": "a" * 20_000}}
        ],
        observation={"results": [{"source_call_id": call, "content": "o" * 20_000}] * 1},
    )


def test_a_500_step_trajectory_never_makes_a_prompt_over_8k_tokens(tmp_path: Path) -> None:
    steps = [step(1, "user", "t" * 50_000)] + [big_step(i) for i in range(2, 501)]
    write(tmp_path / "long.json", doc(1, steps=steps))
    job, seen = capture_job(tmp_path, max_file_bytes=100_000_000)
    run(job)
    assert len(seen) == 500
    longest = max(len(r.content) for r in seen)
    assert longest / 4 < 8000, f"{longest / 4:.0f} tokens"
    assert longest / 4 > 4000, "the context window is used"


def test_requests_of_a_block_share_a_prefix(tmp_path: Path) -> None:
    write(
        tmp_path / "t.json",
        doc(
            1,
            steps=[step(1, "user", "task")] + [step(i, message=f"step {i}") for i in range(2, 31)],
        ),
    )
    job, _ = capture_job(tmp_path, context_steps=6)
    run(job)
    acc = job.accounting
    assert acc.step_requests == 30
    assert acc.prefix_chars / acc.prompt_chars > 0.5


def test_scored_frames_agent_skips_user_and_system_steps(tmp_path: Path) -> None:
    steps = [step(1, "user", "task"), step(2), step(3, "system", "note"), step(4)]
    write(tmp_path / "t.json", doc(1, steps=steps))
    job, seen = capture_job(tmp_path, scored_frames="agent")
    run(job)
    assert len(seen) == 2
    job, seen = capture_job(tmp_path)
    run(job)
    assert len(seen) == 4


def test_copied_context_is_shown_but_not_scored(atif_fixtures: Path, tmp_path: Path) -> None:
    (root,) = list(load_trees([atif_fixtures / "harbor-golden__t2-linear-history"]))
    found = node_steps(root, FileCache())
    assert len(found.steps) == 13
    assert sum(s.is_context for s in found.steps) == 4
    assert [s.segment for s in found.steps].count(1) == 8


def test_a_job_plans_only_a_budget_of_steps_ahead_and_judges_every_step(tmp_path: Path) -> None:
    for i in range(60):
        write(tmp_path / f"t{i}.json", doc(6, session_id=f"s{i}"))
    write(tmp_path / "big.json", doc(100, session_id="big"))
    job, seen = capture_job(tmp_path)
    job.client.concurrency = 4
    budget = job.step_budget()
    assert budget.total == 32  # 8 steps per concurrent call
    peak: list[int] = []
    original = budget.acquire

    async def acquire(cost: int = 1) -> None:
        await original(cost)
        peak.append(budget.in_flight)

    budget.acquire = acquire  # type: ignore[method-assign]
    job.step_budget = lambda: budget  # type: ignore[method-assign]
    run(job)
    assert len(seen) == 60 * 6 + 100
    assert max(peak) <= 32
    assert peak.count(32) >= 1  # the 100-step tree went alone, on the whole budget
    assert max(peak) > 6  # the small trees were judged several at once
