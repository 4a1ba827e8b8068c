"""The bootstrap intervals a run reports: `atif_overall_score` over roots (score) and pass
rates over cases (grade), with the parameters that make them reproducible."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentjudge.scoring.aggregate import AggregationMode, NodeAggregate
from agentjudge.trust.resample import proportion_interval, ratio_interval

LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """How intervals are drawn: the seed and the number of resamples (recorded in results)."""

    seed: int = 0
    resamples: int = 1000
    level: float = LEVEL


def root_terms(tree: Sequence[NodeAggregate], mode: AggregationMode) -> tuple[float, float]:
    """One root tree's share of `collection_metrics`' overall score, as (sum of values,
    number of values): the overall score of any set of trees is the ratio of their sums."""
    root = tree[0]
    if root.status != "scored":
        return 0.0, 0.0
    if mode == "flat":
        own = [a.own_score for a in tree if a.status == "scored" and a.own_score is not None]
        return sum(own), float(len(own))
    value = root.aggregate if mode == "hierarchical" else root.own_score
    return (0.0, 0.0) if value is None else (value, 1.0)


def overall_score_interval(
    trees: Sequence[Sequence[NodeAggregate]], mode: AggregationMode, bootstrap: Bootstrap
) -> tuple[float, float] | None:
    """Bootstrap interval of `atif_overall_score`, resampling root trees with replacement."""
    pairs = [root_terms(tree, mode) for tree in trees]
    return ratio_interval(
        pairs, seed=bootstrap.seed, resamples=bootstrap.resamples, level=bootstrap.level
    )


def rate_interval(passed: int, total: int, bootstrap: Bootstrap) -> tuple[float, float] | None:
    """Bootstrap interval of a pass rate, resampling the cases with replacement."""
    return proportion_interval(
        passed, total, seed=bootstrap.seed, resamples=bootstrap.resamples, level=bootstrap.level
    )


def interval_record(
    intervals: dict[str, tuple[float, float] | None], bootstrap: Bootstrap
) -> dict[str, Any]:
    """The results' `metrics_interval`: [low, high] per metric (null when undefined), and the
    level, resamples and seed they were drawn with."""
    record: dict[str, Any] = {
        name: None if bounds is None else [round(bounds[0], 6), round(bounds[1], 6)]
        for name, bounds in intervals.items()
    }
    record.update(level=bootstrap.level, resamples=bootstrap.resamples, seed=bootstrap.seed)
    return record


def with_interval(value: float, bounds: Any, spec: str = ".4f") -> str:
    """A metric as the consoles print it: `0.7100 (95% CI 0.6400\u20130.7800)`, an en dash
    between the bounds."""
    if not isinstance(bounds, list) or len(bounds) != 2:
        return format(value, spec)
    return f"{value:{spec}} (95% CI {bounds[0]:{spec}}\u2013{bounds[1]:{spec}})"
