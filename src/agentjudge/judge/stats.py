"""The judge client's counters, as results files write them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentjudge.results.score import JudgeCounters


@dataclass
class ClientStats:
    """Counters over the client's life. HTTP success and protocol validity are separate."""

    calls: int = 0
    successes: int = 0
    errors: int = 0
    protocol_errors: int = 0
    retries: int = 0
    store_hits: int = 0  # verdicts the store answered (written as `cache_hits`)
    verdicts: int = 0  # answers with a verdict, from the judge or from the store
    store_rejected: int = 0  # stored verdicts unusable (unreadable, out of range): judged again
    input_tokens: int = 0
    output_tokens: int = 0
    # parts of the two above: read from / written to the provider's prompt cache, thinking
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0  # the calls' prices summed (`JudgeClient.pricer`; results: `cost`)
    latency_seconds: float = 0.0
    # batch mode: requests its batches did not answer, sent online (`--batch-fallback online`)
    batch_fallbacks: int = 0

    def as_dict(self) -> JudgeCounters:
        """The counters as results files write them, in the order `agentjudge.score/v1`'s
        `judge` has them (`agentjudge grade`'s `judge_usage` picks some): latency as the
        mean per call in milliseconds, None before any call; `store_hits` keeps the name
        results files have always given it, `cache_hits`."""
        return {
            "calls": self.calls,
            "successes": self.successes,
            "errors": self.errors,
            "protocol_errors": self.protocol_errors,
            "retries": self.retries,
            "cache_hits": self.store_hits,
            "store_rejected": self.store_rejected,
            "verdicts": self.verdicts,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "mean_latency_ms": (
                round(self.latency_seconds * 1000 / self.calls, 1) if self.calls else None
            ),
        }
