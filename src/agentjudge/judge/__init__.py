"""The judge client: requests, providers, verdict parsing, retries, limits and accounting."""

from agentjudge.judge.client import ClientStats, JudgeClient, JudgeOutcome
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.verdict import Verdict, parse_verdict

__all__ = [
    "ClientStats",
    "JudgeClient",
    "JudgeOutcome",
    "JudgeRequest",
    "Verdict",
    "parse_verdict",
]
