"""A reviewer's labels on one results file, kept on disk in the labels file `calibrate`
reads (its `review` section, docs/calibration.md): written whole and atomically after every
action, so a review stopped at any moment resumes where it was."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentjudge.calibration.labels import (
    LABELS_VERSION,
    LabelSet,
    Part,
    ReviewedLabel,
    ReviewSection,
    UndoEntry,
    read_label_set,
)
from agentjudge.errors import UsageError
from agentjudge.files import write_atomic

# Actions kept to undo: enough for any session's regrets, while the file (rewritten on every
# action) stays small.
UNDO_DEPTH = 500


@dataclass(frozen=True, slots=True)
class ReviewLabel:
    """One reviewer's label of one item (`key`: review/items.py)."""

    key: str
    part: Part
    passed: bool | None  # y / n
    score: float | None  # on the judge's scale
    category: str | None  # one of the taxonomy's categories
    note: str | None
    reviewer: str
    at: str  # ISO 8601 UTC


class LabelBook:
    """The labels of one reviewer on one results file, kept on disk."""

    def __init__(self, path: Path, section: ReviewSection, source: str | None) -> None:
        self._path = path
        self._section = section
        self._source = source

    @classmethod
    def open(
        cls, path: Path, *, results_path: Path, results_sha256: str, reviewer: str
    ) -> LabelBook:
        """The labels file at `path`: resumed when it exists, else made (and written, so a
        path that cannot be written fails now, not at the first label). Refused (UsageError)
        when it is not a review's file, was made for another results file's hash, or is
        another reviewer's."""
        if not reviewer.strip():
            raise UsageError("--reviewer: empty; give the reviewer's name")
        if not path.exists():
            section = ReviewSection(
                results=str(results_path), results_sha256=results_sha256, reviewer=reviewer
            )
            book = cls(path, section, f"agentjudge review of {results_path}")
            book._write()
            return book
        found = read_label_set(path)
        if found.review is None:
            raise UsageError(
                f"{path}: review: missing; this labels file was not written by `agentjudge "
                "review`; give a new file to --labels"
            )
        _same_results(path, found.review, results_path, results_sha256)
        if found.review.reviewer != reviewer:
            raise UsageError(
                f"{path}: review.reviewer: these are {found.review.reviewer}'s labels, not "
                f"{reviewer}'s; each reviewer labels into a file of their own"
            )
        return cls(path, found.review, found.source)

    @classmethod
    def read(cls, path: Path, *, results_path: Path, results_sha256: str) -> LabelBook:
        """An existing review's labels file, to read (calibrate): refused (UsageError) when
        it is missing, not a review's, or made for another results file's hash."""
        if not path.is_file():
            raise UsageError(f"--labels: no such file {path}; give a labels file `review` wrote")
        found = read_label_set(path)
        if found.review is None:
            raise UsageError(
                f"{path}: review: missing; --labels takes a labels file written by "
                "`agentjudge review` (run `agentjudge calibrate LABELS` for hand-written ones)"
            )
        _same_results(path, found.review, results_path, results_sha256)
        return cls(path, found.review, found.source)

    @property
    def path(self) -> Path:
        return self._path

    @property
    def reviewer(self) -> str:
        return self._section.reviewer

    def put(self, label: ReviewLabel) -> None:
        """Set `label` for its item (replacing the item's earlier label) and write the file
        atomically (temp + rename)."""
        if label.reviewer != self._section.reviewer:
            raise UsageError(
                f"{self._path}: review.reviewer: a label by {label.reviewer} in "
                f"{self._section.reviewer}'s file; each reviewer labels into their own"
            )
        try:
            record = ReviewedLabel.model_validate(_record(label))
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            field = ".".join(str(p) for p in first["loc"])
            raise UsageError(
                f"{self._path}: review.labels.{label.key}.{field}: {first['msg']}; "
                "fix the label (docs/calibration.md)"
            ) from None
        labels = dict(self._section.labels)
        undo = UndoEntry(key=label.key, previous=labels.get(label.key))
        labels[label.key] = record
        self._replace(labels, (*self._section.undo, undo)[-UNDO_DEPTH:])

    def undo(self) -> ReviewLabel | None:
        """Take back the last action: the item gets its label before it back (or none).
        Returns the label taken back; None when there is nothing to undo."""
        if not self._section.undo:
            return None
        last = self._section.undo[-1]
        labels = dict(self._section.labels)
        taken = labels.pop(last.key, None)
        if last.previous is not None:
            labels[last.key] = last.previous
        self._replace(labels, self._section.undo[:-1])
        return None if taken is None else _label(last.key, taken)

    def labels(self) -> dict[str, ReviewLabel]:
        """The current label of every labelled item, by key."""
        return {key: _label(key, record) for key, record in self._section.labels.items()}

    def stale(self, keys: Collection[str]) -> list[str]:
        """Labelled keys that are not among `keys` (the items the results have now), in the
        file's order: said to the person, never dropped."""
        return [key for key in self._section.labels if key not in keys]

    def _replace(self, labels: dict[str, ReviewedLabel], undo: tuple[UndoEntry, ...]) -> None:
        section = self._section.model_copy(update={"labels": labels, "undo": undo})
        previous, self._section = self._section, section
        try:
            self._write()
        except BaseException:
            self._section = previous  # what is in memory is what is on disk
            raise

    def _write(self) -> None:
        document = LabelSet(version=LABELS_VERSION, source=self._source, review=self._section)
        data = document.model_dump(mode="json", by_alias=True, exclude_defaults=False)
        data.pop("trajectories")  # a review file's labels are its `review` section's
        write_atomic(self._path, data, indent=2, flag="--labels", what="the labels file")


def _same_results(
    path: Path, section: ReviewSection, results_path: Path, results_sha256: str
) -> None:
    if section.results_sha256 != results_sha256:
        raise UsageError(
            f"{path}: review.results_sha256: made for another results file "
            f"({section.results}, sha256 {section.results_sha256[:12]}…), not "
            f"{results_path} (sha256 {results_sha256[:12]}…); give the results these labels "
            "were made on, or a new labels file"
        )


def _record(label: ReviewLabel) -> dict[str, Any]:
    return {
        "part": label.part,
        "pass": label.passed,
        "score": label.score,
        "category": label.category,
        "note": label.note,
        "reviewer": label.reviewer,
        "at": label.at,
    }


def _label(key: str, record: ReviewedLabel) -> ReviewLabel:
    return ReviewLabel(
        key=key,
        part=record.part,
        passed=record.passed,
        score=record.score,
        category=record.category,
        note=record.note,
        reviewer=record.reviewer,
        at=record.at,
    )
