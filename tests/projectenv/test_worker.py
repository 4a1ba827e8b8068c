"""The project worker's own logic: how a failed judge call is reported, which Python runs
it. The worker end to end: tests/e2e/test_grade_project_judge.py."""

from __future__ import annotations

import sys
import venv
from pathlib import Path

import pytest

from agentjudge.projectenv import worker
from agentjudge.projectenv.process import project_command


class StatusError(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"Error code: {status}")
        self.status_code = status


class APIConnectionError(Exception):
    pass


class Model:
    def __init__(self, fails: Exception | None = None) -> None:
        self.fails = fails

    def invoke(self, prompt: object) -> object:
        if self.fails is not None:
            raise self.fails
        return type(
            "Reply", (), {"content": [{"text": '{"score": '}, "3}"], "usage_metadata": None}
        )


def invoke(model: Model) -> dict[str, object]:
    judge = worker.Judge()
    judge.model = model
    return judge.invoke({"id": 1, "messages": [{"role": "user", "content": "x"}]})


def test_a_failed_call_says_its_status_or_that_it_went_unanswered() -> None:
    assert invoke(Model(StatusError(401))) == {
        "id": 1,
        "text": None,
        "error": "StatusError: Error code: 401",
        "status": 401,
        "transport": False,
    }
    lost = invoke(Model(APIConnectionError("Connection error.")))
    assert (lost["status"], lost["transport"]) == (None, True)
    other = invoke(Model(ValueError("bad")))
    assert (other["status"], other["transport"]) == (None, False)


def test_an_answer_in_parts_is_joined() -> None:
    answer = invoke(Model())
    assert answer["text"] == '{"score": 3}'
    assert (answer["input_tokens"], answer["output_tokens"]) == (0, 0)


def test_which_python_runs_the_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert project_command(tmp_path) is None
    venv.create(tmp_path / ".venv", with_pip=False)
    assert project_command(tmp_path) == [str(tmp_path / ".venv" / "bin" / "python")]
    # a uv project runs where `uv run` runs it, as graph-agents-cli's runner does
    (tmp_path / "uv.lock").write_text("")
    monkeypatch.setattr("shutil.which", lambda name: f"/usr/bin/{name}")
    assert project_command(tmp_path) == ["uv", "run", "--quiet", "python"]
    monkeypatch.setattr("shutil.which", lambda name: None)
    assert project_command(tmp_path) == [str(tmp_path / ".venv" / "bin" / "python")]
    # running in the project's own environment: that interpreter is this one
    monkeypatch.setattr(sys, "prefix", str(tmp_path / ".venv"))
    assert project_command(tmp_path) == [sys.executable]
