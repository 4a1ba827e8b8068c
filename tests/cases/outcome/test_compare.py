"""`compare`: graph-agents-cli's golden output, each regression rule, and bad inputs."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from rich.console import Console

from agentjudge.cases.outcome import (
    compare_exit_code,
    compare_json,
    compare_results,
)
from agentjudge.cases.outcome.compare import summary_diff
from agentjudge.report.grade_compare_console import render_compare
from agentjudge.results.grade import GRADE, GradeResults, QualityResult
from tests.conftest import FIXTURES
from tests.results import documents

GAC = FIXTURES / "graph-agents-cli"
REPORTS = GAC / "compare-reports"
GOLDEN = GAC / "golden" / "compare"
# graph-agents-cli printed off a terminal, where rich uses 80 columns; any width the widest
# table (56) fits in gives the same text, because lines are soft-wrapped.
WIDTH = 80


def _golden_report() -> dict[str, Any]:
    before = GRADE.read(REPORTS / "before.json")
    after = GRADE.read(REPORTS / "after.json")
    return compare_results(before, after, "before.json", "after.json")


def _render(report: dict[str, Any], width: int = WIDTH) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, no_color=True, force_terminal=False)
    render_compare(report, console)
    return out.getvalue()


def _results(
    statuses: dict[str, str],
    *,
    exit_code: int = 0,
    quality: dict[str, QualityResult] | None = None,
    scores: dict[str, dict[str, Any]] | None = None,
    dataset_hash: str = "h",
) -> GradeResults:
    cases = [
        documents.case(
            case_id,
            status,
            *([] if status == "passed" else [f"why {case_id}"]),
            judge_scores={
                m: documents.judge_score(s) for m, s in (scores or {}).get(case_id, {}).items()
            },
        )
        for case_id, status in statuses.items()
    ]
    return documents.document(
        cases, exit_code=exit_code, quality=quality, dataset_hash=dataset_hash
    )


def _compare(base: GradeResults, cand: GradeResults) -> dict[str, Any]:
    return compare_results(base, cand, "base.json", "cand.json")


def test_json_matches_graph_agents_cli_byte_for_byte() -> None:
    report = _golden_report()
    golden = (GOLDEN / "before_vs_after.compare.json").read_text(encoding="utf-8")
    assert compare_json(report) + "\n" == golden
    assert list(report) == list(json.loads(golden))
    assert compare_exit_code(report, fail_on_regression=False) == 0


def test_text_matches_graph_agents_cli_and_fails_when_asked() -> None:
    report = _golden_report()
    golden = (GOLDEN / "before_vs_after.compare.txt").read_text(encoding="utf-8")
    assert _render(report) == golden
    assert compare_exit_code(report, fail_on_regression=True) == 1


def test_a_narrow_console_would_not_reproduce_the_table() -> None:
    golden = (GOLDEN / "before_vs_after.compare.txt").read_text(encoding="utf-8")
    assert _render(_golden_report(), width=40) != golden


@pytest.mark.parametrize(
    ("before", "after", "change"),
    [
        ("passed", "quality_below_threshold", "regressed"),
        ("quality_below_threshold", "failed", "regressed"),
        ("failed", "error", "regressed"),
        ("passed", "something_new", "regressed"),
        ("failed", "passed", "improved"),
        ("missing", "quality_below_threshold", "improved"),
        ("error", "missing", "unchanged"),
        ("something_new", "error", "unchanged"),
        ("failed", "failed", "unchanged"),
    ],
)
def test_case_change_follows_the_status_rank(before: str, after: str, change: str) -> None:
    report = _compare(_results({"c": before}), _results({"c": after}))
    assert report["cases"]["c"]["change"] == change
    assert report["regressed"] is (change == "regressed")
    line = f"c: {before} -> {after}"
    assert report["regressions"] == ([line] if change == "regressed" else [])
    assert report["improvements"] == ([line] if change == "improved" else [])


def test_a_removed_case_is_a_regression() -> None:
    report = _compare(_results({"a": "passed", "b": "failed"}), _results({"a": "passed"}))
    assert report["cases"]["b"] == {
        "baseline": "failed",
        "candidate": None,
        "change": "removed",
        "candidate_reasons": [],
        "scores": {},
    }
    assert report["regressions"] == ["b: removed from the candidate run"]
    assert compare_exit_code(report, fail_on_regression=True) == 1


def test_an_added_case_is_not_a_regression_even_when_it_fails() -> None:
    report = _compare(_results({"a": "passed"}), _results({"a": "passed", "new": "failed"}))
    assert report["cases"]["new"]["change"] == "added"
    assert report["cases"]["new"]["baseline"] is None
    assert report["cases"]["new"]["candidate_reasons"] == ["why new"]
    assert report["regressions"] == []
    assert report["regressed"] is False
    assert compare_exit_code(report, fail_on_regression=True) == 0


def _quality(
    rate: float | None, met: bool | None, min_rate: float = 0.9
) -> dict[str, QualityResult]:
    return {"m": documents.quality(rate, min_rate, met)}


def test_a_lower_quality_pass_rate_is_a_regression() -> None:
    base = _results({"a": "passed"}, quality=_quality(1.0, True, 0.5))
    cand = _results({"a": "passed"}, quality=_quality(0.5, True, 0.5))
    report = _compare(base, cand)
    assert report["quality"]["m"] == {
        "baseline_pass_rate": 1.0,
        "candidate_pass_rate": 0.5,
        "baseline_met": True,
        "candidate_met": True,
        "min_pass_rate": 0.5,
        "delta": -0.5,
    }
    assert report["regressions"] == ["quality m: pass rate 100% -> 50%"]
    reverse = _compare(cand, base)
    assert reverse["regressions"] == []
    assert reverse["improvements"] == ["quality m: pass rate 50% -> 100%"]


def test_met_turning_false_is_a_regression_at_an_equal_rate() -> None:
    base = _results({"a": "passed"}, quality=_quality(0.8, True, 0.8))
    cand = _results({"a": "passed"}, quality=_quality(0.8, False, 0.9))
    report = _compare(base, cand)
    assert report["regressions"] == ["quality m: min_pass_rate no longer met"]
    assert report["quality"]["m"]["min_pass_rate"] == 0.9
    assert report["quality"]["m"]["delta"] == 0.0


def test_an_unrated_quality_metric_has_no_delta_and_no_regression() -> None:
    base = _results({"a": "passed"}, quality=_quality(None, None))
    cand = _results({"a": "passed"}, quality=_quality(0.0, False))
    report = _compare(base, cand)
    assert "delta" not in report["quality"]["m"]
    assert report["regressions"] == []


def test_a_higher_exit_code_is_a_regression_and_a_lower_one_is_not_an_improvement() -> None:
    worse = _compare(_results({}, exit_code=1), _results({}, exit_code=2))
    assert worse["regressions"] == ["exit code 1 -> 2"]
    better = _compare(_results({}, exit_code=2), _results({}, exit_code=0))
    assert better["regressions"] == []
    assert better["improvements"] == []


def test_score_deltas_are_rounded_to_four_places() -> None:
    base = _results({"a": "passed"}, scores={"a": {"q": 3.3, "only_base": 2.0}})
    cand = _results({"a": "passed"}, scores={"a": {"q": 4.1}})
    scores = _compare(base, cand)["cases"]["a"]["scores"]
    assert scores["q"] == {"baseline": 3.3, "candidate": 4.1, "delta": 0.8}
    assert scores["only_base"] == {"baseline": 2.0, "candidate": None}


def test_summary_diff_flattens_nested_objects_and_signs_deltas() -> None:
    base = {"passed": 4, "failed": 1, "note": "x", "by": {"k": 1}, "same": 0}
    cand = {"passed": 2, "failed": 2, "note": "y", "by": {"k": 3}, "same": 0}
    summary = summary_diff(base, cand)
    assert summary["differences"] == {
        "by.k": {"baseline": 1, "candidate": 3, "delta": "+2"},
        "failed": {"baseline": 1, "candidate": 2, "delta": "+1"},
        "note": {"baseline": "x", "candidate": "y"},
        "passed": {"baseline": 4, "candidate": 2, "delta": "-2"},
    }
    assert summary["changed_keys"] == ["by.k", "failed", "note", "passed"]
    assert summary["unchanged_keys"] == ["by", "same"]


def test_dataset_and_traces_hash_mismatches_are_reported_and_shown() -> None:
    base = _results({"a": "passed"}, dataset_hash="one")
    cand = _results({"a": "passed"}, dataset_hash="two")
    cand["traces_dataset_hash"] = "three"
    report = _compare(base, cand)
    assert report["same_dataset"] is False
    assert report["traces_dataset_hash"] == {
        "baseline": {"value": "one", "mismatch": False},
        "candidate": {"value": "three", "mismatch": True},
    }
    text = _render(report)
    assert "Warning: the two results come from different datasets.\n" in text
    assert "Warning: the candidate results were graded against a dataset" in text
    assert "Warning: the baseline" not in text


def test_no_changes_prints_the_count_and_no_regressions() -> None:
    report = _compare(_results({"a": "passed"}), _results({"a": "passed"}))
    assert _render(report) == (
        "Baseline:  base.json\n"
        "Candidate: cand.json\n"
        "No case status changes across 1 case(s).\n"
        "No regressions.\n"
    )


def test_ids_and_names_are_shown_literally_not_as_markup() -> None:
    report = compare_results(
        _results({"[bold]x[/bold] :smile:": "passed"}),
        _results({"[bold]x[/bold] :smile:": "failed"}),
        "[red]base[/red].json",
        "cand.json",
    )
    text = _render(report)
    assert "Baseline:  [red]base[/red].json\n" in text
    assert "[bold]x[/bold] :smile:" in text
