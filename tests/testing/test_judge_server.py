"""The test judge server itself: what it keeps about the requests it answers."""

from __future__ import annotations

import asyncio

from agentjudge.judge import JudgeClient
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.testing import JudgeServer


def judge_three(url: str) -> list[float | None]:
    async def go() -> list[float | None]:
        async with JudgeClient(OpenAICompatible(url, "judge")) as client:
            requests = [
                JudgeRequest((Message("user", f"step {i} [[score=0.{i}]]"),), "v1")
                for i in range(3)
            ]
            outcomes = await asyncio.gather(*(client.judge(r) for r in requests))
        return [o.verdict.score if o.verdict else None for o in outcomes]

    return asyncio.run(go())


def test_the_log_keeps_every_request_by_default() -> None:
    with JudgeServer() as server:
        assert judge_three(server.base_url) == [0.0, 0.1, 0.2]
        assert sorted(r.outcome for r in server.log) == ["ok"] * 3
        assert server.log[0].body["messages"][0]["content"].startswith("step ")


def test_a_long_running_server_keeps_no_log_but_answers_the_same() -> None:
    with JudgeServer(keep_log=False) as server:
        assert judge_three(server.base_url) == [0.0, 0.1, 0.2]
        assert server.log == []
        assert server.peak_in_flight >= 1
