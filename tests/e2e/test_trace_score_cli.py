"""`agentjudge score` on trace files: the real CLI against the scriptable judge server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentjudge.testing import JudgeServer
from tests.conftest import FIXTURES
from tests.e2e.test_score_cli import judge_flags, score

pytestmark = pytest.mark.timeout(120)


def validate(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", "validate", *map(str, args)],
        capture_output=True, text=True, timeout=110, cwd=cwd,
    )  # fmt: skip


def _span_ids(path: Path) -> set[str]:
    ids: set[str] = set()
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                ids.update(span["spanId"] for span in scope["spans"])
    return ids


@pytest.mark.parametrize(
    "name",
    [
        "otlp-genai/pydantic-ai__subagent-pass.otlp.json",
        "openinference/langgraph__subagent-pass.otlp.json",
    ],
)
def test_scored_steps_point_back_to_their_spans(tmp_path: Path, name: str) -> None:
    source = FIXTURES / "traces" / name
    with JudgeServer() as server:
        done = score(
            source, "--output", tmp_path / "results.json", *judge_flags(server), cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "results.json").read_text())
    (root,) = results["trajectories"]
    assert root["root"].startswith(f"{source}:")  # the file the user named, then the trace
    spans = _span_ids(source)
    steps = [step for node in root["nodes"] for step in node["steps"]]
    assert len(steps) == 6  # two agents: a user input and two model turns each
    for step in steps:
        assert step["origin"]["span_id"] in spans
        assert step["score"] is not None


def test_format_forces_the_reader_and_a_wrong_one_says_so(tmp_path: Path) -> None:
    source = FIXTURES / "traces" / "otlp-genai" / "pydantic-ai__sum-pass.otlp.json"
    done = score("--format", "openinference", source, "--judge", "fake", cwd=tmp_path)
    assert done.returncode == 2
    assert "no agent, model turn or tool span in any trace" in done.stderr
    assert "is this the right --format?" in done.stderr
    right = score("--format", "otlp-genai", source, "--judge", "fake", cwd=tmp_path)
    assert right.returncode == 0, right.stderr


@pytest.mark.parametrize(
    ("folder", "roots", "steps"),
    [("claude-code", 8, 83), ("codex", 5, 101), ("inspect", 18, 85)],
)
def test_a_folder_of_session_logs_validates_whole(
    tmp_path: Path, folder: str, roots: int, steps: int
) -> None:
    """Subagent files and their meta files are read with their session, not as ATIF."""
    done = validate(FIXTURES / "traces" / folder, cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    assert f"{roots} roots: {roots} valid, 0 invalid" in done.stdout
    assert f" {steps} steps," in done.stdout
    assert "invalid " not in done.stdout


@pytest.mark.parametrize(
    "name",
    [
        "claude-code/claude-code-2.1.332__subagent-pass",
        "codex/codex-0.171.0__subagent-pass",
    ],
)
def test_scored_session_steps_point_back_to_their_lines(tmp_path: Path, name: str) -> None:
    source = FIXTURES / "traces" / name
    with JudgeServer() as server:
        done = score(
            source, "--output", tmp_path / "results.json", *judge_flags(server), cwd=tmp_path
        )
    assert done.returncode == 0, done.stderr
    (root,) = json.loads((tmp_path / "results.json").read_text())["trajectories"]
    nodes = root["nodes"]
    assert len(nodes) == 2  # the session and its one subagent
    for step in (step for node in nodes for step in node["steps"]):
        assert isinstance(step["origin"]["line"], int)
        assert step["score"] is not None


@pytest.mark.parametrize("folder", ["claude-code", "codex", "inspect"])
def test_session_logs_convert_to_atif_that_validates(tmp_path: Path, folder: str) -> None:
    out = tmp_path / "atif"
    done = subprocess.run(
        [sys.executable, "-m", "agentjudge", "convert", "traces",
         str(FIXTURES / "traces" / folder), "--out", str(out)],
        capture_output=True, text=True, timeout=110, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    written = sorted(out.glob("*.json"))
    assert f"converted {len(written)} runs into" in done.stdout
    checked = validate(out, cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout
    assert f"{len(written)} roots: {len(written)} valid, 0 invalid" in checked.stdout


def test_the_format_flag_names_every_format() -> None:
    from typing import get_args

    from agentjudge.cli.options import TraceFormat
    from agentjudge.traces.formats import format_names

    _, option = get_args(TraceFormat)
    for name in format_names():
        assert name in option.help
