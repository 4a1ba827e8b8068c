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

    async def grant(self, steps: int) -> Grant:
        """Wait for a tree of `steps` steps to be admitted; its share comes back as they
        are judged (`Grant.settle`)."""
        cost = self.cost(steps)
        await self.acquire(cost)
        return Grant(self, steps, cost)


class Grant:
    """A tree's share of the budget, given back step by step as its steps are judged.

    A tree holds at most as many steps as it still has to judge: one waiting on a slow call
    (a judge that never answers costs a whole timeout) holds one step, not all of them, so
    the other trees keep the judge busy meanwhile.
    """

    def __init__(self, budget: StepBudget, steps: int, cost: int) -> None:
        self._budget = budget
        self._unjudged = steps
        self.held = cost

    def settle(self, steps: int = 1) -> None:
        """`steps` more steps judged (or found to need no call)."""
        self._unjudged = max(0, self._unjudged - steps)
        give = self.held - min(self.held, self._unjudged)
        if give > 0:
            self.held -= give
            self._budget.release(give)

    def close(self) -> None:
        """The tree is done: whatever it still holds goes back."""
        self.settle(self._unjudged)
