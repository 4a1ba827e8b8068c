"""The review order: the parts where a look is worth most first, each item once, each
part a seeded shuffle (so a part's first labels are a uniform sample of it)."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import pytest

from agentjudge.review.items import ReviewItem, load_items
from agentjudge.review.order import PARTS, part_of, review_order
from tests.review.runs import score_run


def item(n: int, score: float | None, **fields: object) -> ReviewItem:
    base = ReviewItem(
        key=f"r.json##{n}", kind="step", root="r.json", node=None, step_id=n, metric=None,
        task="", context=(), score=score, threshold=0.5, scale=(0.0, 1.0), samples=(),
        rationale=None, category=None, sample_categories=(), decisive=False,
    )  # fmt: skip
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fields", "part"),
    [
        ({"score": 0.7, "samples": (0.3, 0.9, 0.9)}, "unstable"),
        ({"score": 0.5, "samples": (0.5, 0.5)}, "near_threshold"),  # all at it: not unstable
        ({"score": 0.45}, "near_threshold"),
        ({"score": 0.61, "decisive": True}, "decisive"),
        ({"score": 0.41, "decisive": True}, "near_threshold"),  # the first part it is in
        ({"score": 0.9, "sample_categories": ("none", "context_loss")}, "category_disagreement"),
        ({"score": 0.9, "sample_categories": ("none", "none")}, "random"),
        ({"score": 0.2, "samples": (0.1, 0.3)}, "random"),
        # a 1-5 judge metric: near is within 0.4 of its threshold
        ({"score": 3.4, "threshold": 3.0, "scale": (1.0, 5.0)}, "near_threshold"),
        ({"score": 4.0, "threshold": 3.0, "scale": (1.0, 5.0)}, "random"),
    ],
)
def test_each_item_is_in_the_first_part_it_qualifies_for(
    fields: dict[str, object], part: str
) -> None:
    assert part_of(item(1, **fields)) == part  # type: ignore[arg-type]


def mixed() -> list[ReviewItem]:
    out = []
    for n in range(1, 61):
        kind = n % 6
        if kind == 0:
            out.append(item(n, 0.8, samples=(0.2, 0.8)))
        elif kind == 1:
            out.append(item(n, 0.55))
        elif kind == 2:
            out.append(item(n, 0.1, decisive=True))
        elif kind == 3:
            out.append(item(n, 0.9, sample_categories=("none", "context_loss")))
        elif kind == 4:
            out.append(item(n, 0.95))
        else:
            out.append(item(n, None if n % 4 == 1 else 0.05))
    return out


def test_every_item_once_parts_in_order_unscored_last() -> None:
    items = mixed()
    ordered = review_order(items, seed=3)
    assert sorted(i.key for i, _ in ordered) == sorted(i.key for i in items)
    parts = [part for _, part in ordered]
    scored = [p for (i, p) in ordered if i.score is not None]
    assert scored == sorted(scored, key=PARTS.index)
    assert [i.score for i, _ in ordered[-len([i for i in items if i.score is None]) :]] == [
        None
    ] * 5
    assert Counter(parts) == {
        "unstable": 10, "near_threshold": 10, "decisive": 10, "category_disagreement": 10,
        "random": 20,
    }  # fmt: skip
    assert all(part == part_of(i) for i, part in ordered)


def test_inside_a_part_the_order_is_a_seeded_shuffle() -> None:
    items = mixed()
    first = [i.key for i, _ in review_order(items, seed=1)]
    assert first == [i.key for i, _ in review_order(items, seed=1)]
    others = {tuple(i.key for i, _ in review_order(items, seed=s)) for s in range(2, 8)}
    assert len(others | {tuple(first)}) > 1
    randoms = [i.key for i, p in review_order(items, seed=1) if p == "random" and i.score]
    in_file = [i.key for i in items if part_of(i) == "random" and i.score is not None]
    assert sorted(randoms) == sorted(in_file)
    assert randoms != in_file


def test_a_real_results_file_orders(tmp_path: Path) -> None:
    items = load_items(score_run(tmp_path))[0]
    ordered = review_order(items)
    assert len(ordered) == len(items) == len({i.key for i, _ in ordered})
    decisive = [p for i, p in ordered if i.decisive]
    assert set(decisive) <= {"near_threshold", "decisive"}
    assert len(decisive) == 2
