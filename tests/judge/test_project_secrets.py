"""The project's own judge model runs with the project's credentials: whatever it says back
(a build failure, a failed call) reaches the user with those credentials masked."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, cast

import pytest

from agentjudge.cases.judging.custom_metrics import run_custom
from agentjudge.errors import UsageError
from agentjudge.judge.defaults import CallLimits
from agentjudge.judge.providers.project import ProjectJudge
from agentjudge.judge.secrets import env_secrets
from agentjudge.judge.session import JudgeSession, JudgeSettings
from agentjudge.projectenv.process import ProjectProcess
from tests.judge.resume_worker import item_request

KEY = "gsk_live_0123456789abcdefXYZ"  # a Groq-style key: no pattern of ours knows its shape
ENV = {"GROQ_API_KEY": KEY, "AUTH_MODE": "true", "MODEL_NAME": "llama-3.3-70b", "HOME": "/root"}


class _SaysTheKey:
    """A project process whose judge model fails, quoting the key it was built with."""

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        if message["kind"] == "build":
            return {"error": f"AuthenticationError: invalid api key {KEY} for groq"}
        return {"error": f"401 Unauthorized: key {KEY} rejected", "status": 401}


def _judge(tmp_path: Path) -> ProjectJudge:
    process = cast(ProjectProcess, _SaysTheKey())
    return ProjectJudge(process, "groq", "llama", tmp_path, "app", env_secrets(ENV))


def test_only_credentials_count_as_secrets() -> None:
    assert env_secrets(ENV) == (KEY,)


def test_a_build_failure_does_not_show_the_projects_key(tmp_path: Path) -> None:
    judge = _judge(tmp_path)

    async def build() -> None:
        async with judge.serving():
            pass

    with pytest.raises(UsageError) as failed:
        asyncio.run(build())
    assert KEY not in str(failed.value)
    assert "AuthenticationError" in str(failed.value)


def test_a_failed_call_does_not_show_the_projects_key(tmp_path: Path) -> None:
    settings = JudgeSettings(concurrency=1, calls=CallLimits(timeout=5.0, max_attempts=1))
    with JudgeSession(settings, use_store=False) as session:
        client = session.client(_judge(tmp_path))
        outcome = session.run(client.judge(item_request(1)))
    assert outcome.verdict is None
    assert outcome.message is not None
    assert KEY not in outcome.message
    assert "401" in outcome.message


def test_a_custom_metric_does_not_show_the_projects_key(tmp_path: Path) -> None:
    (tmp_path / "leaky_metrics.py").write_text(
        "import os\n"
        "def fails(case, trace):\n"
        "    raise RuntimeError('bad key ' + os.environ['GROQ_API_KEY'])\n"
        "def explains(case, trace):\n"
        "    return {'score': 1, 'reasoning': 'used ' + os.environ['GROQ_API_KEY']}\n"
    )
    items = [
        {"id": "a", "callable": "leaky_metrics:fails", "case": {}, "trace": {}},
        {"id": "b", "callable": "leaky_metrics:explains", "case": {}, "trace": {}},
    ]
    results = asyncio.run(run_custom(items, tmp_path, None, ENV))
    assert results["a"].error is not None
    assert "RuntimeError: bad key" in results["a"].error
    assert KEY not in results["a"].error
    assert results["b"].reasoning.startswith("used ")
    assert KEY not in results["b"].reasoning
