"""Aggregation on hand-computed trees (SPEC-trajectories §4): every rule, every mode."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agentjudge.atif import Node, OmittedChild
from agentjudge.scoring.aggregate import (
    NodeAggregate,
    NodeOutcome,
    aggregate_tree,
    collection_metrics,
)


def node(
    id: str, *children: Node, depth: int = 0, parent: str | None = None, omitted: int = 0
) -> Node:
    """A tree node for aggregation tests (identity only; no files)."""
    kids = tuple(_reparent(c, id, depth + 1) for c in children)
    gone = tuple(OmittedChild("f", "$", 1, "x.json", "file_not_found") for _ in range(omitted))
    return Node(
        id,
        "root" if parent is None else "file",
        "f",
        "$",
        depth,
        parent,
        None,
        children=kids,
        omitted=gone,
    )


def _reparent(child: Node, parent: str, depth: int) -> Node:
    kids = tuple(_reparent(c, child.id, depth + 1) for c in child.children)
    return replace(child, parent_id=parent, depth=depth, children=kids)


def scored(*scores: float, categories: tuple[str, ...] = ()) -> NodeOutcome:
    return NodeOutcome("scored", tuple(scores), candidate_categories=categories)


def by_id(tree: list[NodeAggregate]) -> dict[str, NodeAggregate]:
    return {a.id: a for a in tree}


def test_single_node() -> None:
    (root,) = aggregate_tree(node("r"), {"r": scored(1.0, 0.5, 0.0)}, 0.5)
    assert root.own_score == pytest.approx(0.5)
    assert root.aggregate == pytest.approx(0.5)
    assert (root.own_steps, root.subtree_steps, root.complete, root.passed) == (3, 3, True, True)


TREE = node("r", node("c", node("g")))
OUTCOMES = {"r": scored(1.0, 0.0), "c": scored(0.5, 0.5), "g": scored(1.0)}


def test_subtree_aggregate_is_step_weighted() -> None:
    result = by_id(aggregate_tree(TREE, OUTCOMES, 0.5))
    assert result["g"].aggregate == pytest.approx(1.0)
    assert result["c"].aggregate == pytest.approx((0.5 * 2 + 1.0 * 1) / 3)
    assert result["c"].subtree_steps == 3
    assert result["r"].aggregate == pytest.approx((0.5 * 2 + (2 / 3) * 3) / 5)  # 0.6
    assert result["r"].subtree_steps == 5
    assert [a.id for a in aggregate_tree(TREE, OUTCOMES, 0.5)] == ["r", "c", "g"]


@pytest.mark.parametrize(
    ("mode", "score", "count"),
    [
        ("flat", (0.5 + 0.5 + 1.0) / 3, 3),  # mean of own means, not step-weighted (0.6)
        ("hierarchical", 0.6, 1),
        ("separate", 0.5, 1),
    ],
)
def test_collection_modes(mode: str, score: float, count: int) -> None:
    trees = [aggregate_tree(TREE, OUTCOMES, 0.5)]
    metrics = collection_metrics(trees, mode)  # type: ignore[arg-type]
    assert metrics.overall_score == pytest.approx(score)
    assert metrics.trajectory_count == count


def test_two_roots_hierarchical_and_separate() -> None:
    first = aggregate_tree(
        node("a", node("a1")), {"a": scored(1.0), "a1": scored(0.0, 0.0, 0.0)}, 0.5
    )
    second = aggregate_tree(node("b"), {"b": scored(0.5)}, 0.5)
    assert collection_metrics([first, second], "hierarchical").overall_score == pytest.approx(
        (0.25 + 0.5) / 2
    )
    assert collection_metrics([first, second], "separate").overall_score == pytest.approx(0.75)
    assert collection_metrics([first, second], "flat").overall_score == pytest.approx(0.5)


def test_depth_limited_child_is_unscored_and_keeps_parent_complete() -> None:
    tree = node("r", node("c"))
    result = by_id(
        aggregate_tree(
            tree, {"r": scored(0.8), "c": NodeOutcome("unscored", reason="depth_limit")}, 0.5
        )
    )
    assert (result["c"].status, result["c"].reason, result["c"].aggregate) == (
        "unscored",
        "depth_limit",
        None,
    )
    assert result["r"].aggregate == pytest.approx(0.8)
    assert result["r"].subtree_steps == 1
    assert result["r"].complete
    assert result["r"].passed


def test_omitted_child_makes_ancestors_incomplete() -> None:
    tree = node("r", node("c", omitted=1))
    result = by_id(aggregate_tree(tree, {"r": scored(1.0), "c": scored(1.0)}, 0.5))
    assert not result["c"].complete
    assert not result["r"].complete
    assert not result["r"].passed
    assert result["r"].aggregate == pytest.approx(1.0)


def test_failed_child_makes_every_ancestor_incomplete_and_adds_nothing() -> None:
    tree = node("r", node("c", node("g")))
    outcomes = {
        "r": scored(1.0),
        "c": scored(0.0),
        "g": NodeOutcome("failed", reason="judge_error"),
    }
    result = by_id(aggregate_tree(tree, outcomes, 0.5))
    assert result["g"].status == "failed"
    assert (result["c"].complete, result["r"].complete) == (False, False)
    assert result["c"].aggregate == pytest.approx(0.0)
    assert result["r"].aggregate == pytest.approx(0.5)


def test_failed_roots_contribute_nothing_and_all_failed_is_no_score() -> None:
    ok = aggregate_tree(node("a"), {"a": scored(0.2)}, 0.5)
    failed = aggregate_tree(
        node("b", node("b1")), {"b": NodeOutcome("failed", reason="x"), "b1": scored(1.0)}, 0.5
    )
    assert collection_metrics([ok, failed], "flat").overall_score == pytest.approx(0.2)
    assert collection_metrics([ok, failed], "flat").trajectory_count == 1
    none = collection_metrics([failed], "hierarchical")
    assert (none.overall_score, none.trajectory_count) == (None, 0)


def test_genuine_zeros_are_scores() -> None:
    (root,) = aggregate_tree(node("r"), {"r": scored(0.0, 0.0)}, 0.5)
    assert root.own_score == 0.0
    assert root.aggregate == 0.0
    metrics = collection_metrics([[root]], "flat")
    assert (metrics.overall_score, metrics.trajectory_count) == (0.0, 1)


def test_threshold_is_inclusive() -> None:
    (root,) = aggregate_tree(node("r"), {"r": scored(0.7, 0.5)}, 0.6)
    assert root.aggregate == pytest.approx(0.6)
    assert root.passed
    (root,) = aggregate_tree(node("r"), {"r": scored(0.7, 0.5)}, 0.6000001)
    assert not root.passed


def test_categorization_rate() -> None:
    trees = [
        aggregate_tree(
            node("a"),
            {"a": scored(0.1, 0.2, categories=("context_loss", "reasoning_failure"))},
            0.5,
        ),
        aggregate_tree(node("b"), {"b": scored(0.1, categories=("none",))}, 0.5),
        aggregate_tree(node("c"), {"c": scored(0.1, categories=("uncategorized",))}, 0.5),
        aggregate_tree(node("d"), {"d": scored(0.9)}, 0.5),
    ]
    assert collection_metrics(trees, "flat").categorization_rate == pytest.approx(1 / 3)
    assert collection_metrics(trees[3:], "flat").categorization_rate == 1.0
