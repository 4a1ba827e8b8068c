"""Where a run went wrong: the decisive failure of a root that did not pass. Pure.

Execution order across a tree: a node's judged steps in the order it recorded them, and a
subagent's steps inside the parent step that spawned it (`Node.parent_step_id`): after the
parent's earlier steps, before that step (which ends when its subagent returns). When the
spawning step was not judged (copied context, or another source under
`scored_frames=agent`), the subagent comes before the parent's next judged step; a subagent
no step spawned (an unreferenced embedded one) comes after its parent's steps. Subagents
spawned by one step run in the order the tree lists them.

Every rule chooses among the steps an agent took (`source: agent`): a user's or the
system's step is scored and counted like any other, but a user did not take the action that
failed, so it is never where a run went wrong. A root whose only steps below
`failure_threshold` are user or system steps, or that has no scored agent step, has no
decisive failure, and says why (`NoDecisive`).

Rules (`decisive_rule`), over the scored agent steps: `first_below_threshold` takes the
first in that order whose score is below `failure_threshold` (if none, the lowest-scoring
one); `lowest_score` the lowest-scoring one (ties: the first); `judge_pick` asks the judge
(decisive_pick.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeVar

from agentjudge.atif import Node
from agentjudge.results.score import DecisiveFailureRecord

if TYPE_CHECKING:
    from agentjudge.scoring.scored import TreeResult

DecisiveRule = Literal["first_below_threshold", "lowest_score", "judge_pick"]
ScoreRule = Literal["first_below_threshold", "lowest_score"]
# the one place the default is said (config, flag, docs take it from here)
DEFAULT_DECISIVE_RULE: DecisiveRule = "first_below_threshold"
# what `judge_pick` records when the judge names no step it was shown
FALLBACK_RULE: ScoreRule = "first_below_threshold"
# whether a `judge_pick` answer was used: `picked`, or why not (a fixed kind, as steps have)
PickStatus = Literal["picked", "invalid_response", "judge_error"]
# why a root asked for its decisive failure has none (the results' `decisive_absent`)
NoDecisive = Literal["no_scored_agent_step", "only_user_or_system_steps_below_threshold"]
AGENT_SOURCE = "agent"  # the ATIF source of a step an agent took (every reader maps to it)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class OrderedStep:
    """A judged step of a tree, at its place in execution order (`order`, from 0)."""

    order: int
    node_id: str
    agent: str | None  # the step's `extra.agent_name`, else its node's agent name
    segment: int
    step_id: int
    score: float | None
    category: str | None
    rationale: str
    source: str = AGENT_SOURCE  # `agent`, `user` or `system`
    excerpt: str = ""  # the start of the step's own text, on one line


@dataclass(frozen=True, slots=True)
class DecisiveFailure:
    """The step that made a root fail, the rule that found it, and the judge's reason."""

    rule: DecisiveRule
    step: OrderedStep
    reason: str
    pick_status: PickStatus | None = None  # None unless the rule asked was `judge_pick`

    def as_dict(self) -> DecisiveFailureRecord:
        """The results' `decisive_failure` of a trajectory."""
        step = self.step
        return {
            "rule": self.rule,
            "node_id": step.node_id,
            "agent": step.agent,
            "segment": step.segment,
            "step_id": step.step_id,
            "order": step.order,
            "score": step.score,
            "category": step.category,
            "reason": self.reason,
            "pick_status": self.pick_status,
            "excerpt": step.excerpt,
        }


def execution_order(
    root: Node, steps: Mapping[str, Sequence[T]], step_id: Callable[[T], int]
) -> list[tuple[Node, T]]:
    """Every item of `steps` (node id -> that node's steps, in its order) with its node, in
    execution order across `root`'s tree (see the module's docstring)."""
    out: list[tuple[Node, T]] = []
    _visit(root, steps, step_id, out)
    return out


def _visit(
    node: Node,
    steps: Mapping[str, Sequence[T]],
    step_id: Callable[[T], int],
    out: list[tuple[Node, T]],
) -> None:
    own = list(steps.get(node.id, ()))
    ids = [step_id(item) for item in own]
    inside: dict[int, list[Node]] = {}  # position of the spawning step -> its subagents
    for child in node.children:
        inside.setdefault(_spawned_at(ids, child.parent_step_id), []).append(child)
    for position, item in enumerate(own):
        for child in inside.get(position, ()):
            _visit(child, steps, step_id, out)
        out.append((node, item))
    for child in inside.get(len(own), ()):
        _visit(child, steps, step_id, out)


def _spawned_at(ids: list[int], parent_step_id: int | None) -> int:
    """Where a subagent runs among its parent's judged steps (their `ids`): at the step
    that spawned it, else at the next judged one, else after them all."""
    if parent_step_id is None:
        return len(ids)
    if parent_step_id in ids:
        return ids.index(parent_step_id)
    return next((i for i, x in enumerate(ids) if x > parent_step_id), len(ids))


def ordered_steps(tree: TreeResult) -> list[OrderedStep]:
    """Every judged step of a scored tree, in execution order."""
    pairs = execution_order(tree.root, tree.steps, lambda detail: detail.step_id)
    return [
        OrderedStep(
            order,
            node.id,
            detail.agent_name or node.agent_name,
            detail.segment,
            detail.step_id,
            detail.score,
            detail.category,
            detail.rationale,
            detail.source,
            detail.excerpt,
        )
        for order, (node, detail) in enumerate(pairs)
    ]


def went_wrong(tree: TreeResult) -> bool:
    """Whether the root did not pass (a failed root, or one below the completion
    threshold, or incomplete): its run gets a decisive failure if an agent step of it
    was scored (see `decide`)."""
    return not tree.aggregates[0].passed


def decide(
    steps: Sequence[OrderedStep], rule: ScoreRule, threshold: float
) -> DecisiveFailure | NoDecisive:
    """The decisive failure among `steps` (in execution order) under a rule that reads the
    scores, chosen among the scored agent steps; or why there is none. `threshold` is the
    failure threshold."""
    agents = decisive_candidates(steps)
    low = [s for s in agents if _score(s) < threshold]
    if not low and any(s.score is not None and s.score < threshold for s in steps):
        return "only_user_or_system_steps_below_threshold"
    if not agents:
        return "no_scored_agent_step"
    lowest = min(agents, key=_score)  # min keeps the first of equals: execution order
    pick = low[0] if rule == "first_below_threshold" and low else lowest
    return DecisiveFailure(rule, pick, pick.rationale)


def decisive_candidates(steps: Sequence[OrderedStep]) -> list[OrderedStep]:
    """The steps a decisive failure may name: those an agent took that have a score."""
    return [s for s in steps if s.score is not None and s.source == AGENT_SOURCE]


def _score(step: OrderedStep) -> float:
    assert step.score is not None
    return step.score
