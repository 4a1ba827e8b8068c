"""An adapter that cannot start (no job spec, a spec that is not JSON or not a job) says
which file and what to fix in one line, exit 3, and never quotes the spec's values (its
`model.auth` may hold a secret)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # eval-hub-sdk still uses pydantic's class-based config
    warnings.simplefilter("ignore", DeprecationWarning)
    from agentjudge.integrations.evalhub import main


def start(
    spec: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    monkeypatch.setenv("EVALHUB_JOB_SPEC_PATH", str(spec))
    assert main() == 3
    return capsys.readouterr().err.splitlines()


def test_a_missing_job_spec_is_named_with_the_fix(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "job.json"
    assert start(spec, monkeypatch, capsys) == [
        f"error: {spec}: no such job spec file; set EVALHUB_JOB_SPEC_PATH to the job's job.json"
    ]


def test_a_job_spec_that_is_not_json_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "job.json"
    spec.write_text("{")
    assert start(spec, monkeypatch, capsys) == [
        f"error: {spec}: the job spec is not valid JSON; fix the file"
    ]


def test_a_job_spec_with_a_bad_field_names_the_field_not_its_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "job.json"
    spec.write_text(json.dumps({"id": ["sk-live-secret-1234"], "model": {"auth": "sk-2"}}))
    (line,) = start(spec, monkeypatch, capsys)
    assert line.startswith(f"error: {spec}: id: Input should be a valid string; fix the job spec")
    assert "sk-" not in line
