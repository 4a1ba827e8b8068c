"""Custom metrics, run in the project's own environment when it has one.

With a project worker (`agentjudge.projectenv`: `uv run python` for a uv project, else the
project's `.venv`), every item goes to it, many at a time, so a metric imports the
project's modules with the project's dependencies. Without one, the metrics are imported
here, with the project folder first on `sys.path`. Either way they see the judge that was
chosen (`JUDGE_MODEL_PROVIDER`/`JUDGE_MODEL_NAME`), as graph-agents-cli's runner gives it
to them, so a metric that calls the project's `get_judge_model()` gets that judge.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentjudge.cases.judging.metric_result import MetricResult
from agentjudge.judge.secrets import env_secrets, redact
from agentjudge.projectenv import worker
from agentjudge.projectenv.process import ProjectProcess


async def run_custom(
    items: list[dict[str, Any]],
    root: Path,
    process: ProjectProcess | None,
    judge_env: Mapping[str, str],
) -> dict[str, MetricResult]:
    """Results by item id for `{id, callable, case, trace}` items: in `process` when there
    is one, else here with `judge_env` set."""
    if not items:
        return {}
    if process is None:
        raw = await asyncio.to_thread(_in_process, items, root, judge_env)
    else:
        raw = list(
            await asyncio.gather(*(process.request({**item, "kind": "custom"}) for item in items))
        )
    # a metric runs with the project's credentials: what it says may quote them
    secrets = env_secrets(judge_env)
    return {
        str(item["id"]): MetricResult(
            score=r.get("score"),
            reasoning=redact(str(r.get("reasoning") or ""), secrets),
            error=redact(str(r["error"]), secrets) if r.get("error") is not None else None,
        )
        for item, r in zip(items, raw, strict=True)
    }


def _in_process(
    items: list[dict[str, Any]], root: Path, judge_env: Mapping[str, str]
) -> list[dict[str, Any]]:
    folder = str(root.resolve())
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        with _environ(judge_env):
            return [worker.run_custom(item) for item in items]
    finally:
        if added:
            sys.path.remove(folder)


@contextmanager
def _environ(values: Mapping[str, str]) -> Iterator[None]:
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
