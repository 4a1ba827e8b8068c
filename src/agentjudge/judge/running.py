"""Running a judging job's event loop: the one place that tunes the process for it."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# Objects allocated between young-generation collections while judging. Python's default
# (700) makes a job of 74,000 judge calls spend ~10% of its CPU in the cycle collector:
# each call allocates hundreds of short-lived objects (tasks, futures, headers), most of
# them freed by reference counting long before a collection could matter.
YOUNG_GENERATION = 10_000


def run_judging(main: Coroutine[Any, Any, T]) -> T:
    """`asyncio.run(main)` for a job of many judge calls.

    What is already loaded (trees, cases) lives for the whole job: it is frozen out of the
    cycle collector's sight, and young collections run less often. Both are undone on the
    way out, whatever the collector's state was before.
    """
    threshold = gc.get_threshold()
    enabled = gc.isenabled()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION, *threshold[1:])
    gc.enable()
    outcome: list[T] = []

    async def job() -> None:
        # The main task's result stays out of the task: Python 3.11's asyncio.run formats
        # the main task (result included) as it restores the Ctrl-C handler, and a result
        # holding every verdict of a large job took most of a second to format.
        outcome.append(await main)

    try:
        asyncio.run(job())
        return outcome[0]
    finally:
        gc.set_threshold(*threshold)
        if not enabled:
            gc.disable()
        gc.unfreeze()
