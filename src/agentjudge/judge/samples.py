"""Repeated samples of one judge request, and what their scores say together.

A step (`score`) or a case's judge metric (`grade`) may be judged K times. Each sample is
the same request with its own `JudgeRequest.sample` index, so each has its own verdict-store
key (a re-run is free, and no sample reuses another's answer) while the judge receives
identical requests. The score is the mean of the samples that answered; samples on both
sides of a threshold make the result `unstable`.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from agentjudge.judge.request import JudgeRequest

# The most samples a request may ask for: each is a judge call; more is a typo (and a
# billion would be planned in memory before the first call)
MAX_SAMPLES = 100


def sample_requests(request: JudgeRequest, samples: int) -> tuple[JudgeRequest, ...]:
    """`samples` copies of `request`, numbered 0..samples-1 (the first is `request`)."""
    return (request, *(replace(request, sample=i) for i in range(1, samples)))


@dataclass(frozen=True, slots=True)
class SampledScore:
    """What K samples of one score say: their mean, spread and stability.

    `scores` holds every sample in order, None for one that got no verdict; the mean,
    spread and stdev are over those that did (None when none did)."""

    scores: tuple[float | None, ...]
    mean: float | None
    spread: float | None  # max - min
    stdev: float | None  # population standard deviation
    unstable: bool  # some samples below the threshold, some at or above it

    def as_dict(self) -> dict[str, object]:
        """The fields results carry per step or per case metric."""
        return {
            "samples": list(self.scores),
            "spread": self.spread,
            "stdev": self.stdev,
            "unstable": self.unstable,
        }


def sampled_score(scores: Sequence[float | None], threshold: float) -> SampledScore:
    """Combine the samples' scores (None: a sample without a verdict, left out, never 0)."""
    answered = [s for s in scores if s is not None]
    if not answered:
        return SampledScore(tuple(scores), None, None, None, False)
    low, high = min(answered), max(answered)
    unstable = low < threshold <= high
    return SampledScore(
        tuple(scores),
        sample_mean(answered),
        _round(high - low),
        _round(statistics.pstdev(answered)),
        unstable,
    )


def sample_mean(values: Iterable[float]) -> float:
    """The mean of samples' scores, as results show it (see `_round`)."""
    return _round(statistics.fmean(values))


def _round(value: float) -> float:
    # 0.9 - 0.2 is 0.7000000000000001 and the mean of three 0.36 is 0.36000000000000004 in
    # binary floating point: results show 0.7 and 0.36
    return round(value, 12)


def temperature_note(samples: int, temperature: float) -> str | None:
    """The note said once when samples are asked for at temperature 0, else None."""
    if samples > 1 and temperature == 0:
        return (
            f"{samples} samples at judge temperature 0 mostly agree by construction (most "
            "APIs are not bitwise deterministic even then): set a temperature (e.g. "
            "--temperature 0.7) for samples that show the judge's own uncertainty"
        )
    return None
