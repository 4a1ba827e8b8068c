"""The judge client against the real scriptable judge server on 127.0.0.1: every fault."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest

from agentjudge.judge import ClientStats, JudgeClient, JudgeOutcome, JudgeRequest
from agentjudge.judge.defaults import SCORE_CALLS
from agentjudge.judge.price import Rates
from agentjudge.judge.providers import FakeJudge, OpenAI, OpenAICompatible
from agentjudge.judge.request import Message
from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.judge_server import expected_score

pytestmark = pytest.mark.timeout(30)


def request(text: str) -> JudgeRequest:
    return JudgeRequest((Message("system", "judge"), Message("user", text)), "test-v1")


@pytest.fixture
def server() -> Iterator[JudgeServer]:
    with JudgeServer() as running:
        yield running


def judge_all(
    server: JudgeServer, texts: list[str], **options: float
) -> tuple[list[JudgeOutcome], JudgeClient]:
    async def go() -> tuple[list[JudgeOutcome], JudgeClient]:
        settings = {"initial_backoff": 0.01, "max_backoff": 0.05, "timeout": 2.0, **options}
        client = JudgeClient(OpenAICompatible(server.base_url, "judge"), **settings)  # type: ignore[arg-type]
        async with client:
            outcomes = await asyncio.gather(*(client.judge(request(t)) for t in texts))
        return list(outcomes), client

    return asyncio.run(go())


def test_scores_come_back_exactly(server: JudgeServer) -> None:
    texts = [f"step {i} [[score=0.{i}]]" for i in range(10)] + ["no marker"]
    outcomes, client = judge_all(server, texts)
    assert [o.verdict.score for o in outcomes if o.verdict] == [
        *(i / 10 for i in range(10)),
        expected_score("no marker"),
    ]
    assert client.stats.calls == client.stats.successes == 11
    assert client.stats.input_tokens > 0
    assert client.stats.output_tokens > 0


def test_genuine_zero_is_a_score(server: JudgeServer) -> None:
    (outcome,), _ = judge_all(server, ["bad step [[score=0]]"])
    assert outcome.verdict is not None
    assert outcome.verdict.score == 0.0


@pytest.mark.parametrize("fault", ["429", "500", "503", "drop"])
def test_transient_faults_are_retried(server: JudgeServer, fault: str) -> None:
    server.script = Script(fail_first=2, fail_first_fault=fault, retry_after=0.01)  # type: ignore[arg-type]
    outcomes, client = judge_all(server, ["a [[score=0.5]]", "b [[score=0.6]]"])
    assert [o.verdict.score for o in outcomes if o.verdict] == [0.5, 0.6]
    assert client.stats.retries == 4
    assert server.outcomes() == {fault: 4, "ok": 2}


def test_hang_times_out_and_is_retried(server: JudgeServer) -> None:
    server.script = Script(fail_first=1, fail_first_fault="hang", hang_seconds=5)
    (outcome,), client = judge_all(server, ["a [[score=0.3]]"], timeout=0.3)
    assert outcome.verdict is not None
    assert outcome.verdict.score == 0.3
    assert client.stats.errors == 1


def test_retries_exhausted_is_an_error_not_a_score(server: JudgeServer) -> None:
    server.script = Script(fail_first=10, fail_first_fault="503", retry_after=0.0)
    (outcome,), client = judge_all(server, ["a"], max_attempts=3)
    assert (outcome.verdict, outcome.error) == (None, "http_503")
    assert client.stats.calls == 3


def test_client_errors_are_not_retried() -> None:
    def reject(_: httpx.Request) -> httpx.Response:
        return httpx.Response(401, json={"error": "bad key"})

    async def go() -> tuple[JudgeOutcome, int]:
        provider = OpenAICompatible("http://judge.invalid/v1", "m", api_key="sk-secret")
        async with JudgeClient(provider, transport=httpx.MockTransport(reject)) as client:
            return await client.judge(request("x")), client.stats.calls

    outcome, calls = asyncio.run(go())
    assert (outcome.error, calls) == ("http_401", 1)


@pytest.mark.parametrize(
    ("malformed", "kind"),
    [
        ("non_json", "answer_not_json"),
        ("no_score", "score_missing"),
        ("out_of_range", "score_out_of_range"),
        ("bool_score", "score_not_number"),
        ("huge", "body_too_large"),
    ],
)
def test_protocol_errors_retried_once_then_surfaced(
    server: JudgeServer, malformed: str, kind: str
) -> None:
    server.script = Script(malformed=malformed)  # type: ignore[arg-type]
    (outcome,), client = judge_all(server, ["a [[score=0.9]]"])
    assert (outcome.verdict, outcome.error) == (None, kind)
    # a 200 with an unusable body is an HTTP success *and* a protocol error
    assert (client.stats.calls, client.stats.successes, client.stats.protocol_errors) == (2, 2, 2)


def test_an_empty_200_is_a_failed_call_retried_like_a_5xx(server: JudgeServer) -> None:
    server.script = Script(malformed="empty")
    (outcome,), client = judge_all(server, ["a [[score=0.9]]"])
    assert (outcome.verdict, outcome.error, outcome.protocol) == (None, "empty_body", False)
    # every attempt of the default budget, none counted as an HTTP success
    attempts = SCORE_CALLS.max_attempts
    assert (client.stats.calls, client.stats.successes, client.stats.errors) == (
        attempts,
        0,
        attempts,
    )


def test_capacity_429s_with_retry_after_lose_nothing(server: JudgeServer) -> None:
    # the defaults: a 429 is waited out within the retry budget and spends no attempt
    server.script = Script(latency=0.02, capacity=4, retry_after=0.01)
    texts = [f"s{i} [[score=0.{i % 10}]]" for i in range(60)]
    outcomes, client = judge_all(server, texts, concurrency=16)
    assert all(o.verdict is not None for o in outcomes)
    assert server.outcomes()["ok"] == 60
    assert server.peak_in_flight <= 4
    # the limit comes down from 16 to the judge's capacity, plus the calls whose answers are
    # on their way back (the server no longer counts them; we still do until they arrive)
    assert client._limit.limit <= 6
    refused = server.outcomes()["429_capacity"]
    assert client.stats.errors == refused
    assert refused < 0.3 * client.stats.calls  # the first burst, then a few probes


def test_request_cap(server: JudgeServer) -> None:
    outcomes, client = judge_all(server, [f"s{i}" for i in range(5)], max_requests=3, concurrency=1)
    assert [o.error for o in outcomes].count("request_cap") == 2
    assert client.stats.calls == 3


def test_api_key_is_sent_but_never_shown() -> None:
    seen: list[str] = []

    def capture(req: httpx.Request) -> httpx.Response:
        seen.append(req.headers["authorization"])
        return httpx.Response(200, json={"choices": [{"message": {"content": '{"score": 1}'}}]})

    provider = OpenAICompatible("http://judge.invalid/v1", "m", api_key="sk-very-secret")
    assert "sk-very-secret" not in repr(provider)

    async def go() -> None:
        async with JudgeClient(provider, transport=httpx.MockTransport(capture)) as client:
            await client.judge(request("x"))

    asyncio.run(go())
    assert seen == ["Bearer sk-very-secret"]


def test_a_reply_with_no_score_is_quoted_in_graph_agents_cli_s_words_without_secrets() -> None:
    reply = "no verdict: I was sent Bearer sk-very-secret by team-key-123"

    def answer(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": reply}}]})

    provider = OpenAICompatible("http://judge.invalid/v1", "m", api_key="team-key-123")
    scaled = JudgeRequest((Message("user", "x"),), "v1", answer="scaled", scale=5.0)

    async def go() -> JudgeOutcome:
        async with JudgeClient(provider, transport=httpx.MockTransport(answer)) as client:
            return await client.judge(scaled)

    outcome = asyncio.run(go())
    assert (outcome.error, outcome.protocol, outcome.message) == ("score_missing", True, None)
    assert outcome.reply_error == (
        "ValueError: could not parse a score from judge reply: 'no verdict: I was sent *** by ***'"
    )


def test_fake_judge_is_deterministic_and_announced() -> None:
    async def go() -> list[JudgeOutcome]:
        async with JudgeClient(FakeJudge()) as client:
            return [await client.judge(request("same")) for _ in range(2)]

    first, second = asyncio.run(go())
    assert first == second
    assert first.verdict is not None
    assert FakeJudge.quality_signal is False


def test_request_key_depends_on_everything_that_decides_the_answer() -> None:
    base = request("x")
    assert base.key("p|m|u") == request("x").key("p|m|u")
    assert base.key("p|m|u") != base.key("p|m2|u")
    assert base.key("p|m|u") != base.key("p|m|u2")
    assert base.key("p|m|u") != request("y").key("p|m|u")
    assert base.key("p|m|u") != JudgeRequest(base.messages, "test-v2").key("p|m|u")


def test_the_counters_as_results_files_write_them() -> None:
    stats = ClientStats(calls=4, successes=3, errors=1, store_hits=2, latency_seconds=0.01)
    counters = stats.as_dict()
    assert list(counters) == [
        "calls",
        "successes",
        "errors",
        "protocol_errors",
        "retries",
        "cache_hits",
        "store_rejected",
        "verdicts",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "reasoning_tokens",
        "mean_latency_ms",
    ]
    assert (counters["calls"], counters["cache_hits"], counters["mean_latency_ms"]) == (4, 2, 2.5)
    assert ClientStats().as_dict()["mean_latency_ms"] is None  # no call, no mean


class LastPromptServer(OpenAICompatible):
    """An OpenAI-compatible judge that, like llama.cpp's server, keeps its last prompt."""

    keeps_last_prompt = True


@pytest.mark.parametrize(
    ("provider", "expected"),
    [(LastPromptServer, ["A|1", "A|2", "B|1"]), (OpenAICompatible, ["A|1", "B|1", "A|2"])],
)
def test_a_judge_that_keeps_its_last_prompt_gets_calls_in_prefix_order(
    server: JudgeServer, provider: type[OpenAICompatible], expected: list[str]
) -> None:
    async def go() -> None:
        client = JudgeClient(provider(server.base_url, "judge"), concurrency=1)
        async with client:
            # A|1 takes the one slot at once; B|1 and A|2 wait for it, in that order
            await asyncio.gather(*(client.judge(request(t)) for t in ("A|1", "B|1", "A|2")))

    asyncio.run(go())
    sent = [entry.body["messages"][-1]["content"] for entry in server.log]
    assert sent == expected


def test_no_call_starts_once_the_calls_prices_reach_max_cost(server: JudgeServer) -> None:
    # $1 a million input and output tokens: each call costs a few hundred millionths
    rates = Rates(1.0, 1.0, 1.0, 1.0)
    texts = [f"s{i} [[score=0.5]]" for i in range(5)]
    (first, *_), priced = judge_all(server, texts[:1], rates=rates)  # type: ignore[arg-type]
    one_call = priced.stats.cost_usd
    assert first.verdict is not None
    assert one_call > 0
    server.log.clear()
    outcomes, client = judge_all(
        server,
        texts,
        rates=rates,  # type: ignore[arg-type]
        max_cost_usd=2.5 * one_call,
        concurrency=1,
    )
    # the third call is started at 2 calls' cost, below the cap; then it is reached
    assert [o.error for o in outcomes] == [None, None, None, "cost_cap", "cost_cap"]
    assert client.stats.calls == 3 == len(server.log)
    assert outcomes[3].message == (
        f"--max-cost {2.5 * one_call:g} USD reached "
        f"(${client.stats.cost_usd:.6f} spent by the calls made)"
    )


def test_no_call_starts_under_max_cost_once_the_calls_can_no_longer_be_priced() -> None:
    """Usage the price database refuses (counts it finds inconsistent) leaves the run with
    no price: every later call was priced 0, so --max-cost was silently never reached."""
    key = "sk-cost-0123456789"

    async def go() -> list[str | None]:
        provider = OpenAI(mimic.base_url, "gpt-5-mini", key)
        async with JudgeClient(provider, max_cost_usd=1.0) as client:
            first = await client.judge(request("s0 [[score=0.5]]"))
            assert client.pricer.reason is None
            client.pricer.price(10, 20, 0, 0)  # a call's usage the database refuses
            assert client.pricer.reason is not None
            later = await client.judge(request("s1 [[score=0.5]]"))
        return [first.error, later.error]

    with JudgeServer(mimic="openai", api_key=key) as mimic:
        assert asyncio.run(go()) == [None, "cost_cap"]
        assert len(mimic.log) == 1
