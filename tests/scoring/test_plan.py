"""Step requests: bounded prompts, shared prefixes, quoted data, scored frames."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest

from agentjudge.atif import load_trees
from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import JudgeRequest
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria, resolve_criteria
from agentjudge.scoring.estimate import estimate_plan
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.plan import NodePlan, common_prefix_chars, derive_request, plan_node
from agentjudge.scoring.prompts import PROMPT_VERSION, system_prompt
from agentjudge.scoring.steps import FileCache, node_steps
from tests.atif.docs import doc, step, with_refs, write

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

    async def acquire(cost: int = 1, key: str = "") -> None:
        await original(cost, key)
        peak.append(budget.in_flight)

    budget.acquire = acquire  # type: ignore[method-assign]
    job.step_budget = lambda: budget  # type: ignore[method-assign]
    run(job)
    assert len(seen) == 60 * 6 + 100
    assert max(peak) <= 32
    assert peak.count(32) >= 1  # the 100-step tree went alone, on the whole budget
    assert max(peak) > 6  # the small trees were judged several at once


# --- the plan itself: requests built without a judge, a client or a network ---------------


def config(**values: object) -> ScoreConfig:
    return ScoreConfig.model_validate({"trajectory_path": ["."], "judge": "fake", **values})


def planned_tree(folder: Path, criteria: Criteria, **values: object) -> list[NodePlan]:
    """The plan of every node of the one tree in `folder`, as the job builds it."""
    (root,) = list(load_trees([folder]))
    files = FileCache()
    settings = config(**values)
    return [
        plan_node(node_steps(n, files), n.trajectory_id, criteria.rubric, criteria, settings)
        for n in root.walk()
    ]


def user_text(request: JudgeRequest) -> str:
    return request.messages[1].content


def test_a_continued_trajectory_plans_one_request_per_scored_step(
    atif_fixtures: Path,
) -> None:
    plans = planned_tree(
        atif_fixtures / "harbor-golden__t2-linear-history", resolve_criteria("default")
    )
    (root,) = plans  # one node of two segments: 13 steps, 4 of them copied context
    # the copied steps are shown as context (the second segment's steps see them)
    assert set(root.steps[5].context) >= {5, 6, 7, 8}
    assert [(p.view.segment, p.view.step_id) for p in root.steps] == [
        (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (1, 5), (1, 6), (1, 7), (1, 8),
    ]  # fmt: skip
    assert all(not p.view.is_context for p in root.steps)
    # each request shows the context block before its step, never a later step
    for planned in root.steps:
        assert all(c < len(root.quoted) for c in planned.context)
        assert list(planned.context) == sorted(planned.context)
        assert user_text(planned.request).count("<step>") == 1
    assert len({p.request.key("j") for p in root.steps}) == len(root.steps)


def test_a_parent_and_its_subagent_are_planned_apart(tmp_path: Path) -> None:
    parent = doc(3)
    with_refs(parent, 2, [{"trajectory_path": "child.json"}])
    write(tmp_path / "root.json", parent)
    write(tmp_path / "child.json", doc(2, session_id="child"))
    plans = planned_tree(tmp_path, resolve_criteria("default"))
    assert [len(p.steps) for p in plans] == [3, 2]


def test_requests_of_a_context_block_share_their_prefix_exactly(tmp_path: Path) -> None:
    steps = [step(1, "user", "task")] + [step(i, message=f"step {i}") for i in range(2, 11)]
    write(tmp_path / "t.json", doc(1, steps=steps))
    (plan,) = planned_tree(tmp_path, resolve_criteria("default"), context_steps=4)
    users = [user_text(p.request) for p in plan.steps]
    system = plan.steps[0].request.messages[0].content
    shared = sum(
        len(system) + (common_prefix_chars(a, b) if a else 0)
        for a, b in zip(["", *users], users, strict=False)
    )
    assert plan.shared_chars == shared
    assert plan.prompt_chars == sum(len(system) + len(u) for u in users)
    # a step shows its block's earlier steps and the whole block before it
    assert [p.context for p in plan.steps] == [
        (), (0,), (0, 1), (0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4), (0, 1, 2, 3, 4, 5),
        (0, 1, 2, 3, 4, 5, 6), (4, 5, 6, 7), (4, 5, 6, 7, 8),
    ]  # fmt: skip


@pytest.mark.parametrize("mode", ["default", "custom", "reference", "benchmark"])
def test_each_scoring_mode_plans_its_own_requests(tmp_path: Path, mode: str) -> None:
    write(tmp_path / "t.json", doc(3))
    rubric = resolve_criteria("default").rubric
    criteria = {
        "default": resolve_criteria("default"),
        "custom": resolve_criteria(
            "custom",
            {"criteria": [{"name": "a", "description": "x"}, {"name": "b", "description": "y"}]},
        ),
        "reference": Criteria(mode="reference", rubric=rubric, references={"default": "42"}),
        "benchmark": resolve_criteria("benchmark", benchmark_name="swe-bench-lite"),
    }[mode]
    (plan,) = planned_tree(tmp_path, criteria)
    assert len(plan.steps) == 3
    shape = criteria.answer_shape
    assert shape == ("scores" if mode == "custom" else "score")
    for planned in plan.steps:
        request = planned.request
        assert request.prompt_version == PROMPT_VERSION
        assert request.messages[0].content == system_prompt(criteria.rubric, shape)
        names = tuple(c.name for c in criteria.rubric.criteria)
        # one score per criterion for a custom rubric only, as the contrib provider asks
        assert request.criteria == (names if mode == "custom" else ())
        assert ("<reference>" in user_text(request)) == (mode == "reference")
    category = plan.category_request(2, 0.1)
    assert category.answer == "category"
    assert "This step scored 0.100" in user_text(category)


def test_auto_mode_asks_each_distinct_task_once_before_its_steps(tmp_path: Path) -> None:
    for index, task in enumerate(["fix the bug", "fix the bug", "write docs"]):
        document = doc(2, session_id=f"s{index}")
        document["steps"][0]["message"] = task
        write(tmp_path / f"t{index}.json", document)
    roots = list(load_trees([tmp_path]))
    figures = estimate_plan(roots, config(), resolve_criteria("auto"), lambda _: False)
    assert (figures.derivations, figures.step_calls) == (2, 6)
    request = derive_request("fix the bug")
    assert request.answer == "rubric"
    assert json.loads(user_text(request).removeprefix("<task>").removesuffix("</task>")) == (
        "fix the bug"
    )


def test_the_estimate_counts_store_hits_and_bounds_categorizations(tmp_path: Path) -> None:
    write(tmp_path / "t.json", doc(4))
    roots = list(load_trees([tmp_path]))
    criteria = resolve_criteria("default")
    first = estimate_plan(roots, config(), criteria, lambda _: False)
    stored = {p.request.key("j") for p in planned_tree(tmp_path, criteria)[0].steps[:3]}
    again = estimate_plan(roots, config(), criteria, lambda r: r.key("j") in stored)
    assert (first.step_calls, first.categorizations_at_most) == (4, 4)
    assert (again.step_calls_stored, again.calls_to_send) == (3, 1)
    assert again.input_tokens_to_send < first.input_tokens_to_send
    assert first.output_tokens_per_call_at_most == 512
