"""The judge against a review's labels, each part of the order weighted by its size, and
two reviewers against each other (pure: items and labels in)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from agentjudge.review.agreement import judge_agreement, reviewer_agreement, step_accuracy
from agentjudge.review.items import ReviewItem, load_items
from agentjudge.review.labels import ReviewLabel
from agentjudge.review.order import part_of
from tests.review.runs import grade_run


def item(root: str, n: int, score: float | None, **fields: object) -> ReviewItem:
    base = ReviewItem(
        key=f"{root}##{n}", kind="step", root=root, node=None, step_id=n, metric=None,
        task="", context=(), score=score, threshold=0.5, scale=(0.0, 1.0), samples=(),
        rationale=None, category=None, sample_categories=(), decisive=False,
    )  # fmt: skip
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def said(one: ReviewItem, passed: bool | None, category: str | None = None) -> ReviewLabel:
    return ReviewLabel(
        key=one.key, part=part_of(one), passed=passed, score=None, category=category,
        note=None, reviewer="ann", at="2026-12-05T06:00:00Z",
    )  # fmt: skip


# 2 unstable items (judged fail) and 8 random ones (judged pass) over 4 roots
UNSTABLE = [item(f"r{n}", 1, 0.2, samples=(0.2, 0.7)) for n in range(2)]
RANDOM = [item(f"r{n % 4}", 10 + n, 0.9) for n in range(8)]
ITEMS = UNSTABLE + RANDOM


def test_each_part_counts_for_its_size() -> None:
    # the reviewer fails both unstable items (the judge agrees) and labels 2 of 8 random
    # ones: one agreed, one not. Unweighted 3/4; each random label stands for 4 items:
    # (2 * 1 + 1 * 4) / (2 * 1 + 2 * 4) = 6/10
    labels = {
        **{i.key: said(i, False) for i in UNSTABLE},
        RANDOM[0].key: said(RANDOM[0], True),
        RANDOM[1].key: said(RANDOM[1], False),
    }
    report = judge_agreement(ITEMS, labels)
    accuracy = report["figures"]["step_accuracy"]
    assert accuracy["value"] == pytest.approx(0.6)
    assert accuracy["unweighted"] == pytest.approx(0.75)
    assert report["parts"]["random"] == {"items": 8, "labelled": 2, "compared": 2, "weight": 4.0}
    assert report["parts"]["unstable"]["weight"] == 1.0
    assert report["covered"] == 1.0
    # weighted cells: TT 4, TF 0, FT 4, FF 2 of 10: p_o 0.6; label pass 0.4, judge pass 0.8:
    # p_e 0.32 + 0.12 = 0.44; kappa 0.16 / 0.56
    assert report["figures"]["kappa"]["value"] == pytest.approx(0.16 / 0.56)
    assert report["figures"]["kappa"]["labelled_fail_judged_pass"] == 1


def test_only_the_parts_labelled_are_covered() -> None:
    labels = {i.key: said(i, False) for i in UNSTABLE}
    report = judge_agreement(ITEMS, labels)
    assert report["covered"] == 0.2
    assert report["figures"]["step_accuracy"]["value"] == 1.0
    assert report["parts"]["random"]["weight"] is None


def test_categories_are_weighted_too() -> None:
    judged = [dataclasses.replace(i, category="context_loss") for i in UNSTABLE]
    items = judged + RANDOM
    labels = {
        judged[0].key: said(judged[0], False, "context_loss"),
        RANDOM[0].key: said(RANDOM[0], True, "reasoning_failure"),  # judged: none
    }
    report = judge_agreement(items, labels)
    scores = report["categories"]
    assert scores["context_loss"]["true_positives"] == 2.0  # 2 unstable items, one label
    assert scores["reasoning_failure"]["false_negatives"] == 8.0
    assert report["figures"]["category_macro_f1"]["value"] == pytest.approx(0.5)


def test_stale_and_unscored_labels_are_counted_not_compared() -> None:
    unscored = item("r9", 1, None)
    labels = {
        unscored.key: said(unscored, True),
        "gone.json##3": said(item("gone.json", 3, 0.1), False),
        RANDOM[0].key: said(RANDOM[0], True),
    }
    report = judge_agreement([*ITEMS, unscored], labels)
    assert report["stale"] == ["gone.json##3"]
    assert report["unscored"] == 1
    assert report["figures"]["step_accuracy"]["steps"] == 1


def test_the_decisive_step_is_the_earliest_the_reviewer_failed() -> None:
    steps = [
        item("a", 1, 0.9, agent="planner"),
        item("a", 2, 0.2, agent="coder", decisive=True),
        item("a", 3, 0.1, agent="coder"),
    ]
    first = {steps[1].key: said(steps[1], False), steps[2].key: said(steps[2], False)}
    figures = judge_agreement(steps, first)["figures"]
    assert figures["decisive_step_accuracy"]["value"] == 1.0
    earlier = {steps[0].key: said(steps[0], False), **first}
    figures = judge_agreement(steps, earlier)["figures"]
    assert figures["decisive_step_accuracy"]["value"] == 0.0
    assert figures["agent_accuracy"]["value"] == 0.0  # planner, not coder


def test_two_reviewers_agreement() -> None:
    ann = {i.key: said(i, i.score is not None and i.score > 0.5) for i in ITEMS}
    bob = dict(ann) | {RANDOM[0].key: said(RANDOM[0], False)}
    pair = reviewer_agreement(ITEMS, ann, bob)
    # ann: 8 pass 2 fail; bob: 7 pass 3 fail; 9 of 10 agree: p_e 0.56 + 0.06 = 0.62
    assert pair["both_labelled"] == 10
    assert pair["kappa"]["value"] == pytest.approx((0.9 - 0.62) / 0.38)
    assert pair["pass_agreement"] == 0.9
    low, high = pair["kappa"]["interval"]
    assert low <= high


def test_step_accuracy_alone_is_the_reports_figure() -> None:
    labels = {i.key: said(i, n % 3 == 0) for n, i in enumerate(ITEMS[:7])}
    figure = judge_agreement(ITEMS, labels)["figures"]["step_accuracy"]
    value, interval, covered = step_accuracy(ITEMS, labels)
    assert (value, interval) == (figure["value"], figure["interval"])
    assert covered == judge_agreement(ITEMS, labels)["covered"] == 1.0


def test_a_score_without_y_or_n_says_pass_or_fail_at_the_threshold() -> None:
    low, high = RANDOM[0], RANDOM[1]  # both judged pass (0.9)
    labels = {
        low.key: dataclasses.replace(said(low, None), score=0.25),
        high.key: dataclasses.replace(said(high, None), score=0.75),
    }
    figure = judge_agreement(ITEMS, labels)["figures"]["step_accuracy"]
    assert (figure["agree"], figure["steps"]) == (1, 2)
    pair = reviewer_agreement(ITEMS, labels, {low.key: said(low, True)})
    assert pair["both_labelled"] == 1
    assert pair["pass_agreement"] == 0.0


def test_grade_results_give_the_pass_fail_figures_and_no_decisive_ones(tmp_path: Path) -> None:
    items = load_items(grade_run(tmp_path))[0]  # greeting 5/4 and weather 5/3: judged pass
    labels = {
        items[0].key: ReviewLabel(
            key=items[0].key, part=part_of(items[0]), passed=False, score=None,
            category=None, note=None, reviewer="ann", at="2026-12-05T06:00:00Z",
        ),
        items[1].key: ReviewLabel(
            key=items[1].key, part=part_of(items[1]), passed=None, score=4.0,
            category=None, note=None, reviewer="ann", at="2026-12-05T06:00:00Z",
        ),
    }  # fmt: skip
    report = judge_agreement(items, labels)
    figure = report["figures"]["step_accuracy"]
    assert (figure["agree"], figure["steps"], figure["value"]) == (1, 2, 0.5)
    assert report["figures"]["decisive_step_accuracy"]["labelled"] == 0
    assert report["figures"]["category_macro_f1"]["value"] is None
