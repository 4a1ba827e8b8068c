"""The HTML report as a user gets it: the real CLI writes it, headless Chromium shows it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page

from agentjudge.testing import JudgeServer
from tests.atif.docs import doc, with_refs, write
from tests.conftest import FIXTURES, REPO
from tests.e2e.browser import chromium, file_url

pytestmark = pytest.mark.timeout(120)

PROJECT = REPO / "tests" / "cases" / "data" / "project"
GOLDEN = FIXTURES / "graph-agents-cli" / "golden" / "basic" / "results"
ATTACKS = [
    "<script>window.__pwned=1</script>",
    "<img src=x onerror=window.__pwned=2>",
    "</script><script>window.__pwned=3</script>",
    '"><svg onload=window.__pwned=4>',
]


def agentjudge(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTJUDGE_CACHE_DIR": str(cwd / "cache")}
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=110, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[BrowserContext]:
    with chromium() as context:
        yield context


def open_report(browser: BrowserContext, path: Path) -> Page:
    """The report, rendered; any script error on the page fails the test."""
    page = browser.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(file_url(path))
    page.wait_for_selector("body[data-rendered]", timeout=10_000)
    assert errors == []
    return page


def value(text: str | None) -> Any:
    return None if text in (None, "") else json.loads(text)


def screenshot(page: Page, path: Path) -> None:
    page.screenshot(path=path, full_page=True)
    data = path.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 20_000


def test_score_report_of_the_real_fixtures(
    tmp_path: Path, atif_fixtures: Path, browser: BrowserContext
) -> None:
    run = agentjudge("score", atif_fixtures, "--judge", "fake", "--set",
                     "partial_result_policy=skip_failed_trajectory", "-o", "out.json",
                     "--html", "out.html", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 1, run.stderr  # invalid files and omitted children: incomplete
    results = json.loads((tmp_path / "out.json").read_text())
    page = open_report(browser, tmp_path / "out.html")

    for key, expected in [*results["metrics"].items(),
                          ("atif_complete", results["run_metadata"]["atif_complete"])]:  # fmt: skip
        assert value(page.get_attribute(f'#metrics .card[data-key="{key}"]', "data-value")) == (
            expected
        )
    score = results["metrics"]["atif_overall_score"]
    assert page.text_content('#metrics [data-key="atif_overall_score"] .value') == f"{score:.4f}"
    judge = results["judge"]
    for key in ("calls", "input_tokens", "output_tokens", "steps_judged"):
        assert value(page.get_attribute(f'#judge tr[data-key="{key}"]', "data-value")) == judge[key]
    assert page.text_content('#judge tr[data-key="input_tokens"] td:last-child') == (
        f"{judge['input_tokens']:,}"
    )

    roots = [tree["nodes"][0] for tree in results["trajectories"]]
    rows = page.locator("#trajectories tr.row")
    assert rows.count() == len(roots)
    shown = rows.evaluate_all(
        "rows => rows.map(r => [r.dataset.status,"
        " r.querySelector('[data-col=score]').dataset.value,"
        " r.querySelector('[data-col=steps]').dataset.value])"
    )
    assert [[status, value(score), value(steps)] for status, score, steps in shown] == [
        [r["status"], r["aggregate"], r["subtree_step_count"]] for r in roots
    ]
    failed = [i for i, r in enumerate(roots) if r["reason"] == "invalid_input"]
    assert failed
    assert all("invalid_input" in (page.text_content(f'tr[data-root="{i}"]') or "") for i in failed)

    # the tree with three file-ref subagents: opening the row shows the root and its children
    index = next(i for i, t in enumerate(results["trajectories"]) if len(t["nodes"]) == 4)
    nodes = results["trajectories"][index]["nodes"]
    detail = page.locator(f'tr[data-detail-for="{index}"]')
    assert detail.count() == 0  # built on demand
    page.click(f'tr[data-root="{index}"]')
    assert detail.locator(".node").count() == len(nodes)
    assert detail.locator(".node[data-depth='1']").count() == 3
    aggregates = detail.locator("[data-field=aggregate]").all_text_contents()
    assert aggregates == [f"{n['aggregate']:.3f}" for n in nodes]
    # each step's rationale, category and tools on demand
    child = nodes[1]
    detail.locator('.node[data-node="1"] .cell').nth(1).click()
    step = child["steps"][1]
    box = detail.locator('.node[data-node="1"] .step-detail')
    assert box.is_visible()
    assert box.locator(".rationale").text_content() == step["rationale"]
    assert f"{step['score']:.3f}" in (box.text_content() or "")

    # a tree with omitted children shows them as such
    omitting = next(i for i, r in enumerate(roots) if r["omitted"])
    page.click(f'tr[data-root="{omitting}"]')
    omitted = page.locator(f'tr[data-detail-for="{omitting}"] .node[data-status="omitted"]')
    assert omitted.count() == len(roots[omitting]["omitted"])
    assert "file_not_found" in (omitted.first.text_content() or "")

    # sorting by score puts the highest first, the unscored last
    page.click('#trajectories th[data-col="score"]')
    ordered = [value(v) for v in page.locator("#trajectories tr.row [data-col=score]")
               .evaluate_all("cells => cells.map(c => c.dataset.value || '')")]  # fmt: skip
    scores = sorted((r["aggregate"] for r in roots if r["aggregate"] is not None), reverse=True)
    assert ordered == scores + [None] * (len(roots) - len(scores))
    screenshot(page, tmp_path / "score-report.png")


def deep_tree(folder: Path) -> Path:
    """root -> a (-> aa, beyond --max-subagent-depth 1), b (its judge fails), gone (no file)."""
    root = doc(3)
    root["steps"][1]["message"] = "delegate [[score=0.9]]"
    root["steps"][2]["message"] = "wrap up [[score=0.2]] [[category=context_loss]]"
    refs = [{"trajectory_path": f"{name}.json"} for name in ("a", "b", "gone")]
    with_refs(root, 1, refs)
    child = with_refs(doc(2), 1, [{"trajectory_path": "aa.json"}])
    broken = doc(2)
    broken["steps"][1]["message"] = "unreachable judge [[fault=503]]"
    for name, document in [("root", root), ("a", child), ("aa", doc(2)), ("b", broken)]:
        write(folder / "runs" / f"{name}.json", document)
    return folder / "runs"


def test_failed_unscored_and_omitted_nodes_in_a_deep_tree(
    tmp_path: Path, browser: BrowserContext
) -> None:
    runs = deep_tree(tmp_path)
    with JudgeServer() as server:
        run = agentjudge("score", runs, "--judge-url", server.base_url, "--judge-model", "j",
                         "--set", "judge_max_attempts=1", "--set", "max_subagent_depth=1",
                         "--set", "partial_result_policy=skip_failed_trajectory",
                         "-o", "out.json", "--html", "out.html", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 1, run.stderr
    page = open_report(browser, tmp_path / "out.html")
    page.click('tr[data-root="0"]')
    tree = page.locator('tr[data-detail-for="0"] .tree')
    visible = tree.locator(".node:visible")
    assert visible.evaluate_all("ns => ns.map(n => n.dataset.status)") == [
        "scored", "scored", "failed", "omitted"
    ]  # fmt: skip
    assert tree.locator(".node[data-status=unscored]").count() == 0  # a's child: not yet built
    tree.locator('.node[data-node="1"] > .node-head').click()  # open a
    unscored = tree.locator(".node[data-status=unscored]")
    assert unscored.is_visible()
    assert "depth_limit" in (unscored.text_content() or "")
    tree.locator('.node[data-node="1"] > .node-head').click()  # and close it again
    assert not unscored.is_visible()
    failed = tree.locator(".node[data-status=failed]")
    assert "judge_error" in (failed.locator(".node-head").text_content() or "")
    failed.locator(".cell.error").click()
    assert "http_503" in (failed.locator(".step-detail").text_content() or "")
    assert page.locator('tr[data-root="0"] [data-col=complete]').text_content() == "no"
    screenshot(page, tmp_path / "deep-tree.png")


def test_the_step_where_a_run_went_wrong_is_shown_and_marked(
    tmp_path: Path, browser: BrowserContext
) -> None:
    root = doc(3)
    root["steps"][0]["message"] = "do the task [[score=1.0]]"
    root["steps"][1]["message"] = "delegate [[score=0.9]]"
    root["steps"][2]["message"] = "wrap up [[score=0.2]]"
    with_refs(root, 1, [{"trajectory_path": "child.json"}])
    child = doc(2, agent={"name": "searcher", "version": "1"})
    child["steps"][0]["message"] = "search [[score=0.9]]"
    child["steps"][1]["message"] = "lost it [[score=0.1]] [[category=context_loss]]"
    write(tmp_path / "runs" / "root.json", root)
    write(tmp_path / "runs" / "child.json", child)
    with JudgeServer() as server:
        run = agentjudge("score", tmp_path / "runs", "--judge-url", server.base_url,
                         "--judge-model", "j", "--set", "completion_threshold=0.9",
                         "-o", "out.json", "--html", "out.html", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    page = open_report(browser, tmp_path / "out.html")
    cell = page.locator('tr[data-root="0"] [data-col=decisive]')
    # the agent, and the step's own words to check it by
    assert cell.text_content() == (
        "searcher · step 2 · 0.100 · context_loss “lost it [[score=0.1]] [[category=context_loss]]”"
    )
    page.click('tr[data-root="0"]')
    tree = page.locator('tr[data-detail-for="0"] .tree')
    assert "went wrong" in (tree.locator(".decisive-line").text_content() or "")
    # the child (opened with its root) holds the one marked step, its step 2
    marked = tree.locator(".cell.decisive")
    assert marked.count() == 1
    assert tree.locator('.node[data-node="1"] .cell.decisive[data-step="1"]').count() == 1
    marked.click()
    assert "decisive" in (tree.locator('.node[data-node="1"] .step-detail').text_content() or "")


def test_grade_report_filters_cases_by_status(tmp_path: Path, browser: BrowserContext) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    run = agentjudge("grade", "--judge-provider", "fake", "-o", "g.json", "--html",
                     tmp_path / "g.html", cwd=project)  # fmt: skip
    assert run.returncode == 1, run.stdout + run.stderr
    results = json.loads((project / "g.json").read_text())
    page = open_report(browser, tmp_path / "g.html")
    for status, count in results["summary"].items():
        if status != "exit_code":
            assert value(page.get_attribute(f'#counts [data-key="{status}"]', "data-value")) == (
                count
            )
    assert "exit 1" in (page.text_content("header") or "")
    rows = page.locator("#cases tr.row")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == [
        c["id"] for c in results["cases"]
    ]
    for name, quality in results["quality"].items():
        assert value(page.get_attribute(f'#quality-table tr[data-metric="{name}"]',
                                        "data-pass-rate")) == quality["pass_rate"]  # fmt: skip
    page.click('#cases-panel .chip[data-filter="failed"]')
    failed = [c for c in results["cases"] if c["status"] == "failed"]
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.case)") == [c["id"] for c in failed]
    rows.first.click()
    checks = page.locator(f'[data-case-detail="{failed[0]["id"]}"] .checks tbody tr')
    assert checks.evaluate_all("rs => rs.map(r => r.dataset.check)") == list(failed[0]["checks"])
    assert failed[0]["reasons"][0] in (rows.first.text_content() or "")
    page.click('#counts [data-key="passed"]')  # the cards filter too
    assert rows.count() == results["summary"]["passed"]
    screenshot(page, tmp_path / "grade-report.png")


def test_report_command_renders_a_golden_grade_file(
    tmp_path: Path, browser: BrowserContext
) -> None:
    source = GOLDEN / "fail_and_missing.results.json"
    run = agentjudge("report", source, "-o", "r.html", cwd=tmp_path)
    assert (run.returncode, run.stdout.strip()) == (0, "report written to r.html")
    page = open_report(browser, tmp_path / "r.html")
    statuses = page.locator("#cases tr.row").evaluate_all("rs => rs.map(r => r.dataset.status)")
    assert statuses == [c["status"] for c in json.loads(source.read_text())["cases"]]
    assert "incomplete run" in (page.text_content("header") or "")


def evil_results(tmp_path: Path) -> tuple[Path, Path]:
    """Scoring results of a trajectory whose names, tools and ids are markup, with a judge
    that quotes it in its rationales; and grading results whose cases do the same."""
    attack = " ".join(ATTACKS)
    evil = doc(3, session_id=attack, trajectory_id=attack)
    evil["agent"] = {"name": attack, "version": attack, "model_name": attack}
    evil["steps"][1].update(
        message=f"{attack} [[score=0.1]] [[category=tool_selection_failure]]",
        tool_calls=[{"tool_call_id": "c1", "function_name": attack, "arguments": {}}],
    )
    write(tmp_path / "runs" / f"{ATTACKS[1]}.json", evil)
    with JudgeServer() as server:
        run = agentjudge("score", tmp_path / "runs", "--judge-url", server.base_url,
                         "--judge-model", "j", "-o", "s.json", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 0, run.stderr
    scored = json.loads((tmp_path / "s.json").read_text())
    for step in scored["trajectories"][0]["nodes"][0]["steps"]:
        step["rationale"] = step["category_rationale"] = attack  # a judge quoting the step
    (tmp_path / "s.json").write_text(json.dumps(scored))
    graded = json.loads((GOLDEN / "fail_and_missing.results.json").read_text())
    for case in graded["cases"]:
        case.update(id=f"{case['id']} {attack}", reasons=[attack])
        case["checks"] = {attack: {"passed": False, "reason": attack}}
    graded["warnings"] = [attack]
    (tmp_path / "g.json").write_text(json.dumps(graded))
    return tmp_path / "s.json", tmp_path / "g.json"


def test_markup_in_trajectories_and_reasons_is_shown_never_run(
    tmp_path: Path, browser: BrowserContext
) -> None:
    attack = " ".join(ATTACKS)
    for results in evil_results(tmp_path):
        out = results.with_suffix(".html")
        assert agentjudge("report", results, "-o", out, cwd=tmp_path).returncode == 0
        page = open_report(browser, out)
        page.locator("tr.row").first.click()
        cells = page.locator(".cell")
        if cells.count():
            cells.nth(1).click()  # the step whose rationale quotes the attack
            assert page.locator(".step-detail .rationale").text_content() == attack
        assert page.evaluate("() => window.__pwned") is None
        assert page.evaluate("() => document.scripts.length") == 2
        assert page.locator("img, svg").count() == 0
        text = page.text_content("body") or ""
        assert attack in text  # shown as text, whole
        screenshot(page, tmp_path / f"{results.stem}.png")


def test_report_rejects_what_is_not_a_results_file(tmp_path: Path) -> None:
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "list.json").write_text("[1, 2]")
    (tmp_path / "other.json").write_text('{"schema": "agentjudge.score/v2", "metrics": {}}')
    expected = {
        "bad.json": "error: results file bad.json is not valid JSON: unexpected character, "
        "expected a string key: line 1 column 2 (char 1); fix the file",
        "list.json": "error: list.json: not an agentjudge results file: neither score results "
        "(schema agentjudge.score/v1) nor grade results (cases, summary); pass the results file "
        "of agentjudge score or agentjudge grade",
        "other.json": "error: other.json: not a valid agentjudge.score/v1 results file: schema: "
        "'agentjudge.score/v2' is a version this agentjudge does not read; upgrade agentjudge",
        "missing.json": "error: results file not found: missing.json",
    }
    for name, message in expected.items():
        run = agentjudge("report", name, "-o", "r.html", cwd=tmp_path)
        assert (run.returncode, run.stderr.strip()) == (3, message)
    assert not (tmp_path / "r.html").exists()


def test_an_unwritable_html_path_fails_before_scoring(tmp_path: Path) -> None:
    write(tmp_path / "runs" / "a.json", doc(2))
    (tmp_path / "file").write_text("x")
    run = agentjudge("score", tmp_path / "runs", "--judge", "fake", "-o", "out.json",
                     "--html", tmp_path / "file" / "r.html", cwd=tmp_path)  # fmt: skip
    assert run.returncode == 3
    assert run.stderr.startswith(f"error: {tmp_path / 'file' / 'r.html'}: cannot write the HTML")
    assert "choose another --html" in run.stderr
    assert not (tmp_path / "out.json").exists()
