"""A step's samples combined: the majority category, the step budget's pace."""

from __future__ import annotations

from agentjudge.judge import JudgeOutcome
from agentjudge.judge.verdict import Verdict
from agentjudge.scoring.sampled import chunks, majority_category, mean_scores, per_step


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
    assert mean_scores([a, failed(), b]) == {"x": 0.30000000000000004, "y": 0.5}


def test_chunks_and_the_pace_of_the_step_budget() -> None:
    assert chunks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]
    settled: list[int] = []
    one = per_step(lambda: settled.append(1), 3)
    for _ in range(7):
        one()
    assert settled == [1, 1]  # two steps' three samples each answered
