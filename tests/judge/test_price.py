"""A judge's calls are priced one by one from genai-prices, by kind of token; a judge the
database does not know gets no price and the reason, never a guess."""

from __future__ import annotations

from importlib.metadata import version

import pytest

from agentjudge.errors import UsageError
from agentjudge.judge.price import Pricer, Rates, given_rates

SOURCE = f"genai-prices {version('genai-prices')}"


def test_a_call_is_priced_by_kind_of_token() -> None:
    pricer = Pricer("openai", "gpt-5-mini-2025-08-07")
    # gpt-5-mini: $0.25 per million input, $0.025 cached read, $2 output (reasoning included)
    assert pricer.price(1_000_000, 500_000, 0, 100_000) == pytest.approx(0.125 + 0.0125 + 0.2)
    assert pricer.price(1_000_000, 0, 0, 100_000) == pytest.approx(0.25 + 0.2)
    assert pricer.cost(0.3375) == {
        "usd": 0.3375,
        "source": SOURCE,
        "model": "gpt-5-mini",
        "reason": None,
    }


def test_anthropic_cache_writes_and_reads_have_their_own_rates() -> None:
    pricer = Pricer("anthropic", "claude-sonnet-4-5")
    # $3 input, $3.75 cache write (5 min), $0.30 cache read, $15 output per million
    call = pricer.price(10_000 + 20_000 + 70_000, 70_000, 20_000, 1_000)
    assert call == pytest.approx(0.03 + 0.075 + 0.021 + 0.015)


def test_each_call_is_priced_alone_so_a_long_prompt_tier_applies_per_call() -> None:
    pricer = Pricer("anthropic", "claude-sonnet-4-5")
    # two calls of 150k input: each under Sonnet 4.5's 200k tier, $3 per million
    assert 2 * pricer.price(150_000, 0, 0, 0) == pytest.approx(0.9)
    # one call of 300k input is over it ($6 per million)
    assert pricer.price(300_000, 0, 0, 0) == pytest.approx(1.8)


@pytest.mark.parametrize(
    ("provider", "model", "reason"),
    [
        ("openai", "gpt-nobody-knows", "genai-prices does not know openai's model"),
        ("openai-compatible", "gpt-5-mini", "the judge 'openai-compatible' is not a priced API"),
        ("local", "qwen2.5-coder-1.5b", "the judge 'local' is not a priced API"),
    ],
)
def test_no_price_is_null_with_the_reason(provider: str, model: str, reason: str) -> None:
    pricer = Pricer(provider, model)
    assert pricer.price(1000, 0, 0, 10) == 0.0
    cost = pricer.cost(0.0)
    assert cost["usd"] is None
    assert cost["model"] is None
    assert str(cost["reason"]).startswith(reason)
    assert cost["source"] == SOURCE


def test_usage_the_database_finds_inconsistent_leaves_the_run_without_a_price() -> None:
    pricer = Pricer("openai", "gpt-5-mini")
    assert pricer.price(1000, 0, 0, 10) > 0
    assert pricer.price(10, 20, 0, 5) == 0.0  # more cached than input: not a real call
    cost = pricer.cost(0.5)
    assert cost["usd"] is None
    assert str(cost["reason"]).startswith("a call's usage could not be priced: ")


def test_prices_of_ones_own_replace_the_database_and_price_a_model_it_does_not_know() -> None:
    rates = given_rates(2.0, 0.5, 2.5, 8.0)
    assert rates == Rates(2.0, 0.5, 2.5, 8.0)
    pricer = Pricer("openai", "gpt-nobody-knows", rates)
    assert pricer.reason is None
    # 100k input, of which 40k read from the cache and 10k written to it, 1k output
    assert pricer.price(100_000, 40_000, 10_000, 1_000) == pytest.approx(
        (50_000 * 2.0 + 40_000 * 0.5 + 10_000 * 2.5 + 1_000 * 8.0) / 1e6
    )
    cost = pricer.cost(1.5)
    assert (cost["usd"], cost["model"]) == (1.5, "gpt-nobody-knows")
    assert cost["source"] == (
        "--price-* USD per million tokens: input 2, cached read 0.5, cache write 2.5, output 8"
    )
    # a judge that is no priced API is priced too, when its prices are given
    assert Pricer("local", "qwen", rates).price(1_000_000, 0, 0, 0) == pytest.approx(2.0)


def test_a_cache_rate_left_out_is_the_input_rate_and_input_and_output_are_both_needed() -> None:
    assert given_rates(None, None, None, None) is None
    assert given_rates(3.0, None, None, 15.0) == Rates(3.0, 3.0, 3.0, 15.0)
    for partial in ((3.0, None, None, None), (None, 0.3, None, 15.0)):
        with pytest.raises(UsageError, match="needs --price-in and --price-out"):
            given_rates(*partial)


def test_the_rates_a_dry_run_foretells_with_are_the_database_s_base_tier() -> None:
    assert Pricer("openai", "gpt-5-mini").rates() == Rates(0.25, 0.025, 0.25, 2.0)
    assert Pricer("anthropic", "claude-sonnet-4-5").rates() == Rates(3.0, 0.3, 3.75, 15.0)
    assert Pricer("openai", "gpt-nobody-knows").rates() is None
