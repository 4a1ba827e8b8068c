"""How well a judge agrees with human labels: accuracy, Cohen's kappa, precision/recall/F1.

Pure functions over (label, prediction) pairs. A figure that the pairs do not define (no
pairs; kappa when chance agreement is already total) is None, never a made-up number.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass


def accuracy(pairs: Sequence[tuple[object, object]]) -> float | None:
    """The fraction of pairs whose label and prediction are equal; None without pairs."""
    if not pairs:
        return None
    return sum(1 for label, predicted in pairs if label == predicted) / len(pairs)


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' yes/no answers (labels, predictions):
    (p_o - p_e) / (1 - p_e), p_o the observed agreement and p_e the agreement expected from
    each rater's own rate of yes. None without pairs, or when p_e is 1 (both raters gave one
    answer only: agreement says nothing about the judge there)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(1 for label, predicted in pairs if label == predicted) / n
    label_yes = sum(1 for label, _ in pairs if label) / n
    predicted_yes = sum(1 for _, predicted in pairs if predicted) / n
    expected = label_yes * predicted_yes + (1 - label_yes) * (1 - predicted_yes)
    if expected >= 1:
        return None
    return (observed - expected) / (1 - expected)


@dataclass(frozen=True)
class ClassScores:
    """One class's counts and precision, recall and F1 (None where undefined)."""

    true_positives: int
    false_positives: int
    false_negatives: int

    @property
    def precision(self) -> float | None:
        predicted = self.true_positives + self.false_positives
        return self.true_positives / predicted if predicted else None

    @property
    def recall(self) -> float | None:
        actual = self.true_positives + self.false_negatives
        return self.true_positives / actual if actual else None

    @property
    def f1(self) -> float | None:
        """2TP / (2TP + FP + FN): 0 when the class was predicted or labelled and never
        matched; None when it was neither."""
        total = 2 * self.true_positives + self.false_positives + self.false_negatives
        return 2 * self.true_positives / total if total else None


def class_scores(pairs: Sequence[tuple[str, str]], name: str) -> ClassScores:
    """The counts of class `name` among (label, prediction) pairs."""
    tp = sum(1 for label, predicted in pairs if label == name and predicted == name)
    fp = sum(1 for label, predicted in pairs if label != name and predicted == name)
    fn = sum(1 for label, predicted in pairs if label == name and predicted != name)
    return ClassScores(tp, fp, fn)


def macro_f1(scores: Iterable[ClassScores]) -> float | None:
    """The mean F1 over the classes that were labelled or predicted; None if none was."""
    values = [s.f1 for s in scores if s.f1 is not None]
    return sum(values) / len(values) if values else None
