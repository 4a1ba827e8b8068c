"""Percentile bootstrap intervals: resample the items a metric is computed over, recompute it."""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile (0 <= q <= 1) of sorted values, interpolated linearly between ranks."""
    if not sorted_values:
        raise ValueError("percentile of no values")
    position = q * (len(sorted_values) - 1)
    low = math.floor(position)
    high = min(low + 1, len(sorted_values) - 1)
    fraction = position - low
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * fraction


def interval_from_draws(draws: Sequence[float], level: float) -> tuple[float, float] | None:
    """The central `level` interval of bootstrap draws (two tail percentiles); None if none."""
    if not draws:
        return None
    ordered = sorted(draws)
    tail = (1.0 - level) / 2.0
    return percentile(ordered, tail), percentile(ordered, 1.0 - tail)


def bootstrap_interval(
    items: Sequence[T],
    statistic: Callable[[Sequence[T]], float | None],
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Percentile bootstrap interval of `statistic` over `items`.

    Draws `resamples` samples of len(items) items with replacement from `random.Random(seed)`,
    recomputes the statistic on each and returns its (1-level)/2 and 1-(1-level)/2 percentiles.
    None when there are no items or the statistic is undefined (None) on the data; resamples on
    which it is undefined are left out of the percentiles.
    """
    if not items or statistic(items) is None:
        return None
    rng = random.Random(seed)
    n = len(items)
    draws: list[float] = []
    for _ in range(resamples):
        value = statistic(rng.choices(items, k=n))
        if value is not None:
            draws.append(value)
    return interval_from_draws(draws, level)
