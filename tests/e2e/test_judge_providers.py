"""Each provider against a server that checks requests as that API does (`judge-server
--mimic`): a score job and a grade job finish with exact scores, every request the server
received has the documented shape (checked field by field), and a refusal shows the
server's own message. The real CLI in a subprocess, real HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentjudge.judge.providers.openai_compatible import REASONING_TOKENS
from agentjudge.testing import JudgeServer, Script
from agentjudge.testing.judge_server import LoggedRequest
from tests.atif.docs import doc, write
from tests.e2e.test_grade_cli import PROJECT_JUDGE_SCORES, judge_scores
from tests.e2e.test_score_cli import tree

pytestmark = pytest.mark.timeout(120)
PROJECT = Path(__file__).resolve().parents[1] / "cases" / "data" / "project"
KEY = "sk-mimic-key-0123456789"
REASONING_TOKENS_MEDIUM = 64  # the OpenAI mimic's reasoning at the default effort


@dataclass(frozen=True)
class Case:
    """A provider, the API its server plays, a model, and where the key goes."""

    provider: str
    mimic: str
    model: str
    key_env: str | None

    def __str__(self) -> str:
        return f"{self.provider}-{self.mimic}-{self.model}"


CASES = [
    Case("openai", "openai", "gpt-4o-mini", "OPENAI_API_KEY"),
    Case("openai", "openai", "gpt-5-mini", "OPENAI_API_KEY"),
    Case("azure", "azure", "judge-deployment", "AZURE_OPENAI_API_KEY"),
    Case("anthropic", "anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    Case("gemini", "gemini", "gemini-2.5-flash", "GEMINI_API_KEY"),
    Case("openai-compatible", "vllm", "Qwen/Qwen2.5-7B-Instruct", None),
    Case("openai-compatible", "ollama", "llama3.1:8b", None),
]


def clean_env(tmp: Path, case: Case) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL", "_ENDPOINT")) and not k.startswith("JUDGE_")
    }
    env["AGENTJUDGE_CACHE_DIR"] = str(tmp / "cache")
    if case.key_env:
        env[case.key_env] = KEY
    return env


def run(args: list[str | Path], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=110, env=env, cwd=cwd,
    )  # fmt: skip


def check_shape(case: Case, request: LoggedRequest) -> None:
    """The request as the provider's API documents it, field by field."""
    body, headers = request.body, request.headers
    # the preflight call before grading asks for a few tokens; every judge call for 512
    budget = 32 if "Reply with this JSON object only" in json.dumps(body) else 512
    assert headers["content-type"] == "application/json"
    if case.mimic == "anthropic":
        assert request.path == "/v1/messages"
        assert headers["x-api-key"] == KEY
        assert headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in headers
        assert body["model"] == case.model
        assert body["max_tokens"] == budget
        assert body["temperature"] == 0.0
        assert all(m["role"] in ("user", "assistant") for m in body["messages"])
        assert body["messages"][0]["role"] == "user"
        system = body.get("system", "")
        # a prompt long enough to cache carries breakpoints, on text blocks (test_prompt_cache.py)
        assert isinstance(system, str) or all(b["type"] == "text" for b in system)
        (tool,) = body["tools"]
        assert body["tool_choice"] == {"type": "tool", "name": tool["name"]}
        assert tool["input_schema"]["type"] == "object"
        assert set(body) <= {
            "model", "max_tokens", "messages", "system", "temperature", "tools", "tool_choice",
        }  # fmt: skip
        return
    if case.mimic == "azure":
        assert request.path == f"/openai/deployments/{case.model}/chat/completions"
        assert request.query == {"api-version": "2024-10-21"}
        assert headers["api-key"] == KEY
        assert "authorization" not in headers
    elif case.mimic == "gemini":
        assert request.path == "/v1beta/openai/chat/completions"
        assert headers["authorization"] == f"Bearer {KEY}"
    else:
        assert request.path == "/v1/chat/completions"
        if case.key_env:
            assert headers["authorization"] == f"Bearer {KEY}"
        else:
            assert "authorization" not in headers
    assert body["model"] == case.model
    roles = [m["role"] for m in body["messages"]]
    reasoning = case.model.startswith("gpt-5")
    assert set(roles) <= ({"developer", "user"} if reasoning else {"system", "user"})
    if reasoning:
        assert body["max_completion_tokens"] == budget + REASONING_TOKENS
        assert "max_tokens" not in body
        assert "temperature" not in body
    else:
        thinking = case.model.startswith("gemini-2.5")
        assert body["max_tokens"] == budget + (REASONING_TOKENS if thinking else 0)
        assert body["temperature"] == 0.0
    response_format = body["response_format"]
    assert response_format["type"] == "json_schema"
    spec = response_format["json_schema"]
    assert spec["strict"] is True
    assert set(spec) == {"name", "schema", "strict"}
    schema = spec["schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == list(schema["properties"])
    # a step's request names its trajectory to OpenAI's prompt cache (test_prompt_cache.py)
    cache_key = {"prompt_cache_key"} if case.provider in ("openai", "azure") else set()
    assert set(body) <= {
        "model", "messages", "max_tokens", "max_completion_tokens", "temperature",
        "response_format", *cache_key,
    }  # fmt: skip


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_score_job_with_each_provider(tmp_path: Path, case: Case) -> None:
    runs = tree(tmp_path)
    with JudgeServer(mimic=case.mimic, api_key=KEY if case.key_env else None) as server:
        done = run(
            [
                "score", runs, "--judge", case.provider, "--judge-model", case.model,
                "--judge-url", server.base_url, "--set", "judge_initial_backoff_seconds=0.01",
                "-o", "out.json",
            ],
            tmp_path,
            clean_env(tmp_path, case),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        # 5 steps and 1 categorization; accepted as first sent: nothing to adapt to
        assert [r.status for r in server.log] == [200] * 6, [r.outcome for r in server.log]
        for request in server.log:
            check_shape(case, request)
    results = json.loads((tmp_path / "out.json").read_text())
    assert results["metrics"]["atif_overall_score"] == pytest.approx((0.5 + 0.7) / 2)
    root = results["trajectories"][0]["nodes"][0]
    assert [s["score"] for s in root["steps"]] == [1.0, 0.5, 0.0]
    assert root["steps"][2]["category"] == "context_loss"
    assert results["judge"]["notes"] == []
    assert results["judge"]["input_tokens"] > 0
    assert results["judge"]["output_tokens"] > 0
    # a hosted API's model the price database knows is priced; an Azure deployment's name
    # and a server of one's own are not (the reason is recorded)
    cost = results["judge"]["cost"]
    assert (cost["usd"] is not None) == (case.provider in ("openai", "anthropic", "gemini"))
    assert (cost["reason"] is None) == (cost["usd"] is not None)
    assert results["run_parameters"]["atif_judge"] == f"{case.provider}/{case.model}"
    assert KEY not in (tmp_path / "out.json").read_text()
    assert KEY not in done.stderr + done.stdout


@pytest.mark.parametrize("case", CASES, ids=str)
def test_a_grade_job_with_each_provider(tmp_path: Path, case: Case) -> None:
    project = tmp_path / "proj"
    shutil.copytree(PROJECT, project)
    with JudgeServer(mimic=case.mimic, api_key=KEY if case.key_env else None) as server:
        env = {**clean_env(tmp_path, case), "JUDGE_BASE_URL": server.base_url}
        done = run(
            [
                "grade", "--judge-provider", case.provider, "--judge-model", case.model,
                "--output", "out.json",
            ],
            project,
            env,
        )  # fmt: skip
        assert done.returncode == 1, done.stderr  # the project has one failing case
        assert [r.status for r in server.log] == [200] * 5  # the preflight, 4 judge calls
        for request in server.log:
            check_shape(case, request)
    document = json.loads((project / "out.json").read_text())
    assert judge_scores(document) == PROJECT_JUDGE_SCORES
    assert document["judge"] == {"provider": case.provider, "model": case.model}
    # priced as score prices (the preflight call is billed too), and said on the console
    cost = document["judge_cost"]
    assert (cost["usd"] is not None) == (case.provider in ("openai", "anthropic", "gemini"))
    if cost["usd"] is not None:
        assert cost["usd"] > 0
        assert f"judge cost: ${cost['usd']:.6f} ({cost['model']}, genai-prices " in done.stdout
    else:
        assert f"judge cost: no price: {cost['reason']}" in done.stdout
    assert KEY not in (project / "out.json").read_text()


REFUSALS = [
    # (case, what goes wrong, the server's words that must reach the user)
    (CASES[0], "wrong key", "http_401: Incorrect API key provided: "),
    (CASES[2], "wrong key", "http_401: Access denied due to invalid subscription key"),
    (CASES[3], "wrong key", "http_401: invalid x-api-key"),
    (CASES[4], "wrong key", "http_400: API key not valid. Please pass a valid API key."),
    (CASES[5], "long prompt", "http_400: This model's maximum context length is 50 tokens."),
    (CASES[6], "bad effort", "http_400: invalid reasoning value: 'extreme'"),
]


@pytest.mark.parametrize(("case", "fault", "said"), REFUSALS, ids=lambda x: str(x))
def test_a_refusal_shows_the_servers_message(
    tmp_path: Path, case: Case, fault: str, said: str
) -> None:
    runs = tree(tmp_path)
    script = Script(max_context_tokens=50 if fault == "long prompt" else None)
    key = "sk-the-right-key-000" if fault == "wrong key" else None
    flags = ["--set", "judge_reasoning_effort=extreme"] if fault == "bad effort" else []
    with JudgeServer(script, mimic=case.mimic, api_key=key) as server:
        done = run(
            [
                "score", runs, "--judge", case.provider, "--judge-model", case.model,
                "--judge-url", server.base_url, "-o", "out.json", *flags,
            ],
            tmp_path,
            clean_env(tmp_path, case),  # KEY: the wrong one where a key is checked
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    results = json.loads((tmp_path / "out.json").read_text())
    message = results["error"]["message"]
    assert message.startswith(said), message
    assert f"error: judge_error: {message}" in done.stderr
    assert KEY[-6:] not in message  # not even the tail OpenAI shows of a wrong key
    assert KEY not in done.stderr


def test_a_reasoning_model_unknown_by_name_is_adapted_to(tmp_path: Path) -> None:
    # Azure deployments are named by their owners: "judge" may be an o3
    case = Case("azure", "azure", "judge", "AZURE_OPENAI_API_KEY")
    runs = tree(tmp_path)
    with JudgeServer(mimic="azure", api_key=KEY, reasoning_models=("judge",)) as server:
        done = run(
            [
                "score", runs, "--judge", "azure", "--judge-model", "judge",
                "--judge-url", server.base_url, "-o", "out.json",
            ],
            tmp_path,
            clean_env(tmp_path, case),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        refused = [r for r in server.log if r.status != 200]
    results = json.loads((tmp_path / "out.json").read_text())
    assert results["metrics"]["atif_overall_score"] == pytest.approx(0.6)
    notes = results["judge"]["notes"]
    assert len(notes) == 2
    assert "Unsupported parameter: 'max_tokens'" in notes[0]
    assert "Unsupported value: 'temperature'" in notes[1]
    assert all(f"note: {note}" in done.stderr for note in notes)
    assert 2 <= len(refused) <= 2 * 16  # calls in flight when the first refusal came
    assert results["judge"]["requests"] == {
        "response_format": "json_schema",
        "token_field": "max_completion_tokens",
        "temperature": False,
        "system_role": "system",
    }


def test_openai_cached_tokens_give_usage_by_kind_and_the_price(tmp_path: Path) -> None:
    # a long task every step's prompt starts with: the mimic, as OpenAI does, reads from
    # its cache the start (1,024 tokens or more) a later prompt shares with an earlier one
    root = doc(4)
    root["steps"][0] = {"step_id": 1, "source": "user", "message": "Fix the bug. " * 600}
    for index, score in ((1, "1.0"), (2, "0.5"), (3, "0.0")):
        root["steps"][index]["message"] = f"Step {index} [[score={score}]]"
    write(tmp_path / "runs" / "root.json", root)
    case = Case("openai", "openai", "gpt-5-mini", "OPENAI_API_KEY")
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        done = run(
            [
                "score", tmp_path / "runs", "--judge", "openai", "--judge-model", case.model,
                "--judge-url", server.base_url, "--concurrency", "1", "-o", "out.json",
            ],
            tmp_path,
            clean_env(tmp_path, case),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        prompts = [r.body["messages"] for r in server.log]
    judge = json.loads((tmp_path / "out.json").read_text())["judge"]
    calls = len(prompts)
    assert judge["calls"] == calls
    assert judge["cache_write_tokens"] == 0  # OpenAI writes its cache without a word
    # gpt-5-mini reasons: the mimic counts 64 tokens of it a call (medium effort)
    assert judge["reasoning_tokens"] == calls * REASONING_TOKENS_MEDIUM
    # the first call found nothing cached; each later one its shared start, 128-token steps
    shared = [shared_start(prompts[i], prompts[:i]) for i in range(calls)]
    cached = [0 if s < 1024 else 1024 + (s - 1024) // 128 * 128 for s in shared]
    assert cached[0] == 0
    assert sum(cached) >= 1024 * (calls // 2), cached  # most calls share the long task
    assert judge["cache_read_tokens"] == sum(cached)
    # gpt-5-mini: $0.25 a million input, $0.025 cached, $2 output
    billed = judge["input_tokens"] - judge["cache_read_tokens"]
    usd = (billed * 0.25 + judge["cache_read_tokens"] * 0.025 + judge["output_tokens"] * 2) / 1e6
    assert judge["cost"]["usd"] == pytest.approx(usd, abs=1e-6)
    assert judge["cost"]["model"] == "gpt-5-mini"
    assert judge["cost"]["source"].startswith("genai-prices ")
    assert f"judge_cost_usd={judge['cost']['usd']:.6f};" in done.stderr


def shared_start(messages: list[dict[str, Any]], earlier: list[list[dict[str, Any]]]) -> int:
    """Tokens (four characters each) of the longest start `messages`' text shares with an
    earlier prompt's."""
    text = "".join(m["content"] for m in messages)
    best = 0
    for other in earlier:
        other_text = "".join(m["content"] for m in other)
        common = 0
        while common < min(len(text), len(other_text)) and text[common] == other_text[common]:
            common += 1
        best = max(best, common)
    return best // 4


def test_a_model_the_price_database_does_not_know_has_no_price(tmp_path: Path) -> None:
    runs = tree(tmp_path)
    case = Case("openai", "openai", "gpt-from-the-future", "OPENAI_API_KEY")
    with JudgeServer(mimic="openai", api_key=KEY) as server:
        done = run(
            [
                "score", runs, "--judge", "openai", "--judge-model", case.model,
                "--judge-url", server.base_url, "-o", "out.json",
            ],
            tmp_path,
            clean_env(tmp_path, case),
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    cost = json.loads((tmp_path / "out.json").read_text())["judge"]["cost"]
    assert cost["usd"] is None
    assert cost["model"] is None
    assert cost["reason"] == (
        "genai-prices does not know openai's model 'gpt-from-the-future': no price taken"
    )
