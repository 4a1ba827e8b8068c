"""What `score` says after its summary agrees with its exit code: a job that exits 0 prints
no `error:` line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentjudge.cli import main
from agentjudge.report.results import summary_line
from agentjudge.testing.judge_server import JudgeServer
from tests.atif.docs import doc, write


def test_a_run_that_succeeds_without_any_answer_warns_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every step below the failure threshold, so each asks for a categorization, which the
    # test server never answers usably: the categorizations are not stored, the steps are
    document = doc(3)
    for agent_step in document["steps"][1:]:
        agent_step["message"] = "done [[score=0.1]]"
    write(tmp_path / "runs" / "a.json", document)
    with JudgeServer() as server:
        flags = [
            str(tmp_path / "runs"), "--judge-url", server.base_url, "--judge-model", "m",
            "--cache", str(tmp_path / "store.sqlite"), "-o", str(tmp_path / "out.json"),
            "--set", "judge_max_attempts=1", "--set", "judge_initial_backoff_seconds=0.01",
            "--set", "judge_retry_round_pause_seconds=0.01",
        ]  # fmt: skip
        assert main(["score", *flags]) == 0
        capsys.readouterr()
        server.script.faults = {"500": 1.0}  # now nothing is answered
        assert main(["score", *flags]) == 0

    err = capsys.readouterr().err
    assert [line for line in err.splitlines() if line.startswith("error:")] == []
    assert re.search(r"^warning: none of \d+ judge calls got an answer from ", err, re.M)


def test_the_summary_line_shows_no_python_none_and_rounds_the_rate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "empty.json").write_text("")
    out = tmp_path / "out.json"
    assert (
        main(["score", str(tmp_path / "runs"), "--judge", "fake", "--no-cache", "-o", str(out)])
        == 2
    )
    (line,) = [x for x in capsys.readouterr().err.splitlines() if x.startswith("agentjudge score:")]
    assert " atif_failure_categorization_rate=- " in line, line

    document = json.loads(out.read_text())
    document["metrics"]["atif_failure_categorization_rate"] = 5 / 7
    assert " atif_failure_categorization_rate=0.7143 " in summary_line(document, out)


def test_json_without_dry_run_is_a_usage_error_not_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "runs" / "a.json", doc(3))
    out = tmp_path / "out.json"
    code = main(["score", str(tmp_path / "runs"), "--judge", "fake", "--json", "-o", str(out)])
    assert code == 3
    assert capsys.readouterr().err.startswith("error: --json prints the plan of --dry-run")
    assert not out.exists()


def test_fail_under_says_why_the_run_exits_1_even_when_quiet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path / "runs" / "a.json", doc(3))
    flags = [str(tmp_path / "runs"), "--judge", "fake", "--no-cache", "-q"]
    assert main(["score", *flags, "-o", str(tmp_path / "a.json"), "--fail-under", "0.99"]) == 1
    score = json.loads((tmp_path / "a.json").read_text())["overall_score"]
    lines = capsys.readouterr().err.splitlines()
    assert f"atif_overall_score {score:.4f} is below --fail-under 0.99: exit 1" in lines

    assert main(["score", *flags, "-o", str(tmp_path / "b.json"), "--fail-under", "0.01"]) == 0
    assert "fail-under" not in capsys.readouterr().err


def test_an_unreachable_mlflow_is_one_warning_not_an_internal_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")  # MLflow retries for minutes
    write(tmp_path / "runs" / "a.json", doc(3))
    out = tmp_path / "out.json"
    uri = "http://user:mlflow-secret@127.0.0.1:9"  # nothing listens on port 9 (discard)
    flags = [str(tmp_path / "runs"), "--judge", "fake", "--no-cache", "-q", "-o", str(out)]
    assert main(["score", *flags, "--mlflow-tracking-uri", uri]) == 0
    err = capsys.readouterr().err
    assert "warning: the run could not be logged to MLflow at http://127.0.0.1:9 " in err
    assert "internal error" not in err
    assert "mlflow-secret" not in err
    assert json.loads(out.read_text())["status"] == "succeeded"
