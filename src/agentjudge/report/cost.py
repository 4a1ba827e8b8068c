"""A run's judge cost in one phrase, as the reports of `score` and `grade` show it."""

from __future__ import annotations

from agentjudge.results.score import JudgeCost


def cost_text(cost: JudgeCost) -> str:
    """The cost with the model it was priced as and where its prices came from, or why
    there is none."""
    if cost["usd"] is None:
        return f"no price: {cost['reason']}"
    return f"${cost['usd']:.6f} ({cost['model']}, {cost['source']})"
