"""A LiteLLM proxy (the real `litellm[proxy]`, on 127.0.0.1) in front of our judge server
playing OpenAI, used as an `openai-compatible` judge: exact scores for score and grade.

`make test` installs LiteLLM in a virtualenv of its own (`.venv/peers/litellm`: its pins
are not ours) and requires this test; elsewhere it is skipped when LiteLLM is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjudge.testing import JudgeServer
from tests.conftest import REPO
from tests.e2e.conftest import free_port, start, stop, wait_for
from tests.e2e.test_grade_cli import PROJECT_JUDGE_SCORES, judge_scores
from tests.e2e.test_score_cli import tree

LITELLM = Path(os.environ.get("AGENTJUDGE_LITELLM", REPO / ".venv/peers/litellm/bin/litellm"))
PROJECT = Path(__file__).resolve().parents[1] / "cases" / "data" / "project"
MASTER_KEY = "sk-proxy-master-0123"
UPSTREAM_KEY = "sk-upstream-key-4567"

if not LITELLM.exists():
    if os.environ.get("AGENTJUDGE_LITELLM_TESTS") == "required":
        raise RuntimeError(f"LiteLLM is not installed at {LITELLM}: run `make test`")
    pytest.skip(f"LiteLLM is not installed at {LITELLM}", allow_module_level=True)

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def judge() -> Iterator[JudgeServer]:
    with JudgeServer(mimic="openai", api_key=UPSTREAM_KEY) as server:
        yield server


@pytest.fixture(scope="module")
def proxy(judge: JudgeServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The proxy's base URL; it routes the model name `judge` to our judge server."""
    folder = tmp_path_factory.mktemp("litellm")
    (folder / "config.yaml").write_text(
        "model_list:\n"
        "  - model_name: judge\n"
        "    litellm_params:\n"
        "      model: openai/gpt-4o-mini\n"
        f"      api_base: {judge.base_url}\n"
        f"      api_key: {UPSTREAM_KEY}\n"
        "general_settings:\n"
        f"  master_key: {MASTER_KEY}\n"
    )
    port = free_port()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the price list
        "LITELLM_MODE": "PRODUCTION",  # no .env read from the working directory
    }
    command = [
        str(LITELLM), "--config", "config.yaml", "--host", "127.0.0.1", "--port", str(port),
        "--telemetry", "False",
    ]  # fmt: skip
    proc = start(command, folder / "litellm.log", folder, env)
    try:
        wait_for(f"http://127.0.0.1:{port}/health/liveliness", 120)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        stop(proc)


def run(args: list[str | Path], cwd: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env = {k: v for k, v in env.items() if not k.startswith(("JUDGE_", "MODEL_"))}
    env.update(AGENTJUDGE_CACHE_DIR=str(cwd / "cache"), **extra)
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=150, env=env, cwd=cwd,
    )  # fmt: skip


def test_a_score_job_through_the_proxy(tmp_path: Path, judge: JudgeServer, proxy: str) -> None:
    before = len(judge.log)
    flags = ["--judge-url", proxy, "--judge-model", "judge", "-o", "out.json"]
    done = run(["score", tree(tmp_path), *flags], tmp_path, AGENTJUDGE_JUDGE_API_KEY=MASTER_KEY)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out.json").read_text())
    assert results["metrics"]["atif_overall_score"] == pytest.approx((0.5 + 0.7) / 2)
    root = results["trajectories"][0]["nodes"][0]
    assert [s["score"] for s in root["steps"]] == [1.0, 0.5, 0.0]
    assert root["steps"][2]["category"] == "context_loss"
    assert results["judge"]["requests"]["response_format"] == "json_schema"
    assert results["judge"]["notes"] == []
    # the proxy passed our structured-output request on to the judge as OpenAI takes it
    reached = judge.log[before:]
    assert len(reached) == 6
    assert {r.status for r in reached} == {200}
    assert {r.body["response_format"]["type"] for r in reached} == {"json_schema"}
    assert {r.headers["authorization"] for r in reached} == {f"Bearer {UPSTREAM_KEY}"}
    assert MASTER_KEY not in (tmp_path / "out.json").read_text()


def test_a_grade_job_through_the_proxy(tmp_path: Path, proxy: str) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    done = run(
        [
            "grade",
            "--judge-provider",
            "openai-compatible",
            "--judge-model",
            "judge",
            "-o",
            "out.json",
        ],
        project,
        JUDGE_BASE_URL=proxy,
        JUDGE_API_KEY=MASTER_KEY,
    )
    assert done.returncode == 1, done.stderr  # the project has one failing case
    document = json.loads((project / "out.json").read_text())
    assert judge_scores(document) == PROJECT_JUDGE_SCORES


def test_a_wrong_proxy_key_shows_the_proxys_message(tmp_path: Path, proxy: str) -> None:
    flags = ["--judge-url", proxy, "--judge-model", "judge", "-o", "out.json"]
    done = run(
        ["score", tree(tmp_path), *flags], tmp_path, AGENTJUDGE_JUDGE_API_KEY="sk-wrong-key-000"
    )
    assert done.returncode == 2
    error = json.loads((tmp_path / "out.json").read_text())["error"]
    # the proxy's own words (without a database it cannot look the key up: "No connected db.")
    assert re.fullmatch(r"http_4\d\d: \S.*", error["message"]), error
    assert f"error: judge_error: {error['message']}" in done.stderr
    assert "sk-wrong-key-000" not in done.stderr + (tmp_path / "out.json").read_text()
