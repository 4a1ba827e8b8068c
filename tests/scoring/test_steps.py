"""What of a step the judge sees (scoring/steps.py `render`)."""

from __future__ import annotations

import json

from agentjudge.atif.models import Step
from agentjudge.scoring.steps import STEP_CHARS, StepCut, cut_text, fair_share, render


def test_a_named_speaker_is_shown_to_the_judge() -> None:
    step = Step.model_validate(
        {"step_id": 3, "source": "agent", "message": "done", "extra": {"agent_name": "WebSurfer"}}
    )
    assert render(step) == (
        {
            "step_id": 3,
            "source": "agent",
            "agent": "WebSurfer",
            "message": "done",
        },
        None,
    )


def test_without_a_speaker_the_step_renders_as_before() -> None:
    for extra in (None, {"agent_name": ""}, {"agent_name": 7}):
        step = Step.model_validate(
            {"step_id": 1, "source": "agent", "message": "hi", "extra": extra}
        )
        assert render(step) == ({"step_id": 1, "source": "agent", "message": "hi"}, None)


# The example: an agent's worst action after pages of its own output.
LOG = "".join(
    f"2026-12-03 10:{i // 60:02d}:{i % 60:02d} INFO sync batch {i} ok\n" for i in range(50)
)
COMMAND = "DROP DATABASE production; rm -rf /srv/backups"


def test_a_step_within_the_budget_is_shown_whole() -> None:
    message = LOG + COMMAND
    assert 1_800 < len(message) < STEP_CHARS  # once cut at 1,500 characters, the command unseen
    step = Step.model_validate({"step_id": 4, "source": "agent", "message": message})
    data, cut = render(step)
    assert data["message"] == message
    assert cut is None


def test_a_step_over_the_budget_keeps_its_start_and_its_end_and_says_what_it_cut() -> None:
    message = LOG * 20 + COMMAND
    step = Step.model_validate({"step_id": 4, "source": "agent", "message": message})
    data, cut = render(step, budget=6_000)
    shown = data["message"]
    assert shown.startswith(LOG[:2_000])
    assert shown.endswith(LOG[-900:] + COMMAND)
    hidden = len(message) - 6_000
    assert f"cut for length: {hidden:,} of {len(message):,} characters not shown" in shown
    assert "shown are the first 3,000 and the last 3,000" in shown
    assert cut == StepCut(6_000, hidden)


def test_the_longest_texts_of_a_step_share_its_budget_and_the_short_ones_stay_whole() -> None:
    step = Step.model_validate(
        {
            "step_id": 2,
            "source": "agent",
            "message": "Cleaning up.",
            "reasoning_content": "r" * 5_000,
            "tool_calls": [
                {"tool_call_id": "c", "function_name": "bash", "arguments": {"cmd": COMMAND}}
            ],
            "observation": {"results": [{"content": "o" * 9_000}, {"content": "done"}]},
        }
    )
    data, cut = render(step, budget=4_000)
    assert data["message"] == "Cleaning up."
    assert data["tool_calls"] == [{"name": "bash", "arguments": {"cmd": COMMAND}}]
    assert data["observation"][1] == "done"
    short = len("Cleaning up.") + len(json.dumps({"cmd": COMMAND})) + len("done")
    share = (4_000 - short) // 2
    assert data["reasoning"].startswith("r" * (share - share // 2) + "\n[… cut")
    assert data["observation"][0].endswith("…]\n" + "o" * (share // 2))
    assert cut == StepCut(short + 2 * share, 5_000 + 9_000 - 2 * share)


def test_fair_share() -> None:
    assert fair_share([10, 20], 100) == 20  # all fit: nothing is cut
    assert fair_share([10, 50, 90], 100) == 45
    assert fair_share([], 100) == 0
    assert fair_share([5, 5, 5], 0) == 0


def test_cut_text_keeps_a_text_that_fits_as_it_is() -> None:
    assert cut_text("abc", 3) == "abc"
    assert cut_text("abcdef", 4).startswith("ab\n[… cut for length: 2 of 6 characters")
    assert cut_text("abcdef", 4).endswith("…]\nef")


def test_an_audio_part_is_shown_as_its_length_and_an_image_by_its_path() -> None:
    step = Step.model_validate(
        {
            "step_id": 1,
            "source": "user",
            "message": [
                {"type": "text", "text": "Listen."},
                {"type": "image", "source": {"media_type": "image/png", "path": "card.png"}},
                {
                    "type": "audio",
                    "source": {"media_type": "audio/wav", "path": "a.wav", "duration_sec": 1.5},
                },
                {"type": "audio", "source": {"media_type": "audio/mpeg", "path": "b.mp3"}},
            ],
        }
    )
    data, _ = render(step)
    assert data["message"] == "Listen.\n[image: card.png]\n[audio, 1.5 s]\n[audio]"
