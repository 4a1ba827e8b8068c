"""The verdict store's desk: one Ray actor on the driver's machine that holds the job's
verdict store open for the workers. They ask it for stored verdicts before calling the
judge, and hand it each verdict they get; it commits them as they come (within
`COMMIT_INTERVAL` of each other, as a local client does), so a driver or worker killed
mid-run loses only the calls in flight.
"""

from __future__ import annotations

from agentjudge.judge.store import VerdictStore
from agentjudge.judge.verdict import Verdict

Stored = tuple[Verdict, int, int]  # a verdict and its input and output tokens


class VerdictDesk:
    """The actor's class (made a Ray actor by the driver, on its own node)."""

    def __init__(self, path: str) -> None:
        self.store = VerdictStore(path)

    def lookup(self, keys: list[str]) -> list[Stored | None]:
        """The stored verdict of each key, or None."""
        return [self.store.get(key) for key in keys]

    def put(self, records: list[tuple[str, Stored]]) -> int:
        """Commit `records` (one transaction); how many."""
        for key, (verdict, tokens_in, tokens_out) in records:
            self.store.put(key, verdict, tokens_in, tokens_out)
        self.store.flush()
        return len(records)

    def close(self) -> None:
        self.store.close()
