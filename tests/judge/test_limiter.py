"""The adaptive limit: FIFO slots, back-off and recovery, and cancellation of queued waiters."""

from __future__ import annotations

import asyncio

import pytest

from agentjudge.judge import limiter
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
        limit = AdaptiveLimit(16)
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


def test_an_overdue_call_stops_counting_against_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(limiter, "OVERDUE_SECONDS", 0.05)

    async def go() -> None:
        limit = AdaptiveLimit(2)
        first = await limit.start()  # nothing answered yet: nothing can be overdue
        assert first.timer is None
        limit.release("ok", first, 0.001)
        stuck = [await limit.start(), await limit.start()]  # never answered
        waiting = asyncio.create_task(limit.start())
        await asyncio.sleep(0.01)
        assert not waiting.done()  # both slots taken
        await asyncio.sleep(0.2)
        assert waiting.done()  # the stuck ones were set aside
        assert all(call.aside for call in stuck)
        # the third is overdue too, but no more than `maximum` are set aside: at most
        # 2 x maximum calls are ever in flight
        assert not waiting.result().aside
        assert (limit.in_flight, limit.set_aside) == (1, 2)
        more = await limit.start()
        late = asyncio.create_task(limit.start())
        await asyncio.sleep(0.01)
        assert not late.done()
        for call in stuck:  # they end at last: no slot is given back twice
            limit.release("other", call, 30.0)
        assert (limit.in_flight, limit.set_aside) == (2, 0)
        assert not late.done()
        limit.release("ok", more, 0.001)
        await asyncio.wait_for(late, 1)
        for call in (waiting.result(), late.result()):
            limit.release("ok", call, 0.001)
        assert (limit.in_flight, limit.set_aside) == (0, 0)

    asyncio.run(go())


# --- prefix order: one call at a time to a judge that keeps only its last prompt -----------


def queue(limit: AdaptiveLimit, keys: list[str], order: list[str]) -> list[asyncio.Task[None]]:
    """A call per key, queued in this order at their tasks' first step; each one admitted
    appends its key to `order` and ends at once."""

    async def call(key: str) -> None:
        await limit.start(key)
        order.append(key)
        limit.release("ok")

    return [asyncio.ensure_future(call(key)) for key in keys]


def test_in_prefix_order_the_call_sharing_the_longest_start_goes_next() -> None:
    async def go() -> list[str]:
        limit = AdaptiveLimit(1, prefix_order=True)
        await limit.start("system|task A|step 1")
        order: list[str] = []
        keys = ["system|task B|step 1", "system|task A|step 2", "system|task B|step 2"]
        calls = queue(limit, keys, order)
        await asyncio.sleep(0)  # all three queued
        limit.release("ok")
        await asyncio.wait_for(asyncio.gather(*calls), 5)
        return order

    order = asyncio.run(go())
    # A's step first (it shares "system|task A|step "), then B's two in their order
    assert order == ["system|task A|step 2", "system|task B|step 1", "system|task B|step 2"]


def test_a_follow_up_asked_as_a_call_ends_goes_before_older_calls() -> None:
    async def go() -> list[str]:
        limit = AdaptiveLimit(1, prefix_order=True)
        await limit.start("system|task A|step 3|Is this step correct?")
        order: list[str] = []
        older = queue(limit, ["system|task B|step 1"], order)
        await asyncio.sleep(0)
        limit.release("ok")  # the step's call ends: its category is asked right after
        # queued at the task's first step, which runs before the freed slot's wait is over
        # (a ready task runs before a timer that falls due at the same turn of the loop)
        follow_up = queue(limit, ["system|task A|step 3|Which failure is it?"], order)
        await asyncio.wait_for(asyncio.gather(*older, *follow_up), 5)
        return order

    assert asyncio.run(go()) == [
        "system|task A|step 3|Which failure is it?",
        "system|task B|step 1",
    ]


def test_in_prefix_order_a_call_is_passed_over_a_bounded_number_of_times() -> None:
    async def go() -> list[str]:
        limit = AdaptiveLimit(1, prefix_order=True)
        await limit.start("system|task T|0")
        order: list[str] = []

        async def call(key: str) -> None:
            await limit.start(key)
            order.append(key)
            if len(order) < 3 * limiter.MAX_PASSES:  # each of task T's calls queues another
                tasks.append(asyncio.ensure_future(call(f"system|task T|{len(order)}")))
            limit.release("ok")

        tasks = [asyncio.ensure_future(call("system|task X|0"))]
        tasks.append(asyncio.ensure_future(call("system|task T|1")))
        await asyncio.sleep(0)
        limit.release("ok")
        while not all(task.done() for task in tasks):
            await asyncio.wait_for(asyncio.gather(*tasks), 10)
        return order

    order = asyncio.run(go())
    # task T's calls share more with each other, but X goes after at most MAX_PASSES of them
    assert order.index("system|task X|0") == limiter.MAX_PASSES


def test_without_prefix_order_calls_go_first_come_first_served() -> None:
    async def go() -> list[str]:
        limit = AdaptiveLimit(1)
        await limit.start("a|1")
        order: list[str] = []
        calls = queue(limit, ["b|1", "a|2"], order)
        await asyncio.sleep(0)
        limit.release("ok")
        await asyncio.wait_for(asyncio.gather(*calls), 5)
        return order

    assert asyncio.run(go()) == ["b|1", "a|2"]


def test_cancelled_calls_are_skipped_in_prefix_order() -> None:
    async def go() -> int:
        limit = AdaptiveLimit(1, prefix_order=True)
        await limit.start("x")
        gone = asyncio.ensure_future(limit.start("x|best match"))
        kept = asyncio.ensure_future(limit.start("y"))
        await asyncio.sleep(0)
        gone.cancel()
        limit.release("ok")
        await asyncio.wait_for(kept, 5)
        return limit.in_flight

    assert asyncio.run(go()) == 1


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [("", "", 0), ("abc", "abd", 2), ("abc", "abc", 3), ("abc", "abcdef", 3), ("x", "y", 0)],
)
def test_shared_start(a: str, b: str, shared: int) -> None:
    assert limiter.shared_start(a, b) == shared
    assert limiter.shared_start(b, a) == shared
