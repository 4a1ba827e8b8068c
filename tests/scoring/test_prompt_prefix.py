"""Prompts shaped for a provider's prompt cache (issue 37, item 1): within a context window
each step's prompt repeats the one before it up to its step, every request of a node names
the node, and a node's first call is answered before its others are sent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx

from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAI
from agentjudge.judge.request import JudgeRequest
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.plan import trajectory_cache_group
from tests.atif.docs import doc, step, write
from tests.scoring.test_plan import planned_tree

VERDICT = b'{"choices": [{"message": {"content": "{\\"score\\": 0.9}"}}]}'


def prefix(request: JudgeRequest) -> str:
    """What a request's user message shows before its step: task and context."""
    user = request.messages[1]
    return user.content[: user.cache_points[-1]]


def test_each_step_prompt_starts_with_the_one_before_it(tmp_path: Path) -> None:
    steps = [step(1, "user", "the task")] + [step(i, message=f"step {i}") for i in range(2, 15)]
    write(tmp_path / "t.json", doc(1, steps=steps))
    (plan,) = planned_tree(tmp_path, resolve_criteria("default"), context_steps=4)
    restarts = 0
    for before, after in zip(plan.steps, plan.steps[1:], strict=False):
        old, new = before.request, after.request
        assert new.messages[0] == old.messages[0]  # the system message: the same
        if before.context and after.context[:1] != before.context[:1]:  # a new window
            restarts += 1  # the opening (task, `<context>`) is still shared
            opening = new.messages[1].cache_points[0]
            assert new.messages[1].content[:opening] == old.messages[1].content[:opening]
            continue
        # the k-th prompt starts with the (k-1)-th's prefix, grown by the (k-1)-th step
        assert new.messages[1].content.startswith(prefix(old))
        grown = prefix(new)[len(prefix(old)) :]
        assert grown == plan.quoted[before.context[-1] + 1 if before.context else 0] + "\n"
        assert json.loads(grown)["step_id"] == before.view.step_id
    assert restarts == 2  # windows of 4 steps over 14: the prefix is bounded
    # the first window's prefixes grow one step at a time
    points = [len(p.request.messages[1].cache_points) for p in plan.steps]
    assert points[:8] == [1, 2, 3, 4, 5, 6, 7, 8]
    for planned in plan.steps:  # each mark ends a line: the opening, or a context step
        user = planned.request.messages[1]
        assert all(user.content[p - 1] == "\n" for p in user.cache_points)


def test_the_requests_of_a_trajectory_name_it_and_no_other(tmp_path: Path) -> None:
    write(tmp_path / "a.json", doc(4, session_id="a"))
    write(tmp_path / "b.json", doc(4, session_id="b"))
    groups = set()
    for name in ("a", "b"):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "t.json").write_bytes((tmp_path / f"{name}.json").read_bytes())
    job, seen = capture(tmp_path, ["a", "b"])
    asyncio.run(drive(job))
    by_group: dict[str, set[str]] = {}
    for request in seen:
        body = json.loads(request.content)
        by_group.setdefault(body["prompt_cache_key"], set()).add(body["messages"][1]["content"])
        groups.add(body["prompt_cache_key"])
    assert len(groups) == 2  # one per trajectory, stable across its 4 steps
    assert all(len(prompts) == 4 for prompts in by_group.values())
    # stable across runs: a digest of the node's id, which names no file
    root = load_roots(job.config)[0]
    assert trajectory_cache_group(root.id) in groups
    assert all(group.startswith("agentjudge-") and "json" not in group for group in groups)


def capture(folder: Path, names: list[str]) -> tuple[ScoringJob, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=VERDICT)

    settings = ScoreConfig.model_validate(
        {"trajectory_path": [str(folder / n) for n in names], "judge": "fake"}
    )
    client = JudgeClient(
        OpenAI("http://j/v1", "gpt-4o-mini"), transport=httpx.MockTransport(answer)
    )
    return ScoringJob(settings, resolve_criteria("default"), client), seen


async def drive(job: ScoringJob) -> None:
    async with job.client:
        await job.run(load_roots(job.config))


def test_a_nodes_first_call_is_answered_before_its_others_are_sent(tmp_path: Path) -> None:
    write(tmp_path / "t" / "t.json", doc(6))
    events: list[tuple[str, str]] = []

    async def answer(request: httpx.Request) -> httpx.Response:
        user = json.loads(request.content)["messages"][1]["content"]
        events.append(("sent", user))
        await asyncio.sleep(0.02)
        events.append(("answered", user))
        return httpx.Response(200, content=VERDICT)

    settings = ScoreConfig.model_validate(
        {"trajectory_path": [str(tmp_path / "t")], "judge": "fake"}
    )
    provider = OpenAI("http://j/v1", "gpt-4o-mini")
    client = JudgeClient(provider, transport=httpx.MockTransport(answer), concurrency=8)
    asyncio.run(drive(ScoringJob(settings, resolve_criteria("default"), client)))
    first = events[0]
    assert first[0] == "sent"
    assert events[1] == ("answered", first[1])  # nothing else was sent meanwhile
    assert sum(kind == "sent" for kind, _ in events[2:]) == 5
    # and the others went at once, not one by one
    assert [kind for kind, _ in events[2:7]] == ["sent"] * 5
