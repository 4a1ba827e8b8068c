"""Limits that admit waiters in FIFO order: the judge's adaptive concurrency limit, and the
gate beneath it that other limits (the scoring job's step budget) share. For a judge that
keeps only its last prompt evaluated, the limit admits in prefix order instead
(`AdaptiveLimit(prefix_order=True)`)."""

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
        self._waiters: deque[tuple[int, asyncio.Future[None], str]] = deque()

    def _fits(self, cost: int) -> bool:
        raise NotImplementedError

    async def acquire(self, cost: int = 1, key: str = "") -> None:
        """Wait until `cost` fits; `key` is what an ordering by prefix compares."""
        if not self._waiters and self._fits(cost):
            self._admitted(cost, key)
            return
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append((cost, waiter, key))
        try:
            await waiter
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._give_back(cost)  # admitted as it was cancelled: pass it on
            raise

    def _admitted(self, cost: int, key: str) -> None:
        self.in_flight += cost

    def _give_back(self, cost: int) -> None:
        self.in_flight -= cost
        self._wake()

    def _wake(self) -> None:
        while self._waiters:
            wanted, waiter, key = self._waiters[0]
            if waiter.done():  # cancelled while queued
                self._waiters.popleft()
                continue
            if not self._fits(wanted):
                break
            self._waiters.popleft()
            self._admitted(wanted, key)
            waiter.set_result(None)


# How long a freed slot waits before prefix order picks its call: long enough for the job to
# ask the follow-up of the call that just ended (a step's category, whose prompt is the step's
# with another question) while that prompt is still the judge's; under a hundredth of a call
# to the embedded judge (2-5 s).
PREFIX_ORDER_WAIT = 0.01
# In prefix order, the call waiting longest goes next once it has been passed over this many
# times: a long run of one task's trees cannot hold another tree (and the share of the step
# budget it holds) back for the rest of the job.
MAX_PASSES = 32
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

    With `prefix_order`, for a judge that keeps only the last prompt it read (llama.cpp's
    server: it reads again all of the next prompt after the start the two share), a freed
    slot goes to the waiting call whose `key` (its prompt) shares the longest start with the
    last admitted one, earliest first among equals, after PREFIX_ORDER_WAIT; the longest
    waiting call goes next once passed over MAX_PASSES times.
    """

    def __init__(self, maximum: int, prefix_order: bool = False) -> None:
        super().__init__()
        self.maximum = maximum
        self.limit = float(maximum)
        self.set_aside = 0
        self.typical_seconds: float | None = None  # none answered yet: none is overdue
        self.prefix_order = prefix_order
        self._last_key = ""
        self._waking: asyncio.TimerHandle | None = None
        self._oldest: asyncio.Future[None] | None = None  # the longest waiting call...
        self._passes = 0  # ...and how many times it has been passed over

    def _fits(self, cost: int) -> bool:
        return self.in_flight + cost <= max(1, int(self.limit))

    def _admitted(self, cost: int, key: str) -> None:
        self.in_flight += cost
        self._last_key = key

    def _wake(self) -> None:
        if not self.prefix_order:
            super()._wake()
        elif self._waiters and self._waking is None:
            loop = asyncio.get_running_loop()
            self._waking = loop.call_later(PREFIX_ORDER_WAIT, self._wake_in_prefix_order)

    def _wake_in_prefix_order(self) -> None:
        self._waking = None
        while True:
            live = [w for w in self._waiters if not w[1].done()]
            self._waiters = deque(live)
            if not live or not self._fits(1):
                return
            chosen = max(live, key=lambda w: shared_start(w[2], self._last_key))
            oldest = live[0]
            if chosen is not oldest:
                self._passes = self._passes + 1 if oldest[1] is self._oldest else 1
                self._oldest = oldest[1]
                if self._passes > MAX_PASSES:
                    chosen = oldest
            self._waiters.remove(chosen)
            self._admitted(chosen[0], chosen[2])
            chosen[1].set_result(None)

    async def start(self, key: str = "") -> Call:
        """Wait for a slot; the call is watched from then on (end it with `release`).
        `key`, the call's prompt, matters only in prefix order."""
        await self.acquire(1, key)
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


def shared_start(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their start (compared by slices, which is
    C code, in O(log n) steps)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle - 1
    return low
