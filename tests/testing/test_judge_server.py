"""The test judge server itself: what it keeps about the requests it answers."""

from __future__ import annotations

import asyncio

from agentjudge.judge import JudgeClient
from agentjudge.judge.client import PREFLIGHT_PROMPT
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.testing import JudgeServer, Script


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


def test_an_unmarked_case_judge_request_is_scored_on_its_scale() -> None:
    from agentjudge.judge.scaled import case_score_schema
    from agentjudge.testing.scripted import Prompt, answer, asked_scale

    for scale in (3, 5, 10):
        schema = case_score_schema(scale)
        for i in range(30):
            prompt = Prompt([{"role": "user", "content": f"case {i}"}], "m", schema)
            verdict = answer(prompt, None).verdict
            assert verdict is not None
            assert verdict["score"] in range(1, scale + 1)
    # without a schema, the prompt's "from 1 to N" says the scale (graph-agents-cli's words)
    worded = Prompt([{"role": "user", "content": "Score the reply from 1 to 5 against"}], "m")
    assert asked_scale(worded) == 5.0
    assert asked_scale(Prompt([{"role": "user", "content": "a step"}], "m")) is None


def test_fail_first_can_spare_the_preflight() -> None:
    """`fail_first_preflight=False`: a job's preflight is answered at its first arrival,
    while every other request still fails its first; by default both fail."""

    async def preflight_then_judge(url: str) -> None:
        async with JudgeClient(OpenAICompatible(url, "judge"), initial_backoff=0.01) as client:
            await client.preflight()
            await client.judge(JudgeRequest((Message("user", "step [[score=0.5]]"),), "v1"))

    for spared, preflight_outcomes in ((False, ["500", "ok"]), (True, ["ok"])):
        script = Script(fail_first=1, fail_first_fault="500", fail_first_preflight=not spared)
        with JudgeServer(script) as server:
            asyncio.run(preflight_then_judge(server.base_url))
            outcomes = [(r.body["messages"][-1]["content"], r.outcome) for r in server.log]
        assert [o for text, o in outcomes if text == PREFLIGHT_PROMPT] == preflight_outcomes
        assert [o for text, o in outcomes if text != PREFLIGHT_PROMPT] == ["500", "ok"]
