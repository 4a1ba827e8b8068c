"""Limits that admit waiters in FIFO order: the judge's adaptive concurrency limit, and the
gate beneath it that other limits (the scoring job's step budget) share."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass
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


# A call in flight this many times longer than calls typically take (and at least
# OVERDUE_SECONDS) is presumed stuck (a judge that accepted it and will never answer).
OVERDUE_FACTOR = 5.0
OVERDUE_SECONDS = 2.0
# the typical latency: a moving average of answered calls' latencies, this weight on the newest
_LATENCY_WEIGHT = 0.1


@dataclass(slots=True)
class Call:
    """A call admitted by `AdaptiveLimit.start`, watched for being overdue."""

    timer: asyncio.TimerHandle | None = None
    aside: bool = False  # overdue: no longer counted against the limit


class AdaptiveLimit(FifoGate):
    """At most `limit` requests in flight, `limit` moving between 1 and `maximum`.

    Every 429 brings the limit down to what the server was taking when it refused (the
    calls in flight but that one): a burst of refusals walks it down to the judge's capacity
    as the refused calls come back, while a server refusing a share of calls whatever the
    load (a shared quota) costs one slot per refusal, no more. While calls wait for a slot,
    each success adds 1/limit (about +1 per round of requests), probing for more room; with
    none waiting the limit stays. Behind one client, a judge of capacity C is found within
    the first burst of refusals; a server refusing a share p of calls settles the limit near
    (1 - p) / p (9 at 10%).

    A call overdue (in flight OVERDUE_FACTOR times the typical latency, and at least
    OVERDUE_SECONDS) is set aside: it stops counting against the limit until it ends, so
    a judge that never answers some calls holds their slots for seconds, not for the whole
    timeout (a low limit full of such calls would stall the run). At most `maximum` calls are
    set aside at once: never more than 2 x `maximum` are in flight.
    """

    def __init__(self, maximum: int) -> None:
        super().__init__()
        self.maximum = maximum
        self.limit = float(maximum)
        self.set_aside = 0
        self.typical_seconds: float | None = None  # none answered yet: none is overdue

    def _fits(self, cost: int) -> bool:
        return self.in_flight + cost <= max(1, int(self.limit))

    async def start(self) -> Call:
        """Wait for a slot; the call is watched from then on (end it with `release`)."""
        await self.acquire()
        call = Call()
        if self.typical_seconds is not None:
            patience = max(OVERDUE_SECONDS, OVERDUE_FACTOR * self.typical_seconds)
            loop = asyncio.get_running_loop()
            call.timer = loop.call_later(patience, self._set_aside, call)
        return call

    def _set_aside(self, call: Call) -> None:
        if self.set_aside >= self.maximum:
            return
        call.aside = True
        self.set_aside += 1
        self._give_back(1)

    def release(self, outcome: Outcome, call: Call | None = None, seconds: float = 0.0) -> None:
        """End a call: `outcome`, after `seconds` in flight."""
        aside = call is not None and call.aside
        if call is not None and call.timer is not None:
            call.timer.cancel()
        if outcome == "rate_limited":
            # what the server took besides this call
            taken = self.in_flight - (0 if aside else 1)
            self.limit = max(1.0, min(self.limit, float(taken)))
        elif outcome == "ok":
            typical = self.typical_seconds
            self.typical_seconds = (
                seconds if typical is None else typical + _LATENCY_WEIGHT * (seconds - typical)
            )
            if self._waiters:
                self.limit = min(float(self.maximum), self.limit + 1.0 / self.limit)
        if aside:
            self.set_aside -= 1
            self._give_back(0)  # nothing of the limit to give back; the limit may have grown
        else:
            self._give_back(1)
