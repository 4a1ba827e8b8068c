"""The project worker as a process: what the project's code may do in it and how it ends."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest

from agentjudge.errors import UsageError
from agentjudge.projectenv.process import ProjectProcess, project_environ

pytestmark = pytest.mark.timeout(60)

METRICS = """
import os, subprocess, sys


def noisy(case, trace):
    os.write(1, b"progress written straight to fd 1\\n")
    subprocess.run(["echo", "a child process prints too"], check=True)
    print("and a print")
    return {"score": 1, "reasoning": "said a lot"}


def bail(case, trace):
    sys.exit(0)


def crash(case, trace):
    os._exit(3)
"""


def run(root: Path, names: list[str]) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        command = [sys.executable]
        async with ProjectProcess.running(command, root, project_environ({}), 4) as process:
            items = [{"kind": "custom", "callable": f"metrics:{n}"} for n in names]
            return list(await asyncio.gather(*(process.request(i) for i in items)))

    return asyncio.run(asyncio.wait_for(go(), 30))


def test_what_the_project_prints_never_gets_into_the_answers(tmp_path: Path) -> None:
    (tmp_path / "metrics.py").write_text(METRICS)
    (answer,) = run(tmp_path, ["noisy"])
    assert (answer["score"], answer["reasoning"], answer["error"]) == (1.0, "said a lot", None)


def test_a_metric_that_exits_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "metrics.py").write_text(METRICS)
    bailed, noisy = run(tmp_path, ["bail", "noisy"])
    assert bailed["error"] == "SystemExit: 0"
    assert noisy["score"] == 1.0


def test_a_worker_that_dies_fails_what_is_pending(tmp_path: Path) -> None:
    (tmp_path / "metrics.py").write_text(METRICS)
    with pytest.raises(UsageError, match=r"the project's worker \(.*\) exited with code 3"):
        run(tmp_path, ["crash"])
