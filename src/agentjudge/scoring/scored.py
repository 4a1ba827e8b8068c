"""What a scoring job produced, as the reporters read it: every judged step, every tree
with its aggregates, rubrics and decisive failure, the job's own counts, and the result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentjudge.atif import Node
from agentjudge.judge.samples import SampledScore
from agentjudge.scoring.aggregate import CollectionMetrics, NodeAggregate
from agentjudge.scoring.criteria import Rubric
from agentjudge.scoring.decisive import DecisiveFailure, NoDecisive
from agentjudge.scoring.steps import StepCut

CategorizationStatus = Literal["categorized", "invalid_response", "judge_error"]


@dataclass(frozen=True, slots=True)
class StepDetail:
    """One judged step as the results report it."""

    segment: int
    step_id: int
    source: str
    tool_names: tuple[str, ...]
    score: float | None
    scores: dict[str, float]
    rationale: str
    error: str | None = None
    error_message: str | None = None  # the judge server's own explanation, redacted
    category: str | None = None
    confidence: float | None = None
    categorization_status: CategorizationStatus | None = None
    category_rationale: str = ""
    sampled: SampledScore | None = None  # with samples > 1: every sample's score
    # with samples > 1, a categorized step: the category each answered sample gave
    sample_categories: tuple[str, ...] = ()
    agent_name: str | None = None  # the step's `extra.agent_name`, when it names its speaker
    cut: StepCut | None = None  # what the judge was not shown of a step too long to show whole
    origin: dict[str, Any] | None = None  # where a trace recorded it (`extra.source`)
    excerpt: str = ""  # the start of the step's own text, on one line (steps.excerpt)
    # why a step to score was not judged: `context_overflow`, its prompt does not fit the
    # judge's context even cut down (no score, never 0)
    not_evaluated: str | None = None
    left_out: int = 0  # earlier steps left out of its context to fit the judge's context


@dataclass
class TreeResult:
    """One root's tree as scored: per node its aggregate, judged steps and rubric."""

    root: Node
    aggregates: list[NodeAggregate]
    steps: dict[str, list[StepDetail]]
    criteria: dict[str, tuple[str, ...]]  # node id -> names of the criteria it was scored on
    decisive: DecisiveFailure | None = None  # where a root that did not pass went wrong
    decisive_absent: NoDecisive | None = None  # why a root asked for one has none
    # node id -> the full rubric it was scored on (auto mode: the one derived for its task);
    # `compare` refuses runs whose rubrics differ
    rubrics: dict[str, Rubric] = field(default_factory=dict)
    cost_usd: float = 0.0  # what the calls made for this tree cost (their prices summed)


@dataclass
class Accounting:
    """What the job counts besides the judge client: step requests, their input tokens,
    how much of their prompts repeats the previous request's, and auto-mode rubrics."""

    step_requests: int = 0
    step_input_tokens: int = 0
    prefix_chars: int = 0
    prompt_chars: int = 0
    auto_derived: int = 0
    auto_fallbacks: int = 0
    second_round_steps: int = 0  # steps judged again after their calls ran out of retries
    second_round_recovered: int = 0  # of them, those that got a verdict
    decisive_picks: int = 0  # judge calls naming a failed root's decisive step (judge_pick)


@dataclass
class JobResult:
    """Everything the reporters need."""

    trees: list[TreeResult]
    metrics: CollectionMetrics | None
    failed: str | None  # why the job failed (a fixed error type), None when it succeeded
    complete: bool
    accounting: Accounting
    failed_message: str | None = None  # e.g. the judge server's explanation of a refusal


def first_error(trees: list[TreeResult]) -> str | None:
    """The first step error (with the server's explanation, if any), in a run whose every
    tree failed (`all_roots_failed`)."""
    for tree in trees:
        for details in tree.steps.values():
            for detail in details:
                if detail.error is not None:
                    if detail.error_message:
                        return f"{detail.error}: {detail.error_message}"
                    return detail.error
    return None
