"""The scripted judge's `[[samples=...]]` marker: repeated identical requests, scripted."""

from __future__ import annotations

from agentjudge.testing.scripted import expected_score


def test_the_nth_arrival_gets_the_nth_value_cycling() -> None:
    text = "a step [[samples=0.2,0.9,0.5]]"
    assert [expected_score(text, arrival=n) for n in range(1, 8)] == [
        0.2, 0.9, 0.5, 0.2, 0.9, 0.5, 0.2,
    ]  # fmt: skip


def test_the_last_marker_counts_a_step_comes_after_its_context() -> None:
    context_then_step = "context: [[samples=0.2,0.9]] step: [[score=0.7]]"
    assert [expected_score(context_then_step, arrival=n) for n in (1, 2)] == [0.7, 0.7]
    score_then_samples = "context: [[score=0.7]] step: [[samples=0.1,0.3]]"
    assert [expected_score(score_then_samples, arrival=n) for n in (1, 2)] == [0.1, 0.3]


def test_a_judge_on_a_scale_gets_the_values_as_written() -> None:
    assert expected_score("reply [[samples=2,5]]", 5.0, arrival=2) == 5.0
