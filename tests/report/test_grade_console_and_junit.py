"""The console summary and JUnit XML of a graded run."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

from rich.console import Console

from agentjudge.report.grade_console import MAX_CASE_ROWS, print_summary
from agentjudge.report.grade_junit import write_junit
from agentjudge.results.grade import CaseResult, GradeResults, QualityResult
from tests.results import documents


def document(
    cases: list[CaseResult], quality: dict[str, QualityResult] | None = None
) -> GradeResults:
    return documents.document(cases, exit_code=1, quality=quality)


def case(case_id: str, status: str, *reasons: str) -> CaseResult:
    return documents.case(case_id, status, *reasons)


def test_junit_has_one_testcase_per_case_and_per_quality_metric(tmp_path: Path) -> None:
    quality = {
        "rq": documents.quality(0.5, 0.9, False, passed=1, scored=2, below_threshold=1),
        "ts": documents.quality(None, 1.0, None),
    }
    doc = document(
        [
            case("ok", "passed"),
            case("bad", "failed", "contains: response does not contain 'x'", "regex: no"),
            case("gone", "missing", "missing: no trace for case"),
            case("err\x00", "error", "error: judge m: judge call failed: timeout"),
            case("meh", "quality_below_threshold", "rq: score 2 below threshold 4 (quality)"),
        ],
        quality,
    )
    path = tmp_path / "out" / "junit.xml"
    write_junit(path, doc)
    root = ET.parse(path).getroot()
    cases = root.find("testsuite[@name='cases']")
    assert cases is not None
    assert (cases.get("tests"), cases.get("failures"), cases.get("errors")) == ("5", "1", "2")
    failure = cases.find("testcase[@name='bad']/failure")
    assert failure is not None
    assert failure.text is not None
    assert failure.get("message") == "contains: response does not contain 'x'"
    assert failure.text.splitlines() == ["contains: response does not contain 'x'", "regex: no"]
    assert cases.find("testcase[@name='gone']/error") is not None
    assert cases.find("testcase[@name='err\ufffd']/error") is not None  # XML-safe
    assert cases.find("testcase[@name='ok']/*") is None
    assert cases.find("testcase[@name='meh']/system-out") is not None
    metrics = root.find("testsuite[@name='quality_metrics']")
    assert metrics is not None
    assert metrics.get("failures") == "1"
    assert metrics.find("testcase[@name='rq']/failure") is not None
    assert metrics.find("testcase[@name='ts']/skipped") is not None
    assert not list(tmp_path.glob("out/.*"))  # no temporary file left behind


def test_the_console_lists_a_bounded_number_of_cases() -> None:
    doc = document([case(f"c{i}", "failed", "max_tokens: over") for i in range(MAX_CASE_ROWS + 7)])
    out = io.StringIO()
    print_summary(doc, Console(file=out, width=120, no_color=True))
    text = out.getvalue()
    assert "c0 " in text
    assert f"c{MAX_CASE_ROWS - 1} " in text
    assert f"c{MAX_CASE_ROWS} " not in text
    assert "... and 7 more in the results file" in text
    assert "gate failed (exit code 1)" in text
