"""The spool and the writer of the results file, across their batch boundaries: the file is
the bytes `write_atomic(indent=2)` writes for the whole document, whatever the batch size,
with held (judged later) records among the spooled ones, and with no case at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentjudge.cases.outcome import results_file
from agentjudge.cases.outcome.gate import CaseGrade
from agentjudge.cases.outcome.results_file import ResultsSpool, write_results
from agentjudge.files import write_atomic
from tests.results import documents


def grades(count: int) -> list[CaseGrade]:
    made = []
    for index in range(count):
        grade = CaseGrade(f"case-{index}", checks={"contains": {"passed": True, "reason": ""}})
        if index % 7 == 3:
            grade.failures.append(f"contains: missing 'é{index}' in «reply»")
        if index % 5 == 0:  # held until its judge has answered
            grade.judge_scores["task_success"] = documents.judge_score(None)
        made.append(grade)
    return made


def document() -> dict[str, Any]:
    return {"run": "r", "summary": {"passed": 1}, "cases": [], "judge_usage": {"calls": 0}}


@pytest.mark.parametrize("count", [0, 1, 2, 57])
@pytest.mark.parametrize("batch_bytes", [1, 300, 1 << 20])
def test_the_file_is_write_atomics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, batch_bytes: int
) -> None:
    monkeypatch.setattr(results_file, "_BATCH_BYTES", batch_bytes)
    made = grades(count)
    with ResultsSpool(tmp_path / "out.json") as spool:
        for grade in made:
            if grade.judge_scores:
                spool.hold(grade)
            else:
                spool.add(grade)
        for grade in made:  # the judges answer after the checks: held records change
            if grade.judge_scores:
                grade.judge_scores["task_success"] = documents.judge_score(4)
        write_results(tmp_path / "out.json", document(), spool.records())
    expected = {**document(), "cases": [grade.as_dict() for grade in made]}
    write_atomic(tmp_path / "expected.json", expected, indent=2)
    assert (tmp_path / "out.json").read_bytes() == (tmp_path / "expected.json").read_bytes()
    assert not [p for p in tmp_path.iterdir() if p.name not in ("out.json", "expected.json")]
