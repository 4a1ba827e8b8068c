"""`score --batch` against the OpenAI and Anthropic mimics' batch APIs: the same step scores
as online; a run killed (-9) while its batches are in progress, run again, polls the same
batches and submits nothing twice; requests a batch did not answer are retried in a later
batch, or online. The real CLI in a subprocess, real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjudge.testing import JudgeServer, Script
from tests.e2e.test_calibrate_cli import labelled_set
from tests.e2e.test_grade_cli import PROJECT_JUDGE_SCORES, judge_scores
from tests.e2e.test_judge_providers import PROJECT
from tests.e2e.test_score_cli import tree

pytestmark = pytest.mark.timeout(120)
KEY = "sk-batch-key-0123456789"
JUDGES = [
    ("openai", "gpt-4o-mini", "OPENAI_API_KEY"),
    ("anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
]
# the tree's 5 steps in one batch, then its one low step's categorization in a second
BATCHES = 2


def environment(tmp: Path, key_env: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_BASE_URL"))}
    env["AGENTJUDGE_CACHE_DIR"] = str(tmp / "cache")
    env[key_env] = KEY
    return env


def command(runs: Path, judge: str, model: str, url: str, *more: str) -> list[str]:
    return [
        sys.executable, "-m", "agentjudge", "score", str(runs), "--judge", judge,
        "--judge-model", model, "--judge-url", url, "-o", "out.json",
        "--set", "judge_initial_backoff_seconds=0.01", *more,
    ]  # fmt: skip


def batched(runs: Path, judge: str, model: str, url: str, *more: str) -> list[str]:
    return command(runs, judge, model, url, "--batch", "--set", "batch_poll_seconds=0.1", *more)


def run(args: list[str], tmp: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=110, env=env, cwd=tmp)


def step_scores(tmp: Path) -> tuple[Any, ...]:
    results = json.loads((tmp / "out.json").read_text())
    nodes = results["trajectories"][0]["nodes"]
    steps = [(s["score"], s.get("category")) for node in nodes for s in node["steps"]]
    return results["metrics"]["atif_overall_score"], steps


@pytest.mark.parametrize(("judge", "model", "key_env"), JUDGES, ids=[j[0] for j in JUDGES])
def test_batch_scores_as_online(tmp_path: Path, judge: str, model: str, key_env: str) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, key_env)
    with JudgeServer(mimic=judge, api_key=KEY) as server:
        online = run(command(runs, judge, model, server.base_url, "--no-cache"), tmp_path, env)
        assert online.returncode == 0, online.stderr
        assert server.batches is not None
        assert server.batches.batches_submitted == 0
        expected = step_scores(tmp_path)
        done = run(batched(runs, judge, model, server.base_url), tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert server.batches.batches_submitted == BATCHES
        assert set(server.batches.submissions.values()) == {1}
        assert len(server.batches.submissions) == 6  # 5 steps, 1 categorization
    assert step_scores(tmp_path) == expected
    assert expected[0] == pytest.approx((0.5 + 0.7) / 2)
    assert "batches: 2 submitted, 0 in progress, 2 done" in done.stderr


@pytest.mark.parametrize(("judge", "model", "key_env"), JUDGES, ids=[j[0] for j in JUDGES])
def test_killed_while_waiting_then_run_again_submits_nothing_twice(
    tmp_path: Path, judge: str, model: str, key_env: str
) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, key_env)
    with JudgeServer(Script(batch_delay=1.5), mimic=judge, api_key=KEY) as server:
        args = batched(runs, judge, model, server.base_url)
        first = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        assert first.stderr is not None
        said = ""
        while "1 submitted" not in said:  # said once the batch id is kept
            line = first.stderr.readline()
            assert line, f"the run ended before submitting: {said}"
            said += line
        assert server.batches is not None
        assert server.batches.batches_submitted == 1
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        first.stderr.close()
        again = run(args, tmp_path, env)
        assert again.returncode == 0, again.stderr
        assert "1 submitted by an earlier run, polled again" in again.stderr
        # the earlier run's batch polled, the categorization's submitted: nothing twice
        assert server.batches.batches_submitted == BATCHES
        assert set(server.batches.submissions.values()) == {1}
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)
    assert step_scores(tmp_path)[1][:3] == [(1.0, None), (0.5, None), (0.0, "context_loss")]


@pytest.mark.parametrize(("judge", "model", "key_env"), JUDGES, ids=[j[0] for j in JUDGES])
def test_expired_and_errored_requests_go_into_a_later_batch(
    tmp_path: Path, judge: str, model: str, key_env: str
) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, key_env)
    # the first batch expires unprocessed; in the next, each request's first run is a 500
    script = Script(batch_expire_first=1, fail_first=1, fail_first_fault="500")
    with JudgeServer(script, mimic=judge, api_key=KEY) as server:
        done = run(batched(runs, judge, model, server.base_url), tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert server.batches is not None
        # steps: expired, errored, answered; the categorization: errored, answered
        assert server.batches.batches_submitted == 5
        assert sorted(server.batches.submissions.values()) == [2, 3, 3, 3, 3, 3]
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)


def test_requests_no_batch_answers_are_judged_online_with_the_fallback(tmp_path: Path) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, "OPENAI_API_KEY")
    with JudgeServer(Script(batch_expire_first=99), mimic="openai", api_key=KEY) as server:
        args = batched(runs, "openai", "gpt-4o-mini", server.base_url)
        started = time.monotonic()
        done = run([*args, "--set", "batch_fallback=online"], tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert server.batches is not None
        # 3 batches of the steps expire, then each goes online; the categorization too
        assert server.batches.batches_submitted == 6
        online = [r for r in server.log if r.headers]  # a batch's requests come with none
        assert len(online) == 6
    assert time.monotonic() - started < 100
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)


def test_without_the_verdict_store_batch_mode_is_refused(tmp_path: Path) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, "OPENAI_API_KEY")
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        args = batched(runs, "openai", "gpt-4o-mini", server.base_url, "--no-cache")
        done = run(args, tmp_path, env)
        assert server.batches is not None
        assert server.batches.batches_submitted == 0
    assert done.returncode == 3
    assert "--batch keeps its batch ids in the verdict store" in done.stderr
    assert "Traceback" not in done.stderr


def test_grade_batch_gives_the_online_scores(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    with JudgeServer(mimic="anthropic", api_key=KEY) as server:
        env = {**environment(tmp_path, "ANTHROPIC_API_KEY"), "JUDGE_BASE_URL": server.base_url}
        grade = [
            sys.executable, "-m", "agentjudge", "grade", "--judge-provider", "anthropic",
            "--judge-model", "claude-sonnet-4-5", "--output", "out.json", "--batch",
            "--batch-poll-seconds", "0.1",
        ]  # fmt: skip
        done = run(grade, project, env)
        assert done.returncode == 1, done.stderr  # the project has one failing case
        assert server.batches is not None
        assert server.batches.batches_submitted == 1  # its 4 judge calls in one batch
        assert sum(server.batches.submissions.values()) == 4
        online = [r for r in server.log if r.headers]
        assert len(online) == 1  # the preflight alone
    document = json.loads((project / "out.json").read_text())
    assert judge_scores(document) == PROJECT_JUDGE_SCORES


def test_calibrate_batch_gives_the_online_figures(tmp_path: Path) -> None:
    labels = labelled_set(tmp_path)
    env = environment(tmp_path, "OPENAI_API_KEY")
    calibrate = [sys.executable, "-m", "agentjudge", "calibrate", str(labels), "--json"]
    judge = ["--judge", "openai", "--judge-model", "gpt-4o-mini"]
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        flags = [*judge, "--judge-url", server.base_url]
        online = run([*calibrate, *flags, "--no-cache"], tmp_path, env)
        assert online.returncode == 0, online.stderr
        more = ["--batch", "--set", "batch_poll_seconds=0.1"]
        batched = run([*calibrate, *flags, *more], tmp_path, env)
        assert batched.returncode == 0, batched.stderr
        assert server.batches is not None
        assert server.batches.batches_submitted >= 2  # the steps, then the categories
        assert set(server.batches.submissions.values()) == {1}
    assert json.loads(batched.stdout)["figures"] == json.loads(online.stdout)["figures"]


def test_a_refusal_the_judge_adapts_to_is_rebuilt_for_a_later_batch(tmp_path: Path) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, "OPENAI_API_KEY")
    # a reasoning model its name does not give away: it refuses max_tokens and temperature
    with JudgeServer(mimic="openai", api_key=KEY, reasoning_models=("house-judge",)) as server:
        done = run(batched(runs, "openai", "house-judge", server.base_url), tmp_path, env)
        assert done.returncode == 0, done.stderr
        answered = [r.body for r in server.log if r.status == 200]
    assert "max_completion_tokens, not max_tokens" in done.stderr
    assert all("max_tokens" not in body for body in answered)
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)


def test_killed_before_learning_the_batch_id_finds_the_batch_by_its_token(
    tmp_path: Path,
) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, "OPENAI_API_KEY")
    # the batch is created, but its id reaches the run only after 30 s: it is killed before
    script = Script(batch_delay=0.5, batch_create_delay=30.0)
    with JudgeServer(script, mimic="openai", api_key=KEY) as server:
        args = batched(runs, "openai", "gpt-4o-mini", server.base_url)
        first = subprocess.Popen(args, stderr=subprocess.DEVNULL, env=env, cwd=tmp_path)
        assert server.batches is not None
        for _ in range(1000):
            if server.batches.batches_submitted or first.poll() is not None:
                break
            time.sleep(0.02)
        assert server.batches.batches_submitted == 1
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        script.batch_create_delay = 0.0
        again = run(args, tmp_path, env)
        assert again.returncode == 0, again.stderr
        assert "1 submitted by an earlier run, polled again" in again.stderr
        assert server.batches.batches_submitted == BATCHES
        assert set(server.batches.submissions.values()) == {1}
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)


@pytest.mark.parametrize(("judge", "model", "key_env"), JUDGES, ids=[j[0] for j in JUDGES])
def test_polls_that_fail_for_a_while_are_asked_again(
    tmp_path: Path, judge: str, model: str, key_env: str
) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, key_env)
    # each batch's first 5 polls answer 503: more than one poll's 3 attempts
    with JudgeServer(Script(batch_poll_failures=5), mimic=judge, api_key=KEY) as server:
        done = run(batched(runs, judge, model, server.base_url), tmp_path, env)
        assert done.returncode == 0, done.stderr
        assert server.batches is not None
        assert server.batches.batches_submitted == BATCHES
    assert "a poll failed (http_503): asking again" in done.stderr
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)


def test_a_batch_someone_cancels_is_submitted_again(tmp_path: Path) -> None:
    runs = tree(tmp_path)
    env = environment(tmp_path, "ANTHROPIC_API_KEY")
    script = Script(batch_delay=3.0)  # long enough to be cancelled before it is processed
    with JudgeServer(script, mimic="anthropic", api_key=KEY) as server:
        args = batched(runs, "anthropic", "claude-sonnet-4-5", server.base_url)
        score = subprocess.Popen(args, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
        try:
            assert server.batches is not None
            for _ in range(1000):
                if server.batches.batches_submitted:
                    break
                time.sleep(0.01)
            # the console (or another tool) cancels the run's first batch
            url = f"{server.base_url}/v1/messages/batches/{server.batches.ids()[0]}/cancel"
            headers = {"x-api-key": KEY, "anthropic-version": "2023-06-01"}
            assert httpx.post(url, headers=headers).status_code == 200
            script.batch_delay = 0.0
        finally:
            _, said = score.communicate(timeout=100)
        assert score.returncode == 0, said
        # the steps: canceled, then answered in a later batch; then the categorization
        assert server.batches.batches_submitted == BATCHES + 1
    assert step_scores(tmp_path)[0] == pytest.approx((0.5 + 0.7) / 2)
