"""`grade --junit --html` take the results the run has just written as they are: the
contract checks files read back by `compare`, `analyze` and `report`, not grade's own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from agentjudge.cases.grade import GradeRun
from agentjudge.cli.grade import _report
from tests.conftest import FIXTURES

GOLDEN = FIXTURES / "graph-agents-cli" / "golden" / "basic" / "results"


def test_grade_s_reports_do_not_check_its_own_results_again(tmp_path: Path) -> None:
    document: Any = json.loads((GOLDEN / "fail_and_missing.results.json").read_text())
    # what the contract refuses (a count that is no int) and the reporters do not read
    document["summary"]["unstable"] = "a value only a check would refuse"
    (output := tmp_path / "results.json").write_text(json.dumps(document))
    run = GradeRun(document=document, output=output, exit_code=1)
    _report(run, tmp_path / "junit.xml", tmp_path / "r.html", None, True, Console(quiet=True))
    assert "<testsuite" in (tmp_path / "junit.xml").read_text()
    assert "report-data" in (tmp_path / "r.html").read_text()


def test_the_results_types_load_without_pydantic() -> None:
    # score and grade import them at start-up (part of every CI gate's time) and check
    # nothing they wrote: pydantic is imported when a file is read back
    code = (
        "import sys\nimport agentjudge.results.score, agentjudge.results.grade\n"
        "print('pydantic' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (done.returncode, done.stdout.strip()) == (0, "False"), done.stderr
