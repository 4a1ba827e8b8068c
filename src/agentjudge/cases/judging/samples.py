"""A case's judge metric judged K times (`--samples`): one item per sample, folded back.

Each sample is its own judge item (`sample_items`), its request numbered so that it has
its own verdict-store key. `fold_samples` gives the metric one `MetricResult`: the mean of
the samples that answered, with every sample's score (None for one without a verdict,
never a 0); only when none answered is it an error, the first sample's.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentjudge.cases.judging.metric_result import MetricResult
from agentjudge.judge.request import JudgeRequest
from agentjudge.judge.samples import sample_mean, sample_requests


def sample_id(item_id: str, sample: int) -> str:
    """The item id of a metric's `sample`-th sample (the first keeps the metric's id)."""
    return item_id if sample == 0 else f"{item_id}\n#{sample}"


def sample_items(
    item_id: str, request: JudgeRequest, samples: int
) -> list[tuple[str, JudgeRequest]]:
    """The judge items of one metric of one case: `samples` numbered requests."""
    return [
        (sample_id(item_id, i), sampled)
        for i, sampled in enumerate(sample_requests(request, samples))
    ]


def fold_samples(
    results: Mapping[str, MetricResult], item_id: str, samples: int
) -> MetricResult | None:
    """The metric's result from its samples' (None when the runner returned none)."""
    found = [results.get(sample_id(item_id, i)) for i in range(samples)]
    if samples == 1 or any(r is None for r in found):
        return found[0]
    answered = [r for r in found if r is not None and r.error is None and r.score is not None]
    if not answered:
        return found[0]
    scores = tuple(None if r is None or r.error is not None else r.score for r in found)
    mean = sample_mean(r.score for r in answered if r.score is not None)
    return MetricResult(mean, answered[0].reasoning, samples=scores)
