"""A job's cost foretold from its plan: input at the cache's rates where a provider caches
the repeated prompt start, every answer at its full budget, the batch discount."""

from __future__ import annotations

import pytest

from agentjudge.judge.price import Rates
from agentjudge.scoring.estimate import PlanFigures
from agentjudge.scoring.foretell import BATCH_DISCOUNT, foretell_cost

SONNET = Rates(3.0, 0.3, 3.75, 15.0)  # claude-sonnet-4-5, USD per million tokens


def figures() -> PlanFigures:
    return PlanFigures(
        "estimate",
        step_calls=100,
        step_calls_stored=20,
        step_input_tokens=300_000,
        step_input_tokens_stored=60_000,
        categorizations_at_most=100,
        categorization_input_tokens_at_most=150_000,
        output_tokens_per_call_at_most=500,
        cache_read_tokens_expected=160_000,
        cache_write_tokens_expected=20_000,
    )


def test_online_without_caching_is_every_input_token_at_the_input_rate() -> None:
    foretold = foretell_cost(figures(), SONNET, caching=False, batch=False)
    # 80 calls to send: 240,000 input tokens and at most 80 x 500 output tokens
    assert foretold.input_usd == pytest.approx(240_000 * 3.0 / 1e6)
    assert foretold.usd == pytest.approx((240_000 * 3.0 + 40_000 * 15.0) / 1e6)
    # and every categorization: 150,000 input tokens, 100 x 500 output
    assert foretold.at_most == pytest.approx(foretold.usd + (150_000 * 3.0 + 50_000 * 15.0) / 1e6)


def test_caching_prices_the_repeated_start_at_the_cache_s_rates() -> None:
    foretold = foretell_cost(figures(), SONNET, caching=True, batch=False)
    plain = 240_000 - 160_000 - 20_000
    inputs = (plain * 3.0 + 160_000 * 0.3 + 20_000 * 3.75) / 1e6
    assert foretold.input_usd == pytest.approx(inputs)
    assert foretold.usd == pytest.approx(inputs + 40_000 * 15.0 / 1e6)
    assert foretold.input_usd < foretell_cost(figures(), SONNET, False, False).input_usd / 2


def test_a_batch_is_billed_at_half_the_online_price() -> None:
    online = foretell_cost(figures(), SONNET, caching=True, batch=False)
    batched = foretell_cost(figures(), SONNET, caching=True, batch=True)
    assert BATCH_DISCOUNT == 0.5
    assert batched.usd == pytest.approx(online.usd / 2)
    assert batched.at_most == pytest.approx(online.at_most / 2)
