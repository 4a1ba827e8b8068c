"""What of a step the judge sees (scoring/steps.py `render`)."""

from __future__ import annotations

from agentjudge.atif.models import Step
from agentjudge.scoring.steps import render


def test_a_named_speaker_is_shown_to_the_judge() -> None:
    step = Step.model_validate(
        {"step_id": 3, "source": "agent", "message": "done", "extra": {"agent_name": "WebSurfer"}}
    )
    assert render(step) == {
        "step_id": 3,
        "source": "agent",
        "agent": "WebSurfer",
        "message": "done",
    }


def test_without_a_speaker_the_step_renders_as_before() -> None:
    for extra in (None, {"agent_name": ""}, {"agent_name": 7}):
        step = Step.model_validate(
            {"step_id": 1, "source": "agent", "message": "hi", "extra": extra}
        )
        assert render(step) == {"step_id": 1, "source": "agent", "message": "hi"}
