"""The figures of a scoring job before it runs: judge calls, input tokens, what the verdict
store already holds, and what it would cost (`agentjudge score --dry-run`, and the budget
checks made before the first call).

Categorization calls depend on the scores (a step is categorized when it scores below
`failure_threshold`), so they are counted as an upper bound: one per scored step; so are
the `judge_pick` rule's calls: one per root (as if every root failed). With `samples` K,
every step and categorization call is counted K times (each sample is its own call and its
own verdict-store key). In `auto`
mode the criteria of each task are asked first, and the step prompts then carry them: the
plan shows the steps with the rubric a failed derivation falls back to, so their tokens are
close and their store hits a lower bound.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache

from agentjudge.atif import Node
from agentjudge.errors import InputError
from agentjudge.judge.providers.base import Provider
from agentjudge.judge.request import ANSWER_TOKENS, JudgeRequest
from agentjudge.scoring.config import ScoreConfig
from agentjudge.scoring.criteria import Criteria
from agentjudge.scoring.decisive_pick import planned_pick_request
from agentjudge.scoring.plan import (
    PromptBudget,
    common_prefix_chars,
    derive_request,
    plan_node,
    step_chars,
    step_system,
)
from agentjudge.scoring.small_prompt import small_prompt_for
from agentjudge.scoring.steps import FileCache, StepView, node_steps

# Without the judge's own tokenizer, a request's tokens are estimated from what BPE
# tokenizers split text into: words (a short one is about one token, a long one about one
# per four letters), punctuation, digits (one token each), letters outside ASCII, and a
# fixed cost a message (its role, delimiters, the chat template). The weights are a least-
# squares fit to Qwen2.5's tokenizer (a 150k-token BPE like those of the hosted judges)
# over the step and categorization requests of three collections, each weighted equally:
# examples/, the ATIF fixtures and bench/score_collection.py's; with each collection left
# out of the fit in turn, its total is within 3% (docs/scoring.md, "Dry run").
SHORT_WORD_TOKENS = 0.73  # a word of at most 6 letters
LONG_WORD_TOKENS_PER_LETTER = 0.25
PUNCTUATION_TOKENS_PER_CHAR = 0.47
DIGIT_TOKENS = 1.47
NON_ASCII_LETTER_TOKENS = 0.35
MESSAGE_TOKENS = 20.0
TEXT_WEIGHTS = (
    SHORT_WORD_TOKENS,
    LONG_WORD_TOKENS_PER_LETTER,
    PUNCTUATION_TOKENS_PER_CHAR,
    DIGIT_TOKENS,
    NON_ASCII_LETTER_TOKENS,
)
ESTIMATE_NAME = "estimate: words, punctuation and digits (fitted to a BPE tokenizer)"

_WORD = re.compile(r"[^\W\d_]+")
_LONG_WORD = re.compile(r"[^\W\d_]{7,}")
_PUNCTUATION = re.compile(r"[^\w\s]")
_DIGIT = re.compile(r"\d")
_NON_ASCII_LETTER = re.compile(r"[^\W\d_\x00-\x7f]")

TokenCounter = Callable[[JudgeRequest], int]


def estimated_tokens(request: JudgeRequest) -> int:
    """The input tokens of `request`, estimated from its text (see the weights above)."""
    return math.ceil(sum(_message_tokens(m.content) for m in request.messages))


def _message_tokens(text: str) -> float:
    return sum(map(_line_tokens, text.split("\n"))) + MESSAGE_TOKENS


# Every quoted value is one line (JSON writes a newline as `\n`), and a job's requests
# repeat most of theirs: the system message in every one, a context step in each request
# of its block and in the categorizations. Each line is counted once while it recurs.
@lru_cache(maxsize=8192)
def _line_tokens(line: str) -> float:
    return sum(w * x for w, x in zip(TEXT_WEIGHTS, text_features(line), strict=True))


def text_features(text: str) -> tuple[int, int, int, int, int]:
    """What the estimate weighs in `text`, in the order of `TEXT_WEIGHTS`: short words,
    letters of long words, punctuation, digits, letters outside ASCII.
    `bench/token_estimate.py --fit` fits the weights to a tokenizer from these."""
    long_words = _LONG_WORD.findall(text)
    return (
        len(_WORD.findall(text)) - len(long_words),
        sum(map(len, long_words)),
        len(_PUNCTUATION.findall(text)),
        len(_DIGIT.findall(text)),
        0 if text.isascii() else len(_NON_ASCII_LETTER.findall(text)),
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
    decisive_picks_at_most: int = 0  # decisive_rule judge_pick: one per root
    decisive_input_tokens_at_most: int = 0
    # of the input tokens to send: how many a provider that caches a repeated prompt start
    # would read from its cache, and write to it, as each step's prompt starts with the
    # previous step's of its node (the growing prefix; scoring/plan.py)
    cache_read_tokens_expected: int = 0
    cache_write_tokens_expected: int = 0

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


# the shortest prompt start a provider caches: OpenAI's and Claude Sonnet's 1,024 tokens
# (docs/judge.md); a smaller shared start is read at the full input price
CACHE_MIN_TOKENS = 1024


class PrefixReuse:
    """The prompt cache a node's step calls would use, sent one after the other: each
    call reads from the cache the start it shares with the previous call (when that start
    is long enough to be cached), and that start was written by the previous call."""

    def __init__(self) -> None:
        self._text = ""
        self._read_last = 0  # what the previous call read
        self.read = 0  # the tokens the last call added read ...
        self.written = 0  # ... and written (by the call before it)

    def add(self, request: JudgeRequest, tokens: int, sent: int) -> None:
        """The next call of the node: its request, its input tokens, and how many of its
        samples are sent (0 when the verdict store has them)."""
        text = "\n".join(m.content for m in request.messages)
        shared = common_prefix_chars(self._text, text)
        start = tokens * shared // len(text) if text else 0
        self._text = text
        read = start if start >= CACHE_MIN_TOKENS else 0
        self.written = max(read - self._read_last, 0) if sent else 0
        self.read = read * sent
        self._read_last = read


def estimate_plan(
    roots: Sequence[Node],
    config: ScoreConfig,
    criteria: Criteria,
    stored: Callable[[JudgeRequest], bool],
    tokens: TokenCounter = estimated_tokens,
    tokenizer: str = ESTIMATE_NAME,
    *,
    budget: PromptBudget | None = None,
) -> PlanFigures:
    """Plan every node of `roots` (reading their steps, as the job would, prompts fitted to
    the judge's `budget`: see `judge_budget`) and count."""
    figures = PlanFigures(tokenizer)
    rubric = criteria.rubric
    system = step_system(rubric, config.judge, criteria.answer_shape)
    tasks: set[str] = set()
    max_tokens = 0
    for root in roots:
        figures.trajectories += 1
        files = FileCache()
        scored: dict[str, list[StepView]] = {}  # what a judge_pick request would list
        task = ""
        for node in root.walk():
            figures.nodes += 1
            if node.problems or node.depth > config.max_subagent_depth:
                figures.nodes_not_judged += 1
                continue
            try:
                found = node_steps(node, files, step_chars(config.judge))
            except (InputError, OSError):  # the job reports it as input_changed
                figures.nodes_not_judged += 1
                continue
            if criteria.mode == "auto" and found.task not in tasks:
                tasks.add(found.task)
                derive = derive_request(found.task, config.judge_temperature)
                figures.derivations += 1
                figures.derivation_input_tokens += tokens(derive)
                max_tokens = max(max_tokens, derive.max_tokens)
            plan = plan_node(
                found, node.trajectory_id, rubric, criteria, config, system, budget=budget
            )
            scored[node.id] = [planned.view for planned in plan.steps]
            task = found.task if node is root else task
            reuse = PrefixReuse()
            for index, planned in enumerate(plan.steps):
                count = tokens(planned.request)  # the samples differ only in their key
                figures.step_calls += len(planned.samples)
                figures.step_input_tokens += count * len(planned.samples)
                sent = 0
                for sample in planned.samples:
                    if stored(sample):
                        figures.step_calls_stored += 1
                        figures.step_input_tokens_stored += count
                    else:
                        sent += 1
                reuse.add(planned.request, count, sent)
                figures.cache_read_tokens_expected += reuse.read
                figures.cache_write_tokens_expected += reuse.written
                category = plan.category_request(index, 0.0)
                figures.categorizations_at_most += plan.samples
                figures.categorization_input_tokens_at_most += tokens(category) * plan.samples
                max_tokens = max(max_tokens, planned.request.max_tokens, category.max_tokens)
        if config.decisive_rule == "judge_pick" and any(scored.values()):
            pick = planned_pick_request(root, scored, task, config.judge_temperature)
            figures.decisive_picks_at_most += 1
            figures.decisive_input_tokens_at_most += tokens(pick)
            max_tokens = max(max_tokens, pick.max_tokens)
    figures.output_tokens_per_call_at_most = max_tokens
    return figures


# of the room a prompt has in the judge's context, what is kept back for the estimate's
# error on one request (its totals are within 3%; one request's may be further off)
ESTIMATE_MARGIN = 0.1


def judge_budget(
    config: ScoreConfig, provider: Provider, known_window: int | None
) -> PromptBudget | None:
    """What a step's prompt may take of the judge's context window: `judge_context_tokens`,
    else `known_window` (the price database's figure for its model); None when neither is
    known, and for the embedded judge (its own prompt is not fitted)."""
    window = config.judge_context_tokens or known_window
    if window is None or small_prompt_for(config.judge):
        return None
    return prompt_budget(window, provider.answer_tokens(ANSWER_TOKENS))


def prompt_budget(context_tokens: int, answer_tokens: int) -> PromptBudget:
    """The tokens a step request's prompt may take in a judge's context of
    `context_tokens` that keeps `answer_tokens` for its answer, counted by the estimate
    (see `estimated_tokens`), less ESTIMATE_MARGIN."""
    room = (context_tokens - answer_tokens) * (1 - ESTIMATE_MARGIN)
    return PromptBudget(max(0, int(room)), _text_tokens)


def _text_tokens(text: str) -> int:
    return math.ceil(_message_tokens(text))
