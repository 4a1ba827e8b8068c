"""`analyze`: reason normalisation, clustering, ordering, the document and its console form."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from agentjudge.cases.outcome.analyze import (
    analysis_path,
    analyze_results,
    cluster_reasons,
    normalise_reason,
)
from agentjudge.files import write_atomic
from agentjudge.report.grade_analysis_console import render_analysis
from agentjudge.results.grade import STATUSES, CaseResult, GradeResults
from tests.results import documents

NOW = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest.mark.parametrize(
    ("reason", "kind", "pattern"),
    [
        (
            "contains: response does not contain 'hello'",
            "contains",
            "response does not contain <x>",
        ),
        ('regex: no match for "a+b" in reply', "regex", "no match for <x> in reply"),
        (
            "response_quality: score 2.5 below threshold 4 (quality)",
            "response_quality",
            "score # below threshold # (quality)",
        ),
        ("max_latency_ms: took -12 ms, limit 300", "max_latency_ms", "took # ms, limit #"),
        (
            "error: judge response_quality: TimeoutError: took 600s",
            "error/judge",
            "timeouterror: took #s",
        ),
        (
            "error: custom metric my_metric2: ValueError: bad 'x'",
            "error/custom",
            "valueerror: bad <x>",
        ),
        ("Error: Judge Q: boom", "error/judge", "boom"),
        ("error: generation failed", "error", "generation failed"),
        ("error: judge without a second colon", "error", "judge without a second colon"),
        ("MISSING: No trace for case", "missing", "no trace for case"),
        ("something went wrong", "other", "something went wrong"),
        (": nothing before the colon", "other", "nothing before the colon"),
        ("tool_calls:   many \n  spaces\there ", "tool_calls", "many spaces here"),
    ],
)
def test_kind_and_pattern(reason: str, kind: str, pattern: str) -> None:
    assert normalise_reason(reason) == (kind, pattern)


def test_a_long_pattern_is_cut_to_120_characters() -> None:
    kind, pattern = normalise_reason("x: " + "a" * 200)
    assert kind == "x"
    assert pattern == "a" * 117 + "..."
    assert normalise_reason("x: " + "b" * 120) == ("x", "b" * 120)


def _case(case_id: str, status: str, *reasons: str) -> CaseResult:
    return documents.case(case_id, status, *reasons)


def _results(*cases: CaseResult) -> GradeResults:
    return documents.document(list(cases))


def test_reasons_differing_only_in_quoted_text_and_numbers_share_a_cluster() -> None:
    clusters = cluster_reasons(
        _results(
            _case("a", "failed", "contains: response does not contain 'hello'"),
            _case("b", "failed", "contains: response does not contain 'bye'"),
            _case("c", "passed"),
            _case("d", "failed", "contains: response does not contain '1'"),
            _case("e", "failed", "contains: response does not contain '2'"),
        )
    )
    assert clusters == [
        {
            "status": "failed",
            "kind": "contains",
            "pattern": "response does not contain <x>",
            "count": 4,
            "case_ids": ["a", "b", "d", "e"],
            "examples": [
                "contains: response does not contain 'hello'",
                "contains: response does not contain 'bye'",
                "contains: response does not contain '1'",
            ],
            "rank": 1,
        }
    ]


def test_count_counts_reasons_and_case_ids_are_listed_once() -> None:
    (cluster,) = cluster_reasons(
        _results(_case("a", "failed", "regex: no match 'x'", "regex: no match 'y'"))
    )
    assert cluster["count"] == 2
    assert cluster["case_ids"] == ["a"]


def test_the_same_reason_under_another_status_is_another_cluster() -> None:
    clusters = cluster_reasons(
        _results(_case("a", "failed", "other thing"), _case("b", "error", "other thing"))
    )
    assert [(c["status"], c["kind"]) for c in clusters] == [("error", "other"), ("failed", "other")]


def test_a_case_without_reasons_gets_no_reason_recorded() -> None:
    clusters = cluster_reasons(
        _results(
            _case("a", "failed"),
            _case("b", "quality_below_threshold"),
            _case("c", "failed"),
        )
    )
    assert [(c["kind"], c["pattern"], c["case_ids"], c["examples"]) for c in clusters] == [
        ("failed", "no reason recorded", ["a", "c"], ["failed: no reason recorded"] * 2),
        (
            "quality_below_threshold",
            "no reason recorded",
            ["b"],
            ["quality_below_threshold: no reason recorded"],
        ),
    ]


def test_sort_is_count_then_worse_status_then_kind_then_pattern() -> None:
    clusters = cluster_reasons(
        _results(
            _case("q", "quality_below_threshold", "aaa: one"),
            _case("f", "failed", "zzz: one"),
            _case("f2", "failed", "bbb: two", "bbb: one"),
            _case("m", "missing", "missing: no trace for case"),
            _case("big1", "quality_below_threshold", "zzz: many"),
            _case("big2", "quality_below_threshold", "zzz: many"),
            _case("odd", "weird", "aaa: unknown status"),
        )
    )
    order = [(c["rank"], c["status"], c["kind"], c["pattern"]) for c in clusters]
    assert order == [
        (1, "quality_below_threshold", "zzz", "many"),
        (2, "missing", "missing", "no trace for case"),
        (3, "failed", "bbb", "one"),
        (4, "failed", "bbb", "two"),
        (5, "failed", "zzz", "one"),
        (6, "quality_below_threshold", "aaa", "one"),
        # An unknown status sorts as a pass would, after every known failure.
        (7, "weird", "aaa", "unknown status"),
    ]


def test_the_analysis_document_has_graph_agents_cli_keys_in_order() -> None:
    results = _results(_case("a", "failed", "x: y"), _case("b", "passed"))
    analysis = analyze_results(results, "artifacts/grade_results/results_1.json", NOW)
    assert list(analysis) == [
        "results_file",
        "dataset_hash",
        "generated_at",
        "total_cases",
        "flagged_cases",
        "summary",
        "clusters",
        "judge_summary",
    ]
    assert analysis["results_file"] == "artifacts/grade_results/results_1.json"
    assert analysis["generated_at"] == "2026-03-04T05:06:07+00:00"
    assert (analysis["total_cases"], analysis["flagged_cases"]) == (2, 1)
    assert analysis["summary"] == results["summary"]
    assert list(analysis["summary"]) == [*STATUSES, "exit_code"]
    assert analysis["judge_summary"] is None


def test_generated_at_is_utc_whatever_zone_now_is_in() -> None:
    later = datetime(2026, 3, 4, 7, 6, 7, tzinfo=timezone(timedelta(hours=2)))
    analysis = analyze_results(_results(), "r.json", later)
    assert analysis["generated_at"] == "2026-03-04T05:06:07+00:00"


def test_analysis_path_uses_the_local_timestamp_and_never_overwrites(tmp_path: Path) -> None:
    local = datetime(2026, 3, 4, 5, 6, 7)
    first = analysis_path(tmp_path, local)
    assert first == tmp_path / "artifacts" / "analysis_20260304_050607.json"
    assert not first.parent.exists()
    write_atomic(first, {"clusters": []}, indent=2)
    assert analysis_path(tmp_path, local).name == "analysis_20260304_050607_2.json"


def test_the_analysis_is_written_indented_utf8_with_a_trailing_newline(tmp_path: Path) -> None:
    path = tmp_path / "a" / "analysis.json"
    write_atomic(path, {"pattern": "café"}, indent=2)
    assert path.read_text(encoding="utf-8") == '{\n  "pattern": "café"\n}\n'


def _render(analysis: dict[str, Any], top_k: int | None = None) -> str:
    out = io.StringIO()
    console = Console(file=out, width=200, no_color=True, force_terminal=False)
    render_analysis(analysis, console, top_k, Path("artifacts/analysis_x.json"))
    return out.getvalue()


def test_top_k_limits_the_table_not_the_document() -> None:
    results = _results(
        _case("a", "failed", "one: x", "one: y", "two: x"),
        _case("b", "failed", "one: z", "three: x"),
    )
    analysis = analyze_results(results, "r.json", NOW)
    assert len(analysis["clusters"]) == 5
    text = _render(analysis, top_k=2)
    assert "Failure clusters (2 of 2 cases)" in text
    rows = [line for line in text.splitlines() if line.startswith("│")]
    assert [row.split("│")[3].strip() for row in rows] == ["one", "one"]
    assert len(_render(analysis).splitlines()) == len(text.splitlines()) + 3
    assert text.endswith("Analysis saved to artifacts/analysis_x.json\n")


def test_more_than_five_case_ids_end_with_an_ellipsis() -> None:
    results = _results(*(_case(f"c{i}", "failed", "x: y") for i in range(7)))
    text = _render(analyze_results(results, "r.json", NOW))
    assert "c0, c1, c2, c3, c4, ..." in text
    assert "c5" not in text


def test_nothing_to_analyze() -> None:
    analysis = analyze_results(_results(_case("a", "passed")), "r.json", NOW)
    assert analysis["clusters"] == []
    assert _render(analysis) == (
        "No failures to analyze in r.json (1 case(s) passed).\n"
        "Analysis saved to artifacts/analysis_x.json\n"
    )
