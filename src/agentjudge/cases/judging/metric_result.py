"""What a judge or custom metric returned for one case: the judging stage's output."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(slots=True)
class MetricResult:
    """What a judge or custom metric returned: a score, or an error (never both)."""

    score: float | None
    reasoning: str = ""
    error: str | None = None
    # a judge metric judged several times: every sample's score, None where one got none
    samples: tuple[float | None, ...] = ()
