"""A case metric's samples: one judge item each, folded back into one result."""

from __future__ import annotations

from agentjudge.cases.judging import MetricResult, fold_samples, judge_request, sample_items


def test_each_sample_is_its_own_item_and_key_the_first_keeps_the_metrics() -> None:
    request = judge_request("judge this [[score=4]]", 5.0, 0.7)
    items = sample_items("case-1/politeness", request, 3)
    assert [item_id for item_id, _ in items] == [
        "case-1/politeness",
        "case-1/politeness\n#1",
        "case-1/politeness\n#2",
    ]
    assert items[0][1] is request
    assert len({r.key("j") for _, r in items}) == 3
    assert {r.temperature for _, r in items} == {0.7}


def test_the_mean_of_the_samples_that_answered() -> None:
    results = {
        "c/m": MetricResult(2.0, "first"),
        "c/m\n#1": MetricResult(None, error="judge call failed: timeout"),
        "c/m\n#2": MetricResult(5.0, "third"),
    }
    folded = fold_samples(results, "c/m", 3)
    assert folded is not None
    assert (folded.score, folded.reasoning, folded.error) == (3.5, "first", None)
    assert folded.samples == (2.0, None, 5.0)


def test_no_sample_answered_is_the_first_samples_error() -> None:
    failed = MetricResult(None, error="judge call failed: timeout")
    results = {"c/m": failed, "c/m\n#1": MetricResult(None, error="unusable judge answer: x")}
    assert fold_samples(results, "c/m", 2) is failed


def test_one_sample_is_the_result_as_it_came() -> None:
    only = MetricResult(4.0, "fine")
    assert fold_samples({"c/m": only}, "c/m", 1) is only
    assert fold_samples({}, "c/m", 2) is None
