"""The scripted judge told to answer as the eval-hub-contrib provider asks (`contrib`)."""

from __future__ import annotations

import pytest

from agentjudge.scoring.criteria import AnswerShape, Rubric, resolve_criteria
from agentjudge.scoring.prompts import system_prompt
from agentjudge.testing.scripted import Prompt, answer

CUSTOM = {
    "criteria": [{"name": "helpful", "description": "x"}, {"name": "safe", "description": "y"}]
}
SHAPES: list[AnswerShape] = ["score", "scores"]


def reply(system: str, step: str, contrib: bool = True) -> dict[str, object] | None:
    prompt = Prompt([{"role": "system", "content": system}, {"role": "user", "content": step}], "j")
    return answer(prompt, None, contrib=contrib).verdict


@pytest.mark.parametrize("shape", SHAPES)
def test_a_benchmark_or_reference_job_gets_one_score_whatever_it_asks(shape: AnswerShape) -> None:
    benchmark = resolve_criteria("benchmark", benchmark_name="terminal-bench").rubric
    step = '<task>"t"</task>\n<step>"s [[score=0.3]]"</step>'
    assert reply(system_prompt(benchmark, shape), step) == {
        "reasoning": "scripted verdict",
        "score": 0.3,
    }
    custom = Rubric.model_validate(CUSTOM)
    referenced = '<task>"t"</task>\n<reference>"42"</reference>\n<step>"s [[score=0.3]]"</step>'
    assert reply(system_prompt(custom, shape), referenced) == {
        "reasoning": "scripted verdict",
        "score": 0.3,
    }


@pytest.mark.parametrize("shape", SHAPES)
def test_a_custom_rubric_gets_one_score_per_criterion_whatever_it_asks(shape: AnswerShape) -> None:
    system = system_prompt(Rubric.model_validate(CUSTOM), shape)
    step = '<task>"t"</task>\n<step>"s [[score=0.3]] [[score.safe=1.0]]"</step>'
    assert reply(system, step) == {
        "reasoning": "scripted verdict",
        "scores": {"helpful": 0.3, "safe": 1.0},
    }
    # told nothing, it answers what is asked
    asked = reply(system, step, contrib=False)
    assert asked is not None
    assert ("scores" in asked) == (shape == "scores")


def test_the_default_rubric_gets_one_score() -> None:
    system = system_prompt(resolve_criteria("default").rubric, "scores")
    assert reply(system, '<step>"[[score=0.6]]"</step>') == {
        "reasoning": "scripted verdict",
        "score": 0.6,
    }
