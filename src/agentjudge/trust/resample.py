"""Fast bootstrap draws for the two statistics the runs report: a ratio of per-item sums
(`atif_overall_score`) and a proportion (pass rates).

A resample of n items is summarised by how many times each distinct item was drawn, a
Multinomial(n, counts/n) draw: it is taken exactly, one binomial per distinct item, so a
proportion costs one Binomial(n, p) per resample. Only when both the distinct items and the
items themselves are too many for that (see the budgets below) are the resampled
sums taken from their normal limit (the bivariate normal with the sample's covariance, which
the bootstrap's sums converge to; at that size the two intervals agree to about 1e-3).
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence

from agentjudge.trust.bootstrap import interval_from_draws

# binomial draws (distinct items x resamples) a ratio interval takes exactly at most
MULTINOMIAL_BUDGET = 25_000
# item draws (items x resamples) it takes one by one at most, before the normal limit
EXACT_BUDGET = 2_000_000
_SMALL_BINOMIAL = 24


def binomial(rng: random.Random, n: int, p: float) -> int:
    """One Binomial(n, p) draw: `random.binomialvariate` where Python has it (3.12+), else
    Knuth's exact recursion through a Beta draw on the order statistics (O(log n) steps)."""
    if n <= 0 or p <= 0.0:
        return 0
    if p >= 1.0:
        return n
    native = getattr(rng, "binomialvariate", None)
    if native is not None:
        return int(native(n, p))
    successes = 0
    while n > _SMALL_BINOMIAL:
        # the a-th smallest of n uniforms is Beta(a, n + 1 - a): split the trials around it
        a = 1 + n // 2
        b = n + 1 - a
        x = rng.betavariate(a, b)
        if x >= p:
            n, p = a - 1, p / x
        else:
            successes += a
            n, p = b - 1, (p - x) / (1.0 - x)
    return successes + sum(rng.random() < p for _ in range(n))


def proportion_interval(
    successes: int, total: int, *, seed: int = 0, resamples: int = 1000, level: float = 0.95
) -> tuple[float, float] | None:
    """Bootstrap interval of successes/total over the items: resampling n items with
    replacement draws Binomial(total, successes/total) successes, exactly. None if no items."""
    if total <= 0:
        return None
    rng = random.Random(seed)
    p = successes / total
    return interval_from_draws([binomial(rng, total, p) / total for _ in range(resamples)], level)


def ratio_interval(
    pairs: Sequence[tuple[float, float]],
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """Bootstrap interval of sum(numerators)/sum(denominators) over items given as
    (numerator, denominator) pairs, resampling the items. Resamples whose denominators sum
    to 0 are left out; None when there are no items or the ratio is undefined on them."""
    if not pairs or sum(d for _, d in pairs) <= 0:
        return None
    rng = random.Random(seed)
    distinct = Counter(pairs)
    n = len(pairs)
    if len(distinct) * resamples <= MULTINOMIAL_BUDGET:
        draws = _multinomial_draws(rng, distinct, n, resamples)
    elif n * resamples <= EXACT_BUDGET:
        draws = _item_draws(rng, pairs, resamples)
    else:
        draws = _normal_limit_draws(rng, pairs, resamples)
    return interval_from_draws(draws, level)


def _multinomial_draws(
    rng: random.Random, distinct: Counter[tuple[float, float]], n: int, resamples: int
) -> list[float]:
    items = sorted(distinct.items())
    draws = []
    for _ in range(resamples):
        left, mass_left = n, float(n)
        top = bottom = 0.0
        for (numerator, denominator), count in items:
            if left == 0:
                break
            drawn = left if count >= mass_left else binomial(rng, left, count / mass_left)
            left -= drawn
            mass_left -= count
            top += drawn * numerator
            bottom += drawn * denominator
        if bottom > 0:
            draws.append(top / bottom)
    return draws


def _item_draws(
    rng: random.Random, pairs: Sequence[tuple[float, float]], resamples: int
) -> list[float]:
    numerators = [p[0] for p in pairs]
    denominators = [p[1] for p in pairs]
    draws = []
    for _ in range(resamples):
        chosen = rng.choices(range(len(pairs)), k=len(pairs))
        bottom = sum(map(denominators.__getitem__, chosen))
        if bottom > 0:
            draws.append(sum(map(numerators.__getitem__, chosen)) / bottom)
    return draws


def _normal_limit_draws(
    rng: random.Random, pairs: Sequence[tuple[float, float]], resamples: int
) -> list[float]:
    n = len(pairs)
    mean_x = math.fsum(p[0] for p in pairs) / n
    mean_d = math.fsum(p[1] for p in pairs) / n
    var_x = math.fsum((p[0] - mean_x) ** 2 for p in pairs) / n
    var_d = math.fsum((p[1] - mean_d) ** 2 for p in pairs) / n
    cov = math.fsum((p[0] - mean_x) * (p[1] - mean_d) for p in pairs) / n
    # the sums of a resample: mean n*mean, covariance n*(sample covariance); 2x2 Cholesky
    a = math.sqrt(var_x)
    b = cov / a if a > 0 else 0.0
    c = math.sqrt(max(var_d - b * b, 0.0))
    root_n = math.sqrt(n)
    draws = []
    for _ in range(resamples):
        z1, z2 = rng.gauss(), rng.gauss()
        top = n * mean_x + root_n * a * z1
        bottom = n * mean_d + root_n * (b * z1 + c * z2)
        if bottom > 0:
            draws.append(top / bottom)
    return draws
