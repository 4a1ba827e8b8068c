"""What a failed job says beyond its error: a judge that never answered, and where it is.

The CLI and the eval-hub adapter say the same; only the fix names their own setting.
"""

from __future__ import annotations

from agentjudge.judge.stats import ClientStats
from agentjudge.results.score import ScoreResults

# error kinds of calls that got no answer at all (every other kind is the server's)
LOST_CALLS = frozenset({"transport_error", "timeout"})


def unanswered(document: ScoreResults, stats: ClientStats) -> str | None:
    """`none of 4 judge calls got an answer from URL` (no credentials in it) when no call
    was answered and the job's error, if any, is a lost call; else None."""
    error = document["error"]
    endpoint = document["judge"]["endpoint"]
    lost = not error or str(error["message"]).split(":")[0] in LOST_CALLS
    if stats.calls and not stats.successes and endpoint and lost:
        return f"none of {stats.calls} judge calls got an answer from {endpoint}"
    return None
