"""Agreement figures, each against its value worked out by hand."""

from __future__ import annotations

import pytest

from agentjudge.trust.agreement import (
    ClassScores,
    accuracy,
    class_scores,
    cohen_kappa,
    macro_f1,
)


def test_accuracy() -> None:
    assert accuracy([(True, True), (False, True), (False, False), (True, True)]) == 3 / 4
    assert accuracy([]) is None


def test_kappa_by_hand() -> None:
    # 10 pairs: 4 yes/yes, 1 yes/no, 2 no/yes, 3 no/no -> p_o = 7/10; labels 5/10 yes,
    # judge 6/10 yes -> p_e = 0.5*0.6 + 0.5*0.4 = 1/2; kappa = (7/10 - 1/2) / (1/2) = 2/5
    pairs = [(True, True)] * 4 + [(True, False)] + [(False, True)] * 2 + [(False, False)] * 3
    assert cohen_kappa(pairs) == pytest.approx(2 / 5)
    assert cohen_kappa([(True, False), (False, True)]) == pytest.approx(-1.0)
    assert cohen_kappa([(True, True), (False, False)]) == pytest.approx(1.0)


def test_kappa_is_undefined_when_chance_agreement_is_total() -> None:
    assert cohen_kappa([(True, True), (True, True)]) is None
    assert cohen_kappa([]) is None


def test_precision_recall_f1_by_hand() -> None:
    pairs = [("a", "a"), ("a", "b"), ("b", "a"), ("c", "a"), ("b", "b")]
    a = class_scores(pairs, "a")
    assert (a.true_positives, a.false_positives, a.false_negatives) == (1, 2, 1)
    assert (a.precision, a.recall, a.f1) == (1 / 3, 1 / 2, 2 / 5)
    c = class_scores(pairs, "c")
    assert (c.precision, c.recall, c.f1) == (None, 0.0, 0.0)
    assert ClassScores(0, 0, 0).f1 is None
    # b: tp 1, fp 1, fn 1 -> F1 1/2; d never labelled nor predicted: left out of the mean
    classes = [class_scores(pairs, name) for name in "abcd"]
    assert macro_f1(classes) == pytest.approx((2 / 5 + 1 / 2 + 0) / 3)
    assert macro_f1([]) is None
