"""The order in which a person reviews items: where a human look is worth most first, then
a seeded random sample of the rest, so agreement is not only measured on hard cases (pure).

Each item belongs to one part, the first it qualifies for: `unstable` (its samples fall on
both sides of the threshold), `near_threshold` (its score within `NEAR` of the scale's
width of the threshold), `decisive` (the decisive step of a failed root),
`category_disagreement` (its samples gave more than one category), else `random`. Inside
each part the order is a seeded shuffle: a part's first n items are then a uniform sample
of it, which is what lets `calibrate` weight each part by its size (docs/calibration.md).
Items the judge gave no score come last: there is nothing to agree with."""

from __future__ import annotations

import random
from collections.abc import Sequence

from agentjudge.calibration.labels import PARTS, Part
from agentjudge.review.items import ReviewItem

__all__ = ["NEAR", "PARTS", "Part", "part_of", "review_order"]

# "near the threshold": within this fraction of the scale's width (0.1 of [0, 1]: a step
# scored 0.4 to 0.6 against 0.5; 0.4 of a 1-5 judge metric's scale)
NEAR = 0.1


def part_of(item: ReviewItem) -> Part:
    """The part of the order `item` belongs to (the first it qualifies for)."""
    if item.samples and min(item.samples) < item.threshold <= max(item.samples):
        return "unstable"
    low, high = item.scale
    if item.score is not None and abs(item.score - item.threshold) <= NEAR * (high - low):
        return "near_threshold"
    if item.decisive:
        return "decisive"
    if len(set(item.sample_categories)) > 1:
        return "category_disagreement"
    return "random"


def review_order(items: Sequence[ReviewItem], *, seed: int = 0) -> list[tuple[ReviewItem, Part]]:
    """Every item once, in the order a human look is worth most, each with the part it came
    from: the parts in `PARTS` order, each shuffled with `seed`, unscored items last."""
    rng = random.Random(seed)
    scored = [item for item in items if item.score is not None]
    out: list[tuple[ReviewItem, Part]] = []
    for part in PARTS:
        members = [item for item in scored if part_of(item) == part]
        rng.shuffle(members)
        out.extend((item, part) for item in members)
    out.extend((item, part_of(item)) for item in items if item.score is None)
    return out
