"""What a scoring job will ask the judge, worked out without asking: pure functions from a
node's steps (already read) and the job's settings to its judge requests.

The job sends what these build; `--dry-run` counts it. Layout: `samples` requests per scored
step (its task, reference, context block and the step; see prompts.py; the samples differ
only in their index, see judge/samples.py), then, for each step whose score is below
`failure_threshold`, as many requests for its failure category (its prompt holds the
score, so it is built once the score is known), and in `auto` mode, before the steps of a
task, one request for that task's criteria. Every request carries `judge_temperature`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, replace

from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.samples import sample_requests
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import AnswerShape, Criteria, Rubric
from agentjudge.scoring.prompts import (
    CATEGORIZE_SYSTEM,
    DERIVE_SYSTEM,
    PROMPT_VERSION,
    category_prompt,
    quote,
    quote_context,
    system_prompt,
    user_prompt,
)
from agentjudge.scoring.small_prompt import (
    SMALL_PROMPT_VERSION,
    SMALL_STEP_CHARS,
    context_line,
    small_category_prompt,
    small_prompt_for,
    small_system_prompt,
    small_user_prompt,
)
from agentjudge.scoring.steps import STEP_CHARS, NodeSteps, StepView, render, text_chars

DERIVE_MAX_TOKENS = 800  # a rubric of a few criteria, with their descriptions
# a binary answer: `true` or `false` alone (one token), or a JSON array of them
BINARY_MAX_TOKENS = 1
PICK_MAX_TOKENS = 1  # a category's number


# Of a step's texts, the fewest characters a prompt fitted to a small context shows (below
# it the step is not shown at all: `context_overflow`)
MIN_STEP_CHARS = 400
SHRINK = 0.9  # a step cut to fit keeps this much less than its share, each try
FIT_TRIES = 8  # renderings of a step to ever smaller budgets, at most
CONTEXT_OVERFLOW = "context_overflow"  # a step whose prompt does not fit even cut down


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """How many input tokens a step's request may take (the judge's context window, less
    what its answer may take and a margin), and how a message's tokens are counted."""

    tokens: int
    count: Callable[[str], int]


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """A scored step, its request, and which of the node's steps its context shows;
    `samples` are its requests to send (`request` first, then its repeated samples).
    `index` is its place among the node's steps; `left_out`, the earlier steps its window
    would show that were left out to fit the judge's context (see `PromptBudget`)."""

    view: StepView
    request: JudgeRequest
    context: tuple[int, ...]
    samples: tuple[JudgeRequest, ...]
    index: int = 0
    left_out: int = 0


@dataclass(frozen=True, slots=True)
class NodePlan:
    """A node's step requests, with what its categorization requests reuse (the quoted task
    and context steps), and how much of each prompt repeats the one before it (what a
    provider's prompt cache can serve)."""

    steps: tuple[PlannedStep, ...]
    task: str  # quoted
    quoted: tuple[str, ...]  # every step of the node, quoted as context shows it
    shared_chars: int
    prompt_chars: int
    temperature: float = 0.0
    samples: int = 1
    small: bool = False  # the embedded judge's prompts (see small_prompt.py)
    # steps to score whose prompt does not fit the judge's context even cut down, with
    # their places among the node's steps: never sent, never scored (`context_overflow`)
    overflow: tuple[tuple[int, StepView], ...] = ()

    def category_request(self, index: int, score: float) -> JudgeRequest:
        """The request for the failure category of the `index`-th planned step, which
        scored `score`. The embedded judge's is its step request with another question
        (see `small_category_prompt`): the server reuses the prompt they share."""
        planned = self.steps[index]
        if self.small:
            system, asked = planned.request.messages
            return JudgeRequest(
                (system, Message("user", small_category_prompt(asked.content))),
                SMALL_PROMPT_VERSION,
                temperature=self.temperature,
                max_tokens=PICK_MAX_TOKENS,
                answer="category_pick",
            )
        lines = [self.quoted[c] for c in planned.context]
        user = category_prompt(self.task, lines, quote(planned.view.data), score, planned.view.cut)
        return JudgeRequest(
            (Message("system", CATEGORIZE_SYSTEM), Message("user", user)),
            PROMPT_VERSION,
            temperature=self.temperature,
            answer="category",
        )

    def category_requests(self, index: int, score: float) -> tuple[JudgeRequest, ...]:
        """`category_request` and its repeated samples (one request per sample)."""
        return sample_requests(self.category_request(index, score), self.samples)


def step_system(rubric: Rubric, judge: str, shape: AnswerShape) -> str:
    """The system message of the steps `judge` (a `--judge` name) scores on `rubric`,
    asking for the answer `shape`: the small model's prompt for the embedded judge (see
    small_prompt.py), else the full one."""
    if small_prompt_for(judge):
        return small_system_prompt(rubric, shape)
    return system_prompt(rubric, shape)


def step_chars(judge: str) -> int:
    """How many characters of a step's texts `judge` is shown (see steps.render): its
    prompt's budget for the step."""
    return SMALL_STEP_CHARS if small_prompt_for(judge) else STEP_CHARS


def step_prompt_version(judge: str, shape: AnswerShape) -> str:
    """The version of the step prompt `judge` is asked with and the answer `shape` asked
    for (the results' `atif_prompt_version`): `agentjudge-atif-v5+score`, one score per
    step, or `agentjudge-atif-v5+scores`, one per criterion."""
    version = SMALL_PROMPT_VERSION if small_prompt_for(judge) else PROMPT_VERSION
    return f"{version}+{shape}"


def plan_node(
    found: NodeSteps,
    trajectory_id: str | None,
    rubric: Rubric,
    criteria: Criteria,
    config: ScoreConfig,
    system: str | None = None,
    cache_group: str = "",
    budget: PromptBudget | None = None,
) -> NodePlan:
    """The step requests of a node, in step order. Copied-context steps (and, with
    `scored_frames=agent`, steps of other sources) are shown as context, never scored.
    `system` is `step_system(rubric, config.judge, criteria.answer_shape)`, when the caller
    keeps it for many nodes. The embedded judge is asked whether each step is correct (see
    small_prompt.py).
    A request names the rubric's criteria (`JudgeRequest.criteria`: an answer of one score
    per criterion) only when `criteria.answer_shape` asks for `scores`. Every request
    carries `cache_group` (see `trajectory_cache_group`): the steps of a node share their
    prompt's prefix. With a `budget`, a prompt that does not fit it is fitted (see
    `_fitted`); a step that cannot be is left in `NodePlan.overflow`."""
    small = small_prompt_for(config.judge)
    shape = criteria.answer_shape
    system = step_system(rubric, config.judge, shape) if system is None else system
    names = tuple(c.name for c in rubric.criteria) if shape == "scores" else ()
    block = config.context_steps
    answer = criteria.reference_for(found.reference_id, trajectory_id)
    reference = quote(answer) if answer is not None else None
    task = quote(found.task)
    quoted = tuple(quote_context(v.data) for v in found.steps)
    lines = tuple(context_line(v.data) for v in found.steps) if small else quoted
    planned: list[PlannedStep] = []
    overflow: list[tuple[int, StepView]] = []
    shared = total = 0
    previous = ""
    floor = 0  # where a window fitted to the budget starts: its later steps keep it
    for index, view in enumerate(found.steps):
        if view.is_context or (config.scored_frames == "agent" and view.source != "agent"):
            continue
        window = max(0, (index // block - 1) * block)
        start = max(window, floor)
        if small:
            context = list(lines[start:index])
            user = small_user_prompt(task, reference, context, view.data, view.cut)
            request = JudgeRequest(
                (Message("system", system), Message("user", user)),
                SMALL_PROMPT_VERSION,
                temperature=config.judge_temperature,
                max_tokens=BINARY_MAX_TOKENS if len(names) <= 1 else 4 * len(names) + 2,
                answer="binary",
                criteria=names,
            )
        else:

            def ask(
                first: int, shown: StepView, window: int = window, index: int = index
            ) -> Message:
                lines = list(quoted[first:index])
                return user_prompt(
                    task, reference, lines, quote(shown.data), shown.cut, first - window
                )

            if budget is None:
                asked = ask(start, view)
            else:
                fitted = _fitted(
                    budget, budget.tokens - budget.count(system), ask, quoted, start, index, view
                )
                if fitted is None:
                    overflow.append((index, view))
                    continue
                start, view, asked = fitted
                floor = start
            user = asked.content
            request = JudgeRequest(
                (Message("system", system), asked),
                PROMPT_VERSION,
                temperature=config.judge_temperature,
                criteria=names,
                cache_group=cache_group,
            )
        shared += len(system) + (common_prefix_chars(previous, user) if previous else 0)
        total += len(system) + len(user)
        previous = user
        samples = sample_requests(request, config.samples)
        context_steps = tuple(range(start, index))
        planned.append(PlannedStep(view, request, context_steps, samples, index, start - window))
    return NodePlan(
        tuple(planned),
        task,
        quoted,
        shared,
        total,
        config.judge_temperature,
        config.samples,
        small,
        tuple(overflow),
    )


def _fitted(
    budget: PromptBudget,
    room: int,
    ask: Callable[[int, StepView], Message],
    quoted: tuple[str, ...],
    start: int,
    index: int,
    view: StepView,
) -> tuple[int, StepView, Message] | None:
    """The step's prompt fitted to `room` tokens for its user message: as planned if it
    fits; else its earlier steps windowed first (the latest kept, in half the room the step
    leaves, so the steps after it grow the same window again before it moves); else, with
    no context, the step itself cut further, as steps.render cuts (a marker says how much
    the judge sees). None: it does not fit even cut to MIN_STEP_CHARS."""
    asked = ask(start, view)
    if budget.count(asked.content) <= room:
        return start, view, asked
    alone = ask(index, view)
    spare = room - budget.count(alone.content)
    if spare >= 0:
        first, used = index, 0
        while first > start and used + budget.count(quoted[first - 1]) <= spare // 2:
            first -= 1
            used += budget.count(quoted[first])
        return first, view, ask(first, view)
    if view.step is None:
        return None
    limit = min(text_chars(view.step), STEP_CHARS)
    for _ in range(FIT_TRIES):
        total = budget.count(alone.content)
        if total <= room:
            return index, view, alone
        # the step's texts shrink in proportion to what of the message is over (its
        # markers and the rest do not), a little further each try
        own = budget.count(quote(view.data))
        target = own - (total - room)
        if target <= 0:
            return None
        limit = int(limit * target / own * SHRINK)
        if limit < MIN_STEP_CHARS:
            return None
        data, cut = render(view.step, limit)
        view = replace(view, data=data, cut=cut)
        alone = ask(index, view)
    return (index, view, alone) if budget.count(alone.content) <= room else None


def trajectory_cache_group(node_id: str) -> str:
    """The name a provider's prompt cache routes a node's requests by (OpenAI's
    `prompt_cache_key`): stable across runs, different for each node, and a digest, so no
    file name is sent."""
    return "agentjudge-" + hashlib.sha256(node_id.encode()).hexdigest()[:32]


def derive_request(task: str, temperature: float = 0.0) -> JudgeRequest:
    """The request for the criteria of `task` (auto mode), asked once per distinct task
    (not sampled: the steps of every sample are scored on the same criteria)."""
    return JudgeRequest(
        (Message("system", DERIVE_SYSTEM), Message("user", f"<task>{quote(task)}</task>")),
        PROMPT_VERSION,
        temperature=temperature,
        max_tokens=DERIVE_MAX_TOKENS,
        answer="rubric",
    )


def common_prefix_chars(a: str, b: str) -> int:
    """How many leading characters `a` and `b` share."""
    low, high = 0, min(len(a), len(b))
    while low < high:  # binary search on slices: C-speed comparisons
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low
