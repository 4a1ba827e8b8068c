"""The job's desk: one Ray actor on the driver's machine that holds the job's verdict store
open for the workers, and keeps count of their progress. They ask it for stored verdicts
before calling the judge, and hand it each verdict they get; it commits them as they come
(what a worker got within `worker.DESK_INTERVAL` of each other in one commit), so a driver
or worker killed mid-run loses only the calls in flight. With `--no-cache` it holds no
store and only counts.
"""

from __future__ import annotations

from agentjudge.judge.store import VerdictStore
from agentjudge.judge.verdict import Verdict

Stored = tuple[Verdict, int, int]  # a verdict and its input and output tokens


class VerdictDesk:
    """The actor's class (made a Ray actor by the driver, on its own node)."""

    def __init__(self, path: str | None) -> None:
        self.store = VerdictStore(path) if path is not None else None
        self.judged: dict[int, int] = {}  # per unit: the most steps an attempt judged

    def lookup(self, keys: list[str]) -> list[Stored | None]:
        """The stored verdict of each key, or None."""
        if self.store is None:
            return [None] * len(keys)
        return [self.store.get(key) for key in keys]

    def put(self, records: list[tuple[str, Stored]]) -> int:
        """Commit `records` (one transaction); how many."""
        if self.store is None:
            return 0
        for key, (verdict, tokens_in, tokens_out) in records:
            self.store.put(key, verdict, tokens_in, tokens_out)
        self.store.flush()
        return len(records)

    def report(self, unit: int, steps: int) -> None:
        """A unit's attempt has judged `steps` of its steps so far. A retried unit counts
        from 0 again: the count stays at what the first attempt reached until it is passed."""
        self.judged[unit] = max(self.judged.get(unit, 0), steps)

    def progress(self) -> dict[int, int]:
        """Steps judged so far, per unit that has reported."""
        return dict(self.judged)

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
