"""Repeated judge samples: their keys, and what their scores say together."""

from __future__ import annotations

import asyncio

import pytest

from agentjudge.judge.client import JudgeClient
from agentjudge.judge.providers import JudgeSpec, build_provider
from agentjudge.judge.request import JudgeRequest, Message
from agentjudge.judge.samples import sample_requests, sampled_score, temperature_note
from agentjudge.testing import JudgeServer

REQUEST = JudgeRequest(
    (Message("system", "judge"), Message("user", "step [[score=0.5]]")), "v1", criteria=("a", "b")
)
JUDGE = "openai-compatible/judge@http://127.0.0.1:1/v1"


def test_the_first_sample_keeps_the_key_every_store_holds() -> None:
    # the digest of this request before samples existed (commit 4ec5bc3)
    before = "13530fcb219e8ecd0e1975174cf010a74ba68675dd2e8082306156e66c97e4fc"
    first, second, third = sample_requests(REQUEST, 3)
    assert first is REQUEST
    assert first.key(JUDGE) == before
    assert len({first.key(JUDGE), second.key(JUDGE), third.key(JUDGE)}) == 3
    assert (second.sample, third.sample) == (1, 2)
    assert sample_requests(REQUEST, 1) == (REQUEST,)


def test_the_temperature_is_part_of_the_key() -> None:
    from dataclasses import replace

    assert replace(REQUEST, temperature=0.7).key(JUDGE) != REQUEST.key(JUDGE)


def test_samples_are_sent_as_identical_requests_and_never_shared_in_flight() -> None:
    with JudgeServer() as server:
        provider = build_provider(JudgeSpec("openai-compatible", "judge", server.base_url))
        request = JudgeRequest((Message("user", "a step [[samples=0.2,0.9,0.5]]"),), "v1")

        async def judge_all() -> list[float]:
            async with JudgeClient(provider) as client:
                outcomes = await asyncio.gather(
                    *(client.judge(r) for r in sample_requests(request, 3))
                )
            return [o.verdict.score for o in outcomes if o.verdict is not None]

        scores = asyncio.run(judge_all())
    assert sorted(scores) == [0.2, 0.5, 0.9]  # three calls at once: three answers
    bodies = {r.body_sha256 for r in server.log}
    assert (len(server.log), len(bodies)) == (3, 1)  # the index is never sent
    assert "sample" not in server.log[0].body


def test_the_mean_spread_and_instability_of_samples() -> None:
    sampled = sampled_score([0.2, 0.9, 0.5], 0.5)
    assert sampled.mean == pytest.approx(1.6 / 3, abs=1e-12)
    assert (sampled.spread, sampled.unstable) == (0.7, True)
    assert sampled.stdev == 0.286744175568  # population stdev, by hand: sqrt(0.74 / 9)
    # all at or above the threshold (0.5 is not below it), or all below: stable
    assert not sampled_score([0.5, 0.9], 0.5).unstable
    assert not sampled_score([0.1, 0.49], 0.5).unstable


def test_a_sample_without_a_verdict_is_left_out_never_zero() -> None:
    sampled = sampled_score([0.8, None, 0.6], 0.5)
    assert sampled.scores == (0.8, None, 0.6)
    assert sampled.mean == pytest.approx(0.7)
    assert (sampled.spread, sampled.unstable) == (0.2, False)
    nothing = sampled_score([None, None], 0.5)
    assert (nothing.mean, nothing.spread, nothing.unstable) == (None, None, False)


def test_the_temperature_note_is_said_for_samples_at_temperature_0_only() -> None:
    assert temperature_note(3, 0.0) is not None
    assert "agree by construction" in (temperature_note(3, 0.0) or "")
    assert temperature_note(1, 0.0) is None
    assert temperature_note(3, 0.7) is None
