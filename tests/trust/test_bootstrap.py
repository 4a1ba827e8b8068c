"""The generic percentile bootstrap: reproducible, and it covers the true mean as it says."""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence

import pytest

from agentjudge.trust.bootstrap import bootstrap_interval, percentile


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([0.0, 1.0, 2.0, 3.0, 4.0], 0.5) == 2.0
    assert percentile([0.0, 10.0], 0.25) == 2.5
    assert percentile([7.0], 0.975) == 7.0


def test_same_seed_same_interval_and_other_seed_differs() -> None:
    source = random.Random(3)
    data = [source.random() for _ in range(50)]
    first = bootstrap_interval(data, _mean, seed=7, resamples=300)
    assert first == bootstrap_interval(data, _mean, seed=7, resamples=300)
    assert first != bootstrap_interval(data, _mean, seed=8, resamples=300)
    assert first is not None
    low, high = first
    assert low < statistics.fmean(data) < high


def test_no_items_or_undefined_statistic_gives_none() -> None:
    assert bootstrap_interval([], _mean) is None
    assert bootstrap_interval([1.0, 2.0], lambda _items: None) is None


def test_constant_data_gives_a_point_interval() -> None:
    assert bootstrap_interval([0.5] * 20, _mean, resamples=50) == (0.5, 0.5)


def test_95_interval_covers_the_true_mean_in_at_least_90_of_100_collections() -> None:
    # uniform(0, 1) has mean 0.5; every collection is drawn from one seeded generator
    rng = random.Random(2026)
    covered = 0
    for index in range(100):
        collection = [rng.random() for _ in range(60)]
        interval = bootstrap_interval(collection, _mean, seed=index, resamples=400)
        assert interval is not None
        covered += interval[0] <= 0.5 <= interval[1]
    assert covered >= 90
    assert covered == pytest.approx(95, abs=5)
