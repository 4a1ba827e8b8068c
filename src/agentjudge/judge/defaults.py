"""How long and how often a judge call is tried, by default: the one place that says so for
every command (`score`, the eval-hub adapter through it, `grade`) and for a bare
`JudgeClient`. A command's flags and config keys override these; nothing else repeats them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CallLimits:
    """What one judge call may take before it is given up."""

    timeout: float  # seconds one attempt may take
    max_attempts: int  # failures a call may meet (rate limits are not failures)
    retry_budget: float = 300.0  # seconds a call may spend waiting out rate limits
    initial_backoff: float = 0.5  # seconds before the first retry (exponential, jittered)
    max_backoff: float = 30.0  # the longest wait between two attempts


# `agentjudge score`, and so the eval-hub adapter: the contrib provider's 30 s and 3
# attempts, kept so that a job moved over from it is given up no sooner and no later.
SCORE_CALLS = CallLimits(timeout=30.0, max_attempts=3)

# `agentjudge grade` (`--judge-call-timeout`; no flag sets the rest): 120 s a call, room for
# the slow reasoning models projects judge with, and the 4 attempts grading has had since
# it began (kept: a grading run makes few calls, and a lost one fails its case).
GRADE_CALLS = CallLimits(timeout=120.0, max_attempts=4)
