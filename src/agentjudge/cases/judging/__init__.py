"""Judging: the judge and custom metrics of the cases that passed their checks.

`transcript` renders what a judge reads of a case; `identity` resolves which judge a run
uses; `judge_calls` builds it and sends the calls; `samples` makes a metric's repeated
samples and folds them back; `custom_metrics` runs the project's own metrics; `runner` runs
both, in the project's process when needed. Each gives a `MetricResult` per case and
metric, which the gate (`cases.outcome`) folds into the grades.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentjudge.lazy import lazy_exports

if TYPE_CHECKING:
    from agentjudge.cases.judging.custom_metrics import run_custom
    from agentjudge.cases.judging.identity import (
        Judged,
        JudgeIdentity,
        JudgingOptions,
        resolve_identity,
    )
    from agentjudge.cases.judging.judge_calls import (
        build_judge,
        is_fake,
        judge_request,
        run_judges,
        speaks,
    )
    from agentjudge.cases.judging.metric_result import MetricResult
    from agentjudge.cases.judging.runner import run_metrics
    from agentjudge.cases.judging.samples import fold_samples, sample_items
    from agentjudge.cases.judging.transcript import (
        RenderedCase,
        fill_prompt,
        judge_notes,
        lacking,
        render_case,
    )

__all__ = [
    "JudgeIdentity",
    "Judged",
    "JudgingOptions",
    "MetricResult",
    "RenderedCase",
    "build_judge",
    "fill_prompt",
    "fold_samples",
    "is_fake",
    "judge_notes",
    "judge_request",
    "lacking",
    "render_case",
    "resolve_identity",
    "run_custom",
    "run_judges",
    "run_metrics",
    "sample_items",
    "speaks",
]

# Each name's module, imported on first use: the gate needs `MetricResult` alone.
_HOMES = {
    "custom_metrics": ("run_custom",),
    "identity": ("JudgeIdentity", "Judged", "JudgingOptions", "resolve_identity"),
    "judge_calls": ("build_judge", "is_fake", "judge_request", "run_judges", "speaks"),
    "metric_result": ("MetricResult",),
    "runner": ("run_metrics",),
    "samples": ("fold_samples", "sample_items"),
    "transcript": ("RenderedCase", "fill_prompt", "judge_notes", "lacking", "render_case"),
}

if not TYPE_CHECKING:  # mypy reads the imports above, so an unknown name stays an error
    __getattr__ = lazy_exports(__name__, _HOMES)
