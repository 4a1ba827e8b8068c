"""The judge client: requests, providers, verdict parsing, retries, limits and accounting.

The client (and aiohttp under it) loads on first use: commands that never call a judge,
such as `agentjudge grade` with deterministic checks only, start without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.judge.client import JudgeClient, JudgeOutcome
    from agentjudge.judge.request import JudgeRequest
    from agentjudge.judge.stats import ClientStats
    from agentjudge.judge.verdict import Verdict, parse_verdict

__all__ = [
    "ClientStats",
    "JudgeClient",
    "JudgeOutcome",
    "JudgeRequest",
    "Verdict",
    "parse_verdict",
]

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(
        __name__,
        {
            "client": ("JudgeClient", "JudgeOutcome"),
            "request": ("JudgeRequest",),
            "stats": ("ClientStats",),
            "verdict": ("Verdict", "parse_verdict"),
        },
    )
