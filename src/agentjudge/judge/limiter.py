"""Limits that admit waiters in FIFO order: the judge's adaptive concurrency limit, and the
gate beneath it that other limits (the scoring job's step budget) share."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from typing import Literal

Outcome = Literal["ok", "rate_limited", "other"]


class FifoGate:
    """Waiters admitted in FIFO order while what they take fits (`_fits`).

    Only as many waiters are woken as fit, so a job with 100,000 queued waiters costs O(1)
    per release, not O(waiters). A waiter cancelled while queued stays in the queue (waking
    skips it): removing it would cost O(waiters) each, and a fail-fast job cancels
    thousands at once.
    """

    def __init__(self) -> None:
        self.in_flight = 0
        self._waiters: deque[tuple[int, asyncio.Future[None]]] = deque()

    def _fits(self, cost: int) -> bool:
        raise NotImplementedError

    async def acquire(self, cost: int = 1) -> None:
        if not self._waiters and self._fits(cost):
            self.in_flight += cost
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((cost, waiter))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._give_back(cost)  # admitted as it was cancelled: pass it on
            raise

    def _give_back(self, cost: int) -> None:
        self.in_flight -= cost
        while self._waiters:
            wanted, waiter = self._waiters[0]
            if waiter.done():  # cancelled while queued
                self._waiters.popleft()
                continue
            if not self._fits(wanted):
                break
            self._waiters.popleft()
            self.in_flight += wanted
            waiter.set_result(None)


class AdaptiveLimit(FifoGate):
    """At most `limit` requests in flight, `limit` moving between 1 and `maximum`.

    A 429 cuts the limit by `decrease` (at most once per `cooldown` seconds, so one burst
    of 429s counts once); each success adds 1/limit, about +1 per round of requests.
    """

    def __init__(self, maximum: int, decrease: float = 0.9, cooldown: float = 0.05) -> None:
        super().__init__()
        self.maximum = maximum
        self.limit = float(maximum)
        self._decrease = decrease
        self._cooldown = cooldown
        self._last_cut = 0.0

    def _fits(self, cost: int) -> bool:
        return self.in_flight + cost <= max(1, int(self.limit))

    def release(self, outcome: Outcome) -> None:
        if outcome == "rate_limited":
            now = time.monotonic()
            if now - self._last_cut >= self._cooldown:
                self.limit = max(1.0, self.limit * self._decrease)
                self._last_cut = now
        elif outcome == "ok":
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        self._give_back(1)
