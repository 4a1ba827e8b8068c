"""A step's repeated samples (`samples` K > 1), combined into what the results report.

The step's score is the mean of its samples' scores (a `scores` answer, one per criterion:
each sample's are combined by the rubric first). A sample without a verdict (judge error,
unusable answer) is recorded as null and left out: never a 0. The step is scored from the
samples that answered, and fails as a one-sample step does only when none did.
Categorization is sampled too: the category most samples gave wins (a tie goes to the
category first in the taxonomy), its confidence is the mean of the winners' confidences.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from agentjudge.judge import JudgeOutcome
from agentjudge.judge.samples import sample_mean
from agentjudge.judge.taxonomy import CATEGORIES
from agentjudge.scoring.criteria import AnswerShape, Rubric

T = TypeVar("T")


def chunks(items: Sequence[T], size: int) -> list[Sequence[T]]:
    """`items` cut into consecutive runs of `size` (a step's samples, in plan order)."""
    return [items[i : i + size] for i in range(0, len(items), size)]


def per_step(settle: Callable[[], None], samples: int) -> Callable[[], None]:
    """A callback called once per answered sample that calls `settle` once per `samples`
    of them: the step budget counts steps, not calls."""
    answered = 0

    def one() -> None:
        nonlocal answered
        answered += 1
        if answered % samples == 0:
            settle()

    return one


def mean_scores(outcomes: Sequence[JudgeOutcome]) -> dict[str, float]:
    """Per criterion, the mean of the answered samples' scores ({} for a single score)."""
    per: dict[str, list[float]] = {}
    for outcome in outcomes:
        if outcome.verdict is not None:
            for name, value in outcome.verdict.scores.items():
                per.setdefault(name, []).append(value)
    return {name: sample_mean(values) for name, values in per.items()}


@dataclass(frozen=True, slots=True)
class Majority:
    """The category most samples gave, with the mean confidence and first rationale of
    the samples that gave it."""

    category: str
    confidence: float
    rationale: str
    votes: tuple[str, ...]  # each answered sample's category, in the samples' order


def majority_category(outcomes: Sequence[JudgeOutcome]) -> Majority | None:
    """The majority category of the answered samples (None when none answered); a tie
    goes to the category listed first in the taxonomy, so the result never depends on
    which sample arrived first."""
    answered = [o.verdict for o in outcomes if o.verdict is not None]
    if not answered:
        return None
    named = tuple(str(v.fields["category"]) for v in answered)
    votes = Counter(named)
    order = {name: i for i, name in enumerate(CATEGORIES)}
    winner = min(votes, key=lambda name: (-votes[name], order.get(name, len(order))))
    winners = [v for v in answered if v.fields["category"] == winner]
    confidence = sample_mean(v.score for v in winners)
    return Majority(winner, confidence, winners[0].reasoning, named)


def sample_score(outcome: JudgeOutcome, rubric: Rubric, shape: AnswerShape) -> float | None:
    """One sample's step score: for the `scores` shape, its criteria combined by the
    rubric's aggregation; else the one score the judge gave."""
    if outcome.verdict is None:
        return None
    return rubric.combine(outcome.verdict.scores) if shape == "scores" else outcome.verdict.score
