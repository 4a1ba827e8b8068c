"""`score --otlp-evaluations` when the evaluations cannot go: a receiver that is down is
one warning, the results file is written and the exit code is the run's; a URL that is no
receiver's is exit 3 before any judge call; ATIF input has nothing to send."""

from __future__ import annotations

import json
from pathlib import Path

from agentjudge.testing import JudgeServer
from tests.conftest import ATIF_FIXTURES, FIXTURES
from tests.e2e.conftest import free_port
from tests.e2e.test_score_cli import judge_flags, score

TRACE = FIXTURES / "traces" / "otlp-genai" / "pydantic-ai__sum-pass.otlp.json"


def test_a_receiver_that_is_down_is_one_warning_and_the_results_are_written(
    tmp_path: Path,
) -> None:
    down = f"http://agent:s3cret@127.0.0.1:{free_port()}"
    with JudgeServer() as judge:
        done = score(
            TRACE, "-o", tmp_path / "r.json", *judge_flags(judge), "--otlp-evaluations", down,
            cwd=tmp_path,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, done.stderr
    assert "evaluations could not be sent to http://127.0.0.1:" in warnings[0]
    assert "the results file is written" in warnings[0]
    assert "s3cret" not in done.stderr + done.stdout
    assert json.loads((tmp_path / "r.json").read_text())["status"] == "succeeded"


def test_a_url_that_is_no_receivers_is_exit_3_before_judging(tmp_path: Path) -> None:
    with JudgeServer() as judge:
        done = score(
            TRACE, *judge_flags(judge), "--otlp-evaluations", "localhost:4318", cwd=tmp_path
        )
        assert judge.log == []
    assert done.returncode == 3
    assert "--otlp-evaluations 'localhost:4318' is not an OTLP/HTTP receiver's" in done.stderr
    assert "http(s)://HOST:PORT" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "agentjudge-results.json").exists()


def test_atif_input_has_nothing_to_send(tmp_path: Path) -> None:
    source = ATIF_FIXTURES / "atif2otel__claude-code-opus46-pass.json"
    done = score(
        source, "--judge", "fake", "--otlp-evaluations", f"http://127.0.0.1:{free_port()}",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    assert "no verdict is on a trace's span" in done.stderr
