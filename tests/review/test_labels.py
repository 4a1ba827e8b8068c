"""A reviewer's labels kept on disk: written atomically after every action, resumed,
undone, tied to the results file's hash, stale labels reported."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from agentjudge.calibration.labels import load_labels, read_label_set
from agentjudge.errors import UsageError
from agentjudge.review.labels import LabelBook, ReviewLabel

SHA = hashlib.sha256(b"results").hexdigest()
OTHER = hashlib.sha256(b"other results").hexdigest()


def label(key: str, passed: bool | None = True, **more: object) -> ReviewLabel:
    fields: dict[str, object] = {
        "key": key, "part": "random", "passed": passed, "score": None, "category": None,
        "note": None, "reviewer": "ann", "at": "2026-12-05T05:00:00Z", **more,
    }  # fmt: skip
    return ReviewLabel(**fields)  # type: ignore[arg-type]


def book(path: Path, sha: str = SHA, reviewer: str = "ann") -> LabelBook:
    return LabelBook.open(
        path, results_path=Path("results.json"), results_sha256=sha, reviewer=reviewer
    )


def test_a_new_book_is_written_at_once_in_the_calibrate_format(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    book(path)
    document = json.loads(path.read_text())
    assert document["version"] == 1
    assert document["review"] == {
        "results": "results.json", "results_sha256": SHA, "reviewer": "ann", "labels": {},
        "undo": [],
    }  # fmt: skip
    assert read_label_set(path).review is not None


def test_every_action_is_on_disk_and_a_review_resumes(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    first = book(path)
    first.put(label("r#a##1", True, part="unstable", score=0.75, note="fine <script>"))
    first.put(label("r#a##2", False, category="context_loss"))
    on_disk = json.loads(path.read_text())["review"]["labels"]
    assert on_disk["r#a##1"] == {
        "part": "unstable", "pass": True, "score": 0.75, "category": None,
        "note": "fine <script>", "reviewer": "ann", "at": "2026-12-05T05:00:00Z",
    }  # fmt: skip
    again = book(path)
    assert again.labels() == first.labels()
    assert again.labels()["r#a##2"] == label("r#a##2", False, category="context_loss")
    assert again.undo() == label("r#a##2", False, category="context_loss")
    assert list(book(path).labels()) == ["r#a##1"]


def test_undo_gives_back_the_label_before_and_stops_at_the_start(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    labels = book(path)
    labels.put(label("k", True))
    labels.put(label("k", False, note="changed my mind"))
    assert labels.labels()["k"].passed is False
    assert labels.undo() == label("k", False, note="changed my mind")
    assert labels.labels()["k"] == label("k", True)
    assert book(path).labels()["k"] == label("k", True)
    assert labels.undo() == label("k", True)
    assert labels.labels() == {}
    assert labels.undo() is None
    assert json.loads(path.read_text())["review"]["undo"] == []


def test_a_book_for_other_results_or_another_reviewer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    book(path).put(label("k"))
    with pytest.raises(UsageError, match=r"review.results_sha256: made for another results"):
        book(path, sha=OTHER)
    with pytest.raises(UsageError, match=r"review.reviewer: these are ann's labels, not bob's"):
        book(path, reviewer="bob")
    with pytest.raises(UsageError, match="a label by bob in ann's file"):
        book(path).put(label("k", reviewer="bob"))
    assert book(path).labels() == {"k": label("k")}  # nothing changed


def test_a_hand_written_labels_file_is_not_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    (tmp_path / "a.json").write_text("{}")
    before = json.dumps({"version": 1, "trajectories": {"a.json": {"outcome": "fail"}}})
    path.write_text(before)
    with pytest.raises(UsageError, match="review: missing; this labels file was not written"):
        book(path)
    assert path.read_text() == before


def test_the_scoring_form_of_calibrate_refuses_a_review_file(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    book(path)
    with pytest.raises(UsageError, match="calibrate --labels"):
        load_labels(path)


def test_a_bad_label_is_refused_naming_the_field(tmp_path: Path) -> None:
    labels = book(tmp_path / "labels.json")
    with pytest.raises(UsageError, match=r"review.labels.k.category: Input should be"):
        labels.put(label("k", category="slow"))
    assert labels.labels() == {}


def test_stale_labels_are_reported(tmp_path: Path) -> None:
    labels = book(tmp_path / "labels.json")
    for key in ("a", "b", "c"):
        labels.put(label(key))
    assert labels.stale({"b", "z"}) == ["a", "c"]
    assert set(labels.labels()) == {"a", "b", "c"}  # never dropped


def test_a_failed_write_leaves_file_and_book_as_they_were(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "labels.json"
    labels = book(path)
    labels.put(label("a"))
    before = path.read_bytes()

    def refuse(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises((OSError, UsageError)):
        labels.put(label("b"))
    assert path.read_bytes() == before
    assert list(labels.labels()) == ["a"]
    assert [p.name for p in tmp_path.iterdir()] == ["labels.json"]  # no temp file left


def test_a_corrupt_labels_file_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.json"
    book(path)
    document = json.loads(path.read_text())
    document["review"]["results_sha256"] = "nope"
    path.write_text(json.dumps(document))
    with pytest.raises(UsageError, match=r"labels.json: review.results_sha256: String should"):
        book(path)
