"""The judge session, against the real judge server: the client fitted to its provider, the
verdict store opened and closed around the job (also when the job fails)."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agentjudge.judge import JudgeOutcome
from agentjudge.judge.defaults import SCORE_CALLS, CallLimits
from agentjudge.judge.providers import OpenAICompatible
from agentjudge.judge.session import JudgeSession, JudgeSettings
from agentjudge.judge.store import VerdictStore
from agentjudge.judge.verdict import Verdict
from agentjudge.testing import JudgeServer, Script
from tests.judge.resume_worker import item_request
from tests.judge.test_store import damaged_store

pytestmark = pytest.mark.timeout(60)


def test_the_client_takes_no_more_than_the_provider_can() -> None:
    with JudgeServer(Script(latency=0.2)) as server:
        provider = OpenAICompatible(server.base_url, "judge")
        provider.max_concurrency = 2  # as the embedded judge's server: one queue
        provider.min_timeout = 45.0  # as a judge on this machine's CPU
        settings = JudgeSettings(concurrency=16, calls=CallLimits(timeout=5.0, max_attempts=2))
        with JudgeSession(settings, use_store=False) as session:
            client = session.client(provider)

            async def job() -> list[JudgeOutcome]:
                async with session.serving(client):
                    return await asyncio.gather(*(client.judge(item_request(i)) for i in range(6)))

            outcomes = session.run(job())
    assert (client.concurrency, client.timeout, client.max_attempts) == (2, 45.0, 2)
    assert client.store is None
    assert all(o.verdict is not None for o in outcomes)
    assert server.peak_in_flight == 2


def test_what_the_provider_allows_leaves_the_settings_as_they_are() -> None:
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "judge")
    calls = CallLimits(5.0, 2, retry_budget=7.0, initial_backoff=0.1, max_backoff=1.0)
    settings = JudgeSettings(concurrency=3, calls=calls, metric_labels={"job": "x"})
    with JudgeSession(settings, use_store=False) as session:
        client = session.client(provider)
    assert (client.concurrency, client.timeout, client.metric_labels) == (3, 5.0, {"job": "x"})
    assert (client.max_attempts, client.retry_budget) == (2, 7.0)
    assert (client.initial_backoff, client.max_backoff) == (0.1, 1.0)


def judge_one_then_break(session: JudgeSession, url: str) -> None:
    """A job that gets one verdict, then fails."""
    with session:
        client = session.client(OpenAICompatible(url, "judge"))
        assert client.store is session.verdicts is not None

        async def job() -> None:
            async with session.serving(client):
                outcome = await client.judge(item_request(1))
                assert outcome.verdict is not None
                raise RuntimeError("the job broke")

        session.run(job())


def test_a_failed_job_closes_the_store_and_keeps_its_verdicts(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    session = JudgeSession(JudgeSettings(4, SCORE_CALLS), use_store=True, store_path=path)
    with JudgeServer() as server, pytest.raises(RuntimeError, match="the job broke"):
        judge_one_then_break(session, server.base_url)
    assert session.store is not None
    with pytest.raises(sqlite3.ProgrammingError):  # closed
        len(session.store)
    assert len(VerdictStore(path)) == 1  # the next run is answered from it


def test_a_damaged_store_is_said_once_opened(tmp_path: Path) -> None:
    path = damaged_store(tmp_path / "v.sqlite")
    notes: list[str] = []
    with JudgeSession(JudgeSettings(4, SCORE_CALLS), True, str(path), notes.append) as session:
        client = session.client(OpenAICompatible("http://127.0.0.1:9/v1", "judge"))
    assert len(notes) == 1
    assert notes[0].startswith(f"verdict store {path} was damaged")
    assert client.on_note == notes.append  # the client's notes go the same way


def test_a_session_that_only_looks_up_makes_no_store(tmp_path: Path) -> None:
    path = tmp_path / "v.sqlite"
    provider = OpenAICompatible("http://127.0.0.1:9/v1", "judge")
    request = item_request(1)
    with JudgeSession(JudgeSettings(1, SCORE_CALLS), True, path, create_store=False) as session:
        assert (session.store, session.stored(provider, request)) == (None, False)
    assert not path.exists()
    store = VerdictStore(path)  # a verdict kept by an earlier run
    store.put(request.key(provider.identity), Verdict(1.0), 1, 1)
    store.close()
    with JudgeSession(JudgeSettings(1, SCORE_CALLS), True, path, create_store=False) as session:
        assert session.stored(provider, request)
        assert not session.stored(provider, item_request(2))
