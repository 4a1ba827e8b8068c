"""How many steps the scoring job plans ahead: trees are admitted in order while their steps fit.

Planning a tree builds every one of its step requests at once. Planning all trees up front
kept the event loop busy in bursts (every judge call in flight waited) and made trees finish
in waves; a budget of steps keeps just enough requests queued for the judge client, whatever
mix of small and large trees the collection holds.
"""

from __future__ import annotations

from agentjudge.judge.limiter import FifoGate


class StepBudget(FifoGate):
    """At most `total` steps of admitted trees at once; trees are admitted in FIFO order.

    A tree larger than the whole budget is admitted alone (its own calls keep the judge
    busy).
    """

    def __init__(self, total: int) -> None:
        super().__init__()
        self.total = max(1, total)

    def cost(self, steps: int) -> int:
        """What a tree of `steps` steps takes from the budget."""
        return min(max(steps, 1), self.total)

    def _fits(self, cost: int) -> bool:
        return self.in_flight + cost <= self.total

    def release(self, cost: int) -> None:
        self._give_back(cost)
