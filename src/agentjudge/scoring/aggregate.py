"""Aggregation, exactly as SPEC-trajectories §4 defines it. Pure: no I/O, no judge.

- own score = mean of the node's step scores;
- subtree aggregate = (own_mean*own_steps + sum(child_aggregate*child_steps)) /
  (own_steps + sum(child_steps)), child_steps counting every scored step of the child's
  subtree; unscored and failed children add nothing;
- a node passes when it is complete and its aggregate >= completion_threshold;
- depth-limited nodes are `unscored` (reason `depth_limit`): they do not make ancestors
  incomplete (they were skipped by configuration) but do make the job incomplete;
- a failed or omitted child makes every ancestor incomplete.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from agentjudge.atif import Node
from agentjudge.judge.taxonomy import FAILURES

NodeStatus = Literal["scored", "failed", "unscored"]
AggregationMode = Literal["flat", "hierarchical", "separate"]
# a failure candidate counts as categorized when the judge named its failure
ACTIONABLE = frozenset(FAILURES)


@dataclass(frozen=True, slots=True)
class NodeOutcome:
    """What scoring one node produced: its step scores, or why it has none."""

    status: NodeStatus
    step_scores: tuple[float, ...] = ()
    reason: str | None = None
    # categories of its failure-candidate steps ("uncategorized" when the judge's answer
    # was unusable or the judge failed)
    candidate_categories: tuple[str, ...] = ()
    not_evaluated: int = 0  # its steps not judged (`context_overflow`): it is not complete


@dataclass(frozen=True, slots=True)
class NodeAggregate:
    id: str
    parent_id: str | None
    depth: int
    status: NodeStatus
    reason: str | None
    own_score: float | None
    own_steps: int
    aggregate: float | None
    subtree_steps: int
    complete: bool
    passed: bool
    failure_candidates: int
    fully_categorized: bool


def aggregate_tree(
    root: Node, outcomes: Mapping[str, NodeOutcome], completion_threshold: float
) -> list[NodeAggregate]:
    """Every node of `root`'s tree in `walk()` order (root first), with its scores and flags."""
    done: dict[str, NodeAggregate] = {}
    _visit(root, outcomes, completion_threshold, done)
    return [done[node.id] for node in root.walk()]


def _visit(
    node: Node,
    outcomes: Mapping[str, NodeOutcome],
    threshold: float,
    done: dict[str, NodeAggregate],
) -> NodeAggregate:
    outcome = outcomes[node.id]
    children = [_visit(child, outcomes, threshold, done) for child in node.children]
    categories = outcome.candidate_categories
    candidates = len(categories)
    categorized = all(c in ACTIONABLE for c in categories)
    if outcome.status != "scored":
        result = NodeAggregate(
            node.id, node.parent_id, node.depth, outcome.status, outcome.reason,
            None, 0, None, 0,
            complete=outcome.status == "unscored",
            passed=False,
            failure_candidates=0,
            fully_categorized=True,
        )  # fmt: skip
        done[node.id] = result
        return result
    scores = outcome.step_scores
    own_steps = len(scores)
    own = sum(scores) / own_steps if own_steps else None
    weighted = (own or 0.0) * own_steps
    steps = own_steps
    for child in children:
        if child.status == "scored" and child.aggregate is not None:
            weighted += child.aggregate * child.subtree_steps
            steps += child.subtree_steps
    aggregate = weighted / steps if steps else None
    complete = (
        not node.omitted and not outcome.not_evaluated and all(child.complete for child in children)
    )
    passed = complete and aggregate is not None and aggregate >= threshold
    result = NodeAggregate(
        node.id, node.parent_id, node.depth, "scored", None,
        own, own_steps, aggregate, steps, complete, passed, candidates, categorized,
    )  # fmt: skip
    done[node.id] = result
    return result


@dataclass(frozen=True, slots=True)
class CollectionMetrics:
    overall_score: float | None
    trajectory_count: int
    categorization_rate: float


def collection_metrics(
    trees: Sequence[Sequence[NodeAggregate]], mode: AggregationMode
) -> CollectionMetrics:
    """The three metrics over the trees whose root was scored; a failed root's tree
    contributes nothing. Each tree lists its root first (as `aggregate_tree` returns it)."""
    kept = [tree for tree in trees if tree[0].status == "scored"]
    roots = [tree[0] for tree in kept]
    nodes = [a for tree in kept for a in tree if a.status == "scored"]
    if mode == "flat":
        values = [a.own_score for a in nodes if a.own_score is not None]
    elif mode == "hierarchical":
        values = [a.aggregate for a in roots if a.aggregate is not None]
    else:
        values = [a.own_score for a in roots if a.own_score is not None]
    overall = sum(values) / len(values) if values else None
    with_failures = [a for a in nodes if a.failure_candidates]
    rate = (
        sum(a.fully_categorized for a in with_failures) / len(with_failures)
        if with_failures
        else 1.0
    )
    return CollectionMetrics(overall, len(values), rate)
