"""The bootstrap intervals a run reports, with the parameters that make them reproducible:
pass rates over cases here (grade), `atif_overall_score` over roots in
scoring/score_interval.py; how the results record them and the consoles print them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agentjudge.trust.resample import proportion_interval

LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class Bootstrap:
    """How intervals are drawn: the seed and the number of resamples (recorded in results)."""

    seed: int = 0
    resamples: int = 1000
    level: float = LEVEL


def rate_interval(passed: int, total: int, bootstrap: Bootstrap) -> tuple[float, float] | None:
    """Bootstrap interval of a pass rate, resampling the cases with replacement."""
    return proportion_interval(
        passed, total, seed=bootstrap.seed, resamples=bootstrap.resamples, level=bootstrap.level
    )


def interval_record(
    intervals: dict[str, tuple[float, float] | None], bootstrap: Bootstrap
) -> dict[str, Any]:
    """The results' `metrics_interval`: [low, high] per metric (null when undefined), and the
    level, resamples and seed they were drawn with."""
    record: dict[str, Any] = {
        name: None if bounds is None else [round(bounds[0], 6), round(bounds[1], 6)]
        for name, bounds in intervals.items()
    }
    record.update(level=bootstrap.level, resamples=bootstrap.resamples, seed=bootstrap.seed)
    return record


def with_interval(value: float, bounds: Any, spec: str = ".4f") -> str:
    """A metric as the consoles print it: `0.7100 (95% CI 0.6400\u20130.7800)`, an en dash
    between the bounds."""
    if not isinstance(bounds, list) or len(bounds) != 2:
        return format(value, spec)
    return f"{value:{spec}} (95% CI {bounds[0]:{spec}}\u2013{bounds[1]:{spec}})"
