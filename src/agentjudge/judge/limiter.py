"""An adaptive concurrency limit: additive increase on success, multiplicative decrease on 429."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Literal

Outcome = Literal["ok", "rate_limited", "other"]


class AdaptiveLimit:
    """At most `limit` requests in flight, `limit` moving between 1 and `maximum`.

    A 429 cuts the limit by `decrease` (at most once per `cooldown` seconds, so one burst
    of 429s counts once); each success adds 1/limit, about +1 per round of requests.
    Waiters queue in FIFO order and only as many are woken as there are free slots, so a
    job with 100,000 queued calls costs O(1) per release, not O(waiters).
    """

    def __init__(self, maximum: int, decrease: float = 0.9, cooldown: float = 0.05) -> None:
        self.maximum = maximum
        self.limit = float(maximum)
        self.in_flight = 0
        self._decrease = decrease
        self._cooldown = cooldown
        self._last_cut = 0.0
        self._waiters: deque[asyncio.Future[None]] = deque()

    def _room(self) -> bool:
        return self.in_flight < max(1, int(self.limit))

    async def acquire(self) -> None:
        if self._room() and not self._waiters:
            self.in_flight += 1
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter
        except asyncio.CancelledError:
            # A cancelled waiter stays in the queue (release skips it); removing it would
            # cost O(waiters) each, and a fail-fast job cancels thousands at once.
            if waiter.done() and not waiter.cancelled():
                self.release("other")  # the slot was granted as we were cancelled: pass it on
            raise

    def release(self, outcome: Outcome) -> None:
        self.in_flight -= 1
        if outcome == "rate_limited":
            now = time.monotonic()
            if now - self._last_cut >= self._cooldown:
                self.limit = max(1.0, self.limit * self._decrease)
                self._last_cut = now
        elif outcome == "ok":
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        while self._waiters and self._room():
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)
