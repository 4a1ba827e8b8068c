"""The console summary and JUnit XML of a graded run."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

from rich.console import Console

from agentjudge.cases.outcome import print_summary, write_junit
from agentjudge.cases.outcome.console import MAX_CASE_ROWS


def document(cases: list[dict[str, Any]], quality: dict[str, Any] | None = None) -> dict[str, Any]:
    summary = dict.fromkeys(("passed", "failed", "quality_below_threshold", "error", "missing"), 0)
    for case in cases:
        summary[case["status"]] += 1
    return {
        "planned": len(cases),
        "summary": {**summary, "exit_code": 1},
        "quality": quality or {},
        "fake_model": [],
        "warnings": [],
        "cases": cases,
    }


def case(case_id: str, status: str, *reasons: str) -> dict[str, Any]:
    return {"id": case_id, "status": status, "reasons": list(reasons)}


def test_junit_has_one_testcase_per_case_and_per_quality_metric(tmp_path: Path) -> None:
    quality = {
        "rq": {"pass_rate": 0.5, "min_pass_rate": 0.9, "met": False, "passed": 1, "scored": 2,
               "status": "not_met"},
        "ts": {"pass_rate": None, "min_pass_rate": 1.0, "met": None, "passed": 0, "scored": 0,
               "status": "not_run"},
    }  # fmt: skip
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
