"""What a judge's calls cost: each call's usage by kind priced from the genai-prices database.

The database ships inside the package (no network: it is never asked to update), and its
version is recorded with every price. Calls are priced one by one, as they are billed: a
model whose price rises above a prompt length (Claude Sonnet 4.5 above 200k input tokens)
would be overcharged if a run's sums were priced as one call. A judge the database does not
know, or one that is not a priced API (the embedded judge, a server of the user's own),
gets no price and the reason why: a price is never guessed.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjudge.results.score import JudgeCost

# our provider names -> genai-prices' provider ids; only hosted APIs that bill per token
_PRICED_PROVIDERS = {
    "openai": "openai",
    "azure": "azure",
    "anthropic": "anthropic",
    "gemini": "google",
}


class Pricer:
    """Prices one judge's calls: `price` for each call, `cost` for their sum."""

    def __init__(self, provider: str, model: str) -> None:
        self.source = f"genai-prices {version('genai-prices')}"
        self.model: str | None = None  # the database's model the judge's matched
        # the model's context window in tokens, when the database gives one
        self.context_window: int | None = None
        self.reason: str | None = None  # why there is no price, when there is none
        self._provider_id = _PRICED_PROVIDERS.get(provider)
        self._model_ref = model
        self._prices: Any = None  # the genai_prices module, once the model is known
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

    def cost(self, usd: float) -> JudgeCost:
        """The calls' cost as results record it, `usd` their summed prices."""
        return {
            "usd": round(usd, 6) if self.reason is None else None,
            "source": self.source,
            "model": self.model,
            "reason": self.reason,
        }
