"""`agentjudge calibrate --labels FILE RESULTS.json` as a user runs it: results written by
the real `score` against the test judge server (its `[[score=X]]` markers fix the
verdicts), labels kept as the review page keeps them (`LabelBook`), the figures computed by
hand; no judge call."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentjudge.review.items import load_items
from agentjudge.review.labels import LabelBook, ReviewLabel
from agentjudge.review.order import review_order
from agentjudge.testing import JudgeServer
from tests.e2e.test_calibrate_cli import labelled_set

pytestmark = pytest.mark.timeout(120)


def run(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["AGENTJUDGE_CACHE_DIR"] = str(cwd / "cache")
    return subprocess.run(
        [sys.executable, "-m", "agentjudge", *map(str, args)],
        capture_output=True, text=True, timeout=110, env=env, cwd=cwd,
    )  # fmt: skip


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two runs scored: a 1.0 0.9 0.2(context_loss) 0.8 (passes); b 1.0 0.3
    (reasoning_failure) 0.1 (fails: its decisive step is 2). Step 1 of each is the user's."""
    folder = tmp_path_factory.mktemp("review")
    labelled_set(folder)
    with JudgeServer() as server:
        done = run(
            "score", folder / "runs", "--judge-url", server.base_url, "--judge-model", "judge",
            "-o", folder / "results.json", cwd=folder,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    return folder / "results.json"


# (run, step) -> (pass, category) as a reviewer says: the judge (threshold 0.5) agrees on
# all but a#4 (0.8, labelled fail) and b#2 (0.3, labelled pass)
ANN = {
    ("a", 1): (True, None),
    ("a", 2): (True, None),
    ("a", 3): (False, "context_loss"),
    ("a", 4): (False, None),
    ("b", 1): (True, None),
    ("b", 2): (True, "none"),
    ("b", 3): (False, "reasoning_failure"),
}


Says = dict[tuple[str, int], tuple[bool, str | None]]


def review(results: Path, path: Path, reviewer: str, says: Says) -> None:
    """Label, in the review order, the items `says` names, as the page does."""
    items, digest = load_items(results)
    book = LabelBook.open(path, results_path=results, results_sha256=digest, reviewer=reviewer)
    for item, part in review_order(items):
        name = (Path(item.root).stem, item.step_id or 0)
        if name in says:
            passed, category = says[name]
            book.put(
                ReviewLabel(
                    key=item.key, part=part, passed=passed, score=None, category=category,
                    note=None, reviewer=reviewer, at="2026-12-05T06:00:00Z",
                )
            )  # fmt: skip


def test_one_reviewer_gives_the_figures_computed_by_hand(results: Path, tmp_path: Path) -> None:
    labels = tmp_path / "ann.json"
    review(results, labels, "ann", ANN)
    done = run(
        "calibrate", "--labels", labels, results, "--json", "-o", "report.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert json.loads((tmp_path / "report.json").read_text()) == report
    assert report["results_sha256"] == hashlib.sha256(results.read_bytes()).hexdigest()
    [ann] = report["reviewers"]
    # b#2 (0.3) is the decisive step of b, the only one; the rest are the random part. Every
    # item of both parts labelled: weights 1, the figures are the plain ones
    assert ann["parts"]["decisive"] == {"items": 1, "labelled": 1, "compared": 1, "weight": 1.0}
    assert ann["parts"]["random"] == {"items": 6, "labelled": 6, "compared": 6, "weight": 1.0}
    assert ann["covered"] == 1.0
    figures = ann["figures"]
    assert figures["step_accuracy"]["value"] == pytest.approx(5 / 7)
    assert figures["step_accuracy"]["unweighted"] == pytest.approx(5 / 7)
    assert (figures["step_accuracy"]["agree"], figures["step_accuracy"]["steps"]) == (5, 7)
    # as the scoring form's test: p_o 35/49, p_e 25/49
    assert figures["kappa"]["value"] == pytest.approx(5 / 12)
    low, high = figures["kappa"]["interval"]
    assert low <= high
    assert low <= round(5 / 12, 6) <= high
    # (context_loss, context_loss), (none, reasoning_failure), (reasoning_failure,
    # tool_selection_failure)? no: b#3 is judged 0.1 tool_selection_failure -> F1 1, 0, 0
    assert figures["category_macro_f1"]["value"] == pytest.approx(1 / 3)
    # b's earliest failed step is 3, the judge's 2: a miss, by the same agent; a passed,
    # so the results name no decisive step for it: a miss without a prediction
    assert figures["decisive_step_accuracy"] | {"interval": None} == {
        "value": 0.0, "interval": None, "labelled": 2, "correct": 0, "no_prediction": 1,
    }  # fmt: skip
    assert figures["agent_accuracy"]["value"] == 0.5


def test_the_parts_are_weighted_by_their_size(results: Path, tmp_path: Path) -> None:
    # the decisive item (disagreed) and 2 of the 6 random ones (agreed): each random label
    # stands for 3 items; weighted accuracy (0 * 1 + 2 * 3) / (1 + 2 * 3) = 6/7
    items, _ = load_items(results)
    order = review_order(items)
    chosen = [order[0][0], *[i for i, part in order if part == "random"][:2]]
    assert order[0][1] == "decisive"
    says: Says = {}
    for item in chosen:
        assert item.step_id is not None
        assert item.score is not None
        agree = item.score >= 0.5
        says[(Path(item.root).stem, item.step_id)] = (
            agree if item is not chosen[0] else not agree,
            None,
        )
    labels = tmp_path / "bob.json"
    review(results, labels, "bob", says)
    done = run("calibrate", "--labels", labels, results, "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    [bob] = json.loads(done.stdout)["reviewers"]
    assert bob["parts"]["random"] == {"items": 6, "labelled": 2, "compared": 2, "weight": 3.0}
    assert bob["figures"]["step_accuracy"]["value"] == pytest.approx(6 / 7)
    assert bob["figures"]["step_accuracy"]["unweighted"] == pytest.approx(2 / 3)


def test_two_reviewers_give_their_agreement(results: Path, tmp_path: Path) -> None:
    review(results, tmp_path / "ann.json", "ann", ANN)
    # cy differs from ann on a#4 and b#3: of 7 both labelled, 5 agree; ann passes 4 of 7,
    # cy 6 of 7: p_o 35/49, p_e (4*6 + 3*1)/49 = 27/49, kappa (35-27)/(49-27) = 4/11
    cy = dict(ANN) | {("a", 4): (True, None), ("b", 3): (True, "none")}
    review(results, tmp_path / "cy.json", "cy", cy)
    done = run("calibrate", "--labels", "ann.json", "--labels", "cy.json", results, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "ann and cy: kappa 0.3636" in done.stdout
    report = json.loads(
        run("calibrate", "--labels", "ann.json", "--labels", "cy.json", results, "--json",
            cwd=tmp_path).stdout
    )  # fmt: skip
    [pair] = report["agreement"]
    assert pair["reviewers"] == ["ann", "cy"]
    assert pair["both_labelled"] == 7
    assert pair["kappa"]["value"] == pytest.approx(4 / 11)
    assert pair["pass_agreement"] == pytest.approx(5 / 7)
    assert pair["category_agreement"] == pytest.approx(2 / 3)  # b#3 differs
    assert [r["reviewer"] for r in report["reviewers"]] == ["ann", "cy"]


def test_labels_of_other_results_and_judge_flags_are_refused(results: Path, tmp_path: Path) -> None:
    labels = tmp_path / "ann.json"
    review(results, labels, "ann", ANN)
    other = tmp_path / "other.json"
    other.write_text(results.read_text() + "\n")
    done = run("calibrate", "--labels", labels, other, cwd=tmp_path)
    assert done.returncode == 3
    assert done.stderr.startswith(f"error: {labels}: review.results_sha256: made for another")
    flagged = run("calibrate", "--labels", labels, results, "--judge-url", "http://x", cwd=tmp_path)
    assert flagged.returncode == 3
    assert "--judge-url: calibrate --labels makes no judge call" in flagged.stderr
    hand = run("calibrate", labels, cwd=tmp_path)
    assert hand.returncode == 3
    assert "calibrate --labels" in hand.stderr


def test_stale_labels_are_reported_and_min_kappa_gates(results: Path, tmp_path: Path) -> None:
    labels = tmp_path / "ann.json"
    review(results, labels, "ann", ANN)
    document = json.loads(labels.read_text())
    document["review"]["labels"]["gone.json##9"] = document["review"]["labels"][
        next(iter(document["review"]["labels"]))
    ]
    labels.write_text(json.dumps(document))
    done = run("calibrate", "--labels", labels, results, "--min-kappa", "0.5", cwd=tmp_path)
    assert done.returncode == 1
    assert "kappa 0.4167 is below --min-kappa 0.5" in done.stderr
    assert "1 labels name items the results no longer have (left out): gone.json##9" in done.stdout
