"""An adaptive concurrency limit: additive increase on success, multiplicative decrease on 429."""

from __future__ import annotations

import asyncio
import time
from typing import Literal

Outcome = Literal["ok", "rate_limited", "other"]


class AdaptiveLimit:
    """At most `limit` requests in flight, `limit` moving between 1 and `maximum`.

    A 429 cuts the limit by `decrease` (at most once per `cooldown` seconds, so one burst
    of 429s counts once); each success adds 1/limit, about +1 per round of requests.
    """

    def __init__(self, maximum: int, decrease: float = 0.75, cooldown: float = 0.05) -> None:
        self.maximum = maximum
        self.limit = float(maximum)
        self.in_flight = 0
        self._decrease = decrease
        self._cooldown = cooldown
        self._last_cut = 0.0
        self._changed = asyncio.Condition()

    async def acquire(self) -> None:
        async with self._changed:
            await self._changed.wait_for(lambda: self.in_flight < max(1, int(self.limit)))
            self.in_flight += 1

    async def release(self, outcome: Outcome) -> None:
        async with self._changed:
            self.in_flight -= 1
            if outcome == "rate_limited":
                now = time.monotonic()
                if now - self._last_cut >= self._cooldown:
                    self.limit = max(1.0, self.limit * self._decrease)
                    self._last_cut = now
            elif outcome == "ok":
                self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
            self._changed.notify_all()
