"""What a scoring job will cost, foretold before its first call from its plan's figures and
the judge's rates (`score --dry-run`, and `--max-cost`'s check): pure arithmetic.

Every answer is counted at its full token budget (the plan cannot know how long the judge
will answer), so the figure is a bound rather than a guess. With `caching`, the input the
plan expects a prompt cache to read and write (`PlanFigures.cache_read_tokens_expected`,
the growing prefix of a node's step prompts) is priced at the cache's rates; with `batch`,
the whole is priced at the batch discount.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjudge.judge.price import Rates
from agentjudge.scoring.estimate import PlanFigures

# OpenAI's Batch API and Anthropic's Message Batches bill every token of a batched request
# at half the online price (docs/judge.md, "Usage by kind and price")
BATCH_DISCOUNT = 0.5


@dataclass(frozen=True)
class Foretold:
    """A job's cost in USD: `usd` for the calls it will send (categorizations left out:
    they depend on the scores), `at_most` with every categorization and decisive pick;
    `input_usd` the input part of `usd`."""

    usd: float
    at_most: float
    input_usd: float


def foretell_cost(figures: PlanFigures, rates: Rates, caching: bool, batch: bool) -> Foretold:
    """The cost of the plan `figures` at `rates` (see the module's docstring)."""
    read = figures.cache_read_tokens_expected if caching else 0
    written = figures.cache_write_tokens_expected if caching else 0
    answer = figures.output_tokens_per_call_at_most
    inputs = rates.price(figures.input_tokens_to_send, read, written, 0)
    usd = inputs + rates.price(0, 0, 0, figures.calls_to_send * answer)
    more_calls = figures.categorizations_at_most + figures.decisive_picks_at_most
    more_input = figures.categorization_input_tokens_at_most + figures.decisive_input_tokens_at_most
    at_most = usd + rates.price(more_input, 0, 0, more_calls * answer)
    factor = BATCH_DISCOUNT if batch else 1.0
    return Foretold(usd * factor, at_most * factor, inputs * factor)
