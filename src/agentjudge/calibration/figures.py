"""The judge's agreement with human labels, each figure with the counts behind it and a
bootstrap interval over labelled trajectories (pure: `agreements` in, a document out)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentjudge.calibration.matching import TrajectoryAgreement
from agentjudge.judge.taxonomy import FAILURES
from agentjudge.results.score import DecisiveFailureRecord
from agentjudge.trust.agreement import (
    ClassScores,
    accuracy,
    class_scores,
    cohen_kappa,
    macro_f1,
)
from agentjudge.trust.bootstrap import bootstrap_interval

CALIBRATION_SCHEMA = "agentjudge.calibration/v1"
LEVEL = 0.95
RESAMPLES = 1000
SEED = 0

Statistic = Callable[[Sequence[TrajectoryAgreement]], float | None]


def _steps(items: Sequence[TrajectoryAgreement]) -> list[tuple[bool, bool]]:
    return [pair for item in items for pair in item.steps]


def _categories(items: Sequence[TrajectoryAgreement]) -> list[tuple[str, str]]:
    return [pair for item in items for pair in item.categories]


def _hits(attribute: str) -> Statistic:
    def rate(items: Sequence[TrajectoryAgreement]) -> float | None:
        marks = [getattr(i, attribute) for i in items if getattr(i, attribute) is not None]
        return sum(marks) / len(marks) if marks else None

    return rate


def step_accuracy(items: Sequence[TrajectoryAgreement]) -> float | None:
    """Labelled steps whose judged pass/fail matches the label, over those judged."""
    return accuracy(_steps(items))


def step_kappa(items: Sequence[TrajectoryAgreement]) -> float | None:
    """Cohen's kappa of the labelled and judged pass/fail of steps."""
    return cohen_kappa(_steps(items))


def outcome_accuracy(items: Sequence[TrajectoryAgreement]) -> float | None:
    """Roots whose judged pass/fail matches the labelled outcome."""
    return accuracy([i.outcome for i in items if i.outcome is not None])


def category_f1(items: Sequence[TrajectoryAgreement]) -> float | None:
    """Macro F1 over the failure categories labelled or judged on category-labelled steps."""
    pairs = _categories(items)
    return macro_f1(class_scores(pairs, name) for name in FAILURES)


FIGURES: dict[str, Statistic] = {
    "step_accuracy": step_accuracy,
    "kappa": step_kappa,
    "category_macro_f1": category_f1,
    "decisive_step_accuracy": _hits("decisive_step"),
    "agent_accuracy": _hits("decisive_agent"),
    "outcome_accuracy": outcome_accuracy,
}


def _interval(items: list[TrajectoryAgreement], statistic: Statistic) -> list[float] | None:
    bounds = bootstrap_interval(items, statistic, seed=SEED, resamples=RESAMPLES, level=LEVEL)
    return None if bounds is None else [round(bounds[0], 6), round(bounds[1], 6)]


def _counts(items: list[TrajectoryAgreement]) -> dict[str, dict[str, int]]:
    """The numbers each figure is computed from."""
    steps = _steps(items)
    outcomes = [i.outcome for i in items if i.outcome is not None]

    def marks(attribute: str) -> dict[str, int]:
        labelled = [i for i in items if getattr(i, attribute) is not None]
        return {
            "labelled": len(labelled),
            "correct": sum(1 for i in labelled if getattr(i, attribute)),
            "no_prediction": sum(1 for i in labelled if i.predicted is None),
        }

    confusion = {
        "labelled_pass_judged_pass": sum(1 for s in steps if s == (True, True)),
        "labelled_pass_judged_fail": sum(1 for s in steps if s == (True, False)),
        "labelled_fail_judged_pass": sum(1 for s in steps if s == (False, True)),
        "labelled_fail_judged_fail": sum(1 for s in steps if s == (False, False)),
    }
    agree = confusion["labelled_pass_judged_pass"] + confusion["labelled_fail_judged_fail"]
    return {
        "step_accuracy": {"steps": len(steps), "agree": agree},
        "kappa": {"steps": len(steps), **confusion},
        "category_macro_f1": {"steps": len(_categories(items))},
        "decisive_step_accuracy": marks("decisive_step"),
        "agent_accuracy": marks("decisive_agent"),
        "outcome_accuracy": {
            "labelled": len(outcomes),
            "correct": sum(1 for label, judged in outcomes if label == judged),
        },
    }


def _class(scores: ClassScores) -> dict[str, Any]:
    return {
        "true_positives": scores.true_positives,
        "false_positives": scores.false_positives,
        "false_negatives": scores.false_negatives,
        "precision": scores.precision,
        "recall": scores.recall,
        "f1": scores.f1,
    }


def calibration_document(items: list[TrajectoryAgreement]) -> dict[str, Any]:
    """Every figure (value, interval, counts), the per-category scores and per-trajectory
    outcomes of `items`. Intervals: percentile bootstrap over trajectories, seeded."""
    counts = _counts(items)
    figures = {
        name: {
            "value": statistic(items),
            "interval": _interval(items, statistic),
            **counts[name],
        }
        for name, statistic in FIGURES.items()
    }
    pairs = _categories(items)
    return {
        "schema": CALIBRATION_SCHEMA,
        "trajectories": len(items),
        "unscored_steps": sum(i.unscored_steps for i in items),
        "figures": figures,
        "categories": {name: _class(class_scores(pairs, name)) for name in FAILURES},
        "interval": {"level": LEVEL, "resamples": RESAMPLES, "seed": SEED, "over": "trajectories"},
        "per_trajectory": [
            {
                "trajectory": i.name,
                "steps": len(i.steps),
                "agree": sum(1 for label, judged in i.steps if label == judged),
                "unscored_steps": i.unscored_steps,
                "decisive_step": i.decisive_step,
                "decisive_agent": i.decisive_agent,
                "predicted": _brief(i.predicted),
            }
            for i in items
        ],
    }


def _brief(predicted: DecisiveFailureRecord | None) -> dict[str, Any] | None:
    """The judge's decisive failure without its reason (the results file keeps that)."""
    if predicted is None:
        return None
    p = predicted
    return {
        "node_id": p["node_id"],
        "step_id": p["step_id"],
        "agent": p["agent"],
        "rule": p["rule"],
    }
