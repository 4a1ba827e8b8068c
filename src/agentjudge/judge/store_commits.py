"""The verdict store as a client on its machine keeps its verdicts (`Verdicts`), each commit
shared by the judge calls that return close together.

A sqlite commit costs ~50 us in a busy job: one per call was a tenth of the CPU at a
thousand calls a second. A call hands its verdict back only once it is committed, so a
killed job loses no verdict it reported.
"""

from __future__ import annotations

import asyncio

from agentjudge.judge.store import UNREADABLE, Found, Stored, VerdictStore

# Seconds a returned verdict may wait to be committed with others.
COMMIT_INTERVAL = 0.02


class LocalVerdicts:
    """`Verdicts` kept in a `VerdictStore` opened here (one per client): read at once, and
    committed once for the calls returning within COMMIT_INTERVAL of each other."""

    def __init__(self, store: VerdictStore) -> None:
        self.store = store
        self.where = str(store.path)
        self._pending: asyncio.Future[None] | None = None

    async def get(self, key: str) -> Found:
        """The verdict held or stored under `key`, `UNREADABLE`, or None."""
        unreadable = self.store.unreadable
        found = self.store.get(key)
        if found is None and self.store.unreadable != unreadable:
            return UNREADABLE
        return found

    def put(self, key: str, stored: Stored) -> None:
        """Hold a verdict until the next commit."""
        self.store.put(key, *stored)

    async def flush(self) -> None:
        """Wait until the verdicts put so far are committed: the calls that return within
        COMMIT_INTERVAL of each other share one commit. The wait holds no judge slot."""
        commit = self._pending
        if commit is None:
            loop = asyncio.get_running_loop()
            commit = self._pending = loop.create_future()
            loop.call_later(COMMIT_INTERVAL, self._commit, commit)
        await asyncio.shield(commit)  # a cancelled caller does not cancel the others' commit

    def _commit(self, commit: asyncio.Future[None]) -> None:
        self._pending = None
        try:
            self.store.flush()
        except Exception as exc:  # every call waiting for this commit raises it
            commit.set_exception(exc)
            commit.exception()  # retrieved: nobody logs it as lost
        else:
            commit.set_result(None)
