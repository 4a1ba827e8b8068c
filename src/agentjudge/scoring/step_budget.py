"""How many steps the scoring job plans ahead: trees are admitted in order while their steps fit.

Planning a tree builds every one of its step requests at once. Planning all trees up front
kept the event loop busy in bursts (every judge call in flight waited) and made trees finish
in waves; a budget of steps keeps just enough requests queued for the judge client, whatever
mix of small and large trees the collection holds.
"""

from __future__ import annotations

import asyncio
from collections import deque


class StepBudget:
    """At most `total` steps of admitted trees at once; trees are admitted in FIFO order.

    A tree larger than the whole budget is admitted alone (its own calls keep the judge
    busy). Each release wakes only the waiters that now fit, so a job of thousands of
    trees costs O(1) per release.
    """

    def __init__(self, total: int) -> None:
        self.total = max(1, total)
        self.used = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    def cost(self, steps: int) -> int:
        """What a tree of `steps` steps takes from the budget."""
        return min(max(steps, 1), self.total)

    async def acquire(self, cost: int) -> None:
        if not self._waiters and self.used + cost <= self.total:
            self.used += cost
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((cost, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self.release(cost)  # admitted as it was cancelled: pass the steps on
            raise

    def release(self, cost: int) -> None:
        self.used -= cost
        while self._waiters:
            wanted, waiter = self._waiters[0]
            if waiter.done():  # cancelled while waiting
                self._waiters.popleft()
                continue
            if self.used + wanted > self.total:
                break
            self._waiters.popleft()
            self.used += wanted
            waiter.set_result(None)
