"""The adaptive limit: FIFO slots, back-off and recovery, and cancellation of queued waiters."""

from __future__ import annotations

import asyncio

from agentjudge.judge.limiter import AdaptiveLimit


def test_cancelling_queued_waiters_keeps_the_count_right() -> None:
    async def go() -> None:
        limit = AdaptiveLimit(2)
        await limit.acquire()
        await limit.acquire()
        waiters = [asyncio.ensure_future(limit.acquire()) for _ in range(100)]
        await asyncio.sleep(0)
        for waiter in waiters[:99]:
            waiter.cancel()
        await asyncio.gather(*waiters[:99], return_exceptions=True)
        limit.release("ok")
        await asyncio.wait_for(waiters[99], 1)  # the one still waiting gets the freed slot
        assert limit.in_flight == 2
        limit.release("ok")
        limit.release("ok")
        assert limit.in_flight == 0

    asyncio.run(go())


def test_a_slot_granted_to_a_cancelled_waiter_is_passed_on() -> None:
    async def go() -> None:
        limit = AdaptiveLimit(1)
        await limit.acquire()
        first = asyncio.ensure_future(limit.acquire())
        second = asyncio.ensure_future(limit.acquire())
        await asyncio.sleep(0)
        limit.release("ok")  # grants `first`...
        first.cancel()  # ...which is cancelled before it runs
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.wait_for(second, 1)
        assert limit.in_flight == 1

    asyncio.run(go())


def test_a_429_finds_the_capacity_and_demand_probes_for_more() -> None:
    async def go() -> None:
        limit = AdaptiveLimit(16, cooldown=0.0)
        for _ in range(5):
            await limit.acquire()
        limit.release("rate_limited")  # the server took the other 4
        assert limit.limit == 4
        for _ in range(4):
            limit.release("ok")
        # nobody waiting: successes do not raise the limit (nothing to learn)
        for _ in range(100):
            await limit.acquire()
            limit.release("ok")
        assert limit.limit == 4

        async def call() -> None:
            await limit.acquire()
            await asyncio.sleep(0)
            limit.release("ok")

        # calls queued for a slot: it grows, about +1 a round, up to the maximum
        await asyncio.gather(*(call() for _ in range(2000)))
        assert limit.limit == 16

    asyncio.run(go())
