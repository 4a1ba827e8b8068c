"""run_judging: the event loop of a judging job, with the cycle collector tuned and restored."""

from __future__ import annotations

import asyncio
import gc

import pytest

from agentjudge.judge.running import YOUNG_GENERATION, run_judging


@pytest.mark.parametrize("enabled", [True, False])
def test_returns_the_result_and_restores_the_collector(enabled: bool) -> None:
    before = gc.get_threshold()
    (gc.enable if enabled else gc.disable)()
    seen: list[tuple[int, ...]] = []

    async def job() -> dict[str, int]:
        seen.append(gc.get_threshold())
        seen.append((int(gc.isenabled()), gc.get_freeze_count()))
        await asyncio.sleep(0)
        return {"answer": 42}

    try:
        assert run_judging(job()) == {"answer": 42}
        assert seen[0] == (YOUNG_GENERATION, *before[1:])
        assert seen[1][0] == 1  # collecting while the judges run
        assert seen[1][1] > 0  # what was loaded is frozen
        assert gc.get_threshold() == before
        assert gc.isenabled() is enabled
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_an_error_propagates_and_still_restores() -> None:
    before = gc.get_threshold()

    async def job() -> None:
        raise RuntimeError("judge exploded")

    with pytest.raises(RuntimeError, match="judge exploded"):
        run_judging(job())
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
