"""The bootstrap interval of `atif_overall_score`: root trees resampled with replacement and
the collection score recomputed exactly as `collection_metrics` defines it per mode."""

from __future__ import annotations

from collections.abc import Sequence

from agentjudge.scoring.aggregate import AggregationMode, NodeAggregate
from agentjudge.trust.intervals import Bootstrap
from agentjudge.trust.resample import ratio_interval


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
