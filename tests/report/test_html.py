"""The HTML report page and its view models, without a browser."""

from __future__ import annotations

import base64
import copy
import hashlib
import html
import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentjudge.errors import UsageError
from agentjudge.files import write_text_atomic
from agentjudge.report.html import results_page, score_page, script_json
from agentjudge.report.html_grade import grade_view
from agentjudge.report.html_score import score_view
from agentjudge.results.grade import GRADE
from agentjudge.results.score import JobError, ScoreResults
from tests.conftest import FIXTURES
from tests.results.documents import judge_score, node, step, tree
from tests.results.documents import score_document as whole_document

EVIL = [
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=2">',
    "</script><script>window.__pwned=3</script>",
    "<!-- <script>",
    "a\u2028b\u2029c & &amp; ]]>",
]
GOLDEN = FIXTURES / "graph-agents-cli" / "golden" / "basic" / "results"


def score_document() -> ScoreResults:
    """A run over /runs: one tree with a scored child, a failed one and an unscored one, an
    omitted child and an embedded subagent; one root that is invalid input."""
    root = node(
        "/runs/a/trajectory.json", None, own_score=0.5, aggregate=0.6, complete=False,
        step_count=3, subtree_step_count=5, failure_candidates=1,
        omitted=[{"ref_path": "$.steps[1].x", "parent_step_id": 2, "target": "gone.json",
                  "reason": "file_not_found"}],
        steps=[step(1, 1.0), step(2, 0.5, tool_names=["bash", "grep"]),
               step(3, 0.0, category="context_loss", confidence=0.9,
                    categorization_status="categorized", category_rationale="lost it")],
    )  # fmt: skip
    child = node(
        "/runs/a/child.json", root["id"], own_score=0.75, aggregate=0.75, passed=True,
        step_count=2, subtree_step_count=2, steps=[step(1, 0.8), step(2, 0.7)],
    )  # fmt: skip
    failed = node(
        "/runs/a/broken.json", root["id"], "failed", reason="judge_error", complete=False,
        steps=[step(1, 0.9), step(2, None, error="http_503", rationale="")],
    )  # fmt: skip
    deep = node("/runs/a/child.json#$.subagent_trajectories[0]", child["id"], "unscored",
                reason="depth_limit", kind="embedded", depth=2)  # fmt: skip
    invalid = node(
        "/runs/b/trajectory.json", None, "failed", reason="invalid_input", complete=False,
        problems=[{"file": "/runs/b/trajectory.json", "path": "$.steps", "rule": "schema",
                   "message": "must be a list"}],
    )  # fmt: skip
    document = whole_document(
        [tree([root, child, deep, failed]), tree([invalid])],
        overall_score=0.625, num_examples_evaluated=2,
        metrics={"atif_overall_score": 0.625, "atif_trajectory_count": 2,
                 "atif_failure_categorization_rate": 1.0},
    )  # fmt: skip
    document["run_metadata"].update(
        {"atif_complete": False, "judge_notice": "not a quality signal"}
    )
    document["judge"].update({"calls": 9, "successes": 8, "errors": 1, "input_tokens": 1200,
                              "output_tokens": 90, "cache_read_tokens": 800,
                              "mean_latency_ms": 1.5})  # fmt: skip
    document["judge"]["cost"] = {"usd": 0.000412, "source": "genai-prices 0.2.3",
                                 "model": "gpt-5-mini", "reason": None}  # fmt: skip
    return document


def grade_document() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((GOLDEN / "fail_and_missing.results.json").read_text())
    return data


def embedded_data(page: str) -> Any:
    match = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', page)
    assert match is not None
    return json.loads(match.group(1))


def test_a_file_is_read_by_its_kind_and_checked_against_its_contract() -> None:
    assert embedded_data(results_page(score_document(), "r.json")) == score_view(score_document())
    grade = GRADE.check(grade_document(), "r.json")
    assert embedded_data(results_page(grade_document(), "r.json")) == grade_view(grade)
    no_exit_code = grade_document()
    del no_exit_code["summary"]["exit_code"]
    neither = "r.json: not an agentjudge results file: neither score results"
    for bad, message in [
        ([1, 2], neither),
        ({"hello": "world"}, neither),
        ({"schema": "agentjudge.calibration/v1"}, neither),
        ({**score_document(), "schema": "agentjudge.score/v9"}, "schema: 'agentjudge.score/v9' is"),
        (no_exit_code, "grade/v1 results file: summary.exit_code: Field required"),
    ]:
        with pytest.raises(UsageError, match=re.escape(message)):
            results_page(bad, "r.json")


def test_score_results_that_break_their_contract_are_one_usage_error() -> None:
    broken: dict[str, Any] = {**score_document(), "trajectories": None}
    with pytest.raises(UsageError) as caught:
        results_page(broken, "old.json")
    assert str(caught.value) == (
        "old.json: not a valid agentjudge.score/v1 results file: trajectories: Input should be "
        "a valid list (it is None); pass a results file written by `agentjudge score` "
        "(agentjudge.score/v1), unmodified"
    )
    assert caught.value.exit_code == 3


@pytest.mark.parametrize("text", EVIL)
def test_script_json_cannot_end_its_element(text: str) -> None:
    value = {text: [text, {"k": text}]}
    encoded = script_json(value)
    assert not set("<>&\u2028\u2029") & set(encoded)
    assert json.loads(encoded) == value


def evil_score_document() -> ScoreResults:
    document = score_document()
    nodes = [entry for tree in document["trajectories"] for entry in tree["nodes"]]
    assert len(nodes) >= len(EVIL)
    for index, entry in enumerate(nodes):
        text = EVIL[index % len(EVIL)]
        entry["agent"] = {"name": text, "version": text, "model": text}
        entry["trajectory_id"] = entry["session_id"] = text
        for item in entry["steps"]:
            item.update({"rationale": text, "category_rationale": text, "tool_names": [text]})
    return document


def evil_grade_document() -> dict[str, Any]:
    document = grade_document()
    for index, case in enumerate(document["cases"]):
        text = EVIL[index % len(EVIL)]
        case["id"] = text
        case["reasons"] = [text]
        case["checks"] = {text: {"passed": False, "reason": text}}
        case["judge_scores"] = {text: {**judge_score(1.0), "reasoning": text}}
    document["warnings"] = EVIL
    return document


@pytest.mark.parametrize(
    ("build", "view"), [(evil_score_document, score_view), (evil_grade_document, grade_view)]
)
def test_untrusted_strings_reach_the_page_only_as_escaped_data(build: Any, view: Any) -> None:
    document = build()
    page = results_page(document, "results.json")
    assert len(re.findall(r"<script", page, re.IGNORECASE)) == 2  # the data and our code
    assert "<img" not in page
    assert "<!--" not in page
    assert "</script>" not in page.split('id="report-data">', 1)[1].split("</script>", 1)[0]
    assert embedded_data(page) == view(document)  # nothing lost
    shown = json.dumps(embedded_data(page))
    assert all(json.dumps(text)[1:-1] in shown for text in EVIL)


def test_the_policy_allows_exactly_the_inline_script_and_style() -> None:
    page = score_page(score_document())
    found = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', page)
    assert found is not None
    policy = html.unescape(found.group(1))
    script = page.rsplit("<script>", 1)[1].split("</script>", 1)[0]
    style = page.split("<style>", 1)[1].split("</style>", 1)[0]

    def digest(text: str) -> str:
        return base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()

    assert f"script-src 'sha256-{digest(script)}'" in policy
    assert f"style-src 'sha256-{digest(style)}'" in policy
    assert policy.startswith("default-src 'none';")
    assert "://" not in page  # nothing to fetch


def test_score_view_shows_failed_unscored_and_omitted_nodes() -> None:
    view = score_view(score_document())
    first, second = view["roots"]
    assert first == {
        "index": 0, "label": "a/trajectory.json", "trajectory_id": None,
        "agent": "agent 1", "model": "m", "file": "/runs/a/trajectory.json",
        "status": "scored", "reason": None, "score": 0.6, "own": 0.5, "passed": False,
        "complete": False, "steps": 5, "subagents": 3, "omitted": 1, "failures": 1, "errors": 1,
        "decisive": None, "decisive_absent": None, "cost": None,
    }  # fmt: skip
    assert (second["label"], second["status"], second["reason"]) == (
        "b/trajectory.json",
        "failed",
        "invalid_input",
    )
    root, child, deep, failed = view["trees"][0]
    assert [n["parent"] for n in (root, child, deep, failed)] == [None, 0, 1, 0]
    assert deep["label"] == "a/child.json#$.subagent_trajectories[0]"
    assert (deep["status"], deep["reason"], deep["steps"]) == ("unscored", "depth_limit", [])
    assert (failed["status"], failed["reason"]) == ("failed", "judge_error")
    assert [s["mark"] for s in failed["steps"]] == ["ok", "error"]
    assert failed["steps"][1] == {
        "id": 2, "source": "agent", "mark": "error", "error": "http_503",
    }  # fmt: skip
    assert [s["mark"] for s in root["steps"]] == ["ok", "ok", "fail"]  # 0.5 is not below 0.5
    assert root["steps"][1]["tools"] == ["bash", "grep"]
    assert root["steps"][2]["category"] == "context_loss"
    assert root["omitted"] == [
        {"ref_path": "$.steps[1].x", "target": "gone.json", "reason": "file_not_found",
         "parent_step_id": 2}
    ]  # fmt: skip
    assert view["trees"][1][0]["problems"] == ["$.steps: must be a list [schema]"]
    assert view["categories"] == [{"name": "context_loss", "count": 1}]
    cards = {c["key"]: c for c in view["cards"]}
    assert cards["atif_overall_score"]["value"] == 0.625
    assert cards["atif_complete"]["value"] is False
    assert cards["roots"]["sub"] == "0 passed · 1 not passed · 1 failed to score"
    assert view["notice"] == "not a quality signal"
    judge = {row["key"]: row["value"] for row in view["judge"]}
    assert judge["errors"] == 1
    assert judge["cache_read_tokens"] == 800
    assert judge["cost"] == "$0.000412 (gpt-5-mini, genai-prices 0.2.3)"
    document = score_document()
    del document["judge"]["cost"]  # a file from before runs were priced
    assert {row["key"]: row["value"] for row in score_view(document)["judge"]}["cost"] is None
    document["judge"]["cost"] = {
        "usd": None, "source": "genai-prices 0.2.3", "model": None, "reason": "unknown model"
    }  # fmt: skip
    unpriced = {row["key"]: row["value"] for row in score_view(document)["judge"]}
    assert unpriced["cost"] == "no price: unknown model"


def test_the_decisive_step_is_on_its_root_row_and_marked_in_its_node() -> None:
    document = score_document()
    tree = document["trajectories"][0]
    tree["decisive_failure"] = {
        "rule": "first_below_threshold", "node_id": "/runs/a/broken.json", "agent": "agent",
        "segment": 0, "step_id": 1, "order": 3, "score": 0.9, "category": None,
        "reason": "fine", "pick_status": None, "excerpt": "The total is 52.",
    }  # fmt: skip
    document["trajectories"][1]["decisive_failure"] = None
    document["trajectories"][1]["decisive_absent"] = "only_user_or_system_steps_below_threshold"
    view = score_view(document)
    first, second = view["roots"]
    assert first["decisive"] == {
        "rule": "first_below_threshold", "agent": "agent", "step_id": 1, "segment": 0,
        "order": 3, "score": 0.9, "category": None, "reason": "fine", "node": 3,
        "label": "a/broken.json", "excerpt": "The total is 52.",
    }  # fmt: skip
    assert (first["decisive_absent"], second["decisive"]) == (None, None)
    # a root that did not pass and names no step says why
    assert second["decisive_absent"] == "only_user_or_system_steps_below_threshold"
    marked = [
        (i, k) for i, node in enumerate(view["trees"][0])
        for k, step in enumerate(node["steps"]) if step.get("decisive")
    ]  # fmt: skip
    assert marked == [(3, 0)]  # the broken node's step 1, and no other


def test_an_empty_or_failed_run_still_renders() -> None:
    document = score_document()
    error: JobError = {"type": "all_roots_failed", "message": None}
    document.update({"status": "failed", "error": error, "trajectories": []})
    document["metrics"].update(
        {"atif_overall_score": None, "atif_failure_categorization_rate": None}
    )
    view = score_view(document)
    assert (view["roots"], view["trees"], view["categories"]) == ([], [], [])
    assert (view["status"], view["error"]) == ("failed", "all_roots_failed")
    assert embedded_data(score_page(document)) == view


def test_categories_are_counted_over_every_node_in_a_fixed_order() -> None:
    document = score_document()
    steps = document["trajectories"][0]["nodes"][1]["steps"]
    steps[0].update({"category": "none", "categorization_status": "categorized"})
    steps[1].update({"category": "uncategorized", "categorization_status": "invalid_response"})
    document["trajectories"][0]["nodes"][0]["steps"][0]["category"] = "made_up"
    names = [c["name"] for c in score_view(document)["categories"]]
    assert names == ["context_loss", "none", "uncategorized", "made_up"]


def test_grade_view_of_a_real_results_file() -> None:
    document = GRADE.check(grade_document(), "r.json")
    view = grade_view(document)
    assert (view["exit_code"], view["verdict"]) == (2, "incomplete run")
    counts = {c["status"]: c["count"] for c in view["counts"]}
    assert counts == {**{k: v for k, v in document["summary"].items() if k != "exit_code"},
                      "planned": document["planned"]}  # fmt: skip
    assert [q["metric"] for q in view["quality"]] == list(document["quality"])
    assert view["quality"][0]["status"] == "incomplete"
    greeting = view["cases"][0]
    assert (greeting["status"], greeting["reasons"]) == ("failed", document["cases"][0]["reasons"])
    assert greeting["checks"] == [
        {"name": "contains", "passed": False, "reason": "response does not contain 'hello'"}
    ]
    assert [c["status"] for c in view["cases"]] == [c["status"] for c in document["cases"]]


def test_grade_view_with_no_cases_and_notes() -> None:
    document = GRADE.check(copy.deepcopy(grade_document()), "r.json")
    document["cases"] = [{**document["cases"][1], "judge_notes": ["tool result cut"]}]
    view = grade_view(document)
    assert view["cases"][0]["notes"] == ["tool result cut"]
    assert view["cases"][0]["judges_passed"] == 1
    document["cases"] = []
    assert grade_view(document)["cases"] == []


def test_write_text_atomic_replaces_the_file_whole(tmp_path: Path) -> None:
    target = tmp_path / "out" / "report.html"
    write_text_atomic(target, "first")
    write_text_atomic(target, "é\u2028second")
    assert target.read_bytes() == "é\u2028second".encode()
    assert [p.name for p in target.parent.iterdir()] == ["report.html"]


def test_the_score_cards_show_the_interval_and_unstable_steps() -> None:
    document = score_document()
    view = score_view(document)
    cards = {c["key"]: c for c in view["cards"]}
    assert cards["atif_overall_score"]["sub"] is None  # results without an interval
    assert "unstable_steps" not in cards
    document["metrics_interval"]["atif_overall_score"] = [0.5, 0.75]
    document["run_metadata"]["unstable_steps"] = 2
    cards = {c["key"]: c for c in score_view(document)["cards"]}
    assert cards["atif_overall_score"]["sub"] == "95% CI 0.5000\u20130.7500"
    assert cards["atif_trajectory_count"]["sub"] is None
    assert cards["unstable_steps"]["value"] == 2


def test_a_step_too_long_to_show_whole_is_marked_cut_in_its_node() -> None:
    document = score_document()
    steps = document["trajectories"][0]["nodes"][0]["steps"]
    steps[0].update({"truncated": True, "shown_chars": 8_000, "hidden_chars": 28_500})
    steps[1]["truncated"] = False
    shown = score_view(document)["trees"][0][0]["steps"]
    assert (shown[0]["truncated"], shown[0]["shown_chars"], shown[0]["hidden_chars"]) == (
        True, 8_000, 28_500,
    )  # fmt: skip
    assert "truncated" not in shown[1]  # a whole step carries no mark


def test_a_priced_run_shows_each_root_s_cost_and_grade_its_judge_cost() -> None:
    document = score_document()
    document["trajectories"][0]["cost_usd"] = 0.0123
    document["trajectories"][1]["cost_usd"] = 0.0
    roots = score_view(document)["roots"]
    assert [r["cost"] for r in roots] == [0.0123, 0.0]
    graded = GRADE.check(copy.deepcopy(grade_document()), "r.json")
    graded["judge_cost"] = {"usd": 0.25, "source": "genai-prices 0.2.3", "model": "gpt-5-mini",
                            "reason": None}  # fmt: skip
    info = {row["label"]: row["value"] for row in grade_view(graded)["info"]}
    assert info["judge cost"] == "$0.250000 (gpt-5-mini, genai-prices 0.2.3)"
    graded["judge_cost"] = None  # no judge called: no row
    assert "judge cost" not in {row["label"] for row in grade_view(graded)["info"]}
