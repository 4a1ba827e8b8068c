"""Commits of the verdict store, each shared by the judge calls that return close together.

A sqlite commit costs ~50 us in a busy job: one per call was a tenth of the CPU at a
thousand calls a second. A call hands its verdict back only once it is committed, so a
killed job loses no verdict it reported.
"""

from __future__ import annotations

import asyncio

from agentjudge.judge.store import VerdictStore

# Seconds a returned verdict may wait to be committed with others.
COMMIT_INTERVAL = 0.02


class StoreCommits:
    """The commit being gathered for the calls returning now, if any (one per client)."""

    def __init__(self) -> None:
        self._pending: asyncio.Future[None] | None = None

    async def wait(self, store: VerdictStore) -> None:
        """Wait until the verdicts put so far are committed: the calls that return within
        COMMIT_INTERVAL of each other share one commit. The wait holds no judge slot."""
        commit = self._pending
        if commit is None:
            loop = asyncio.get_running_loop()
            commit = self._pending = loop.create_future()
            loop.call_later(COMMIT_INTERVAL, self._flush, store, commit)
        await asyncio.shield(commit)  # a cancelled caller does not cancel the others' commit

    def _flush(self, store: VerdictStore, commit: asyncio.Future[None]) -> None:
        self._pending = None
        try:
            store.flush()
        except Exception as exc:  # every call waiting for this commit raises it
            commit.set_exception(exc)
            commit.exception()  # retrieved: nobody logs it as lost
        else:
            commit.set_result(None)
