"""The figures of a scoring job before it runs: judge calls, input tokens, what the verdict
store already holds, and what it would cost (`agentjudge score --dry-run`, and the budget
checks made before the first call).

Categorization calls depend on the scores (a step is categorized when it scores below
`failure_threshold`), so they are counted as an upper bound: one per scored step. In `auto`
mode the criteria of each task are asked first, and the step prompts then carry them: the
plan shows the steps with the rubric a failed derivation falls back to, so their tokens are
close and their store hits a lower bound.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from agentjudge.atif import Node
from agentjudge.errors import InputError
from agentjudge.judge.request import JudgeRequest
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria
from agentjudge.scoring.plan import derive_request, plan_node
from agentjudge.scoring.prompts import system_prompt
from agentjudge.scoring.steps import FileCache, node_steps

# Without the judge's own tokenizer: 3.5 characters a token (our prompts are JSON-quoted
# text, denser in tokens than prose), plus a few tokens a message for its role and
# delimiters; measured against Qwen2.5's tokenizer in docs/scoring.md ("Dry run").
CHARS_PER_TOKEN = 3.5
MESSAGE_TOKENS = 4

TokenCounter = Callable[[JudgeRequest], int]


def estimated_tokens(request: JudgeRequest) -> int:
    """The input tokens of `request`, estimated from its characters."""
    return sum(
        math.ceil(len(m.content) / CHARS_PER_TOKEN) + MESSAGE_TOKENS for m in request.messages
    )


@dataclass
class PlanFigures:
    """What a job will send: calls and input tokens by kind, and store hits."""

    tokenizer: str
    trajectories: int = 0
    nodes: int = 0
    nodes_not_judged: int = 0  # invalid, or deeper than max_subagent_depth
    step_calls: int = 0
    step_calls_stored: int = 0
    categorizations_at_most: int = 0
    derivations: int = 0
    step_input_tokens: int = 0
    step_input_tokens_stored: int = 0
    categorization_input_tokens_at_most: int = 0
    derivation_input_tokens: int = 0
    output_tokens_per_call_at_most: int = 0

    @property
    def calls_to_send(self) -> int:
        """Calls the judge will get, categorizations left out (they depend on scores)."""
        return self.step_calls - self.step_calls_stored + self.derivations

    @property
    def input_tokens_to_send(self) -> int:
        """Input tokens of `calls_to_send`."""
        return self.step_input_tokens - self.step_input_tokens_stored + self.derivation_input_tokens

    def as_dict(self) -> dict[str, object]:
        """The figures, with the two totals, as `--dry-run --json` prints them."""
        return {
            **asdict(self),
            "calls_to_send": self.calls_to_send,
            "input_tokens_to_send": self.input_tokens_to_send,
        }


def estimate_plan(
    roots: Sequence[Node],
    config: ScoreConfig,
    criteria: Criteria,
    stored: Callable[[JudgeRequest], bool],
    tokens: TokenCounter = estimated_tokens,
    tokenizer: str = f"estimate: {CHARS_PER_TOKEN:g} characters a token",
) -> PlanFigures:
    """Plan every node of `roots` (reading their steps, as the job would) and count."""
    figures = PlanFigures(tokenizer)
    rubric = criteria.rubric
    system = system_prompt(rubric)
    tasks: set[str] = set()
    max_tokens = 0
    for root in roots:
        figures.trajectories += 1
        files = FileCache()
        for node in root.walk():
            figures.nodes += 1
            if node.problems or node.depth > config.max_subagent_depth:
                figures.nodes_not_judged += 1
                continue
            try:
                found = node_steps(node, files)
            except (InputError, OSError):  # the job reports it as input_changed
                figures.nodes_not_judged += 1
                continue
            if criteria.mode == "auto" and found.task not in tasks:
                tasks.add(found.task)
                derive = derive_request(found.task)
                figures.derivations += 1
                figures.derivation_input_tokens += tokens(derive)
                max_tokens = max(max_tokens, derive.max_tokens)
            plan = plan_node(found, node.trajectory_id, rubric, criteria, config, system)
            for index, planned in enumerate(plan.steps):
                count = tokens(planned.request)
                figures.step_calls += 1
                figures.step_input_tokens += count
                if stored(planned.request):
                    figures.step_calls_stored += 1
                    figures.step_input_tokens_stored += count
                category = plan.category_request(index, 0.0)
                figures.categorizations_at_most += 1
                figures.categorization_input_tokens_at_most += tokens(category)
                max_tokens = max(max_tokens, planned.request.max_tokens, category.max_tokens)
    figures.output_tokens_per_call_at_most = max_tokens
    return figures
