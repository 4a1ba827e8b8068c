"""The step budget: trees admitted in order while their steps fit."""

from __future__ import annotations

import asyncio

from agentjudge.scoring.step_budget import StepBudget


def test_trees_are_admitted_in_order_while_their_steps_fit() -> None:
    async def go() -> list[str]:
        budget = StepBudget(10)
        order: list[str] = []

        async def tree(name: str, steps: int, hold: asyncio.Event) -> None:
            cost = budget.cost(steps)
            await budget.acquire(cost)
            order.append(name)
            await hold.wait()
            budget.release(cost)

        holds = {name: asyncio.Event() for name in "abcd"}
        tasks = [
            asyncio.create_task(tree("a", 6, holds["a"])),
            asyncio.create_task(tree("b", 4, holds["b"])),
            asyncio.create_task(tree("c", 50, holds["c"])),  # larger than the budget
            asyncio.create_task(tree("d", 1, holds["d"])),  # fits, but waits its turn
        ]
        await asyncio.sleep(0.01)
        assert order == ["a", "b"]
        assert budget.in_flight == 10
        holds["a"].set()
        await asyncio.sleep(0.01)
        assert order == ["a", "b"]  # c needs the whole budget: d stays behind it
        holds["b"].set()
        await asyncio.sleep(0.01)
        assert order == ["a", "b", "c"]
        assert budget.in_flight == 10
        holds["c"].set()
        holds["d"].set()
        await asyncio.gather(*tasks)
        assert budget.in_flight == 0
        return order

    assert asyncio.run(go()) == ["a", "b", "c", "d"]


def test_a_cancelled_waiter_gives_its_turn_to_the_next() -> None:
    async def go() -> None:
        budget = StepBudget(4)
        await budget.acquire(4)
        waiting = asyncio.create_task(budget.acquire(3))
        after = asyncio.create_task(budget.acquire(2))
        await asyncio.sleep(0)
        waiting.cancel()
        await asyncio.sleep(0)
        budget.release(4)
        await asyncio.wait_for(after, 1)
        assert budget.in_flight == 2

    asyncio.run(go())


def test_costs_are_at_least_one_step_and_at_most_the_budget() -> None:
    budget = StepBudget(16)
    assert [budget.cost(0), budget.cost(5), budget.cost(1000)] == [1, 5, 16]


def test_a_tree_gives_its_share_back_as_its_steps_are_judged() -> None:
    async def go() -> None:
        budget = StepBudget(10)
        big = await budget.grant(25)  # holds the whole budget until 10 steps are left
        big.settle(14)
        assert (big.held, budget.in_flight) == (10, 10)
        big.settle()
        assert (big.held, budget.in_flight) == (10, 10)  # 10 steps left to judge
        big.settle()
        assert (big.held, budget.in_flight) == (9, 9)
        small = asyncio.create_task(budget.grant(1))  # admitted by that one step
        await asyncio.sleep(0)
        assert small.done()
        big.settle(100)  # more than it has: nothing more than it held goes back
        assert (big.held, budget.in_flight) == (0, 1)
        big.close()
        small.result().close()
        assert budget.in_flight == 0

    asyncio.run(go())
