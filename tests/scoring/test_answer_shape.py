"""What the judge answers per step, by scoring mode, as the eval-hub-contrib provider asks:
one `score` in every mode but `custom`, one score per criterion (`scores`) in `custom`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjudge.errors import ProtocolError
from agentjudge.judge import JudgeClient
from agentjudge.judge.answer_schema import answer_schema
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.report.results import run_parameters
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria, Rubric, resolve_criteria
from agentjudge.scoring.job import ScoringJob, load_roots
from agentjudge.scoring.plan import plan_node
from agentjudge.scoring.small_prompt import ONE_ANSWER
from agentjudge.scoring.steps import NodeSteps, StepView
from tests.atif.docs import doc, write

TWO = {
    "criteria": [
        {"name": "correct", "description": "matches the reference", "weight": 3},
        {"name": "brief", "description": "says no more than needed"},
    ]
}


def criteria_of(mode: str) -> Criteria:
    if mode == "benchmark":
        return resolve_criteria("benchmark", benchmark_name="swe-bench-lite")
    if mode == "custom":
        return resolve_criteria("custom", TWO)
    if mode == "reference":
        rubric = Rubric.model_validate({"name": "answers", **TWO})
        return Criteria(mode="reference", rubric=rubric, references={"default": "42"})
    return resolve_criteria(mode)  # type: ignore[arg-type]


def settings(judge: str = "fake", **more: Any) -> ScoreConfig:
    return ScoreConfig.model_validate({"trajectory_path": ["."], "judge": judge, **more})


def one_step(criteria: Criteria, judge: str = "fake") -> Any:
    data = {"step_id": 1, "source": "agent", "message": "done"}
    found = NodeSteps((StepView(0, 1, "agent", False, data, ()),), "task", None)
    (planned,) = plan_node(found, None, criteria.rubric, criteria, settings(judge)).steps
    return planned.request


@pytest.mark.parametrize(
    ("mode", "shape"),
    [
        ("default", "score"),
        ("auto", "score"),
        ("reference", "score"),
        ("benchmark", "score"),
        ("custom", "scores"),
    ],
)
def test_only_a_custom_rubric_is_answered_one_score_per_criterion(mode: str, shape: str) -> None:
    criteria = criteria_of(mode)
    assert criteria.answer_shape == shape
    request = one_step(criteria)
    system = request.messages[0].content
    names = tuple(c.name for c in criteria.rubric.criteria)
    assert all(f"- {name}" in system for name in names)  # the criteria are always shown
    properties = answer_schema(request)["properties"]
    if shape == "scores":
        assert request.criteria == names
        assert '"scores": {' in system
        assert list(properties) == ["reasoning", "scores"]
    else:
        assert request.criteria == ()
        assert '"scores"' not in system
        assert '{"reasoning": "<why>", "score": <0.0 to 1.0>}' in system
        assert list(properties) == ["reasoning", "score"]
    settings_ = settings(scoring_mode=mode)
    version = run_parameters(settings_, "fake", criteria)["atif_prompt_version"]
    assert version == f"agentjudge-atif-v5+{shape}"


def test_one_score_of_several_criteria_is_asked_with_their_weights() -> None:
    request = one_step(criteria_of("reference"))
    system = request.messages[0].content
    assert "- correct (weight 3): matches the reference" in system
    assert "- brief (weight 1): says no more than needed" in system
    assert "one number for the step against all the criteria above together" in system
    assert request.parse('{"reasoning": "ok", "score": 0.4}').score == 0.4
    with pytest.raises(ProtocolError):  # the contrib provider's judge gives no other shape
        request.parse('{"scores": {"correct": 0.4, "brief": 1.0}}')


def test_a_custom_rubric_of_one_criterion_is_still_answered_by_name() -> None:
    criteria = resolve_criteria("custom", {"criteria": [{"name": "helpful", "description": "x"}]})
    request = one_step(criteria)
    assert request.criteria == ("helpful",)
    assert '"scores": {"helpful": <0.0 to 1.0>}' in request.messages[0].content
    assert request.parse('{"scores": {"helpful": 0.3}}').scores == {"helpful": 0.3}
    with pytest.raises(ProtocolError):
        request.parse('{"score": 0.3}')
    # a single-score request of the same messages is another verdict in the store
    single = type(request)(request.messages, request.prompt_version)
    assert single.key("judge") != request.key("judge")


def test_the_embedded_judge_answers_one_boolean_outside_custom() -> None:
    request = one_step(criteria_of("benchmark"), judge="local")
    assert (request.answer, request.criteria, request.max_tokens) == ("binary", (), 1)
    assert request.messages[0].content.rstrip().endswith(ONE_ANSWER)
    custom = one_step(criteria_of("custom"), judge="local")
    assert custom.criteria == ("correct", "brief")
    assert answer_schema(custom)["minItems"] == 2
    version = run_parameters(settings("local"), "local", criteria_of("custom"))
    assert version["atif_prompt_version"] == "agentjudge-atif-small-v2+scores"


def judged(folder: Path, criteria: Criteria, content: dict[str, Any]) -> dict[str, Any]:
    """The one step of a one-step run scored by a judge that always answers `content`."""
    write(folder / "a.json", doc(1))
    body = json.dumps({"choices": [{"message": {"content": json.dumps(content)}}]}).encode()

    def reply(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=body)

    config = ScoreConfig.model_validate(
        {"trajectory_path": [str(folder)], "judge": "fake", "failure_threshold": 0.0}
    )
    client = JudgeClient(OpenAICompatible("http://j/v1", "m"), transport=httpx.MockTransport(reply))
    job = ScoringJob(config, criteria, client)

    async def go() -> Any:
        async with client:
            return await job.run(load_roots(config))

    result = asyncio.run(go())
    assert result.failed is None, result.failed_message
    (detail,) = result.trees[0].steps[result.trees[0].root.id]
    return {"score": detail.score, "scores": detail.scores}


def test_a_benchmark_step_is_the_one_score_and_a_custom_one_its_criteria_combined(
    tmp_path: Path,
) -> None:
    one = judged(tmp_path / "b", criteria_of("benchmark"), {"score": 0.4})
    assert one == {"score": 0.4, "scores": {}}
    each = judged(tmp_path / "c", criteria_of("custom"), {"scores": {"correct": 1.0, "brief": 0.0}})
    assert each == {"score": 0.75, "scores": {"correct": 1.0, "brief": 0.0}}  # weights 3, 1
