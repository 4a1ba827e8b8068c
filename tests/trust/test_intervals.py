"""The run intervals: the overall score recomputed exactly per mode, pass rates by binomial."""

from __future__ import annotations

import random

import pytest

from agentjudge.scoring.aggregate import (
    AggregationMode,
    NodeAggregate,
    NodeStatus,
    collection_metrics,
)
from agentjudge.scoring.score_interval import overall_score_interval, root_terms
from agentjudge.trust.intervals import Bootstrap, interval_record, rate_interval, with_interval
from agentjudge.trust.resample import binomial, proportion_interval, ratio_interval

MODES: tuple[AggregationMode, ...] = ("flat", "hierarchical", "separate")


def _node(node_id: str, parent: str | None, own: float | None, steps: int) -> NodeAggregate:
    status: NodeStatus = "scored" if own is not None else "failed"
    return NodeAggregate(
        node_id, parent, 0 if parent is None else 1, status, None,
        own, steps if own is not None else 0, own, steps, True, True, 0, True,
    )  # fmt: skip


def _trees(seed: int, count: int) -> list[list[NodeAggregate]]:
    """Root trees with 0-2 children, some failed roots, some failed children."""
    rng = random.Random(seed)
    trees = []
    for index in range(count):
        root_score = None if rng.random() < 0.1 else rng.random()
        tree = [_node(f"r{index}", None, root_score, rng.randint(1, 5))]
        for child in range(rng.randint(0, 2)):
            score = None if rng.random() < 0.2 else rng.random()
            tree.append(_node(f"r{index}c{child}", f"r{index}", score, rng.randint(1, 4)))
        trees.append(tree)
    return trees


@pytest.mark.parametrize("mode", MODES)
def test_root_terms_recompute_the_collection_metric_exactly(mode: AggregationMode) -> None:
    trees = _trees(1, 40)
    for subset in (trees, trees[:7], trees[5:6] * 3 + trees[20:30]):
        terms = [root_terms(tree, mode) for tree in subset]
        expected = collection_metrics(subset, mode).overall_score
        assert expected is not None
        assert sum(t[0] for t in terms) / sum(t[1] for t in terms) == pytest.approx(expected)


@pytest.mark.parametrize("mode", MODES)
def test_overall_interval_is_seeded_and_brackets_the_score(mode: AggregationMode) -> None:
    trees = _trees(2, 200)
    overall = collection_metrics(trees, mode).overall_score
    assert overall is not None
    first = overall_score_interval(trees, mode, Bootstrap(seed=3))
    assert first == overall_score_interval(trees, mode, Bootstrap(seed=3))
    assert first != overall_score_interval(trees, mode, Bootstrap(seed=4))
    assert first is not None
    assert first[0] < overall < first[1]
    assert first[1] - first[0] < 0.2


def test_no_scored_root_has_no_interval() -> None:
    failed = [[_node("r", None, None, 2)]]
    assert overall_score_interval(failed, "flat", Bootstrap()) is None
    assert overall_score_interval([], "hierarchical", Bootstrap()) is None


@pytest.mark.parametrize("paths", ["multinomial", "items", "normal"])
def test_every_ratio_path_covers_the_true_mean_in_90_of_100_collections(
    paths: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the ratio interval takes the draws one of three ways, by size; force each in turn
    from agentjudge.trust import resample

    budgets = {"multinomial": (10**9, 0), "items": (0, 10**9), "normal": (0, 0)}[paths]
    monkeypatch.setattr(resample, "MULTINOMIAL_BUDGET", budgets[0])
    monkeypatch.setattr(resample, "EXACT_BUDGET", budgets[1])
    rng = random.Random(99)
    covered = 0
    # one binomial per distinct root per resample: keep them few on that path (test time)
    most_steps = 1 if paths == "multinomial" else 3
    for index in range(100):
        # scores from {0, 0.25, ..., 1} uniformly (mean 0.5), 1-3 steps per root
        pairs = []
        for _ in range(80):
            steps = rng.randint(1, most_steps)
            pairs.append((sum(rng.randrange(5) / 4 for _ in range(steps)), float(steps)))
        bounds = ratio_interval(pairs, seed=index, resamples=300)
        assert bounds is not None
        covered += bounds[0] <= 0.5 <= bounds[1]
    assert covered >= 90


def test_binomial_draws_have_the_right_mean_and_variance() -> None:
    rng = random.Random(5)
    for n, p in ((10, 0.3), (1000, 0.7), (100_000, 0.01)):
        draws = [binomial(rng, n, p) for _ in range(3000)]
        mean = sum(draws) / len(draws)
        variance = sum((d - mean) ** 2 for d in draws) / (len(draws) - 1)
        assert mean == pytest.approx(n * p, rel=0.03)
        assert variance == pytest.approx(n * p * (1 - p), rel=0.1)
    assert (binomial(rng, 5, 0.0), binomial(rng, 5, 1.0), binomial(rng, 0, 0.5)) == (0, 5, 0)


def test_pass_rate_interval_covers_the_true_rate_in_90_of_100_runs() -> None:
    rng = random.Random(8)
    covered = 0
    for index in range(100):
        passed = sum(rng.random() < 0.8 for _ in range(150))
        bounds = rate_interval(passed, 150, Bootstrap(seed=index, resamples=400))
        assert bounds is not None
        covered += bounds[0] <= 0.8 <= bounds[1]
    assert covered >= 90
    assert proportion_interval(0, 0) is None
    assert proportion_interval(20, 20, resamples=50) == (1.0, 1.0)


def test_the_record_and_the_console_text() -> None:
    record = interval_record({"a": (0.123456789, 0.5), "b": None}, Bootstrap(seed=7))
    assert record == {
        "a": [0.123457, 0.5], "b": None, "level": 0.95, "resamples": 1000, "seed": 7,
    }  # fmt: skip
    assert with_interval(0.71, [0.64, 0.78]) == "0.7100 (95% CI 0.6400\u20130.7800)"
    assert with_interval(0.71, None) == "0.7100"
