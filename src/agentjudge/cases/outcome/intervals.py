"""The bootstrap intervals of a graded run's rates: the pass rate over the planned cases, and
each metric's pass rate over the cases it scored (quality metrics' `pass_rate` among them)."""

from __future__ import annotations

from collections.abc import Sequence

from agentjudge.cases.outcome.gate import CaseTally
from agentjudge.results.grade import PASSED, MetricsInterval
from agentjudge.trust.intervals import Bootstrap, interval_record, rate_interval


def rate_intervals(grades: Sequence[CaseTally], bootstrap: Bootstrap) -> MetricsInterval:
    """The results' `metrics_interval`: `pass_rate` (cases passed / planned), `metrics`
    (per metric: cases at or above its threshold / cases it scored), each [low, high] or
    null, with the level, resamples and seed. Resampling cases draws Binomial(n, rate)."""
    scored: dict[str, int] = {}
    passed: dict[str, int] = {}
    for grade in grades:
        for name, entry in grade.judge_scores.items():
            if entry["passed"] is not None:
                scored[name] = scored.get(name, 0) + 1
                passed[name] = passed.get(name, 0) + bool(entry["passed"])
    cases_passed = sum(grade.status == PASSED for grade in grades)
    record = interval_record(
        {"pass_rate": rate_interval(cases_passed, len(grades), bootstrap)}, bootstrap
    )
    metrics = {
        name: rate_interval(passed[name], scored[name], bootstrap) for name in sorted(scored)
    }
    return {
        "pass_rate": record["pass_rate"],
        "level": record["level"],
        "resamples": record["resamples"],
        "seed": record["seed"],
        "metrics": {
            name: interval_record({name: bounds}, bootstrap)[name]
            for name, bounds in metrics.items()
        },
    }
