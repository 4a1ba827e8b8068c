"""The judge client: requests, providers, verdict parsing, retries, limits and accounting.

The client (and aiohttp under it) loads on first use: commands that never call a judge,
such as `agentjudge grade` with deterministic checks only, start without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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
_HOMES = {
    "ClientStats": "stats",
    "JudgeClient": "client",
    "JudgeOutcome": "client",
    "JudgeRequest": "request",
    "Verdict": "verdict",
    "parse_verdict": "verdict",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'agentjudge.judge' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentjudge.judge.{home}"), name)
