"""A graded run's rate intervals: the pass rate over cases and each metric's over its cases."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agentjudge.cases.outcome.gate import CaseGrade
from agentjudge.cases.outcome.intervals import rate_intervals
from agentjudge.report.grade_console import print_summary
from agentjudge.trust.intervals import Bootstrap, rate_interval
from tests.report.test_grade_console_and_junit import case, document
from tests.results import documents


def graded(case_id: str, *scores: tuple[str, bool | None], failed: bool = False) -> CaseGrade:
    grade = CaseGrade(case_id)
    for name, passed in scores:
        grade.judge_scores[name] = documents.judge_score(None, passed=passed)
        if passed is False:
            grade.quality_misses.append(f"{name}: below")
    if failed:
        grade.failures.append("contains: no")
    return grade


def test_rates_over_cases_and_over_each_metric_s_scored_cases() -> None:
    grades = [graded(f"p{i}", ("rq", True), ("ts", True)) for i in range(60)]
    grades += [graded(f"q{i}", ("rq", False), ("ts", True)) for i in range(30)]
    grades += [graded(f"f{i}", ("rq", None), failed=True) for i in range(10)]
    bootstrap = Bootstrap(seed=4, resamples=500)
    tallies = [grade.tally() for grade in grades]
    record = rate_intervals(tallies, bootstrap)
    assert record == {
        "pass_rate": [pytest.approx(v, abs=1e-6) for v in rate_interval(60, 100, bootstrap)],  # type: ignore[union-attr]
        "metrics": {
            "rq": [pytest.approx(v, abs=1e-6) for v in rate_interval(60, 90, bootstrap)],  # type: ignore[union-attr]
            "ts": [1.0, 1.0],
        },
        "level": 0.95, "resamples": 500, "seed": 4,
    }  # fmt: skip
    assert record["pass_rate"] is not None
    low, high = record["pass_rate"]
    assert low < 0.6 < high
    assert record == rate_intervals(tallies, bootstrap)
    assert rate_intervals([], bootstrap)["pass_rate"] is None


def test_the_console_shows_the_pass_rate_and_quality_rates_with_intervals() -> None:
    quality = {"rq": documents.quality(0.5, 0.9, False, passed=1, scored=2, below_threshold=1)}
    doc = document([case("ok", "passed"), case("meh", "quality_below_threshold", "rq")], quality)
    doc["metrics_interval"] = {
        "pass_rate": [0.0, 1.0], "level": 0.95, "resamples": 1000, "seed": 0,
        "metrics": {"rq": [0.0, 1.0]},
    }  # fmt: skip
    out = io.StringIO()
    print_summary(doc, Console(file=out, width=200))
    text = out.getvalue()
    assert "pass rate: 50% (95% CI 0%\u2013100%)" in text
    assert "50% (95% CI 0%\u2013100%)" in text.split("Quality metrics")[1]
