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

    Every 429 brings the limit down to what the server was taking when it refused (the
    calls in flight but that one), so a burst of refusals walks it down to the judge's
    capacity as the refused calls come back; a 429 also cuts it by `decrease`, at most once
    per `cooldown` seconds (one burst counts once), for servers shared with other clients.
    While calls wait for a slot, each success adds 1/limit (about +1 per round of
    requests), probing for more room; with none waiting the limit stays.
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
            # what the server took besides this call
            limit = min(self.limit, float(self.in_flight - 1))
            now = time.monotonic()
            if now - self._last_cut >= self._cooldown:
                limit = min(limit, self.limit * self._decrease)
                self._last_cut = now
            self.limit = max(1.0, limit)
        elif outcome == "ok" and self._waiters:
            self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        self._give_back(1)
