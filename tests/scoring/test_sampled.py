"""A step's samples: planned, combined, the majority category, the step budget's pace."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import httpx

from agentjudge.judge import JudgeClient, JudgeOutcome
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.verdict import Verdict
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import resolve_criteria
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.plan import derive_request, plan_node
from agentjudge.scoring.sampled import chunks, majority_category, mean_scores, per_step
from agentjudge.scoring.scored import JobResult
from agentjudge.scoring.steps import FileCache, node_steps
from tests.atif.docs import doc, write


def category(name: str, confidence: float, why: str = "") -> JudgeOutcome:
    return JudgeOutcome(Verdict(confidence, why, {"category": name}), None, 0, 0)


def failed() -> JudgeOutcome:
    return JudgeOutcome(None, "timeout", 0, 0)


def test_the_category_most_samples_gave_wins_with_its_mean_confidence() -> None:
    outcomes = [
        category("context_loss", 0.6, "lost it"),
        category("reasoning_failure", 0.9),
        category("context_loss", 0.8),
    ]
    majority = majority_category(outcomes)
    assert majority is not None
    assert (majority.category, majority.rationale) == ("context_loss", "lost it")
    assert majority.confidence == 0.7


def test_a_tie_goes_to_the_category_first_in_the_taxonomy_whatever_the_order() -> None:
    one = [category("reasoning_failure", 0.9), category("tool_selection_failure", 0.5)]
    for outcomes in (one, one[::-1]):
        majority = majority_category(outcomes)
        assert majority is not None
        assert majority.category == "tool_selection_failure"


def test_failed_samples_do_not_vote_and_none_answered_is_none() -> None:
    majority = majority_category([failed(), category("none", 0.4)])
    assert majority is not None
    assert (majority.category, majority.confidence) == ("none", 0.4)
    assert majority_category([failed(), failed()]) is None


def test_criteria_scores_are_averaged_per_criterion() -> None:
    a = JudgeOutcome(Verdict(0.0, "", scores={"x": 0.2, "y": 1.0}))
    b = JudgeOutcome(Verdict(0.0, "", scores={"x": 0.4, "y": 0.0}))
    assert mean_scores([a, failed(), b]) == {"x": 0.3, "y": 0.5}  # rounded past float noise


def test_chunks_and_the_pace_of_the_step_budget() -> None:
    assert chunks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]
    settled: list[int] = []
    one = per_step(lambda: settled.append(1), 3)
    for _ in range(7):
        one()
    assert settled == [1, 1]  # two steps' three samples each answered


def test_the_plan_holds_k_keyed_samples_at_the_configured_temperature(tmp_path: Path) -> None:
    write(tmp_path / "a.json", doc(3))
    config = ScoreConfig.model_validate(
        {
            "trajectory_path": [str(tmp_path)],
            "judge": "fake",
            "samples": 3,
            "judge_temperature": 0.5,
        }
    )
    criteria = resolve_criteria("default")
    (root,) = load_roots(config)
    plan = plan_node(node_steps(root, FileCache()), None, criteria.rubric, criteria, config)
    assert len(plan.steps) == 3
    for planned in plan.steps:
        assert [r.sample for r in planned.samples] == [0, 1, 2]
        assert planned.samples[0] is planned.request
        assert len({r.key("j") for r in planned.samples}) == 3
        assert {r.temperature for r in planned.samples} == {0.5}
    categories = plan.category_requests(0, 0.1)
    assert [(r.sample, r.temperature) for r in categories] == [(0, 0.5), (1, 0.5), (2, 0.5)]
    assert derive_request("task", 0.5).temperature == 0.5


def test_a_step_is_scored_from_the_samples_that_answered(tmp_path: Path) -> None:
    """The first arrival of each request body gets a verdict, every later one an unusable
    answer: of a step's 3 samples, one answers and two never do (after their retries)."""
    write(tmp_path / "a.json", doc(2))
    seen: Counter[bytes] = Counter()

    def answer(request: httpx.Request) -> httpx.Response:
        seen[request.content] += 1
        content = '{\\"score\\": 0.9}' if seen[request.content] == 1 else "no verdict"
        return httpx.Response(
            200, content=b'{"choices": [{"message": {"content": "%s"}}]}' % content.encode()
        )

    config = ScoreConfig.model_validate(
        {
            "trajectory_path": [str(tmp_path)],
            "judge": "fake",
            "samples": 3,
            "judge_retry_round_pause_seconds": 0,
        }
    )
    client = JudgeClient(
        OpenAICompatible("http://j/v1", "m"), transport=httpx.MockTransport(answer)
    )
    job = ScoringJob(config, resolve_criteria("default"), client)

    async def go() -> JobResult:
        async with client:
            return await job.run(load_roots(config))

    result = asyncio.run(go())
    assert result.failed is None
    (details,) = result.trees[0].steps.values()
    for detail in details:
        assert detail.score == 0.9
        assert detail.error is None
        assert detail.sampled is not None
        assert sorted(detail.sampled.scores, key=str) == [0.9, None, None]
        assert (detail.sampled.spread, detail.sampled.unstable) == (0.0, False)


def test_a_categorized_step_keeps_each_samples_category(tmp_path: Path) -> None:
    """Every step scores 0.2 (under the threshold); the categorization samples name two
    categories: the step keeps the majority and each sample's category, and its results
    record lists them (the review page's `category_disagreement` part reads them)."""
    import json

    from agentjudge.report.results import step_record

    write(tmp_path / "a.json", doc(2))
    asked: Counter[str] = Counter()

    def answer(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        if body["response_format"]["json_schema"]["name"] == "failure_category":
            asked["category"] += 1
            name = "context_loss" if asked["category"] % 3 else "reasoning_failure"
            content = json.dumps({"rationale": "r", "category": name, "confidence": 0.7})
        else:
            content = json.dumps({"reasoning": "r", "score": 0.2})
        message = {"choices": [{"message": {"content": content}}]}
        return httpx.Response(200, json=message)

    config = ScoreConfig.model_validate(
        {"trajectory_path": [str(tmp_path)], "judge": "fake", "samples": 3}
    )
    client = JudgeClient(
        OpenAICompatible("http://j/v1", "m"), transport=httpx.MockTransport(answer)
    )
    job = ScoringJob(config, resolve_criteria("default"), client)

    async def go() -> JobResult:
        async with client:
            return await job.run(load_roots(config))

    result = asyncio.run(go())
    (details,) = result.trees[0].steps.values()
    votes = [detail.sample_categories for detail in details]
    assert all(len(v) == 3 for v in votes)
    assert Counter(c for v in votes for c in v) == {"context_loss": 4, "reasoning_failure": 2}
    for detail in details:
        assert detail.category == Counter(detail.sample_categories).most_common(1)[0][0]
        assert step_record(detail)["sample_categories"] == list(detail.sample_categories)
