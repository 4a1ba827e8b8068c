"""What a judge's calls cost: each call's usage by kind priced from the genai-prices database.

The database ships inside the package (no network: it is never asked to update), and its
version is recorded with every price. Calls are priced one by one, as they are billed: a
model whose price rises above a prompt length (Claude Sonnet 4.5 above 200k input tokens)
would be overcharged if a run's sums were priced as one call. A judge the database does not
know, or one that is not a priced API (the embedded judge, a server of the user's own),
gets no price and the reason why: a price is never guessed. The user's own prices
(`--price-in`, `--price-cache-read`, `--price-cache-write`, `--price-out`) replace the
database's, for a model it does not know or a contract it does not hold.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING, Any

from agentjudge.errors import UsageError

if TYPE_CHECKING:
    from agentjudge.results.score import JudgeCost

# the providers whose prompt cache a job uses: OpenAI's caches a repeated start of 1,024
# tokens or more unasked, Anthropic's at the `cache_control` breakpoints the provider sends
# (docs/judge.md, "Prompt caching"); a dry run foretells their cache reads and writes
PROMPT_CACHING = frozenset({"openai", "azure", "anthropic"})

# our provider names -> genai-prices' provider ids; only hosted APIs that bill per token
_PRICED_PROVIDERS = {
    "openai": "openai",
    "azure": "azure",
    "anthropic": "anthropic",
    "gemini": "google",
}


PER_MILLION = 1_000_000
# the error kind of a call not made because the calls' prices reached --max-cost
COST_CAP = "cost_cap"


@dataclass
class Spending:
    """What the calls made for one piece of work cost (USD): a job sets one per root tree
    in `SPENDING` and the client adds each call's price to the one its task sees. A
    context variable, because a root's calls run in tasks the job spawns, and each task
    starts with its parent's context: no request has to carry its root."""

    usd: float = 0.0


SPENDING: ContextVar[Spending | None] = ContextVar("agentjudge_spending", default=None)


@dataclass(frozen=True)
class Rates:
    """USD per million tokens of each kind, as a provider bills them."""

    input: float  # input that is neither read from nor written to a prompt cache
    cache_read: float
    cache_write: float
    output: float

    def price(self, input_tokens: int, cache_read: int, cache_write: int, output: int) -> float:
        """One call's price in USD; `input_tokens` counts every input token, the cache's
        reads and writes among them."""
        plain = max(input_tokens - cache_read - cache_write, 0)
        return (
            plain * self.input
            + cache_read * self.cache_read
            + cache_write * self.cache_write
            + output * self.output
        ) / PER_MILLION

    def said(self) -> str:
        """The rates in one phrase, as results record where a price came from."""
        return (
            f"--price-* USD per million tokens: input {self.input:g}, cached read "
            f"{self.cache_read:g}, cache write {self.cache_write:g}, output {self.output:g}"
        )


def given_rates(
    price_in: float | None,
    price_cache_read: float | None,
    price_cache_write: float | None,
    price_out: float | None,
) -> Rates | None:
    """The user's prices (USD per million tokens), or None when none is given. Input and
    output must both be given; a cache rate left out is the input rate (no discount is
    assumed that the user did not state)."""
    given = (price_in, price_cache_read, price_cache_write, price_out)
    if all(value is None for value in given):
        return None
    if price_in is None or price_out is None:
        raise UsageError(
            "a price of your own needs --price-in and --price-out (USD per million tokens; "
            "--price-cache-read and --price-cache-write are optional): give both"
        )
    return Rates(
        price_in,
        price_in if price_cache_read is None else price_cache_read,
        price_in if price_cache_write is None else price_cache_write,
        price_out,
    )


class Pricer:
    """Prices one judge's calls: `price` for each call, `cost` for their sum. `rates`: the
    user's own prices, which replace the database's."""

    def __init__(self, provider: str, model: str, rates: Rates | None = None) -> None:
        self.source = f"genai-prices {version('genai-prices')}"
        self.model: str | None = None  # the database's model the judge's matched
        # the model's context window in tokens, when the database gives one
        self.context_window: int | None = None
        self.reason: str | None = None  # why there is no price, when there is none
        self._provider_id = _PRICED_PROVIDERS.get(provider)
        self._model_ref = model
        self._prices: Any = None  # the genai_prices module, once the model is known
        self._given = rates
        self.caches = provider in PROMPT_CACHING
        if rates is not None:
            self.source, self.model = rates.said(), model
            return
        if self._provider_id is None:
            self.reason = f"the judge {provider!r} is not a priced API: no price taken"
            return
        import genai_prices  # its 1.6 MB price table only for a judge it may price

        try:
            found = genai_prices.calc_price(
                genai_prices.Usage(), model, provider_id=self._provider_id
            )
        except LookupError:
            self.reason = f"genai-prices does not know {provider}'s model {model!r}: no price taken"
            return
        self.model = found.model.id
        self.context_window = found.model.context_window
        self._prices = genai_prices

    def price(self, input_tokens: int, cache_read: int, cache_write: int, output: int) -> float:
        """One call's price in USD (0 when the judge has none: `cost` then says why), from
        its tokens as a provider's `Answer` counts them: `input_tokens` is every input
        token, the cache's reads and writes are parts of it with their own rates."""
        if self._given is not None:
            return self._given.price(input_tokens, cache_read, cache_write, output)
        if self._prices is None:
            return 0.0
        usage = self._prices.Usage(
            input_tokens=input_tokens,
            cache_read_tokens=cache_read,
            cache_write_tokens=cache_write,
            output_tokens=output,
        )
        try:
            priced = self._prices.calc_price(usage, self._model_ref, provider_id=self._provider_id)
        except ValueError as exc:  # counts the database finds inconsistent: no price at all
            self.reason = f"a call's usage could not be priced: {exc}"
            self._prices = None
            return 0.0
        return float(priced.total_price)

    def rates(self) -> Rates | None:
        """USD per million tokens of each kind for a call below any price tier (what a
        dry run foretells with), or None when there is no price (`reason` says why)."""
        if self._given is not None:
            return self._given
        if self._prices is None:
            return None
        # a thousand tokens of each kind, priced as a call: the base tier's rate
        k = 1000
        plain = self.price(k, 0, 0, 0)
        return Rates(
            plain * PER_MILLION / k,
            self.price(k, k, 0, 0) * PER_MILLION / k,
            self.price(k, 0, k, 0) * PER_MILLION / k,
            self.price(0, 0, 0, k) * PER_MILLION / k,
        )

    def cost(self, usd: float) -> JudgeCost:
        """The calls' cost as results record it, `usd` their summed prices."""
        return {
            "usd": round(usd, 6) if self.reason is None else None,
            "source": self.source,
            "model": self.model,
            "reason": self.reason,
        }
