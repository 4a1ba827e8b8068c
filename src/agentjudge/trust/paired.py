"""Paired statistics of two runs over the same items: the mean of the per-item deltas, its
bootstrap interval, and a sign-flip permutation p-value for "the mean delta is 0".

The sign-flip test: under the null hypothesis each item's delta is as likely to have had the
other sign, so the observed |sum of deltas| is compared with the sums of the deltas under
random signs. Items with the same |delta| are flipped together as a Binomial(count, 1/2)
number of positives, exactly; when the distinct values are too many for that, the flipped
sum is drawn from its normal limit N(0, sum of squared deltas).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentjudge.trust.resample import MULTINOMIAL_BUDGET, binomial, ratio_interval

# flipped sums are tested against the observed one with this slack (float rounding)
_SLACK = 1e-12


@dataclass(frozen=True, slots=True)
class PairedSummary:
    """What the deltas say: their mean, its bootstrap interval and the two-sided p-value."""

    count: int
    mean_delta: float | None
    interval: tuple[float, float] | None
    p_value: float | None


def sign_flip_p_value(deltas: Sequence[float], *, seed: int = 0, flips: int = 1000) -> float | None:
    """Two-sided p-value of "mean delta = 0" by `flips` random sign flips (seeded):
    (1 + flips at least as far from 0 as observed) / (1 + flips). None without deltas."""
    if not deltas:
        return None
    observed = abs(math.fsum(deltas))
    rng = random.Random(seed)
    groups = Counter(abs(d) for d in deltas if d != 0)
    at_least = 0
    if len(groups) * flips <= MULTINOMIAL_BUDGET:
        items = sorted(groups.items())
        for _ in range(flips):
            total = math.fsum(
                size * (2 * binomial(rng, count, 0.5) - count) for size, count in items
            )
            at_least += abs(total) >= observed - _SLACK
    else:
        spread = math.sqrt(math.fsum(d * d for d in deltas))
        for _ in range(flips):
            at_least += abs(rng.gauss(0.0, spread)) >= observed - _SLACK
    return (1 + at_least) / (1 + flips)


def paired_summary(
    deltas: Sequence[float], *, seed: int = 0, resamples: int = 1000, level: float = 0.95
) -> PairedSummary:
    """The mean delta, its percentile bootstrap interval over the pairs, and the sign-flip
    p-value, all seeded with `seed`."""
    if not deltas:
        return PairedSummary(0, None, None, None)
    pairs = [(d, 1.0) for d in deltas]
    interval = ratio_interval(pairs, seed=seed, resamples=resamples, level=level)
    p_value = sign_flip_p_value(deltas, seed=seed, flips=resamples)
    return PairedSummary(len(deltas), math.fsum(deltas) / len(deltas), interval, p_value)
