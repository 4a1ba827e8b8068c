"""The job's desk: one Ray actor on the driver's machine that holds the job's verdict store
open for the workers, and keeps count of their progress. A worker's clients keep their
verdicts there (`DeskVerdicts`, the desk's side of `judge.store.Verdicts`): they ask it for
stored verdicts before calling the judge, and hand it each verdict they get; it commits them
as they come (what a worker got within DESK_INTERVAL of each other in one commit), so a
driver or worker killed mid-run loses only the calls in flight. With `--no-cache` it holds
no store and only counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

from agentjudge.judge.store import UNREADABLE, Found, Stored, VerdictStore

T = TypeVar("T")
R = TypeVar("R")

# seconds a look-up, or a verdict handed over, waits for others to share one trip to the
# desk. Every trip is an actor call, with its CPU on both ends: 0.01 s for look-ups and a
# local client's 0.02 s commit interval for verdicts made each worker of
# bench/ray_scoring.py take about 150 trips a second; 0.05 s for both saved a tenth of the
# workers' CPU and over a quarter of the desk's (docs/distributed.md). The wait holds no
# judge slot: while calls are queued for the judge, as in any long job, it costs no
# throughput.
DESK_INTERVAL = 0.05


class VerdictDesk:
    """The actor's class (made a Ray actor by the driver, on its own node)."""

    def __init__(self, path: str | None) -> None:
        self.store = VerdictStore(path) if path is not None else None
        self.judged: dict[int, int] = {}  # per unit: the most steps an attempt judged

    def lookup(self, keys: list[str]) -> list[Found]:
        """The stored verdict of each key, `UNREADABLE`, or None."""
        if self.store is None:
            return [None] * len(keys)
        return [self._get(self.store, key) for key in keys]

    @staticmethod
    def _get(store: VerdictStore, key: str) -> Found:
        unreadable = store.unreadable
        found = store.get(key)
        return UNREADABLE if found is None and store.unreadable != unreadable else found

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


class DeskVerdicts:
    """`Verdicts` kept at the desk (`desk`, the actor's handle), as a worker's clients keep
    them: look-ups, and verdicts handed over, each gathered for DESK_INTERVAL into one trip.
    `where` is the driver's verdict store."""

    def __init__(self, desk: Any, where: str) -> None:
        self.where = where
        self._desk = desk
        self._lookups: Batch[str, Found] = Batch(self._lookup, DESK_INTERVAL)
        self._handovers: Batch[None, None] = Batch(self._hand_over, DESK_INTERVAL)
        self._held: dict[str, Stored] = {}  # put, not yet handed over
        self._sending: dict[str, Stored] = {}  # on their way to the desk
        # one trip with verdicts at a time: a flush that finds its verdicts already taken
        # by the trip before returns only once that trip has ended
        self._one_trip = asyncio.Lock()

    async def get(self, key: str) -> Found:
        """The verdict held here or kept at the desk under `key`, `UNREADABLE`, or None."""
        held = self._held.get(key) or self._sending.get(key)
        return held if held is not None else await self._lookups(key)

    def put(self, key: str, stored: Stored) -> None:
        """Hold a verdict until the next trip to the desk."""
        self._held[key] = stored

    async def flush(self) -> None:
        """Return once the desk has every verdict put so far (committed there)."""
        await self._handovers(None)

    async def _lookup(self, keys: list[str]) -> list[Found]:
        found: list[Found] = await self._desk.lookup.remote(keys)
        return found

    async def _hand_over(self, flushes: list[None]) -> list[None]:
        async with self._one_trip:
            self._sending, self._held = self._held, {}
            try:
                if self._sending:
                    await self._desk.put.remote(list(self._sending.items()))
            finally:
                self._sending = {}
        return [None] * len(flushes)


class Batch(Generic[T, R]):
    """Items handed in within `interval` of each other go in one `send`; each caller gets
    its own item's answer (or the batch's exception)."""

    def __init__(self, send: Callable[[list[T]], Awaitable[list[R]]], interval: float) -> None:
        self._send = send
        self._interval = interval
        self._items: list[T] = []
        self._done: asyncio.Future[list[R]] | None = None
        self._sending: set[asyncio.Task[list[R]]] = set()

    async def __call__(self, item: T) -> R:
        if self._done is None:
            loop = asyncio.get_running_loop()
            self._done = loop.create_future()
            loop.call_later(self._interval, self._flush)
        index = len(self._items)
        self._items.append(item)
        answers = await asyncio.shield(self._done)
        return answers[index]

    def _flush(self) -> None:
        items, done = self._items, self._done
        self._items, self._done = [], None
        assert done is not None
        task = asyncio.ensure_future(self._send(items))
        self._sending.add(task)

        def settle(sent: asyncio.Task[list[R]]) -> None:
            self._sending.discard(sent)
            if sent.cancelled():
                done.cancel()
            elif sent.exception() is not None:
                done.set_exception(sent.exception())  # type: ignore[arg-type]
                done.exception()  # retrieved: every caller re-raises it
            else:
                done.set_result(sent.result())

        task.add_done_callback(settle)
