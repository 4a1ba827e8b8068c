"""Batch mode in the judge client, against the mimics' batch APIs in this process: one
batch for requests that come together, verdicts as online, a second client on the same
ledger waits on the first's batch instead of submitting, and each API's results read as
an online call's answers (judge/batching.py, judge/providers/*_batches.py)."""

from __future__ import annotations

import asyncio
import sqlite3
from dataclasses import replace
from pathlib import Path

import httpx
import orjson
import pytest

from agentjudge.errors import UsageError
from agentjudge.judge import JudgeClient, JudgeRequest
from agentjudge.judge.batch_ledger import BatchLedger
from agentjudge.judge.batching import BatchSettings
from agentjudge.judge.providers import OpenAI, OpenAICompatible
from agentjudge.judge.providers.anthropic import Anthropic
from agentjudge.judge.providers.anthropic_batches import AnthropicBatches
from agentjudge.judge.providers.anthropic_batches import _outcome as anthropic_outcome
from agentjudge.judge.providers.batches import Completed, Unfinished
from agentjudge.judge.providers.gemini import Gemini
from agentjudge.judge.providers.openai_batches import OpenAIBatches
from agentjudge.judge.providers.openai_batches import _outcome as openai_outcome
from agentjudge.judge.request import Message
from agentjudge.testing import JudgeServer, Script

KEY = "sk-batching-0123456789"
FAST = BatchSettings(poll_seconds=0.05, settle_seconds=0.05)


def request(score: float) -> JudgeRequest:
    text = f"step {score} [[score={score}]]"
    return JudgeRequest((Message("system", "judge"), Message("user", text)), "test-v1")


def client(server: JudgeServer, ledger: Path) -> JudgeClient:
    if server.mimic == "anthropic":
        provider: OpenAI | Anthropic = Anthropic(server.base_url, "claude-sonnet-4-5", KEY)
    else:
        provider = OpenAI(server.base_url, "gpt-4o-mini", KEY)
    return JudgeClient(provider, batch=FAST, batch_ledger=BatchLedger(ledger))


@pytest.mark.parametrize("mimic", ["openai", "anthropic"])
def test_requests_that_come_together_go_in_one_batch(tmp_path: Path, mimic: str) -> None:
    scores = [0.1, 0.4, 0.9]

    async def judged() -> list[float | None]:
        async with client(server, tmp_path / "store.sqlite") as judge:
            outcomes = await asyncio.gather(*(judge.judge(request(s)) for s in scores))
            assert judge.stats.calls == len(scores)
            assert judge.stats.input_tokens > 0
        return [o.verdict.score if o.verdict else None for o in outcomes]

    with JudgeServer(mimic=mimic, api_key=KEY) as server:
        assert asyncio.run(judged()) == pytest.approx(scores)
        assert server.batches is not None
        assert server.batches.batches_submitted == 1
        assert sum(server.batches.submissions.values()) == len(scores)
        assert [r for r in server.log if r.headers] == []  # no online call


def test_a_second_client_waits_on_the_batch_the_first_submitted(tmp_path: Path) -> None:
    store = tmp_path / "store.sqlite"

    async def submit_then_stop() -> None:
        async with client(server, store) as judge:
            call = asyncio.ensure_future(judge.judge(request(0.3)))
            assert server.batches is not None
            while server.batches.batches_submitted == 0 or not BatchLedger(store).batch_of(
                judge.key(request(0.3))
            ):
                await asyncio.sleep(0.01)
            call.cancel()  # as a run killed while it waits

    async def again() -> float | None:
        async with client(server, store) as judge:
            outcome = await judge.judge(request(0.3))
        return outcome.verdict.score if outcome.verdict else None

    with JudgeServer(Script(batch_delay=0.3), mimic="openai", api_key=KEY) as server:
        asyncio.run(submit_then_stop())
        assert asyncio.run(again()) == pytest.approx(0.3)
        assert server.batches is not None
        assert server.batches.batches_submitted == 1


def test_a_judge_without_a_batch_api_is_refused_before_any_call(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no batch API that agentjudge speaks"):
        JudgeClient(
            Gemini("http://127.0.0.1:9", "gemini-2.5-flash", KEY),
            batch=FAST,
            batch_ledger=BatchLedger(tmp_path / "s.sqlite"),
        )
    with pytest.raises(UsageError, match="drop --no-cache"):
        JudgeClient(OpenAICompatible("http://127.0.0.1:9/v1", "m"), batch=FAST)


def test_each_apis_results_read_as_an_online_answer() -> None:
    body = {"choices": [{"message": {"content": "{}"}}]}
    line = {"custom_id": "k", "response": {"status_code": 200, "body": body}, "error": None}
    assert openai_outcome(line) == Completed(200, orjson.dumps(body))
    expired = {"custom_id": "k", "response": None, "error": {"code": "batch_expired"}}
    assert openai_outcome(expired) == Unfinished("batch_expired", "batch_expired")
    cancelled = {"custom_id": "k", "response": None, "error": {"code": "batch_cancelled"}}
    assert isinstance(openai_outcome(cancelled), Unfinished)
    assert openai_outcome(cancelled).kind == "batch_canceled"  # type: ignore[union-attr]
    refused = {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
    errored = {"type": "errored", "error": refused}
    assert anthropic_outcome(errored) == Completed(400, orjson.dumps(refused))
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}
    assert anthropic_outcome({"type": "errored", "error": overloaded}).status == 529  # type: ignore[union-attr]
    assert anthropic_outcome({"type": "expired"}) == Unfinished(
        "batch_expired", "the request was expired in its batch"
    )


def test_the_caps_hold_in_batch_mode_as_online(tmp_path: Path) -> None:
    """Once the batched answers' price reaches --max-cost, or the calls max_judge_requests,
    no further request goes into a batch: each is the cap's error, as online."""

    async def judged(**caps: float) -> list[str | None]:
        judge = client(server, tmp_path / f"{sorted(caps)}.sqlite")
        for name, value in caps.items():
            setattr(judge, name, value)
        async with judge:
            first = await judge.judge(request(0.3))
            later = await asyncio.gather(*(judge.judge(request(s)) for s in (0.5, 0.7)))
        return [first.error, *(o.error for o in later)]

    with JudgeServer(mimic="openai", api_key=KEY) as server:
        assert asyncio.run(judged(max_cost_usd=1e-9)) == [None, "cost_cap", "cost_cap"]
        assert asyncio.run(judged(max_requests=1)) == [None, "request_cap", "request_cap"]
        assert server.batches is not None
        assert sum(server.batches.submissions.values()) == 2  # one request per run


class _FullLedger(BatchLedger):
    """A ledger on a full disk: it refuses to keep a submission, or a batch's id."""

    def __init__(self, path: Path, refuses: str) -> None:
        super().__init__(path)
        self.refuses = refuses

    def submitting(self, token: str, judge: str, keys: list[str]) -> None:
        if self.refuses == "submitting":
            raise sqlite3.OperationalError("database or disk is full")
        super().submitting(token, judge, keys)

    def add(self, batch_id: str, judge: str, keys: list[str], token: str = "") -> None:
        if self.refuses == "add":
            raise sqlite3.OperationalError("database or disk is full")
        super().add(batch_id, judge, keys, token)


@pytest.mark.parametrize("refuses", ["submitting", "add"])
def test_a_ledger_that_cannot_write_never_leaves_requests_waiting(
    tmp_path: Path, refuses: str
) -> None:
    """A batch's waiters used to wait forever when the ledger raised (only JudgeError and
    OSError were caught). Before the provider is asked, the requests fail; once it has the
    batch, its answers are still read, and a line says its id was not kept."""
    said: list[str] = []

    async def judged() -> tuple[str | None, float | None]:
        provider = OpenAI(server.base_url, "gpt-4o-mini", KEY)
        ledger = _FullLedger(tmp_path / f"{refuses}.sqlite", refuses)
        judge = JudgeClient(provider, batch=FAST, batch_ledger=ledger, on_wait=said.append)
        async with judge:
            outcome = await asyncio.wait_for(judge.judge(request(0.3)), 10)
        return outcome.error, outcome.verdict.score if outcome.verdict else None

    with JudgeServer(mimic="openai", api_key=KEY) as server:
        error, score = asyncio.run(judged())
        assert server.batches is not None
        submitted = server.batches.batches_submitted
    if refuses == "submitting":
        assert (error, score, submitted) == ("batch_error", None, 0)
    else:
        assert (error, submitted) == (None, 1)
        assert score == pytest.approx(0.3)
        assert any("the verdict store could not keep its id" in line for line in said)


def test_a_batch_is_cut_before_its_whole_body_passes_the_byte_limit(tmp_path: Path) -> None:
    """Anthropic's limit is on the batch's body: the entries and the `{"requests":[...]}`
    around them. Three entries whose bytes (with separators) just reach the limit make a
    body 14 bytes over it, so they must go in two batches, each body within the limit."""
    scores = [0.1, 0.4, 0.9]
    bodies: list[int] = []

    async def judged() -> list[str | None]:
        async with client(server, tmp_path / "store.sqlite") as judge:
            batcher = judge.batcher
            assert batcher is not None
            entries = [
                batcher.api.entry(judge.key(request(s)), judge.provider.build(request(s)))
                for s in scores
            ]
            batcher.api.max_bytes = sum(batcher.api.size(e) for e in entries)
            send = batcher._send

            async def recorded(asked: httpx.Request) -> tuple[int, bytes]:
                if asked.method == "POST":
                    bodies.append(len(asked.content))
                return await send(asked)

            batcher._send = recorded
            outcomes = await asyncio.gather(*(judge.judge(request(s)) for s in scores))
            limit = batcher.api.max_bytes
        assert len(bodies) == 2
        assert max(bodies) <= limit, (bodies, limit)
        return [o.error for o in outcomes]

    with JudgeServer(mimic="anthropic", api_key=KEY) as server:
        assert asyncio.run(judged()) == [None, None, None]
        assert server.batches is not None
        assert server.batches.batches_submitted == 2


def test_the_documented_byte_limits_hold_whether_mb_means_10e6_or_2e20() -> None:
    assert AnthropicBatches.max_bytes <= 256_000_000
    assert OpenAIBatches.max_bytes <= 200_000_000


def test_a_creation_whose_answer_is_lost_is_looked_for_not_created_twice(tmp_path: Path) -> None:
    """The batch is created, but its answer comes after the client's timeout: sending the
    creation again (as every batch request was retried) made a second batch of the same
    requests. OpenAI's batch carries our token, so the batch is looked for first."""
    script = Script(batch_create_delay=2.0)
    said: list[str] = []

    async def judged() -> float | None:
        provider = OpenAI(server.base_url, "gpt-4o-mini", KEY)
        ledger = BatchLedger(tmp_path / "store.sqlite")
        judge = JudgeClient(
            provider,
            timeout=0.5,
            initial_backoff=0.01,
            batch=FAST,
            batch_ledger=ledger,
            on_wait=said.append,
        )
        async with judge:
            call = asyncio.ensure_future(judge.judge(request(0.3)))
            assert server.batches is not None
            while not server.batches.batches_submitted:
                await asyncio.sleep(0.01)
            script.batch_create_delay = 0.0  # the creation sent again is answered at once
            outcome = await asyncio.wait_for(call, 20)
        return outcome.verdict.score if outcome.verdict else None

    with JudgeServer(script, mimic="openai", api_key=KEY) as server:
        assert asyncio.run(judged()) == pytest.approx(0.3)
        assert server.batches is not None
        assert server.batches.batches_submitted == 1
        assert set(server.batches.submissions.values()) == {1}
    assert any("a batch's creation got no answer (timeout)" in line for line in said)


def test_what_an_openai_batch_says_of_its_failures_is_shown_with_the_key_masked() -> None:
    """A batch's error file and its `errors.data` are the provider's words, as an online
    refusal's body is: they reach the results and the console only with secrets masked."""
    api = OpenAIBatches(OpenAI("http://127.0.0.1:9/v1", "gpt-4o-mini", KEY))
    echoed = f"Incorrect API key provided: {KEY}"
    failed = {"id": "b", "status": "failed", "errors": {"data": [{"message": echoed}]}}
    line = {"custom_id": "k", "response": None, "error": {"code": "x", "message": echoed}}

    async def send(asked: httpx.Request) -> tuple[int, bytes]:
        if asked.url.path.endswith("/content"):
            return 200, orjson.dumps(line) + b"\n"
        return 200, orjson.dumps(failed)

    async def read() -> tuple[str, str]:
        state = await api.state(send, "b")
        results = await api.results(send, replace(state, results=("file-e",)))
        outcome = results["k"]
        assert isinstance(outcome, Unfinished)
        return state.message, outcome.message

    for said in asyncio.run(read()):
        assert KEY not in said
        assert "Incorrect API key provided" in said


def test_a_run_stopped_while_its_batch_waits_says_the_batch_goes_on(tmp_path: Path) -> None:
    """agentjudge never cancels a batch: a run stopped (Ctrl-C, a cap) leaves its batches
    running and billed at the provider, and says which, and how to collect them."""
    said: list[str] = []

    async def stopped() -> None:
        provider = OpenAI(server.base_url, "gpt-4o-mini", KEY)
        ledger = BatchLedger(tmp_path / "store.sqlite")
        judge = JudgeClient(provider, batch=FAST, batch_ledger=ledger, on_wait=said.append)
        async with judge:
            call = asyncio.ensure_future(judge.judge(request(0.3)))
            assert server.batches is not None
            while not server.batches.batches_submitted:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.1)  # polled at least once
            call.cancel()

    with JudgeServer(Script(batch_delay=5.0), mimic="openai", api_key=KEY) as server:
        asyncio.run(stopped())
        assert server.batches is not None
        (batch_id,) = server.batches.ids()
    (line,) = [s for s in said if "go on at the provider" in s]
    assert batch_id in line
    assert "the same command again polls them" in line


def test_a_proxy_prefix_stays_out_of_the_batch_endpoint() -> None:
    """The batch's `endpoint` and each line's `url` are the API's own path, one OpenAI
    accepts, whatever prefix the judge URL's proxy puts before `/v1`."""
    api = OpenAIBatches(OpenAI("http://127.0.0.1:9/team-a/openai/v1", "gpt-4o-mini", KEY))
    created: list[dict[str, object]] = []

    async def send(asked: httpx.Request) -> tuple[int, bytes]:
        assert asked.url.path.startswith("/team-a/openai/v1/")  # sent through the proxy
        if asked.url.path.endswith("/files"):
            return 200, orjson.dumps({"id": "file-1"})
        created.append(orjson.loads(asked.content))
        return 200, orjson.dumps({"id": "batch-1"})

    line = orjson.loads(api.entry("k", httpx.Request("POST", "http://x", content=b"{}")))
    assert line["url"] == "/v1/chat/completions"
    assert asyncio.run(api.submit(send, [b"{}"], "token")) == "batch-1"
    assert created[0]["endpoint"] == "/v1/chat/completions"
